// SPDX-License-Identifier: GPL-3.0-or-later
// Export a checkpoint to a folder for use elsewhere: weights.pt (a name -> tensor dict that
// Python reads with torch.load), model_card.json (config, metrics, lineage, preference counts)
// and samples.txt (generated sequences with their decoded values), written in that order so that
// the model is out in seconds and its samples, the long part, may be sized, skipped or stopped.
// Torch-free header: the Models view's Export and `d2dpo export` both start it.
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
    int64_t sampleCount = 100; ///< samples for samples.txt (the most, with sampleSeconds); 0: none
    /// > 0: as many of sampleCount as fit in about this many seconds at the model's measured cost
    /// (one timed pass), and where `sampling` asks for the exact sampler, the confident one at as
    /// many passes as fit when the exact one does not (passesWithin()): the fast sampler for large
    /// models. 0: sampleCount samples with `sampling` as given, however long they take.
    double sampleSeconds = 0;
    SamplingConfig sampling;
    uint64_t seed = 0;
    std::string preferenceCountsJson = "{}"; ///< e.g. {"pairs": 20000, "source": "rule:motif:^[aeiou]"}
    std::string runJson = "{}";              ///< the run that made the model, for the card's lineage
    bool overwrite = false;                  ///< allow writing into a non-empty folder
    /// Files the exporting command reads (the store and its WAL, for the card): no output is ever
    /// written over one of them, --force or not. The checkpoint itself is always one.
    std::vector<std::string> inputs;
    /// Raised before or while the model's files are written, the export ends with kExportStopped
    /// and leaves no export file (nor the folder, when it made it); raised while the samples are
    /// drawn (heard before each pass), the model's files stay and samples.txt is not written
    /// (ExportReport::samplesStopped).
    const StopToken* stop = nullptr;
    /// Told once the model's files are written and the samples are sized, before the draw starts:
    /// "20 samples (about 0:30, 1.5 s a sample), confident sampler, 16 passes".
    std::function<void(const std::string& plan)> samplesPlanned;
    /// Samples drawn of the total as the draw goes, per pass of the model (see drawSamples).
    std::function<void(double done, int64_t total)> progress;
};

/// What an export wrote.
struct ExportReport {
    std::string id;              ///< the checkpoint's
    int64_t samples = 0;         ///< in samples.txt; 0 when none were asked for or the draw was stopped
    bool samplesStopped = false; ///< a stop came while they were drawn: samples.txt is not written
    std::string samplePlan;      ///< how they were drawn (ExportOptions::samplesPlanned's), "" for none
};

/// The error of an export stopped through ExportOptions::stop before it wrote anything.
inline constexpr const char* kExportStopped = "export stopped before anything was written";

/// Names of the files an export folder holds.
/// A TorchScript model also gets model.pt (the module with its fine-tuned weights) and vocabulary.json;
/// a model read from published weights gets them back in its layout: model.safetensors, config.json, vocab.txt.
inline constexpr const char* kExportFiles[] = {"weights.pt",      "samples.txt",       "model_card.json",
                                              "model.pt",        "vocabulary.json",   "model.safetensors",
                                              "config.json",     "vocab.txt"};

/// Writes the export folder: the model's files first (seconds at any size), then its samples.
/// Refuses a non-empty folder unless options.overwrite, and an output that is one of
/// options.inputs always.
Result<ExportReport> exportCheckpoint(const LoadedCheckpoint& checkpoint, const std::string& folder,
                                      const ExportOptions& options);

/// Loads the checkpoint at `checkpointPath` on `device` and writes its export folder.
Result<ExportReport> exportCheckpointFile(const std::string& checkpointPath, const std::string& folder,
                                          const ExportOptions& options, const std::string& device = "auto");

} // namespace d2dpo
