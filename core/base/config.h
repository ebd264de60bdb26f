// SPDX-License-Identifier: GPL-3.0-or-later
// Plain configuration structs for every part of an experiment, with JSON round trips and
// validation. No torch here: the UI and the store include this header.
//
// How settings types are named, here and everywhere in the project (one word per kind):
// - `XxxConfig`: what a user sets and a file stores (a form, CLI flags, a run's JSON). Plain
//   values with defaults, a toJson / xxxFromJson pair and a validate(); e.g. DpoConfig.
// - `XxxSpec`: what defines a job or a model: everything needed to run or rebuild it, made of
//   Configs plus paths and ids; e.g. ModelSpec, DpoJobSpec, MeasurementSpec.
// - `XxxOptions`: construction arguments of one class, PyTorch's habit (required ones in the
//   constructor, the rest chained setters); e.g. DpoTrainerOptions, DenoiserOptions.
// - `XxxOutcome` / `XxxEvent` / `XxxRecord`: what comes back (a job's result, a listener's
//   payload, a row of the store), never something a caller fills in.
// A Config holds one concern: the algorithm's settings (DpoConfig) are apart from when a run
// looks at itself (DpoScheduleConfig), though a run stores both in one JSON object.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/modelvocabulary.h"
#include "base/precision.h"
#include "base/result.h"
#include "base/taskconfig.h"

namespace d2dpo {

/// The denoiser: the project's own transformer (its shape), a TorchScript module brought in, or a
/// published checkpoint run natively: ESM2/DPLM or MDLM (model/denoiser.h, model/publishedarchitectures.h).
struct ModelConfig {
    std::string kind = "transformer"; ///< "transformer", "torchscript", "esm" or "mdlm"
    // "transformer" only.
    int dModel = 64;
    int layers = 2;
    int heads = 4;
    int ffMultiplier = 4;          ///< feed-forward width = ffMultiplier * dModel
    bool timeConditioning = true;  ///< off: the denoiser ignores t (sampler caching becomes exact)
    // A model brought in ("torchscript", "esm" or "mdlm"); a TorchScript module travels in the
    // checkpoint beside the weights, a published network is rebuilt from its config.
    ModelVocabulary vocabulary;    ///< the model's token ids of the task's tokens
    int64_t parameters = 0;        ///< its parameter count (the memory estimate)
    std::string source;            ///< the file it was imported from, for people
    // "esm" and "mdlm": what rebuilds the network and what export writes back (io/publishedweights.h).
    std::string architecture;      ///< "ESM2", "DPLM" or "MDLM"
    std::string keyPrefix;         ///< before every weight's key: "" (ESM2), "net." (DPLM), "backbone." or "" (MDLM)
    std::string weightsConfig;     ///< its config.json, verbatim
    std::vector<std::string> modelTokens; ///< its vocab.txt, a token a line (MDLM: none when a contract named the ids)

    bool isTorchScript() const { return kind == "torchscript"; }
    bool isPublishedWeights() const { return kind == "esm" || kind == "mdlm"; }
    /// A model brought in: its tokens are a vocabulary contract's, its sequences framed by it.
    bool isBroughtIn() const { return isTorchScript() || isPublishedWeights(); }
};

/// The forward noise process and its reverse-time remasking coefficient eta.
struct NoiseConfig {
    std::string process = "masking";
    double eta = 0.0;
};

/// How sequences are drawn (diffusion/sampler.h). "exact": the continuous-time reverse process
/// (masking with eta = 0: one position unmasked per pass; otherwise Euler with a fine step, at
/// least 8 D steps); "euler": `steps` Euler steps, which unmask several positions at once.
struct SamplingConfig {
    std::string sampler = "exact";
    int steps = 64;    ///< Euler steps ("euler"; the least "exact" uses where it falls back to Euler)
    int batch = 1000;  ///< sequences generated per forward pass (memory bound)
};

struct PretrainConfig {
    int steps = 3000;
    int batch = 128;
    double learningRate = 1e-3;
    bool elboWeighting = false;  ///< weight each example's loss by 1/(1-t)
    int logEvery = 10;
};

/// D2-DPO, the algorithm: what changes what is learnt.
struct DpoConfig {
    double beta = 0.1;
    double learningRate = 1e-4;
    int batch = 64;              ///< preference pairs per step
    /// Pairs per forward and backward pass: a step runs its batch in pieces of this many pairs and
    /// accumulates their gradients, the same update with one piece's activations in memory (0: the
    /// whole batch at once). Changes memory and speed, never what is learnt.
    int batchPiece = 0;
    /// The format of a step's matrix products (base/precision.h): bf16 rounds their operands and
    /// accumulates in float32; the weights, Adam and the loss stay float32. Evaluations sample at
    /// float32 whatever this says, so curves at either precision measure the same way.
    Precision precision = Precision::Float32;
    /// Low-rank adapters for a model brought in as TorchScript (model/loradenoiser.h): the rank r
    /// of the B A added to each targeted weight matrix, only A and B trained; 0: every weight.
    int loraRank = 0;
    std::string loraTargets = "^(?!.*embed).*weight$"; ///< which 2-D weights get adapters (regex)
    int steps = 300;
    int tSamplesPerPair = 1;     ///< independent (t, x_t) draws per pair, a loss term each (averaged outside the log-sigmoid)
    // The estimator of the divergences D_w, D_l (diffusion/dpoestimator.h).
    int vrpoSamples = 1;                     ///< draws per pair averaged inside the log-sigmoid (LLaDA 1.5's VRPO)
    std::string tSampling = "independent";   ///< "independent" t per row, or "stratified" across the batch
    std::string maskCoupling = "shared-t";   ///< "shared-t": winner and loser share t; "complementary": also a
                                             ///< second draw at 1 - t masking exactly the positions the first kept
    // The loss on the margin h = D_w - D_l (TRL's loss_type names), plus a cross-entropy term.
    std::string lossType = "sigmoid";        ///< sigmoid (the paper), ipo, hinge, robust
    double labelSmoothing = 0;               ///< sigmoid: conservative DPO's smoothing; robust: the flip rate
    double rpoAlpha = 0;                     ///< weight of the winner's masked cross-entropy (TRL's rpo_alpha)
    double tEpsilon = 1e-3;      ///< t ~ U[0, 1 - tEpsilon]: keeps w(t) = beta (1+eta t)/(1-t) finite
};

/// When a D2-DPO run looks at itself: how often it evaluates, checkpoints, reports and reads its
/// loss on the host, and which checkpoint it keeps as the best. None of it changes what is learnt.
struct DpoScheduleConfig {
    int evalEvery = 50;          ///< 0: evaluate only at the end
    int evalSamples = 2000;      ///< base/measurement.h's kMeasurementSamples
    int checkpointEvery = 0;     ///< 0: only the final checkpoint
    int logEvery = 1;
    int hostReadEvery = 0; ///< steps between host reads of the loss; 0: every step on the CPU, 25 on a GPU (not saved)
    // Keep the best checkpoint as best.d2dpo: by this metric ("" off; "rule": the task's rule share; a
    // leading '-' minimises), among evaluations whose VSR is >= the reference's - keepBestVsrSlack.
    std::string keepBest;
    double keepBestVsrSlack = 0.01;
};

/// Everything that defines a model: enough to rebuild it from a checkpoint.
struct ModelSpec {
    TaskConfig task;
    ModelConfig model;
    NoiseConfig noise;
};

/// `withData` false leaves the task's training sequences out (see taskconfig.h).
std::string toJson(const ModelSpec& spec, bool withData = true);
std::string toJson(const PretrainConfig& config);
/// One JSON object with both (a run's "dpo" settings, as runs have always been stored).
std::string toJson(const DpoConfig& config, const DpoScheduleConfig& schedule);
std::string toJson(const SamplingConfig& config);
Result<ModelSpec> modelSpecFromJson(const std::string& json);
/// The configs as toJson wrote them (keys it did not write take their defaults), validated.
Result<DpoConfig> dpoConfigFromJson(const std::string& json);
Result<DpoScheduleConfig> dpoScheduleFromJson(const std::string& json);
Result<SamplingConfig> samplingConfigFromJson(const std::string& json);

/// A setting outside its limits: the setting (as its JSON key names it) and what is wrong, in a
/// sentence for the user. The Train view's form marks the setting's field and shows the sentence,
/// so the form and the CLI say the same words.
struct ConfigProblem {
    std::string setting;
    std::string message;
};
std::vector<ConfigProblem> problems(const NoiseConfig& config);
std::vector<ConfigProblem> problems(const SamplingConfig& config);
std::vector<ConfigProblem> problems(const DpoConfig& config);
std::vector<ConfigProblem> problems(const DpoScheduleConfig& config);

/// Each returns Ok or the first problem, phrased for the user.
Status validate(const ModelConfig& config);
Status validate(const NoiseConfig& config);
Status validate(const SamplingConfig& config);
Status validate(const PretrainConfig& config);
Status validate(const DpoConfig& config);
Status validate(const DpoScheduleConfig& config);
Status validate(const ModelSpec& spec);

} // namespace d2dpo
