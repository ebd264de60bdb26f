// SPDX-License-Identifier: GPL-3.0-or-later
// Throughput figures as `d2dpo bench` measures them: D2-DPO steps/s, pretraining steps/s and
// sampling sequences/s at a small, a large and a long setting (each the median over timed calls
// after warm-up), and the cached against the reference sampler. Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "base/precision.h"
#include "base/result.h"

namespace d2dpo {

struct BenchSetting {
    std::string name;
    int dModel;
    int layers;
    int heads;
    int length;
    int batch;
};

/// small, large, and long (the small width at N = 256: how cost grows with length).
const std::vector<BenchSetting>& benchSettings();

struct BenchRun {
    uint64_t seed = 0;
    std::string device = "auto";
    int samplingSteps = 64;
    double minSeconds = 3.0; ///< time spent on each figure (one call longer than this is enough)
    int warmup = 1;          ///< untimed calls first
    int batchPiece = 0;      ///< DpoConfig::batchPiece of the D2-DPO figure
    int loraRank = 0;        ///< DpoConfig::loraRank of the D2-DPO figure (models brought in)
    Precision precision = Precision::Float32; ///< DpoConfig::precision of the D2-DPO figure
};

struct BenchFigures {
    double dpoStepsPerSecond = 0;
    double pretrainStepsPerSecond = 0;
    double samplesPerSecond = 0;
    int64_t parameters = 0;
    /// At a precision other than float32: the largest |log p - log p at float32| at masked positions
    /// of the model's D2-DPO batch (NaN at float32).
    double logProbabilityGap = std::numeric_limits<double>::quiet_NaN();
    int64_t estimatedDpoPeakBytes = 0; ///< what the settings' memory check expects of the D2-DPO step (models from files)
};

Result<BenchFigures> measureSetting(const BenchSetting& setting, const BenchRun& run);
/// The same figures for a checkpoint's model, whatever its kind (an imported TorchScript model
/// included), at `batch` pairs per D2-DPO step and `batch` sequences per sampling call.
Result<BenchFigures> measureModelFile(const std::string& checkpointPath, int batch, const BenchRun& run);

/// One row of the sampling study: sequences/s and denoiser passes per sequence of the cached and
/// the reference sampler. `reused` is false where nothing can be reused (time-conditioned model
/// with eta > 0): both modes run the same algorithm and nothing is measured.
struct SamplingStudyRow {
    bool timeConditioned = false;
    double eta = 0;
    int steps = 0;
    bool reused = true;
    double cachedRate = 0, referenceRate = 0;
    double cachedPasses = 0, referencePasses = 0;
};

/// At N 16, d_model 64, 2 layers, for 64, 256 and 1000 Euler steps; each row is reported as soon
/// as it is measured.
Status runSamplingStudy(const BenchRun& run, const std::function<void(const SamplingStudyRow&)>& report);

} // namespace d2dpo
