// SPDX-License-Identifier: GPL-3.0-or-later
// d2dpo: the command-line twin of d2dpo-studio. Wiring only: each subcommand lives in its own file.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "base/abandonablecall.h"
#include "base/failurereport.h"
#include "base/hostmemory.h"

namespace {
constexpr int kUsageError = 2; ///< the command line itself is wrong (as getopt-style tools exit)
} // namespace

int runCommandLine(int argc, char** argv);

int runCommandLine(int argc, char** argv)
{
    d2dpo::keepFreedHostMemory(); // every training step reuses the previous step's pages
    CLI::App app{"d2dpo: align discrete diffusion models to preferences with D2-DPO.\n"
                 "Start with `d2dpo reproduce` (the paper's experiment end to end) or `d2dpo <command> --help`."};
    app.require_subcommand(1);
    app.set_version_flag("--version", "d2dpo 0.1.0");
    int exitCode = 0;
    using namespace d2dpo::cli;
    for (Register add : {registerPretrain, registerImport, registerSample, registerEval, registerTrain, registerExport,
                         registerReproduce, registerBench, registerPairsCommand, registerStoreCommands, registerMeasurementsCommands, registerLabelCommand, registerTeamStoreCommands, registerExpertCommands,
                         registerLeastSureCommands, registerCompare, registerStudy, registerLabelStudy,
                         registerProfile})
        add(app, exitCode);
    refuseNonFiniteNumbers(app);
    // An unknown command is named as such (CLI11 alone would only ask for a subcommand).
    const auto isCommand = [&app](const std::string& name) {
        for (const CLI::App* command : app.get_subcommands({}))
            if (command->check_name(name))
                return true;
        return false;
    };
    if (argc > 1 && argv[1][0] != '-' && !isCommand(argv[1])) {
        std::string commands;
        for (const CLI::App* command : app.get_subcommands({}))
            commands += (commands.empty() ? "" : ", ") + command->get_name();
        std::cerr << "d2dpo: error: unknown command '" << argv[1] << "' (the commands: " << commands
                  << "; see d2dpo --help)\n";
        return kUsageError;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // Like every other error: "d2dpo <command>: error: ...", the command as far as it was read.
        std::string command;
        for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
            sub = sub->get_subcommands().front();
            command += " " + sub->get_name();
        }
        std::cerr << "d2dpo" << command << ": error: " << e.what() << " (see d2dpo" << command << " --help)\n";
        return kUsageError;
    } catch (const std::exception& e) { // never a stack trace for the user (base/failurereport.h)
        std::cerr << "d2dpo: error: " << d2dpo::userMessage(e) << "\n";
        return 1;
    }
    // Results go to standard output: one that could not be written (a full disk, a closed pipe)
    // is a failure, not a success with nothing printed.
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
        const int error = errno;
        std::cerr << "d2dpo: error: cannot write to standard output: " << std::strerror(error) << "\n";
        return exitCode != 0 ? exitCode : 1;
    }
    return exitCode;
}

int main(int argc, char** argv)
{
    const int exitCode = runCommandLine(argc, argv);
    // A call into a model's code that never returned still runs on its own thread (a loop that
    // never ends): ending normally would destroy what it uses under it, so the process ends here.
    if (d2dpo::abandonedCalls() > 0) {
        std::cout.flush();
        std::cerr.flush();
        std::fflush(nullptr);
        std::_Exit(exitCode);
    }
    return exitCode;
}
