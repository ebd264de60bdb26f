// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/configlimits.h"

namespace d2dpo {

using nlohmann::json;
using namespace limits;

namespace {

json modelJson(const ModelConfig& c)
{
    return {{"d_model", c.dModel},
            {"layers", c.layers},
            {"heads", c.heads},
            {"ff_multiplier", c.ffMultiplier},
            {"time_conditioning", c.timeConditioning}};
}
json noiseJson(const NoiseConfig& c) { return {{"process", c.process}, {"eta", c.eta}}; }

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

} // namespace

std::string toJson(const ModelSpec& spec, bool withData)
{
    return json{{"task", taskConfigToJson(spec.task, withData)}, {"model", modelJson(spec.model)}, {"noise", noiseJson(spec.noise)}}
        .dump();
}

std::string toJson(const PretrainConfig& c)
{
    return json{{"kind", "pretrain"},     {"steps", c.steps},
                {"batch", c.batch},       {"learning_rate", c.learningRate},
                {"elbo_weighting", c.elboWeighting}}
        .dump();
}

std::string toJson(const DpoConfig& c)
{
    return json{{"kind", "d2dpo"},
                {"beta", c.beta},
                {"learning_rate", c.learningRate},
                {"batch", c.batch},
                {"steps", c.steps},
                {"t_samples_per_pair", c.tSamplesPerPair},
                {"vrpo_samples", c.vrpoSamples},
                {"t_sampling", c.tSampling},
                {"mask_coupling", c.maskCoupling},
                {"loss_type", c.lossType},
                {"label_smoothing", c.labelSmoothing},
                {"rpo_alpha", c.rpoAlpha},
                {"keep_best", c.keepBest},
                {"keep_best_vsr_slack", c.keepBestVsrSlack},
                {"t_epsilon", c.tEpsilon},
                {"eval_every", c.evalEvery},
                {"eval_samples", c.evalSamples},
                {"checkpoint_every", c.checkpointEvery},
                {"log_every", c.logEvery}}
        .dump();
}

Result<DpoConfig> dpoConfigFromJson(const std::string& text)
{
    try {
        const json j = json::parse(text);
        DpoConfig c;
        c.beta = j.value("beta", c.beta);
        c.learningRate = j.value("learning_rate", c.learningRate);
        c.batch = j.value("batch", c.batch);
        c.steps = j.value("steps", c.steps);
        c.tSamplesPerPair = j.value("t_samples_per_pair", c.tSamplesPerPair);
        c.vrpoSamples = j.value("vrpo_samples", c.vrpoSamples);
        c.tSampling = j.value("t_sampling", c.tSampling);
        c.maskCoupling = j.value("mask_coupling", c.maskCoupling);
        c.lossType = j.value("loss_type", c.lossType);
        c.labelSmoothing = j.value("label_smoothing", c.labelSmoothing);
        c.rpoAlpha = j.value("rpo_alpha", c.rpoAlpha);
        c.keepBest = j.value("keep_best", c.keepBest);
        c.keepBestVsrSlack = j.value("keep_best_vsr_slack", c.keepBestVsrSlack);
        c.tEpsilon = j.value("t_epsilon", c.tEpsilon);
        c.evalEvery = j.value("eval_every", c.evalEvery);
        c.evalSamples = j.value("eval_samples", c.evalSamples);
        c.checkpointEvery = j.value("checkpoint_every", c.checkpointEvery);
        c.logEvery = j.value("log_every", c.logEvery);
        if (Status s = validate(c); !s)
            return makeError(s.error());
        return c;
    } catch (const json::exception& e) {
        return makeError(std::string("D2-DPO configuration is not valid JSON of the expected shape: ") + e.what());
    }
}

Result<SamplingConfig> samplingConfigFromJson(const std::string& text)
{
    try {
        const json j = json::parse(text);
        SamplingConfig c;
        // Settings recorded before the exact sampler existed were Euler's.
        c.sampler = j.value("sampler", std::string("euler"));
        c.steps = j.value("steps", c.steps);
        c.batch = j.value("batch", c.batch);
        if (Status s = validate(c); !s)
            return makeError(s.error());
        return c;
    } catch (const json::exception& e) {
        return makeError(std::string("sampling configuration is not valid JSON of the expected shape: ") + e.what());
    }
}

std::string toJson(const SamplingConfig& c)
{
    return json{{"sampler", c.sampler}, {"steps", c.steps}, {"batch", c.batch}}.dump();
}

Result<ModelSpec> modelSpecFromJson(const std::string& text)
{
    try {
        const json j = json::parse(text);
        ModelSpec spec;
        spec.task = taskConfigFromJson(j.at("task"));
        const json& model = j.at("model");
        spec.model.dModel = model.at("d_model").get<int>();
        spec.model.layers = model.at("layers").get<int>();
        spec.model.heads = model.at("heads").get<int>();
        spec.model.ffMultiplier = model.at("ff_multiplier").get<int>();
        spec.model.timeConditioning = model.at("time_conditioning").get<bool>();
        const json& noise = j.at("noise");
        spec.noise.process = noise.at("process").get<std::string>();
        spec.noise.eta = noise.at("eta").get<double>();
        if (Status s = validate(spec); !s)
            return makeError(s.error());
        return spec;
    } catch (const json::exception& e) {
        return makeError(std::string("model configuration is not valid JSON of the expected shape: ") + e.what());
    }
}

Status validate(const ModelConfig& c)
{
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

Status validate(const NoiseConfig& c)
{
    if (c.process != "masking" && c.process != "uniform")
        return makeError("unknown noise process '" + c.process + "' (known: masking, uniform)");
    if (!(c.eta >= 0) || c.eta > kMaxEta)
        return makeError("eta must be in [0, " + number(kMaxEta) + "] (got " + std::to_string(c.eta) + ")");
    return Ok{};
}

Status validate(const SamplingConfig& c)
{
    if (c.steps < 1 || c.steps > kMaxSamplingSteps)
        return makeError("sampling steps must be in " + range(1, kMaxSamplingSteps) + " (got " +
                         std::to_string(c.steps) + ")");
    if (c.batch < 1)
        return makeError("sampling batch must be >= 1");
    if (c.sampler != "exact" && c.sampler != "euler")
        return makeError("unknown sampler '" + c.sampler + "' (known: exact, euler)");
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

Status validate(const DpoConfig& c)
{
    if (Status s = positive(c.beta, "beta"); !s)
        return s;
    if (c.beta > kMaxBeta)
        return makeError("beta must be <= " + number(kMaxBeta) + " (got " + std::to_string(c.beta) + ")");
    if (Status s = positive(c.learningRate, "learning rate"); !s)
        return s;
    if (c.learningRate > kMaxLearningRate)
        return makeError("learning rate must be <= " + number(kMaxLearningRate) + " (got " +
                         std::to_string(c.learningRate) + ")");
    if (c.steps < 1)
        return makeError("D2-DPO steps must be >= 1 (got " + std::to_string(c.steps) + ")");
    if (c.steps > kMaxSteps)
        return makeError("D2-DPO steps must be <= " + std::to_string(kMaxSteps) + " (got " + std::to_string(c.steps) +
                         ")");
    if (c.batch < 1 || c.batch > kMaxBatch)
        return makeError("D2-DPO batch must be in " + range(1, kMaxBatch) + " (got " + std::to_string(c.batch) + ")");
    if (c.tSamplesPerPair < 1 || c.tSamplesPerPair > kMaxTSamplesPerPair)
        return makeError("t samples per pair must be in " + range(1, kMaxTSamplesPerPair));
    if (!(c.tEpsilon > 0) || c.tEpsilon >= 1)
        return makeError("t epsilon must be in (0, 1)");
    if (c.vrpoSamples < 1 || c.vrpoSamples > kMaxTSamplesPerPair)
        return makeError("VRPO samples must be in " + range(1, kMaxTSamplesPerPair));
    if (c.tSampling != "independent" && c.tSampling != "stratified")
        return makeError("unknown t sampling '" + c.tSampling + "' (known: independent, stratified)");
    if (c.maskCoupling != "shared-t" && c.maskCoupling != "complementary")
        return makeError("unknown mask coupling '" + c.maskCoupling + "' (known: shared-t, complementary)");
    if (c.lossType != "sigmoid" && c.lossType != "ipo" && c.lossType != "hinge" && c.lossType != "robust")
        return makeError("unknown loss type '" + c.lossType + "' (known: sigmoid, ipo, hinge, robust)");
    if (!(c.labelSmoothing >= 0) || !(c.labelSmoothing < 0.5))
        return makeError("label smoothing must be in [0, 0.5) (got " + std::to_string(c.labelSmoothing) + ")");
    if (!(c.rpoAlpha >= 0) || !std::isfinite(c.rpoAlpha))
        return makeError("rpo alpha must be a finite number >= 0 (got " + std::to_string(c.rpoAlpha) + ")");
    if (!c.keepBest.empty()) {
        const std::string name = c.keepBest.front() == '-' ? c.keepBest.substr(1) : c.keepBest;
        const bool wellFormed = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
            return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '/';
        });
        if (!wellFormed)
            return makeError("keep-best needs a metric name ('rule', 'vsr', 'odd_ratio', a leading '-' to minimise; got '" +
                             c.keepBest + "')");
    }
    if (!(c.keepBestVsrSlack >= 0) || c.keepBestVsrSlack > 1)
        return makeError("keep-best VSR slack must be in [0, 1]");
    if (c.evalEvery < 0 || c.evalEvery > kMaxEvalEvery || c.evalSamples < 1 || c.evalSamples > kMaxEvalSamples)
        return makeError("evaluation needs eval-every in " + range(0, kMaxEvalEvery) + " and eval-samples in " +
                         range(1, kMaxEvalSamples));
    return Ok{};
}

Status validate(const ModelSpec& spec)
{
    if (Status s = validate(spec.task); !s)
        return s;
    if (Status s = validate(spec.model); !s)
        return s;
    return validate(spec.noise);
}

} // namespace d2dpo
