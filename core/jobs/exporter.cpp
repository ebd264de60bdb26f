// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/exporter.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "base/failurereport.h"
#include "base/samplebudget.h"
#include "base/safeoutput.h"
#include "facades/openmodel.h"
#include "model/device.h"
#include "io/publishedweights.h"
#include "model/slotteddenoiser.h"
#include "model/torchscriptdenoiser.h"
#include "diffusion/sampler.h"
#include "train/evaluation.h"
#include "tasks/task.h"

namespace d2dpo {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// All or nothing, and never over a device, FIFO or folder (base/safeoutput.h).
Status writeText(const fs::path& path, const std::string& text) { return AtomicFile::write(path.string(), text); }

/// torch::pickle_save without its TorchScript type tags: the same zip archive, but the dict is a
/// plain pickled dict. The tag (a torch.jit._pickle.restore_type_tag call around the dict) is
/// not among the globals `torch.load(weights_only=True)` accepts, which is PyTorch's default
/// since 2.6: a tagged file would not load there without trusting it.
std::vector<char> pickleForPython(const c10::IValue& value)
{
    std::vector<char> pickled;
    const auto append = [&](const char* bytes, size_t size) { pickled.insert(pickled.end(), bytes, bytes + size); };
    torch::jit::Pickler pickler(append, nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
    pickler.protocol();
    pickler.pushIValue(value);
    pickler.stop();
    std::vector<char> archive;
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* bytes, size_t size) {
        const char* begin = static_cast<const char*>(bytes);
        archive.insert(archive.end(), begin, begin + size);
        return size;
    });
    torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(), writer);
    writer.writeEndOfFile();
    return archive;
}

} // namespace

namespace {

/// The target may be a new or empty folder, or with --force an earlier export; checked before
/// anything is written, so that --force replaces an earlier export, never an input.
Status checkExportFolder(const fs::path& root, const std::string& folder, const ExportOptions& options)
{
    std::error_code ec;
    if (fs::exists(root, ec) && !fs::is_directory(root, ec))
        return makeError("export target '" + folder + "' exists and is not a folder");
    if (fs::exists(root, ec) && !fs::is_empty(root, ec) && !options.overwrite)
        return makeError("export folder '" + folder + "' is not empty; choose a new folder or pass --force");
    if (fs::is_directory(root, ec))
        for (const char* name : kExportFiles)
            if (Status s = checkOutputFile((root / name).string(), options.inputs); !s)
                return makeError("cannot export into '" + folder + "': " + s.error());
    return Ok{};
}

/// weights.pt: CPU tensors in a string -> tensor dict, readable by Python's torch.load. Their
/// shapes, for the model card.
Result<json> writeWeights(const fs::path& root, Denoiser& model)
{
    c10::Dict<std::string, at::Tensor> weights;
    json shapes = json::object();
    for (const auto& item : model->named_parameters()) {
        weights.insert(item.key(), item.value().detach().to(torch::kCPU).contiguous());
        shapes[item.key()] = item.value().sizes().vec();
    }
    for (const auto& item : model->named_buffers()) {
        weights.insert(item.key(), item.value().to(torch::kCPU).contiguous());
        shapes[item.key()] = item.value().sizes().vec();
    }
    const std::vector<char> bytes = pickleForPython(c10::IValue(weights));
    if (Status s = writeText(root / "weights.pt", std::string(bytes.begin(), bytes.end())); !s)
        return makeError(s.error());
    return shapes;
}

/// A model brought in goes back as it came: TorchScript (now with the fine-tuned weights) and the
/// vocabulary file that maps the task onto its ids. Any other model leaves neither.
Status writeModuleFiles(const fs::path& root, const TorchScriptDenoiser* scripted)
{
    if (!scripted) {
        std::error_code ec; // --force over an earlier export of a TorchScript model: its module is not this model
        fs::remove(root / "model.pt", ec);
        fs::remove(root / "vocabulary.json", ec);
        return Ok{};
    }
    if (Status s = writeText(root / "model.pt", scripted->archive()); !s)
        return s;
    return writeText(root / "vocabulary.json", modelVocabularyToJson(scripted->vocabulary()).dump(2) + "\n");
}

/// A model read from published weights goes back in the same layout, as transformers'
/// save_pretrained writes it: model.safetensors under the same keys and shapes (ESM's tied decoder
/// left out, as there), its config.json and vocab.txt as they came. Any other model leaves none.
Status writePublishedFiles(const fs::path& root, const LoadedCheckpoint& checkpoint, const std::vector<std::string>& inputs)
{
    // The network itself, never an adapted one's wrapper (checkpoints hold adapters merged).
    const auto* network = dynamic_cast<const SlottedDenoiser*>(checkpoint.model.get());
    if (!checkpoint.info.spec.model.isPublishedWeights() || !network || network->kind() != checkpoint.info.spec.model.kind) {
        std::error_code ec;
        for (const char* name : {"model.safetensors", "config.json", "vocab.txt"})
            fs::remove(root / name, ec);
        return Ok{};
    }
    std::vector<std::pair<std::string, torch::Tensor>> tensors;
    for (const auto& item : network->named_parameters())
        tensors.emplace_back(item.key(), item.value());
    for (const auto& item : network->named_buffers())
        tensors.emplace_back(item.key(), item.value());
    const ModelConfig& model = checkpoint.info.spec.model;
    return writePublishedWeights(root.string(), tensors, model.weightsConfig, model.modelTokens, inputs);
}

/// samples.txt: each sample with whether it is valid and what the task reads in it.
Status writeSamples(const fs::path& root, const Task& t, const torch::Tensor& samples)
{
    const std::vector<std::string> texts = formatRows(t, samples);
    const std::vector<int64_t> rows = rowsToHost(samples);
    std::string lines = "# sequence\tvalid\twhat the task reads in it\n";
    for (size_t i = 0; i < texts.size(); ++i) {
        const std::vector<int64_t> tokens(rows.begin() + int64_t(i) * t.length(),
                                          rows.begin() + int64_t(i + 1) * t.length());
        const SequenceHint hint = t.hint(tokens);
        lines += texts[i] + "\t" + (hint.valid ? "1" : "0") + "\t" + hint.value +
                 (hint.rule.empty() ? "" : "; " + hint.rule) + "\n";
    }
    return writeText(root / "samples.txt", lines);
}

struct SamplePlan {
    SamplingConfig sampling;
    int64_t count = 0;
    std::string describe;
};

/// How an export's samples are drawn (ExportOptions::sampleSeconds): as given, or sized to the
/// time at the cost of one timed pass, with the fast sampler where the exact one would not fit and
/// passes short enough (about 0.5 s) that a stop is heard at once.
SamplePlan planSamples(Denoiser& model, const NoiseConfig& noise, const Task& task, const ExportOptions& options)
{
    SamplePlan plan{options.sampling, options.sampleCount, {}};
    const int64_t length = task.length();
    if (!(options.sampleSeconds > 0)) { // NaN too: the count as set
        plan.describe = std::to_string(plan.count) + " samples, " + describeSampling(noise, plan.sampling, length);
        return plan;
    }
    const double rowPass = timeRowPass(*model, std::min<int64_t>(8, options.sampleCount));
    const int64_t fewest = std::min(options.sampleCount, kFewestFittedSamples);
    const double perDraw = options.sampleSeconds / double(fewest);
    if (plan.sampling.sampler == "exact" && exactExists(noise)) {
        const int64_t passes = passesWithin(rowPass, perDraw, length);
        if (passes < length) {
            plan.sampling.sampler = "confident";
            plan.sampling.steps = int(passes);
        }
    } else if (plan.sampling.sampler == "exact") {
        // No exact sampler (remasking, uniform noise): "exact" is Euler at a fine step (8 a
        // position); where that would not fit, Euler at as many steps as fit, never below the
        // steps set.
        const int fine = fineSteps(plan.sampling, length);
        const double fit = std::floor(perDraw / std::max(rowPass, 1e-12));
        if (fit < double(fine)) {
            plan.sampling.sampler = "euler";
            plan.sampling.steps = int(std::clamp<double>(fit, plan.sampling.steps, fine));
        }
    }
    const auto sampler = makeSampler(model, noise, task.vocabSize(), plan.sampling);
    const double perSample = rowPass * double(std::max<int64_t>(1, sampler->passesPerBatch()));
    plan.count = samplesWithin(perSample, options.sampleSeconds, options.sampleCount);
    plan.sampling.batch = int(std::clamp<int64_t>(rowsPerPassWithin(rowPass, 0.5), 1, plan.sampling.batch));
    plan.describe = describeFittedCount(plan.count, perSample) + ", " + describeSampling(noise, plan.sampling, length);
    return plan;
}

/// model_card.json: what the model is, where it comes from, how it did, and how to load it.
json modelCard(const LoadedCheckpoint& checkpoint, const ExportOptions& options, const Task& task,
               const json& exportSamples, const json& shapes, const TorchScriptDenoiser* scripted)
{
    const auto& info = checkpoint.info;
    json card = {
        {"format", "d2dpo-model-card"},
        {"format_version", 1},
        {"id", info.id},
        {"kind", info.kind},
        {"lineage", {{"parent_id", info.parentId}, {"step", info.step}, {"run", json::parse(options.runJson)}}},
        {"created_at", info.createdAt},
        {"exported_at", utcNow()},
        {"config", json::parse(toJson(info.spec))},
        {"training", json::parse(info.trainingJson)},
        {"metrics", json::parse(info.metricsJson)},
        {"export_samples", exportSamples},
        {"preference_counts", json::parse(options.preferenceCountsJson)},
        {"weights", {{"file", "weights.pt"},
                     {"load_with", "torch.load('weights.pt') -> dict of name -> tensor"},
                     {"parameter_count", parameterCount(checkpoint.model)},
                     {"shapes", shapes}}},
        {"conventions",
         {{"time", "t = 0 is all masked (noise), t = 1 is data"},
          {"mask_token", task.maskToken()},
          {"symbols", task.vocabulary().symbols()},
          {"pad_token", task.vocabulary().padToken()},
          {"output", "logits over the S real tokens per position, never over the mask"},
          {"architecture", "token(S+1)+position(+time: sinusoidal(1000 t) -> Linear -> SiLU -> Linear) "
                           "embeddings, pre-norm transformer blocks (qkv, out, GELU MLP), LayerNorm, head"}}},
    };
    if (scripted) {
        card["torchscript"] = {
            {"file", "model.pt"},
            {"load_with", "torch.jit.load('model.pt'); forward(tokens: int64 [B, L], t: float [B]) -> "
                          "float [B, L, V] over the model's own ids"},
            {"signature", scripted->signature()},
            {"vocabulary", {{"file", "vocabulary.json"}, {"contract", modelVocabularyToJson(scripted->vocabulary())}}},
            {"imported_from", info.spec.model.source}};
        card["conventions"]["output"] = "model.pt: logits over the model's V ids at every position of begin + "
                                        "sequence + end; the task's distribution is the softmax over the symbols' "
                                        "(and the pad's) ids alone";
        card["conventions"]["architecture"] = "the TorchScript module in model.pt";
    }
    if (info.spec.model.isPublishedWeights()) {
        const ModelConfig& m = info.spec.model;
        const bool mdlm = m.kind == "mdlm";
        const std::string loadWith =
            mdlm ? (m.keyPrefix.empty() ? "MDLM's DIT (its hydra config's model section from config.json's sizes)"
                                          ".load_state_dict(safetensors.torch.load_file('model.safetensors'))"
                                        : "MDLM's Hugging Face class: AutoModelForMaskedLM.from_pretrained(FOLDER, "
                                          "trust_remote_code=True) with its modeling_mdlm.py beside")
            : m.keyPrefix.empty() ? "transformers.AutoModelForMaskedLM.from_pretrained(FOLDER)"
                                  : "DPLM: its model.safetensors holds the network under 'net.', as DPLM saves it";
        nlohmann::json files = {"model.safetensors", "config.json"};
        if (!m.modelTokens.empty())
            files.push_back("vocab.txt");
        card["published_weights"] = {
            {"files", files},
            {"architecture", m.architecture},
            {"load_with", loadWith},
            {"vocabulary", {{"file", m.modelTokens.empty() ? "" : "vocab.txt"}, {"contract", modelVocabularyToJson(m.vocabulary)}}},
            {"imported_from", m.source}};
        card["conventions"]["output"] =
            mdlm ? "model.safetensors: MDLM's logits over its ids at every position, given sigma (its log-linear "
                   "noise; 0 when time_conditioning is off); the task's distribution is the softmax over the "
                   "symbols' (and the pad's) ids alone, its substitution parameterisation"
                 : "model.safetensors: ESM's logits over its vocab.txt ids at every position of <cls> + sequence + "
                   "<eos>; the task's distribution is the softmax over the symbols' (and the pad's) ids alone";
        card["conventions"]["architecture"] =
            m.architecture + (mdlm ? " (kuleshov-group/mdlm's DIT), from config.json"
                                   : " (transformers' EsmForMaskedLM), from config.json");
    }
    return card;
}

} // namespace

Result<ExportReport> exportCheckpoint(const LoadedCheckpoint& checkpoint, const std::string& folder,
                                      const ExportOptions& options)
{
    const fs::path root(folder);
    if (Status s = checkExportFolder(root, folder, options); !s)
        return makeError(s.error());
    auto task = makeTask(checkpoint.info.spec.task);
    if (!task)
        return makeError(task.error());
    if (options.sampleCount < 0)
        return makeError("an export's sample count must be 0 or more");
    const auto stopped = [&] { return options.stop && options.stop->stopRequested(); };
    if (stopped())
        return makeError(kExportStopped);
    Denoiser model = checkpoint.model;
    ExportReport report;
    report.id = checkpoint.info.id;
    try {
        // The model's files first: seconds at any size. The samples, the long part, come after and
        // may be stopped without losing them.
        std::error_code ec;
        const bool madeFolder = !fs::exists(root, ec);
        fs::create_directories(root, ec);
        if (ec)
            return makeError("cannot create export folder '" + folder + "': " + ec.message());
        // A stop while they are written (a large model's weights take seconds) leaves no export at
        // all; so does --force over an earlier export, whose card and samples are not this model's.
        const auto leaveNothing = [&] {
            for (const char* name : kExportFiles)
                fs::remove(root / name, ec);
            if (madeFolder)
                fs::remove(root, ec);
            return makeError(kExportStopped);
        };
        fs::remove(root / "samples.txt", ec);
        fs::remove(root / "model_card.json", ec);
        const auto shapes = writeWeights(root, model);
        if (!shapes)
            return makeError(shapes.error());
        if (stopped())
            return leaveNothing();
        const auto* scripted = dynamic_cast<const TorchScriptDenoiser*>(model.get());
        if (Status s = writeModuleFiles(root, scripted); !s)
            return makeError(s.error());
        if (Status s = writePublishedFiles(root, checkpoint, options.inputs); !s)
            return makeError(s.error());
        if (stopped())
            return leaveNothing();
        const auto writeCard = [&](const json& exportSamples) {
            const json card = modelCard(checkpoint, options, *task.value(), exportSamples, shapes.value(), scripted);
            return writeText(root / "model_card.json", card.dump(2) + "\n");
        };
        // Until samples.txt is written, the card says there are none (a stop or a kill leaves it so).
        if (Status s = writeCard({{"count", 0}, {"why", options.sampleCount > 0 ? "not drawn" : "none asked for"}}); !s)
            return makeError(s.error());
        if (options.sampleCount == 0)
            return report;

        SamplingConfig sampling = options.sampling;
        auto generator = makeGenerator(options.seed, model->parameters().front().device());
        std::unique_ptr<Sampler> sampler;
        int64_t count = options.sampleCount;
        try {
            if (options.stop && options.stop->stopRequested())
                throw EvaluationStopped();
            const SamplePlan plan = planSamples(model, checkpoint.info.spec.noise, *task.value(), options);
            sampling = plan.sampling;
            count = plan.count;
            report.samplePlan = plan.describe;
            if (options.samplesPlanned)
                options.samplesPlanned(plan.describe);
            sampler = makeSampler(model, checkpoint.info.spec.noise, task.value()->vocabSize(), sampling);
            const torch::Tensor samples =
                drawSamples(*sampler, count, sampling.batch, generator, options.stop, options.progress).to(torch::kCPU);
            if (Status s = writeSamples(root, *task.value(), samples); !s)
                return makeError(s.error());
            report.samples = count;
            const SampleMetrics metrics = task.value()->measure(samples);
            if (Status s = writeCard({{"file", "samples.txt"},
                                      {"count", count},
                                      {"sampling", json::parse(toJson(sampling))},
                                      {"drawn_as", plan.describe},
                                      {"metrics", json::parse(metrics.toJson())}});
                !s)
                return makeError(s.error());
        } catch (const EvaluationStopped&) {
            report.samplesStopped = true;
            if (Status s = writeCard({{"count", 0}, {"why", "the draw was stopped"}}); !s)
                return makeError(s.error());
        }
        return report;
    } catch (const std::exception& e) {
        return makeError("export failed: " + userMessage(e));
    }
}

Result<ExportReport> exportCheckpointFile(const std::string& checkpointPath, const std::string& folder,
                                          const ExportOptions& options, const std::string& device)
{
    auto opened = openModel(checkpointPath, device);
    if (!opened)
        return makeError(opened.error());
    ExportOptions withInput = options;
    withInput.inputs.push_back(checkpointPath);
    return exportCheckpoint(opened->checkpoint, folder, withInput);
}

} // namespace d2dpo
