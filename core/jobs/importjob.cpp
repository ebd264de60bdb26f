// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/importjob.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "base/memoryestimate.h"
#include "base/safeoutput.h"
#include "base/timeutil.h"
#include "io/checkpoint.h"
#include "jobs/importedtask.h"
#include "jobs/importmeasurement.h"
#include "jobs/modelinstore.h"
#include "model/device.h"
#include "io/publishedweights.h"
#include "kernels/attention.h"
#include "kernels/onednnlinear.h"
#include "model/configfields.h"
#include "model/publishedarchitectures.h"
#include "model/torchscriptdenoiser.h"
#include "model/torchscriptprobe.h"
#include "tasks/sequencefile.h"
#include "tasks/task.h"
#include "train/evaluation.h"

namespace d2dpo {

namespace fs = std::filesystem;

namespace {

/// An archive larger than this is refused before it is read (LibTorch's zip reader and the
/// checkpoint's payload both hold it in memory).
constexpr int64_t kMaxArchiveBytes = int64_t(16) << 30;

std::string gib(double bytes)
{
    std::ostringstream text;
    text.precision(2);
    text << std::fixed << bytes / double(int64_t(1) << 30) << " GiB";
    return text.str();
}

/// What training a model of `weightBytes` takes, measured (bench/model_memory.sh: a D2-DPO step's
/// peak of 6.3-6.5 times the weights at 0.5-1 GiB, LibTorch's own half GiB included): the policy,
/// its gradients, Adam's two moments, the frozen reference, and the runtime itself. Import and
/// eval need less (4.5x and 3x), so a model that passes can be imported, measured and trained.
double trainingBytes(double weightBytes) { return 6.0 * weightBytes + double(int64_t(512) << 20); }

/// Ok when weights of `bytes` can be trained in this machine's memory (trainingBytes), else why not.
Status admitWeights(int64_t bytes)
{
    const int64_t available = availableHostMemoryBytes();
    if (bytes > kMaxArchiveBytes || (available > 0 && trainingBytes(double(bytes)) > double(available)))
        return makeError("its " + gib(double(bytes)) + " of weights need about " + gib(trainingBytes(double(bytes))) +
                         " to train (policy, gradients, Adam's moments, the frozen reference, the runtime); " +
                         (available > 0 ? gib(double(available)) + " is available" : "more than this build allows") +
                         ". Nothing was read");
    return Ok{};
}

/// The file's bytes, or why not; refused from its size alone when the memory cannot hold the
/// model while it trains (trainingBytes), before anything is allocated for it.
Result<std::string> readArchive(const std::string& path)
{
    const std::string where = "TorchScript model '" + path + "': ";
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        return makeError(where + (fs::exists(path, ec) ? "not a regular file" : "does not exist"));
    const auto size = int64_t(fs::file_size(path, ec));
    if (ec)
        return makeError(where + "cannot read its size: " + ec.message());
    if (Status s = admitWeights(size); !s)
        return makeError(where + s.error());
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(where + "cannot open the file (no permission?)");
    std::string bytes(static_cast<size_t>(size), '\0');
    in.read(bytes.data(), size);
    if (in.gcount() != size)
        return makeError(where + "reading the file failed");
    return bytes;
}

/// What a Cancel (keepWhenStopped=false) returns: what was learnt so far, nothing written.
ImportJobOutcome stoppedOutcome(ImportJobOutcome outcome)
{
    outcome.stopped = true;
    outcome.measured = false;
    return outcome;
}

} // namespace

bool isPublishedWeights(const std::string& path) { return isPublishedWeightsPath(path); }

Result<std::string> recognisePublishedWeights(const std::string& path)
{
    // Read on the window's thread as the user types: a regular file of a few MiB at most (a
    // config.json that is a device or a huge file is named, never read).
    const std::vector<std::string> files = publishedWeightsFiles(path);
    std::error_code ec;
    if (!fs::is_regular_file(files[1], ec))
        return makeError("no config.json beside the weights");
    if (fs::file_size(files[1], ec) > (4u << 20) || ec)
        return makeError("its config.json is larger than 4 MiB: not a model's config");
    std::ifstream in(files[1], std::ios::binary);
    if (!in)
        return makeError("its config.json cannot be read (no permission?)");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto config = parseModelConfig(text);
    if (!config)
        return makeError(config.error());
    const auto type = config->value("model_type", nlohmann::json());
    const std::string modelType = type.is_string() ? type.get<std::string>() : "";
    if (modelType != "esm" && modelType != "mdlm")
        return makeError("its config.json is not an ESM2, DPLM or MDLM model's; other models come in as TorchScript");
    const std::string name = modelType == "mdlm" ? "MDLM" : text.find("DPLM") != std::string::npos ? "DPLM" : "ESM2";
    auto shape = publishedShape(name, text);
    if (!shape)
        return makeError(shape.error());
    const int64_t n = shape->parameters;
    return name + ": " + shape->summary + ", ~" +
           (n >= 1000000 ? std::to_string((n + 500000) / 1000000) + "M" : std::to_string((n + 500) / 1000) + "k") +
           " parameters";
}

Result<ImportJobOutcome> runImportJob(const ImportJobSpec& spec, PhaseListener& listener, const StopToken& stop,
                                      const EvaluationProgress& evaluationProgress)
{
    auto device = resolveDevice(spec.device);
    if (!device)
        return makeError(device.error());
    if (!spec.weightsPath.empty() && !spec.torchScriptPath.empty())
        return makeError("give a TorchScript model or published weights, not both");
    std::vector<std::string> inputs = storeFiles(spec.storePath);
    for (const std::string* input : {&spec.torchScriptPath, &spec.weightsPath, &spec.vocabularyPath, &spec.dataPath})
        if (!input->empty())
            inputs.push_back(*input);
    if (!spec.weightsPath.empty())
        for (const std::string& file : publishedWeightsFiles(spec.weightsPath))
            inputs.push_back(file);
    if (Status s = checkOutputFile(spec.outputPath, inputs, /*writesCheckpoint=*/true); !s)
        return makeError("checkpoint " + s.error());
    if (Status s = refuseOutputOfAStoredModel(spec.storePath, spec.outputPath); !s)
        return makeError(s.error());

    listener.onPhase("import", 3);
    ProgressEvent progress;
    progress.totalSteps = 3;
    const auto advance = [&](const std::string& what) {
        ++progress.step;
        listener.onProgress(progress);
        listener.onLog(what);
    };
    // A Cancel (keepWhenStopped=false) ends the job between its steps with nothing written.
    ImportJobOutcome outcome;
    const auto cancelled = [&] { return !spec.keepWhenStopped && stop.stopRequested(); };
    std::unique_ptr<Task> task;
    Denoiser denoiser;
    ModelSpec& modelSpec = outcome.spec;
    std::string where;
    if (!spec.weightsPath.empty()) {
        where = "weights '" + spec.weightsPath + "': ";
        auto weights = readPublishedWeights(spec.weightsPath, [](int64_t bytes) { return admitWeights(bytes); },
                                            /*contractGiven=*/!spec.vocabularyPath.empty());
        if (!weights)
            return makeError(weights.error());
        auto vocabulary = weightsVocabulary(spec, weights.value());
        if (!vocabulary)
            return makeError(vocabulary.error());
        auto made = makeTask(vocabulary->second);
        if (!made)
            return makeError(made.error());
        task = std::move(made.value());
        auto shape = publishedShape(weights->architecture, weights->configJson);
        if (!shape)
            return makeError(where + shape.error());
        if (int64_t(weights->tokens.size()) > shape->vocabSize)
            return makeError(where + "its vocab.txt names " + std::to_string(weights->tokens.size()) +
                             " tokens, more than its config's vocab_size (" + std::to_string(shape->vocabSize) + ")");
        outcome.architecture = weights->architecture;
        advance("read " + weights->architecture + "'s config, vocabulary and " + std::to_string(weights->tensors.size()) +
                " tensors as data");
        if (cancelled())
            return stoppedOutcome(outcome);

        ModelVocabulary modelVocabulary = vocabulary->first;
        modelVocabulary.size = shape->vocabSize;
        auto network = publishedNetwork(weights->architecture, weights->configJson, modelVocabulary, task->length(),
                                        weights->prefix, std::move(weights->tensors));
        if (!network)
            return makeError(where + network.error());
        outcome.signature = weights->architecture + ": " + shape->summary;
        outcome.parameters = parameterCount(network.value());
        // The kernel runs where it beats batched products (narrow heads; kernels/attention.h).
        outcome.fusedAttention = device.value().is_cpu() && kernelBeatsBatchedProducts(shape->headWidth) ? shape->layers : 0;
        outcome.onednnLinears = device.value().is_cpu() && onednnGemmAvailable() ? shape->linears : 0;
        advance("built " + outcome.signature + ", " + std::to_string(outcome.parameters) + " parameters");
        if (cancelled())
            return stoppedOutcome(outcome);

        // One sequence through the network: its weights are finite, but their sums may not be.
        {
            torch::NoGradGuard noGrad;
            const auto tokens = torch::full({1, task->length()}, task->vocabSize(), torch::kLong);
            if (!torch::isfinite(network.value()->forward(tokens, torch::zeros({1}))).all().item<bool>())
                return makeError(where + "its logits for an all-masked sequence are not finite");
        }
        outcome.modelVocabularySize = shape->vocabSize;
        advance("checked: logits over " + std::to_string(shape->vocabSize) + " ids, finite");

        modelSpec.task = task->config();
        modelSpec.model.kind = publishedKind(weights->architecture);
        modelSpec.model.vocabulary = modelVocabulary;
        modelSpec.model.parameters = outcome.parameters;
        modelSpec.model.source = fs::path(spec.weightsPath).filename().string();
        modelSpec.model.architecture = weights->architecture;
        modelSpec.model.keyPrefix = weights->prefix;
        modelSpec.model.weightsConfig = weights->configJson;
        modelSpec.model.modelTokens = weights->tokens;
        modelSpec.model.timeConditioning = network.value()->timeConditioned();
        denoiser = network.value();
    } else {
        auto vocabulary = readModelVocabulary(spec.vocabularyPath);
        if (!vocabulary)
            return makeError(vocabulary.error());
        auto taskConfig = importedTask(spec, vocabulary.value());
        if (!taskConfig)
            return makeError(taskConfig.error());
        auto madeTask = makeTask(taskConfig.value());
        if (!madeTask)
            return makeError(madeTask.error());
        task = std::move(madeTask.value());
        auto archive = readArchive(spec.torchScriptPath);
        if (!archive)
            return makeError(archive.error());
        advance("read the vocabulary, the task and " + gib(double(archive->size())) + " of TorchScript");
        if (cancelled())
            return stoppedOutcome(outcome);

        where = "TorchScript model '" + spec.torchScriptPath + "': ";
        auto model = TorchScriptDenoiser::load(archive.value(), vocabulary.value(), task->length());
        if (!model)
            return makeError(where + model.error());
        archive.value().clear();
        archive.value().shrink_to_fit();
        outcome.signature = model.value()->signature();
        outcome.parameters = parameterCount(model.value());
        // The kernel is the CPU's; on a GPU the model's own attention runs (torchscriptdenoiser.cpp).
        outcome.fusedAttention = device.value().is_cpu() ? model.value()->fusedAttention() : 0;
        outcome.onednnLinears = device.value().is_cpu() ? model.value()->onednnLinears() : 0;
        advance("loaded " + outcome.signature + ", " + std::to_string(outcome.parameters) + " parameters");
        if (cancelled())
            return stoppedOutcome(outcome);

        auto size = probeTorchScriptDenoiser(model.value(), &stop, spec.probeSeconds);
        if (!size && cancelled())
            return stoppedOutcome(outcome);
        if (!size)
            return makeError(where + size.error());
        outcome.modelVocabularySize = size.value();
        advance("probed: logits over " + std::to_string(size.value()) + " ids, finite, trainable");

        modelSpec.task = task->config();
        modelSpec.model.kind = "torchscript";
        modelSpec.model.vocabulary = vocabulary.value();
        modelSpec.model.vocabulary.size = size.value();
        modelSpec.model.parameters = outcome.parameters;
        modelSpec.model.source = fs::path(spec.torchScriptPath).filename().string();
        modelSpec.model.timeConditioning = true;
        denoiser = model.value();
    }
    if (Status s = validate(modelSpec); !s)
        return makeError(s.error());
    denoiser->to(device.value());
    denoiser->eval();
    if (spec.evaluationSamples > 0 && !stop.stopRequested()) {
        listener.onPhase("evaluate-reference", 0);
        try {
            const ImportMeasurement measured = measureImportedModel(
                denoiser, std::shared_ptr<const Task>(std::move(task)), modelSpec.noise, spec.sampling,
                {spec.evaluationSamples, spec.evaluationSeconds}, spec.seed + 1000, device.value(), listener, stop,
                evaluationProgress);
            if (measured.end == MeasurementEnd::Abandoned) { // its thread may still be inside the model
                outcome.stopped = true;
                outcome.abandoned = true;
                return stoppedOutcome(outcome);
            }
            outcome.measured = measured.end == MeasurementEnd::Measured;
            if (outcome.measured) {
                outcome.metrics = measured.metrics;
                outcome.metrics.seed = spec.seed + 1000;
            }
        } catch (const std::exception& e) {
            return makeError(where + "sampling from it failed: " + userMessage(e));
        }
    }
    // A Cancel heard by now leaves nothing, even after the last batch ("I don't want it"); a
    // Ctrl-C writes the model, unmeasured when it cut the measurement short.
    outcome.stopped = stop.stopRequested();
    if (cancelled())
        return stoppedOutcome(outcome);
    listener.onPhase("write", 0);
    CheckpointInfo info{newCheckpointId(), "", "pretrained", modelSpec, R"({"kind":"import"})",
                        outcome.measured ? outcome.metrics.toJson() : std::string("{}"), 0, utcNow()};
    if (Status s = saveCheckpoint(spec.outputPath, denoiser, info, inputs); !s)
        return makeError(s.error());
    outcome.checkpointId = info.id;
    listener.onLog("wrote " + spec.outputPath);
    if (!spec.storePath.empty())
        if (Status s = addWrittenModel(spec.storePath, info, spec.outputPath, spec.modelName); !s)
            return makeError(s.error());
    return outcome;
}

} // namespace d2dpo
