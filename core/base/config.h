// SPDX-License-Identifier: GPL-3.0-or-later
// Plain configuration structs for every part of an experiment, with JSON round trips and
// validation. No torch here: the UI and the store include this header.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "base/taskconfig.h"

namespace d2dpo {

/// The denoiser's shape (see denoiser.h).
struct ModelConfig {
    int dModel = 64;
    int layers = 2;
    int heads = 4;
    int ffMultiplier = 4;          ///< feed-forward width = ffMultiplier * dModel
    bool timeConditioning = true;  ///< off: the denoiser ignores t (sampler caching becomes exact)
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

struct DpoConfig {
    double beta = 0.1;
    double learningRate = 1e-4;
    int batch = 64;              ///< preference pairs per step
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
    // Keep the best checkpoint as best.d2dpo: by this metric ("" off; "rule": the task's rule share; a
    // leading '-' minimises), among evaluations whose VSR is >= the reference's - keepBestVsrSlack.
    std::string keepBest;
    double keepBestVsrSlack = 0.01;
    double tEpsilon = 1e-3;      ///< t ~ U[0, 1 - tEpsilon]: keeps w(t) = beta (1+eta t)/(1-t) finite
    int evalEvery = 50;          ///< 0: evaluate only at the end
    int evalSamples = 2000;
    int checkpointEvery = 0;     ///< 0: only the final checkpoint
    int logEvery = 1;
    int hostReadEvery = 0; ///< steps between host reads of the loss; 0: every step on the CPU, 25 on a GPU (not saved)
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
std::string toJson(const DpoConfig& config);
std::string toJson(const SamplingConfig& config);
Result<ModelSpec> modelSpecFromJson(const std::string& json);
/// The configs as toJson wrote them (keys it did not write take their defaults), validated.
Result<DpoConfig> dpoConfigFromJson(const std::string& json);
Result<SamplingConfig> samplingConfigFromJson(const std::string& json);

/// Each returns Ok or the first problem, phrased for the user.
Status validate(const ModelConfig& config);
Status validate(const NoiseConfig& config);
Status validate(const SamplingConfig& config);
Status validate(const PretrainConfig& config);
Status validate(const DpoConfig& config);
Status validate(const ModelSpec& spec);

} // namespace d2dpo
