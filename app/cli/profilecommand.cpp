// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo profile`: what a model's samples look like per position, against its reference's and
// the training data, as the CSV files of the desktop's per-position panel (analysis/profilecsv.h:
// positions.csv, composition.csv, nearest.csv) and its logos (logos.png, logos.svg), drawn by
// that panel offscreen (cli/profilelogos.h) in a build with the desktop.
#include <filesystem>
#include <iostream>
#include <memory>

#include "analysis/profilecsv.h"
#include "base/safeoutput.h"
#include "cli/common.h"
#include "cli/profilelogos.h"
#include "cli/progressbar.h"
#include "facades/modelfiles.h"
#include "facades/taskinfo.h"

namespace d2dpo::cli {

namespace {

struct ProfileOptions {
    RuntimeOptions runtime;
    SamplingConfig sampling;
    std::string checkpoint;
    std::string reference;
    int64_t count = 1000;
    std::string out;
};

/// "model: identity to the nearest training sequence mean 0.412, median 0.400, 3 copies".
void printSummary(const ProfiledSet& set)
{
    const PositionProfile& p = set.profile;
    double information = 0;
    for (double bits : p.information)
        information += bits;
    std::cout << set.name << ": " << set.sequences.size() << " samples, " << p.length() << " positions, mean "
              << (p.length() > 0 ? information / double(p.length()) : 0.0) << " bits of information per position";
    if (!set.nearest.identity.empty())
        std::cout << "; identity to the nearest training sequence mean " << set.nearest.mean << ", median "
                  << set.nearest.median << ", " << set.nearest.copies << " copies";
    std::cout << "\n";
}

Result<std::vector<std::string>> draw(const std::string& path, const ProfileOptions& o)
{
    auto drawn = sampleCheckpoint(path, o.count, o.sampling, o.runtime.seed, o.runtime.device, "",
                                  samplingProgress("profile"));
    if (!drawn)
        return makeError(drawn.error());
    return std::move(drawn->samples);
}

int run(const ProfileOptions& o)
{
    if (Status s = validate(o.sampling); !s)
        return fail("profile", s.error());
    std::vector<std::string> inputs = {o.checkpoint};
    if (!o.reference.empty())
        inputs.push_back(o.reference);
    // Before sampling: a refused folder wastes no time.
    if (Status s = checkOutputFolder(o.out, inputs, "the profile folder"); !s)
        return fail("profile", s.error());
    if (Status s = setUpRuntime(o.runtime); !s)
        return fail("profile", s.error());
    auto task = TaskInfo::fromCheckpoint(o.checkpoint);
    if (!task)
        return fail("profile", task.error());
    if (!o.reference.empty()) {
        auto referenceTask = TaskInfo::fromCheckpoint(o.reference);
        if (!referenceTask)
            return fail("profile", referenceTask.error());
        if (referenceTask->key() != task->key())
            return fail("profile", "the reference's task (" + referenceTask->summary() + ") is not the model's (" +
                                       task->summary() + ")");
    }

    const std::vector<std::string> training = task->trainingTexts();
    const std::string symbols = task->symbols();
    const int64_t length = task->config().length;
    std::vector<ProfiledSet> sets;
    sets.push_back(profileSet("training", training, symbols, {}, length));
    if (!o.reference.empty()) {
        auto samples = draw(o.reference, o);
        if (!samples)
            return fail("profile", samples.error());
        sets.push_back(profileSet("reference", std::move(samples.value()), symbols, training, length));
    }
    auto samples = draw(o.checkpoint, o);
    if (!samples)
        return fail("profile", samples.error());
    sets.push_back(profileSet("model", std::move(samples.value()), symbols, training, length));

    std::error_code error;
    std::filesystem::create_directories(o.out, error);
    if (error)
        return fail("profile", "cannot create the folder " + o.out + ": " + error.message());
    for (const ProfiledSet& set : sets)
        if (set.name != "training")
            printSummary(set);
    ProfileFigures figures;
    figures.training = sets.front();
    if (!o.reference.empty())
        figures.reference = sets[1];
    figures.model = sets.back();
    figures.length = length;
    figures.symbols = symbols;
    figures.alphabet = task->alphabet();
    figures.modelName = std::filesystem::path(o.checkpoint).stem().string();
    figures.referenceName = std::filesystem::path(o.reference).stem().string();
    auto drawn = writeProfileWithLogos(std::move(figures), o.out);
    if (!drawn)
        return fail("profile", drawn.error());
    if (drawn.value()) {
        std::cout << "wrote logos.png, logos.svg, positions.csv, composition.csv and nearest.csv to " << o.out << "\n";
        return 0;
    }
    std::vector<const ProfiledSet*> written;
    for (const ProfiledSet& set : sets)
        if (!set.sequences.empty())
            written.push_back(&set);
    if (Status s = writeProfileCsvs(o.out, written, training); !s)
        return fail("profile", s.error());
    std::cout << "wrote positions.csv, composition.csv and nearest.csv to " << o.out
              << " (this build draws no logos: it has no desktop)\n";
    return 0;
}

} // namespace

void registerProfile(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<ProfileOptions>();
    CLI::App* c = app.add_subcommand("profile", "What a model's samples look like per position (entropy, "
                                                "information, composition, identity to the training data), as CSV");
    addRuntimeOptions(c, options->runtime);
    addSamplingOptions(c, options->sampling);
    c->add_option("--checkpoint,-c", options->checkpoint, "Checkpoint to sample from")->required();
    c->add_option("--reference,-r", options->reference, "Its reference checkpoint, sampled the same way (optional)");
    c->add_option("--count,-n", options->count, "Samples per model")
        ->check(CLI::Range(int64_t(1), int64_t(1'000'000)))
        ->capture_default_str();
    c->add_option("--out,-o", options->out, "A new or empty folder for the CSV files")->required();
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
