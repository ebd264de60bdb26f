// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/config.h"
#include "base/untrustedtext.h"


#include <nlohmann/json.hpp>


namespace d2dpo {

using nlohmann::json;

namespace {

json modelJson(const ModelConfig& c)
{
    if (c.isPublishedWeights())
        return {{"kind", c.kind},
                {"vocabulary", modelVocabularyToJson(c.vocabulary)},
                {"parameters", c.parameters},
                {"source", c.source},
                {"architecture", c.architecture},
                {"key_prefix", c.keyPrefix},
                {"config", c.weightsConfig},
                {"tokens", c.modelTokens}};
    if (c.isTorchScript())
        return {{"kind", c.kind},
                {"vocabulary", modelVocabularyToJson(c.vocabulary)},
                {"parameters", c.parameters},
                {"source", c.source}};
    return {{"d_model", c.dModel},
            {"layers", c.layers},
            {"heads", c.heads},
            {"ff_multiplier", c.ffMultiplier},
            {"time_conditioning", c.timeConditioning}};
}
json noiseJson(const NoiseConfig& c) { return {{"process", c.process}, {"eta", c.eta}}; }

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

std::string toJson(const DpoConfig& c, const DpoScheduleConfig& r)
{
    return json{{"kind", "d2dpo"},
                {"beta", c.beta},
                {"learning_rate", c.learningRate},
                {"batch", c.batch},
                {"batch_piece", c.batchPiece},
                {"precision", precisionName(c.precision)},
                {"lora_rank", c.loraRank},
                {"lora_targets", c.loraTargets},
                {"steps", c.steps},
                {"t_samples_per_pair", c.tSamplesPerPair},
                {"vrpo_samples", c.vrpoSamples},
                {"t_sampling", c.tSampling},
                {"mask_coupling", c.maskCoupling},
                {"loss_type", c.lossType},
                {"label_smoothing", c.labelSmoothing},
                {"rpo_alpha", c.rpoAlpha},
                {"keep_best", r.keepBest},
                {"keep_best_vsr_slack", r.keepBestVsrSlack},
                {"t_epsilon", c.tEpsilon},
                {"eval_every", r.evalEvery},
                {"eval_samples", r.evalSamples},
                {"checkpoint_every", r.checkpointEvery},
                {"log_every", r.logEvery}}
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
        c.batchPiece = j.value("batch_piece", c.batchPiece);
        if (j.contains("precision")) { // absent in runs before precisions existed: float32
            const auto name = j.at("precision").get<std::string>();
            const auto precision = precisionFromName(name);
            if (!precision)
                return makeError("D2-DPO configuration: precision '" + excerpt(name) + "' is neither float32 nor bf16");
            c.precision = *precision;
        }
        c.loraRank = j.value("lora_rank", c.loraRank);
        c.loraTargets = j.value("lora_targets", c.loraTargets);
        c.steps = j.value("steps", c.steps);
        c.tSamplesPerPair = j.value("t_samples_per_pair", c.tSamplesPerPair);
        c.vrpoSamples = j.value("vrpo_samples", c.vrpoSamples);
        c.tSampling = j.value("t_sampling", c.tSampling);
        c.maskCoupling = j.value("mask_coupling", c.maskCoupling);
        c.lossType = j.value("loss_type", c.lossType);
        c.labelSmoothing = j.value("label_smoothing", c.labelSmoothing);
        c.rpoAlpha = j.value("rpo_alpha", c.rpoAlpha);
        c.tEpsilon = j.value("t_epsilon", c.tEpsilon);
        if (Status s = validate(c); !s)
            return makeError(s.error());
        return c;
    } catch (const json::exception& e) {
        return makeError(std::string("D2-DPO configuration is not valid JSON of the expected shape: ") + e.what());
    }
}

Result<DpoScheduleConfig> dpoScheduleFromJson(const std::string& text)
{
    try {
        const json j = json::parse(text);
        DpoScheduleConfig r;
        r.keepBest = j.value("keep_best", r.keepBest);
        r.keepBestVsrSlack = j.value("keep_best_vsr_slack", r.keepBestVsrSlack);
        r.evalEvery = j.value("eval_every", r.evalEvery);
        r.evalSamples = j.value("eval_samples", r.evalSamples);
        r.checkpointEvery = j.value("checkpoint_every", r.checkpointEvery);
        r.logEvery = j.value("log_every", r.logEvery);
        if (Status s = validate(r); !s)
            return makeError(s.error());
        return r;
    } catch (const json::exception& e) {
        return makeError(std::string("D2-DPO schedule is not valid JSON of the expected shape: ") + e.what());
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
        spec.model.kind = model.value("kind", std::string("transformer"));
        if (spec.model.isBroughtIn()) {
            spec.model.vocabulary = modelVocabularyFromJson(model.at("vocabulary"));
            spec.model.parameters = model.at("parameters").get<int64_t>();
            spec.model.source = model.value("source", std::string());
            if (spec.model.isPublishedWeights()) {
                spec.model.architecture = model.at("architecture").get<std::string>();
                spec.model.keyPrefix = model.at("key_prefix").get<std::string>();
                spec.model.weightsConfig = model.at("config").get<std::string>();
                spec.model.modelTokens = model.at("tokens").get<std::vector<std::string>>();
            }
        } else {
            spec.model.dModel = model.at("d_model").get<int>();
            spec.model.layers = model.at("layers").get<int>();
            spec.model.heads = model.at("heads").get<int>();
            spec.model.ffMultiplier = model.at("ff_multiplier").get<int>();
            spec.model.timeConditioning = model.at("time_conditioning").get<bool>();
        }
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

} // namespace d2dpo
