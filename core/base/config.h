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

/// Euler CTMC sampling.
struct SamplingConfig {
    int steps = 64;
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
    int tSamplesPerPair = 1;     ///< independent (t, x_t) draws per pair in one step
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
