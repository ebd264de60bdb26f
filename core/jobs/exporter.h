// SPDX-License-Identifier: GPL-3.0-or-later
// Export a checkpoint to a folder for use elsewhere: weights.pt (a name -> tensor dict that
// Python reads with torch.load), model_card.json (config, metrics, lineage, preference counts)
// and samples.txt (generated sequences with their decoded values). Torch-free header: the
// Models view's Export and `d2dpo export` both start it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/result.h"
#include "base/trainlistener.h"

namespace d2dpo {

struct LoadedCheckpoint;

struct ExportOptions {
    int64_t sampleCount = 100;
    SamplingConfig sampling;
    uint64_t seed = 0;
    std::string preferenceCountsJson = "{}"; ///< e.g. {"pairs": 20000, "source": "rule:motif:^[aeiou]"}
    std::string runJson = "{}";              ///< the run that made the model, for the card's lineage
    bool overwrite = false;                  ///< allow writing into a non-empty folder
    /// Files the exporting command reads (the store and its WAL, for the card): no output is ever
    /// written over one of them, --force or not. The checkpoint itself is always one.
    std::vector<std::string> inputs;
    /// Raised while the samples are drawn (the long part, done before any file is written): the
    /// export ends with kExportStopped and writes nothing.
    const StopToken* stop = nullptr;
    /// Samples drawn of the total as the draw goes, per pass of the model (see drawSamples).
    std::function<void(double done, int64_t total)> progress;
};

/// The error of an export stopped through ExportOptions::stop.
inline constexpr const char* kExportStopped = "export stopped before anything was written";

/// Names of the files an export folder holds.
/// A TorchScript model also gets model.pt (the module with its fine-tuned weights) and vocabulary.json;
/// a model read from published weights gets them back in its layout: model.safetensors, config.json, vocab.txt.
inline constexpr const char* kExportFiles[] = {"weights.pt",      "samples.txt",       "model_card.json",
                                              "model.pt",        "vocabulary.json",   "model.safetensors",
                                              "config.json",     "vocab.txt"};

/// Writes the export folder; refuses a non-empty folder unless options.overwrite, and an output
/// that is one of options.inputs always.
Status exportCheckpoint(const LoadedCheckpoint& checkpoint, const std::string& folder, const ExportOptions& options);

/// Loads the checkpoint at `checkpointPath` on `device` and writes its export folder; returns the
/// checkpoint's id.
Result<std::string> exportCheckpointFile(const std::string& checkpointPath, const std::string& folder,
                                         const ExportOptions& options, const std::string& device = "auto");

} // namespace d2dpo
