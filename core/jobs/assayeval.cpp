// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/assayeval.h"

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "assays/heldoutsplit.h"
#include "jobs/pairscorer.h"
#include "store/preferencestore.h"

namespace d2dpo {

using json = nlohmann::json;

namespace {

/// The split a run's preferences record names, when it trained on measurements.
std::optional<AssayPairsSpec> splitOfRunConfig(const std::string& configJson)
{
    const json config = json::parse(configJson, nullptr, false);
    if (!config.is_object() || !config.contains("preferences") || !config["preferences"].is_object())
        return std::nullopt;
    const json& p = config["preferences"];
    if (p.value("source", std::string()).find("measurements") == std::string::npos || !p.contains("assay"))
        return std::nullopt;
    AssayPairsSpec spec;
    spec.assay = p.value("assay", std::string());
    spec.heldOut = p.value("held_out", 0.0);
    spec.split = p.value("split", std::string("random"));
    spec.splitSeed = p.value("split_seed", uint64_t(1));
    return spec;
}

bool sameFolder(const std::string& a, const std::string& b)
{
    std::error_code ec;
    return !a.empty() && !b.empty() && std::filesystem::equivalent(a, b, ec);
}

/// Spearman and pair accuracy of `scores` against `values` (higher is better in both).
HeldOutFigure figureOf(const std::vector<double>& scores, const std::vector<double>& values, int64_t& pairs)
{
    HeldOutFigure out;
    out.spearman = spearman(scores, values);
    double right = 0;
    pairs = 0;
    for (size_t i = 0; i < values.size(); ++i)
        for (size_t j = i + 1; j < values.size(); ++j) {
            if (values[i] == values[j])
                continue;
            ++pairs;
            const double agree = (scores[i] - scores[j]) * (values[i] - values[j]);
            right += agree > 0 ? 1.0 : agree == 0 ? 0.5 : 0.0;
        }
    out.pairAccuracy = pairs > 0 ? right / double(pairs) : std::nan("");
    return out;
}

} // namespace

std::string scoreInWords(const std::string& score)
{
    return score == "elbo" ? "ELBO (the likelihood bound)" : "implicit reward against the reference";
}

Result<std::optional<AssayPairsSpec>> measuredSplitOfRun(PreferenceStore& store, const ModelRecord& model,
                                                         const std::string& checkpointPath)
{
    std::optional<int64_t> runId;
    if (auto stored = store.model(model.id); stored && stored->has_value())
        runId = stored->value().runId;
    auto runs = store.runs();
    if (!runs)
        return makeError(runs.error());
    const std::string folder = std::filesystem::path(checkpointPath).parent_path().string();
    for (const RunRecord& run : runs.value()) {
        const json config = json::parse(run.configJson, nullptr, false);
        const std::string output = config.is_object() ? config.value("output_folder", std::string()) : std::string();
        if ((runId && run.id == *runId) || (!model.id.empty() && run.resultModelId == model.id) ||
            sameFolder(output, folder))
            return splitOfRunConfig(run.configJson);
    }
    return std::optional<AssayPairsSpec>{};
}

Result<AssayEvalResult> evaluateOnHeldOut(const AssayEvalSpec& spec, const std::function<void(int, int)>& progress)
{
    auto store = PreferenceStore::open(spec.storePath, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return makeError(store.error());
    auto scorer = PairScorer::load(
        spec.checkpoint, [&](const ModelRecord& policy) { return referencePathOf(*store.value(), policy); }, spec.device);
    if (!scorer)
        return makeError(scorer.error());
    AssayEvalResult out;
    out.split = spec.split;
    if (spec.splitFromRun) {
        auto trained = measuredSplitOfRun(*store.value(), scorer.value()->policy(), spec.checkpoint);
        if (!trained)
            return makeError(trained.error());
        if (trained->has_value() && (out.split.assay.empty() || trained->value().assay == out.split.assay)) {
            out.split = trained->value();
            out.splitFromRun = true;
        }
    }
    if (out.split.assay.empty())
        return makeError("name the assay (--assay): the model was not trained on measurements");
    if (out.split.heldOut <= 0)
        return makeError("name the held-out share (--held-out, e.g. 0.2): the model is judged on sequences its run "
                         "never saw, and its run held none out");
    AssayRecord assay;
    auto split = splitAssay(*store.value(), out.split, &assay);
    if (!split)
        return makeError(split.error());
    std::vector<MeasuredSequence> heldOut = std::move(split->second);
    if (heldOut.size() < 2)
        return makeError("the split holds out " + std::to_string(heldOut.size()) + " of the assay's sequences; at "
                         "least 2 are needed (a larger --held-out, or more measurements)");
    if (int64_t(heldOut.size()) > spec.maxSequences)
        heldOut.resize(size_t(spec.maxSequences));
    PairScorer& model = *scorer.value();
    if (model.taskKey() != assay.task)
        return makeError("the assay '" + assay.name + "' measured sequences of the task " + assay.task +
                         "; the model's task is " + model.taskKey());
    out.heldOut = int64_t(heldOut.size());
    out.selfReferenced = model.selfReferenced();
    std::vector<std::string> sequences;
    std::vector<double> values;
    for (const MeasuredSequence& s : heldOut) {
        sequences.push_back(s.sequence);
        values.push_back(assay.direction == "lower" ? -s.mean : s.mean);
    }
    const int total = out.selfReferenced ? 1 : 3;
    int done = 0;
    const auto add = [&](const std::string& who, const std::string& score, const std::vector<double>& scores) {
        HeldOutFigure figure = figureOf(scores, values, out.pairs);
        figure.model = who;
        figure.score = score;
        out.figures.push_back(figure);
        if (progress)
            progress(++done, total);
    };
    // Both bounds with one seed: the same times and masks for the reference and the model, so their
    // figures differ by what fine-tuning changed, not by the draws.
    for (const auto which : {PairScorer::Which::Reference, PairScorer::Which::Policy}) {
        if (out.selfReferenced && which == PairScorer::Which::Policy)
            break;
        auto bounds = model.likelihoodBounds(sequences, which, spec.seed, spec.draws);
        if (!bounds) {
            out.note = bounds.error();
            break;
        }
        add(out.selfReferenced ? "pretrained" : which == PairScorer::Which::Reference ? "reference" : "fine-tuned",
            "elbo", bounds.value());
    }
    if (out.selfReferenced)
        return out;
    // Each sequence's reward up to one constant: its margin over the first held-out sequence.
    std::vector<ShownPair> pairs;
    for (const std::string& s : sequences)
        pairs.push_back(ShownPair{0, s, sequences.front(), "", "", assay.task, false});
    auto margins = model.margins(pairs, spec.seed, spec.draws);
    if (!margins)
        return makeError(margins.error());
    std::vector<double> rewards = margins.value();
    rewards[0] = 0;
    add("fine-tuned", "implicit-reward", rewards);
    return out;
}

} // namespace d2dpo
