// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/memoryestimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <sys/resource.h>

namespace d2dpo {

namespace {

/// Floats a transformer keeps per token while one batch is in flight: per layer the normed
/// inputs, q/k/v, attention weights (heads x length), the attention output, the 4x MLP with its
/// activation, residuals; then embeddings and the logits with their softmax.
double floatsPerToken(const ModelSpec& spec)
{
    if (spec.model.isBroughtIn()) {
        // Its architecture is not known here: a transformer of P parameters is about sqrt(P / 12L)
        // wide and keeps about 16 L d floats a token; 16 sqrt(P) covers L d up to sqrt(P), which
        // the common shapes stay under. Plus the logits over its whole vocabulary, with softmax.
        return 16.0 * std::sqrt(double(spec.model.parameters)) + 4.0 * double(spec.model.vocabulary.size);
    }
    const double d = spec.model.dModel;
    const double ff = spec.model.ffMultiplier * d;
    const double attention = double(spec.model.heads) * spec.task.length;
    const double perLayer = 8 * d + 2 * ff + 2 * attention;
    const double vocab = 3; // S + mask, generous for the binary task's 2 tokens
    return spec.model.layers * perLayer + 4 * d + 4 * vocab;
}

/// Floats a model brought in keeps per token for the backward pass, already with its margin. Its
/// architecture is not known here, and attention keeps heads x length floats a token in every
/// layer: the cost grows with the length. Measured on ESM2's shapes (8M and 35M parameters,
/// lengths 150 and 300, 8 and 32 pairs; docs/benchmarks.md) it is 32-33 sqrt(P) floats a token
/// at length 150 and 48-60 sqrt(P) at 300 (their heads x layers are about 0.044 sqrt(P)); this is
/// 1.2-1.7x that, plus the logits over the whole vocabulary with their softmax.
double scriptedTrainingFloatsPerToken(const ModelSpec& spec)
{
    const double length = spec.task.length + double(spec.model.vocabulary.begin.size() + spec.model.vocabulary.end.size());
    return 1.25 * (4.0 + 0.2 * length) * std::sqrt(double(spec.model.parameters)) +
           4.0 * double(spec.model.vocabulary.size);
}

double parameterCount(const ModelSpec& spec)
{
    if (spec.model.isBroughtIn())
        return double(spec.model.parameters);
    const double d = spec.model.dModel;
    const double ff = spec.model.ffMultiplier * d;
    return spec.model.layers * (4 * d * d + 2 * d * ff) + d * (spec.task.length + 8) + 2 * d * d;
}

std::string gib(double bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(1ull << 30));
    return text;
}

} // namespace

int64_t estimateDpoPeakBytes(const ModelSpec& spec, const DpoConfig& dpo, const SamplingConfig& sampling)
{
    // Winners and losers, each with tSamplesPerPair draws, through the policy (activations kept
    // for the backward pass, plus the gradients in flight) and the reference (transient).
    // Calibrated on the large benchmark setting (d_model 256, 4 layers, 8 heads, N 64, batch
    // 256): 4.6 GiB peak resident measured with freed memory kept for reuse (3.7 GiB without,
    // see hostmemory.h), 4.2 GiB estimated.
    // Only one piece of the batch is in flight at a time (DpoConfig::batchPiece); each pair's
    // draws (t-samples x VRPO samples, doubled by complementary masks) are rows of their own.
    const int pairsInFlight = dpo.batchPiece > 0 ? std::min(dpo.batchPiece, dpo.batch) : dpo.batch;
    const double drawsPerPair = double(std::max(1, dpo.tSamplesPerPair)) * std::max(1, dpo.vrpoSamples) *
                                (dpo.maskCoupling == "complementary" ? 2 : 1);
    const double rows = 2.0 * pairsInFlight * drawsPerPair;
    const double tokens = rows * spec.task.length;
    const double training =
        tokens * (spec.model.isBroughtIn() ? scriptedTrainingFloatsPerToken(spec) : floatsPerToken(spec) * 1.6);
    // Sampling keeps no graph: one layer's activations at a time.
    ModelSpec oneLayer = spec;
    oneLayer.model.layers = 1;
    const double evaluation = double(sampling.batch) * spec.task.length *
                              (spec.model.isBroughtIn() ? floatsPerToken(spec) / 4 : floatsPerToken(oneLayer));
    // Policy + gradients + Adam's two moments + the frozen reference; with low-rank adapters the
    // model's weights once (shared with the reference) and an adapted copy of them in a forward.
    const double weights = (dpo.loraRank > 0 && spec.model.isBroughtIn() ? 2.0 : 5.0) * parameterCount(spec);
    const double bytes = 4.0 * (std::max(training, evaluation) + weights);
    return bytes > 9e18 ? int64_t(9e18) : int64_t(bytes);
}

int64_t estimateParameterCount(const ModelSpec& spec) { return int64_t(parameterCount(spec)); }

namespace {

/// The value in KiB of the line starting with `key` in a /proc file, or -1.
int64_t procKibibytes(const char* file, std::string_view key)
{
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) {
            std::istringstream fields(line.substr(key.size()));
            int64_t kib = -1;
            fields >> kib;
            return kib < 0 ? -1 : kib * 1024;
        }
    return -1;
}

} // namespace

int64_t availableHostMemoryBytes()
{
    int64_t available = procKibibytes("/proc/meminfo", "MemAvailable:");
    // `ulimit -v` caps the address space, whatever the machine has free: what is left of it is
    // the limit less what the process maps already (LibTorch's libraries and threads included).
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
        const int64_t mapped = std::max<int64_t>(0, procKibibytes("/proc/self/status", "VmSize:"));
        const int64_t left = std::max<int64_t>(0, int64_t(std::min<rlim_t>(limit.rlim_cur, rlim_t(INT64_MAX))) - mapped);
        available = available < 0 ? left : std::min(available, left);
    }
    return available;
}

Status checkFitsInMemory(const ModelSpec& spec, const DpoConfig& dpo, const SamplingConfig& sampling,
                         int64_t availableBytes)
{
    if (availableBytes < 0)
        return Ok{};
    const double needed = double(estimateDpoPeakBytes(spec, dpo, sampling));
    if (needed <= 0.8 * double(availableBytes))
        return Ok{};
    return makeError("a step with batch " + std::to_string(dpo.batch) + " x " + std::to_string(dpo.tSamplesPerPair) +
                     " t-samples needs about " + gib(needed) + " but only " + gib(double(availableBytes)) +
                     " of memory is available; lower the batch (or train it in pieces: pairs per pass), the t-samples per pair or the sampling batch");
}

} // namespace d2dpo
