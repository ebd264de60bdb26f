// SPDX-License-Identifier: GPL-3.0-or-later
// d2dpo: the command-line twin of d2dpo-studio. Wiring only: each subcommand lives in its own file.
#include <CLI/CLI.hpp>

#include "cli/common.h"
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
                         registerReproduce, registerBench, registerStoreCommands})
        add(app, exitCode);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    return exitCode;
}
