// SPDX-License-Identifier: GPL-3.0-or-later
// d2dpo: the command-line twin of d2dpo-studio. Wiring only: each subcommand lives in its own file.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "base/failurereport.h"
#include "base/hostmemory.h"

int main(int argc, char** argv)
{
    d2dpo::keepFreedHostMemory(); // every training step reuses the previous step's pages
    CLI::App app{"d2dpo: align discrete diffusion models to preferences with D2-DPO.\n"
                 "Start with `d2dpo reproduce` (the paper's experiment end to end) or `d2dpo <command> --help`."};
    app.require_subcommand(1);
    app.set_version_flag("--version", "d2dpo 0.1.0");
    int exitCode = 0;
    using namespace d2dpo::cli;
    for (Register add : {registerPretrain, registerSample, registerEval, registerTrain, registerExport,
                         registerReproduce, registerBench, registerStoreCommands, registerStudy})
        add(app, exitCode);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
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
