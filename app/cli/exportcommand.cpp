// `d2dpo export`: write a checkpoint as a folder usable from Python (weights.pt), with a JSON
// model card and sample outputs.
#include <iostream>
#include <memory>

#include "checkpoint.h"
#include "common.h"
#include "exporter.h"

namespace d2dpo::cli {

namespace {

struct ExportCliOptions {
    RuntimeOptions runtime;
    ExportOptions exportOptions;
    std::string checkpoint;
    std::string out;
};

int run(ExportCliOptions o)
{
    if (Status s = validate(o.exportOptions.sampling); !s)
        return fail("export", s.error());
    if (o.exportOptions.sampleCount < 0)
        return fail("export", "--samples must be >= 0");
    auto opened = openCheckpoint(o.runtime, o.checkpoint);
    if (!opened)
        return fail("export", opened.error());
    const LoadedCheckpoint& loaded = opened->checkpoint;
    o.exportOptions.seed = o.runtime.seed;
    if (Status s = exportCheckpoint(loaded, o.out, o.exportOptions); !s)
        return fail("export", s.error());
    std::cout << "exported " << loaded.info.id << " to " << o.out
              << " (weights.pt, model_card.json, samples.txt)\n";
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
    c->add_option("--samples,-n", options->exportOptions.sampleCount, "Samples to write")->capture_default_str();
    c->add_flag("--force", options->exportOptions.overwrite, "Write into a non-empty folder");
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
