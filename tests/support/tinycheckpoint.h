// SPDX-License-Identifier: GPL-3.0-or-later
// A tiny untrained model (test::tinySpec) written as a checkpoint, for every suite that needs a
// model file and not a trained one. The header is torch-free: views' suites include it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/config.h"
#include "base/result.h"

namespace d2dpo::test {

/// What to write; the defaults are a pretrained binary-integers model of length 6 (symbols 0, 1).
struct TinyCheckpointOptions {
    enum class Weights {
        Random,   ///< as initialised after torch::manual_seed(seed)
        FirstNaN, ///< one NaN, in the first parameter (the checksum stays valid)
        AllNaN,   ///< every parameter NaN
    };
    int length = 6; ///< test::tinySpec(length, timeConditioning) unless `spec` is set
    bool timeConditioning = true;
    std::optional<ModelSpec> spec; ///< a whole spec instead (another task, more layers)
    int64_t vocabSize = 2;
    uint64_t seed = 3;
    int64_t step = 0;
    std::string createdAt; ///< empty: now
    Weights weights = Weights::Random;
    std::string parentId; ///< set: a "d2dpo" checkpoint fine-tuned from this model
};

/// The checkpoint as written: enough to record it in a store without loading it.
struct TinyCheckpoint {
    std::string path;
    std::string id;
    ModelSpec spec;
};

/// Writes the model `options` describe to `path` as a "pretrained" checkpoint with no parent (or,
/// with `parentId`, as a "d2dpo" one fine-tuned from it).
Result<TinyCheckpoint> writeTinyCheckpoint(const std::string& path, const TinyCheckpointOptions& options = {});

} // namespace d2dpo::test
