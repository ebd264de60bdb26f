// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo export`: write a checkpoint as a folder usable from Python (weights.pt), with a JSON
// model card and sample outputs.
#include <filesystem>
#include <iostream>
#include <memory>

#include "base/safeoutput.h"
#include "cli/common.h"
#include "cli/progressbar.h"
#include "cli/stopsignals.h"
#include "jobs/exporter.h"
#include "jobs/exportoptions.h"
#include "store/preferencestore.h"

namespace d2dpo::cli {

namespace {

struct ExportCliOptions {
    RuntimeOptions runtime;
    ExportOptions exportOptions;
    std::string checkpoint;
    std::string out;
    std::string db = PreferenceStore::defaultPath();
};

int run(ExportCliOptions o)
{
    if (Status s = validate(o.exportOptions.sampling); !s)
        return fail("export", s.error());
    if (o.exportOptions.sampleCount < 0)
        return fail("export", "--samples must be >= 0");
    if (!(o.exportOptions.sampleSeconds >= 0))
        return fail("export", "--samples-within must be >= 0");
    if (Status s = setUpRuntime(o.runtime); !s)
        return fail("export", s.error());
    // The model card tells the same story as the desktop's Export: the run that made the model
    // and its preference counts, when the store knows the checkpoint.
    auto stored = exportOptionsForCheckpoint(o.db, o.checkpoint);
    if (!stored)
        return fail("export", stored.error());
    o.exportOptions.preferenceCountsJson = stored->preferenceCountsJson;
    o.exportOptions.runJson = stored->runJson;
    o.exportOptions.seed = o.runtime.seed;
    o.exportOptions.inputs = storeFiles(o.db);
    o.exportOptions.stop = &stopOnSignals(SignalStops::Export);
    o.exportOptions.progress = samplingProgress("export");
    o.exportOptions.samplesPlanned = [](const std::string& plan) {
        std::cout << "export: the model's files are written; drawing " << plan << std::endl;
    };
    auto report = exportCheckpointFile(o.checkpoint, o.out, o.exportOptions, o.runtime.device);
    if (!report)
        return exitCodeAfterStop(fail("export", report.error()));
    std::string files;
    for (const char* name : kExportFiles)
        if (std::filesystem::exists(std::filesystem::path(o.out) / name))
            files += std::string(files.empty() ? "" : ", ") + name;
    std::cout << "exported " << report->id << " to " << o.out << " (" << files << ")\n";
    if (report->samplesStopped) {
        std::cerr << "export: the samples were stopped: samples.txt is not written (the model's files are)\n";
        return exitCodeAfterStop(1);
    }
    return 0;
}

} // namespace

void registerExport(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<ExportCliOptions>();
    CLI::App* c = app.add_subcommand("export", "Export a checkpoint: Python-loadable weights, model card, samples");
    addRuntimeOptions(c, options->runtime);
    addSamplingOptions(c, options->exportOptions.sampling);
    c->add_option("--checkpoint,-c", options->checkpoint, "Checkpoint to export")->required();
    c->add_option("--out,-o", options->out, "Folder to write (must be new or empty)")->required();
    c->add_option("--samples,-n", options->exportOptions.sampleCount, "Samples to write (the most, with "
                                                                      "--samples-within); 0: none")
        ->check(atLeast(0))
        ->capture_default_str();
    c->add_option("--samples-within", options->exportOptions.sampleSeconds,
                  "Draw as many of --samples as fit in about this many seconds at the model's measured "
                  "speed, with the confident sampler where the exact one would not fit (0: no limit)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    c->add_flag("--force", options->exportOptions.overwrite, "Write into a non-empty folder");
    c->add_option("--db", options->db, "Preference store that recorded the checkpoint's run (read only; "
                                       "nothing is created)")
        ->check(storePath())
        ->capture_default_str();
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
