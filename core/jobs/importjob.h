// SPDX-License-Identifier: GPL-3.0-or-later
// Bringing a model in, as `d2dpo import --torchscript` and File > Import model... start it: read
// the vocabulary contract, refuse what is not TorchScript before anything is unpickled, refuse a
// model the memory cannot train, load the module, probe it on a small batch (signature, output
// shape, finite values, ids in range, a backward pass), build its task from the vocabulary (and
// the data file, when there is one), measure it with the sampler, and write a checkpoint that embeds the module.
// Nothing is written unless every check passes. Torch-free header. The measurement's batches and
// progress follow the pretraining's rule (evaluationBatchFor, EvaluationProgress in pretrainjob.h).
#pragma once

#include <cstdint>
#include <string>

#include "base/config.h"
#include "base/datafile.h"
#include "base/result.h"
#include "base/samplemetrics.h"
#include "base/trainlistener.h"
#include "jobs/pretrainjob.h"

namespace d2dpo {

struct ImportJobSpec {
    std::string torchScriptPath;  ///< the torch.jit.save file
    /// Or a published checkpoint read as data (io/publishedweights.h): its folder, or its
    /// model.safetensors with config.json and vocab.txt beside it. ESM2, DPLM and MDLM run natively.
    std::string weightsPath;
    std::string vocabularyPath;   ///< the vocabulary contract (JSON); for weights, "" = made from vocab.txt
    std::string task = "sequences"; ///< "sequences" or "binary-integers"
    std::string dataPath;         ///< the training sequences: validity, in-data, the length range; "" = none
    SequenceFileOptions data;     ///< validity, rule, max length, crop (the vocabulary is the model's);
                                  ///< without data, maxLength is the longest valid sequence
    int minLength = 0;            ///< without data: the shortest (0 = 1 with a pad, else maxLength)
    int length = 16;              ///< binary-integers: the number of bits
    SamplingConfig sampling;      ///< for the measurement of the imported model
    int64_t evaluationSamples = 1000; ///< 0: not measured
    double evaluationSeconds = 0; ///< > 0: as many samples as fit in about this time, at most evaluationSamples
    double probeSeconds = 0;      ///< the probe's time limit; 0: probeSecondsAllowed() for its size
    uint64_t seed = 0;
    std::string device = "auto";
    std::string outputPath;       ///< the checkpoint to write
    std::string storePath;        ///< when given, the model is added to this store
    std::string modelName;        ///< its name there; "" = the checkpoint's file name
    /// What a stop leaves (PretrainJobSpec's word): true, a model that passed its checks is written
    /// unmeasured (the CLI's Ctrl-C: loading a large model is the work a stop keeps); false,
    /// nothing written and nothing added to the store, in any phase (a dialog's Cancel).
    bool keepWhenStopped = true;
};

/// How long a stopped measurement may take to end at its next batch before its forward is
/// abandoned and nothing is written (jobs/importmeasurement.h).
inline constexpr double kMeasurementGraceSeconds = 1.5;

struct ImportJobOutcome {
    std::string checkpointId;
    int64_t parameters = 0;
    int64_t modelVocabularySize = 0; ///< V, the model's logits per position
    std::string signature;           ///< its forward, as TorchScript prints it; for weights, the network's shape
    std::string architecture;        ///< weights: the architecture recognised ("ESM2", "DPLM", "MDLM"); else ""
    int64_t fusedAttention = 0;      ///< attention expressions run by d2dpo's kernel
    int64_t onednnLinears = 0;       ///< linear layers run through oneDNN's sgemm
    ModelSpec spec;                  ///< the task and the vocabulary as stored
    bool measured = false;
    SampleMetrics metrics;           ///< the imported model's measurement (stored in the checkpoint)
    bool stopped = false;            ///< a stop came: written (unmeasured if it cut the measurement
                                     ///< short), or nothing (!keepWhenStopped, or abandoned)
    bool abandoned = false;          ///< its forward had not returned after the stop: nothing written
};

/// Whether `path` names published weights (a folder, or a .safetensors file) rather than a
/// TorchScript archive: the one rule File > Import model and `d2dpo import` share.
bool isPublishedWeights(const std::string& path);

/// What a published checkpoint's config.json says it is, for a dialog to name before the import
/// ("ESM2: 6 layers of width 320, 20 heads"), or why it cannot be read as one.
Result<std::string> recognisePublishedWeights(const std::string& path);

/// Runs in the calling thread; `listener` hears the phases "import" (3 steps: read and check the
/// files, load, probe; a log line after each), "evaluate-reference" (no steps: a log line says the
/// count and, when fitted to a time, what it costs; `evaluationProgress` hears its passes) and "write" (the checkpoint, and the store when given). A stop is
/// heard between the steps and before each sampler batch; the step in flight (a large model's
/// load) finishes first. Then, with spec.keepWhenStopped, a model that passed the probe is written
/// without metrics; without it, nothing is written (outcome.stopped either way).
Result<ImportJobOutcome> runImportJob(const ImportJobSpec& spec, PhaseListener& listener, const StopToken& stop,
                                      const EvaluationProgress& evaluationProgress = {});

} // namespace d2dpo
