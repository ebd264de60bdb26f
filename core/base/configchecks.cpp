// SPDX-License-Identifier: GPL-3.0-or-later
// validate() and problems() of the configs (config.h): every limit from configlimits.h, every
// message a sentence that names the setting as the Train view's form and the CLI show it.
#include "base/config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "base/configlimits.h"
#include "base/samplingchecks.h"

namespace d2dpo {

using namespace limits;

namespace {

/// "lo..hi" as the messages write a range.
std::string range(int64_t lo, int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

/// A bound as people write it: "100", "10000", "0.5".
std::string number(double value)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

Status positive(double value, const char* what)
{
    if (!(value > 0))
        return makeError(std::string(what) + " must be > 0 (got " + std::to_string(value) + ")");
    return Ok{};
}

/// "Steps must be between 1 and 10000000." for a whole-number setting outside its range.
std::string between(const char* what, int64_t lo, int64_t hi)
{
    return std::string(what) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ".";
}

/// Ok, or the first problem as an error.
Status first(const std::vector<ConfigProblem>& found)
{
    if (found.empty())
        return Ok{};
    return makeError(found.front().message);
}

bool oneOf(const std::string& value, std::initializer_list<const char*> known)
{
    return std::any_of(known.begin(), known.end(), [&](const char* k) { return value == k; });
}

} // namespace

std::vector<ConfigProblem> problems(const NoiseConfig& c)
{
    std::vector<ConfigProblem> found;
    if (!oneOf(c.process, {"masking", "uniform"}))
        found.push_back({"process", "unknown noise process '" + c.process + "' (known: masking, uniform)"});
    if (!(c.eta >= 0) || c.eta > kMaxEta)
        found.push_back({"eta", "Eta must be between 0 and " + number(kMaxEta) + "."});
    return found;
}

std::vector<ConfigProblem> problems(const SamplingConfig& c)
{
    std::vector<ConfigProblem> found;
    if (c.steps < 1 || c.steps > kMaxSamplingSteps)
        found.push_back({"steps", between("Sampling steps", 1, kMaxSamplingSteps)});
    if (c.batch < 1)
        found.push_back({"batch", "The sampling batch must be at least 1."});
    if (!oneOf(c.sampler, {"exact", "euler", "confident"}))
        found.push_back({"sampler", "Unknown sampler '" + c.sampler + "' (known: exact, euler, confident)."});
    return found;
}

std::vector<ConfigProblem> problems(const DpoConfig& c)
{
    std::vector<ConfigProblem> found;
    if (!(c.beta > 0))
        found.push_back({"beta", "Beta must be greater than 0 (it scales the implicit reward; the paper uses 0.1)."});
    else if (c.beta > kMaxBeta)
        found.push_back({"beta", "Beta must be at most " + number(kMaxBeta) + "."});
    if (!(c.learningRate > 0 && c.learningRate <= kMaxLearningRate))
        found.push_back({"learning_rate", "Learning rate must be greater than 0 and at most " +
                                              number(kMaxLearningRate) + " (try 1e-4)."});
    if (c.batch < 1 || c.batch > kMaxBatch)
        found.push_back({"batch", between("Batch", 1, kMaxBatch)});
    if (c.batchPiece < 0 || c.batchPiece > kMaxBatch)
        found.push_back({"batch_piece", between("Pairs per pass", 0, kMaxBatch)});
    if (c.loraRank < 0 || c.loraRank > kMaxLoraRank)
        found.push_back({"lora_rank", between("The adapters' rank", 0, kMaxLoraRank)});
    if (c.steps < 1 || c.steps > kMaxSteps)
        found.push_back({"steps", between("Steps", 1, kMaxSteps)});
    if (c.tSamplesPerPair < 1 || c.tSamplesPerPair > kMaxTSamplesPerPair)
        found.push_back({"t_samples_per_pair", between("t-samples per pair", 1, kMaxTSamplesPerPair)});
    if (c.vrpoSamples < 1 || c.vrpoSamples > kMaxTSamplesPerPair)
        found.push_back({"vrpo_samples", between("VRPO samples", 1, kMaxTSamplesPerPair)});
    if (!(c.tEpsilon > 0) || c.tEpsilon >= 1)
        found.push_back({"t_epsilon", "t epsilon must be greater than 0 and below 1."});
    if (!oneOf(c.tSampling, {"independent", "stratified"}))
        found.push_back({"t_sampling", "Unknown t sampling '" + c.tSampling + "' (known: independent, stratified)."});
    if (!oneOf(c.maskCoupling, {"shared-t", "complementary"}))
        found.push_back(
            {"mask_coupling", "Unknown mask coupling '" + c.maskCoupling + "' (known: shared-t, complementary)."});
    if (!oneOf(c.lossType, {"sigmoid", "ipo", "hinge", "robust"}))
        found.push_back({"loss_type", "Unknown loss type '" + c.lossType + "' (known: sigmoid, ipo, hinge, robust)."});
    if (!(c.labelSmoothing >= 0) || !(c.labelSmoothing < 0.5))
        found.push_back({"label_smoothing", "Label smoothing must be at least 0 and below 0.5."});
    if (!(c.rpoAlpha >= 0) || !std::isfinite(c.rpoAlpha))
        found.push_back({"rpo_alpha", "The winner cross-entropy weight must be a finite number, 0 or more."});
    return found;
}

std::vector<ConfigProblem> problems(const DpoScheduleConfig& c)
{
    std::vector<ConfigProblem> found;
    if (!c.keepBest.empty()) {
        const std::string name = c.keepBest.front() == '-' ? c.keepBest.substr(1) : c.keepBest;
        const bool wellFormed = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
            return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '/';
        });
        if (!wellFormed)
            found.push_back({"keep_best", "keep-best needs a metric name ('rule', 'vsr', 'odd_ratio', a leading '-' "
                                          "to minimise; got '" + c.keepBest + "')."});
    }
    if (!(c.keepBestVsrSlack >= 0) || c.keepBestVsrSlack > 1)
        found.push_back({"keep_best_vsr_slack", "The keep-best VSR slack must be between 0 and 1."});
    if (c.evalEvery < 0 || c.evalEvery > kMaxEvalEvery)
        found.push_back({"eval_every", between("Evaluate every", 0, kMaxEvalEvery)});
    if (c.evalSamples < 1 || c.evalSamples > kMaxEvalSamples)
        found.push_back({"eval_samples", between("Evaluation samples", 1, kMaxEvalSamples)});
    return found;
}

Status validate(const NoiseConfig& c) { return first(problems(c)); }
Status validate(const SamplingConfig& c) { return first(problems(c)); }

Status validate(const SamplingConfig& sampling, const NoiseConfig& noise)
{
    if (Status s = validate(sampling); !s)
        return s;
    if (sampling.sampler == "confident" && !(noise.process == "masking" && noise.eta == 0))
        return makeError("The confident sampler needs the masking process without remasking (eta 0); use exact or "
                         "euler.");
    return Ok{};
}
Status validate(const DpoConfig& c) { return first(problems(c)); }
Status validate(const DpoScheduleConfig& c) { return first(problems(c)); }

Status validate(const ModelConfig& c)
{
    if (c.isBroughtIn()) {
        if (c.parameters < 1)
            return makeError("a model brought in needs its parameter count (got " + std::to_string(c.parameters) + ")");
        if (c.kind == "esm") {
            if (c.architecture != "ESM2" && c.architecture != "DPLM")
                return makeError("an ESM checkpoint's architecture must be ESM2 or DPLM (got '" + c.architecture + "')");
            if (c.keyPrefix != "" && c.keyPrefix != "net.")
                return makeError("an ESM checkpoint's key prefix must be '' or 'net.'");
            if (c.vocabulary.size != int64_t(c.modelTokens.size()))
                return makeError("a published checkpoint's vocabulary must name as many ids as its tokens");
        }
        if (c.kind == "mdlm") {
            if (c.architecture != "MDLM")
                return makeError("an MDLM checkpoint's architecture must be MDLM (got '" + c.architecture + "')");
            if (c.keyPrefix != "" && c.keyPrefix != "backbone.")
                return makeError("an MDLM checkpoint's key prefix must be '' or 'backbone.'");
            if (int64_t(c.modelTokens.size()) > c.vocabulary.size)
                return makeError("an MDLM checkpoint's tokens must fit its vocabulary's ids");
        }
        return validate(c.vocabulary);
    }
    if (c.kind != "transformer")
        return makeError("the model kind must be 'transformer', 'torchscript', 'esm' or 'mdlm' (got '" + c.kind + "')");
    if (c.dModel < kMinDModel || c.dModel > kMaxDModel)
        return makeError("d_model must be in " + range(kMinDModel, kMaxDModel) + " (got " + std::to_string(c.dModel) +
                         ")");
    if (c.layers < 1 || c.layers > kMaxLayers)
        return makeError("layers must be in " + range(1, kMaxLayers) + " (got " + std::to_string(c.layers) + ")");
    if (c.heads < 1 || c.dModel % c.heads != 0)
        return makeError("heads must be >= 1 and divide d_model (" + std::to_string(c.dModel) + " / " +
                         std::to_string(c.heads) + ")");
    if (c.ffMultiplier < 1 || c.ffMultiplier > kMaxFfMultiplier)
        return makeError("ff_multiplier must be in " + range(1, kMaxFfMultiplier) + " (got " +
                         std::to_string(c.ffMultiplier) + ")");
    return Ok{};
}



Status validate(const PretrainConfig& c)
{
    if (c.steps < 1)
        return makeError("pretraining steps must be >= 1 (got " + std::to_string(c.steps) + ")");
    if (c.batch < 1 || c.batch > kMaxBatch)
        return makeError("pretraining batch must be in " + range(1, kMaxBatch) + " (got " + std::to_string(c.batch) +
                         ")");
    if (Status s = positive(c.learningRate, "learning rate"); !s)
        return s;
    if (c.learningRate > kMaxLearningRate)
        return makeError("learning rate must be <= " + number(kMaxLearningRate) + " (got " +
                         std::to_string(c.learningRate) + ")");
    return Ok{};
}


Status validate(const ModelSpec& spec)
{
    if (Status s = validate(spec.task); !s)
        return s;
    if (Status s = validate(spec.model); !s)
        return s;
    if (spec.model.isBroughtIn()) {
        // The task's tokens are the vocabulary's: the same symbols in the same order, a pad when it has one.
        const ModelVocabulary& v = spec.model.vocabulary;
        if (spec.task.name == "sequences" && (spec.task.symbols != v.symbols || spec.task.padded != v.padded()))
            return makeError("the task's symbols '" + spec.task.symbols + "' are not the model vocabulary's '" + v.symbols +
                             "'" + (spec.task.padded != v.padded() ? " (or one has a pad and the other not)" : ""));
        if (spec.task.name == "binary-integers" && (v.symbols != "01" || v.padded()))
            return makeError("the binary-integers task needs a vocabulary of exactly the symbols 0 and 1 and no pad");
        if (spec.noise.process != "masking")
            return makeError("a model brought in is aligned under the masking process (got '" + spec.noise.process + "')");
    }
    return validate(spec.noise);
}

} // namespace d2dpo
