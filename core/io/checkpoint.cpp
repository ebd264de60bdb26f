// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/checkpoint.h"

#include <cctype>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <fstream>
#include <random>
#include <string_view>
#include <tuple>

#include <torch/torch.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include "base/failurereport.h"
#include "base/safeoutput.h"
#include "base/untrustedtext.h"
#include "io/checkpointpayload.h"
#include "io/legacycheckpoint.h"
#include "io/safetensors.h"
#include "model/publishedarchitectures.h"
#include "model/loradenoiser.h"
#include "model/weightmatch.h"
#include "model/torchscriptdenoiser.h"
#include "model/transformerdenoiser.h"
#include "tasks/task.h"

namespace d2dpo {

namespace {

constexpr char kMagic[8] = {'D', '2', 'D', 'P', 'O', 'C', 'K', 'P'};
// Format 1: the payload is LibTorch's serialize archive (a TorchScript archive; read only, through
// io/legacycheckpoint.h). Format 2: the payload is a safetensors file (docs/checkpoints.md).
constexpr uint32_t kFormatVersion = 2;
constexpr char kFormatName[] = "d2dpo-checkpoint";
constexpr char kScriptTensor[] = "d2dpo.torchscript"; ///< an imported model's archive, as bytes
constexpr size_t kHeaderSize = sizeof(kMagic) + sizeof(uint32_t) + sizeof(uint64_t) + sizeof(uint32_t);

uint32_t crc32Of(std::string_view bytes)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    constexpr size_t chunk = 1u << 30;
    for (size_t offset = 0; offset < bytes.size(); offset += chunk) {
        const size_t n = std::min(chunk, bytes.size() - offset);
        crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + offset), static_cast<uInt>(n));
    }
    return static_cast<uint32_t>(crc);
}

template <typename T>
void appendRaw(std::string& out, T value)
{
    out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
T readRaw(const std::string& in, size_t offset)
{
    T value;
    std::memcpy(&value, in.data() + offset, sizeof(T));
    return value;
}

std::string infoToJson(const CheckpointInfo& info)
{
    return nlohmann::json{{"id", info.id},
                          {"parent_id", info.parentId},
                          {"kind", info.kind},
                          {"spec", nlohmann::json::parse(toJson(info.spec))},
                          {"training", nlohmann::json::parse(info.trainingJson)},
                          {"metrics", nlohmann::json::parse(info.metricsJson)},
                          {"step", info.step},
                          {"created_at", info.createdAt}}
        .dump();
}

Result<CheckpointInfo> infoFromJson(const std::string& text)
{
    if (Status s = checkJsonDepth(text, 32); !s)
        return makeError("its metadata is " + s.error());
    try {
        const auto j = nlohmann::json::parse(text);
        CheckpointInfo info;
        info.id = j.at("id").get<std::string>();
        info.parentId = j.at("parent_id").get<std::string>();
        info.kind = j.at("kind").get<std::string>();
        // Ids, the kind and the time are shown and stored as they are: a crafted file could put
        // escape sequences or 100,000 characters there. This program writes 16 hex digits.
        const auto plainWord = [](const std::string& text, bool mayBeEmpty) {
            return (mayBeEmpty && text.empty()) || isPlainId(text);
        };
        for (const auto& [name, value, mayBeEmpty] :
             {std::tuple{"id", &info.id, false}, std::tuple{"parent_id", &info.parentId, true},
              std::tuple{"kind", &info.kind, false}})
            if (!plainWord(*value, mayBeEmpty))
                return makeError(std::string("its metadata is malformed: its ") + name +
                                 " is not 1-64 letters, digits or '-_.:+' (a file this program did not write?)");
        auto spec = modelSpecFromJson(j.at("spec").dump());
        if (!spec)
            return makeError(spec.error());
        info.spec = spec.value();
        info.trainingJson = j.at("training").dump();
        info.metricsJson = j.at("metrics").dump();
        info.step = j.at("step").get<int64_t>();
        info.createdAt = j.at("created_at").get<std::string>();
        if (!info.createdAt.empty() && !isTimestamp(info.createdAt))
            return makeError("its metadata is malformed: its created_at is not a time (a file this program did not write?)");
        return info;
    } catch (const nlohmann::json::exception& e) {
        return makeError(std::string("its metadata is malformed: ") + e.what());
    }
}

/// A format-2 payload: a safetensors file whose metadata holds the description.
Result<CheckpointPayload> readCheckpointPayload(std::string_view payload)
{
    auto file = readSafetensors(payload);
    if (!file)
        return makeError(file.error());
    const auto& metadata = file.value().metadata;
    if (metadata.count("format") == 0 || metadata.at("format") != kFormatName || metadata.count("info") == 0)
        return makeError("its safetensors metadata is not a d2dpo checkpoint's (format, info)");
    CheckpointPayload out;
    out.infoJson = metadata.at("info");
    for (auto& [name, tensor] : file.value().tensors) {
        if (name != kScriptTensor) {
            out.weights.emplace_back(name, std::move(tensor));
            continue;
        }
        if (tensor.scalar_type() != torch::kUInt8 || tensor.dim() != 1)
            return makeError("its TorchScript module is not stored as bytes (U8, one dimension)");
        out.torchscript.assign(reinterpret_cast<const char*>(tensor.data_ptr<uint8_t>()), size_t(tensor.numel()));
    }
    // Written by this format from 2026-11-28 on: the code alone, its weights beside it. The first
    // format-2 files of that day held the archive whole, and no weights.
    out.scriptWeightsApart = !out.torchscript.empty() && !out.weights.empty();
    return out;
}

/// The model a payload describes, its weights in place: every one of the model's tensors must be
/// there with its shape and type, and nothing else may be.
Result<LoadedCheckpoint> modelFrom(const CheckpointPayload& contents)
{
    auto info = infoFromJson(contents.infoJson);
    if (!info)
        return makeError(info.error());
    LoadedCheckpoint loaded;
    loaded.info = info.value();
    auto task = makeTask(loaded.info.spec.task);
    if (!task)
        return makeError(task.error());
    if (loaded.info.spec.model.isPublishedWeights()) {
        if (!contents.torchscript.empty())
            return makeError("it says it holds published weights but carries TorchScript code");
        auto network = publishedNetwork(loaded.info.spec, contents.weights);
        if (!network)
            return makeError(network.error());
        loaded.model = network.value();
        return loaded;
    }
    if (loaded.info.spec.model.isTorchScript()) {
        if (contents.torchscript.empty())
            return makeError("its TorchScript module is missing");
        auto scripted = TorchScriptDenoiser::load(contents.torchscript, loaded.info.spec.model.vocabulary,
                                                  loaded.info.spec.task.length,
                                                  contents.scriptWeightsApart ? &contents.weights : nullptr);
        if (!scripted)
            return makeError(scripted.error());
        loaded.model = scripted.value();
        if (contents.scriptWeightsApart)
            return loaded;
    } else {
        if (!contents.torchscript.empty())
            return makeError("it says it holds a native model but carries TorchScript code");
        loaded.model = makeDenoiser(loaded.info.spec, task.value()->vocabSize(), torch::Device(torch::kCPU));
    }
    // A model brought in carries its weights in its archive (format-1 files from before
    // 2026-11-27 have them apart too, and then those are read).
    if (contents.weights.empty() && loaded.info.spec.model.isTorchScript())
        return loaded;
    torch::NoGradGuard noGrad;
    NamedTensors slots;
    for (const auto& item : loaded.model->named_parameters())
        slots.emplace_back(item.key(), item.value());
    for (const auto& item : loaded.model->named_buffers())
        slots.emplace_back(item.key(), item.value());
    std::map<std::string, torch::Tensor> byName(slots.begin(), slots.end());
    if (Status s = matchWeights(slots, contents.weights, /*sameShape=*/true,
                                [&](const std::string& name, const torch::Tensor& from) { byName.at(name).copy_(from); });
        !s)
        return makeError(s.error());
    return loaded;
}

} // namespace

std::string newCheckpointId()
{
    std::random_device device;
    std::mt19937_64 engine((uint64_t(device()) << 32) ^ device() ^
                           uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()));
    char buffer[17];
    std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(engine()));
    return buffer;
}

Status saveCheckpoint(const std::string& path, const Denoiser& model, const CheckpointInfo& info,
                      const std::vector<std::string>& inputs)
{
    // Low-rank adapters are saved merged: the checkpoint holds a plain model, W0 + B A its weights.
    if (const auto* adapted = dynamic_cast<const LoraDenoiser*>(model.get()))
        return saveCheckpoint(path, Denoiser(adapted->merged()), info, inputs);
    // The payload is written once, into one string sized for it: no stream buffer and no copy of
    // it, so that writing costs the model's bytes once more and not four times.
    std::string payload;
    bool outOfMemory = false;
    try {
        std::vector<std::pair<std::string, torch::Tensor>> tensors;
        std::string scriptedBytes;
        if (const auto* scripted = dynamic_cast<const TorchScriptDenoiser*>(model.get())) {
            // A model brought in travels with its code: its TorchScript archive, as bytes, with
            // empty tensors in its weights' places; its weights follow as data, like a native one's.
            scriptedBytes = scripted->codeArchive();
            tensors.emplace_back(kScriptTensor, torch::from_blob(scriptedBytes.data(), {int64_t(scriptedBytes.size())},
                                                                 torch::dtype(torch::kUInt8)));
        }
        for (const auto& item : model->named_parameters())
            tensors.emplace_back(item.key(), item.value());
        for (const auto& item : model->named_buffers())
            tensors.emplace_back(item.key(), item.value());
        const std::map<std::string, std::string> metadata{{"format", kFormatName}, {"info", infoToJson(info)}};
        payload.reserve(size_t(safetensorsBytes(tensors, metadata)));
        outOfMemory = !appendSafetensors(payload, tensors, metadata);
    } catch (const std::bad_alloc&) {
        outOfMemory = true;
    } catch (const std::exception& e) {
        return makeError("cannot serialise the checkpoint: " + userMessage(e));
    }
    if (outOfMemory)
        return makeError("not enough memory to write the checkpoint: the model's weights and their written copy must "
                         "fit in memory together; nothing was written");

    std::string header(kMagic, sizeof kMagic);
    appendRaw(header, kFormatVersion);
    appendRaw(header, uint64_t(payload.size()));
    appendRaw(header, crc32Of(payload));

    std::error_code ec;
    if (const std::filesystem::path target(path); target.has_parent_path())
        std::filesystem::create_directories(target.parent_path(), ec);
    auto file = AtomicFile::open(path, inputs, /*writesCheckpoint=*/true);
    if (!file)
        return makeError("checkpoint: " + file.error());
    file->append(header);
    file->append(payload);
    if (Status s = file->commit(); !s)
        return makeError("checkpoint: " + s.error());
    return Ok{};
}

Result<LoadedCheckpoint> loadCheckpoint(const std::string& path, torch::Device device)
{
    const std::string where = "checkpoint '" + path + "': ";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return makeError(where + (std::filesystem::exists(path, ec) ? "not a regular file"
                                                                     : "cannot open the file (it does not exist)"));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(where + "cannot open the file (no permission?)");
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        return makeError(where + "reading the file failed");

    if (bytes.size() < kHeaderSize || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        return makeError(where + "not a d2dpo checkpoint (wrong file type)");
    const auto version = readRaw<uint32_t>(bytes, sizeof kMagic);
    if (version == 0)
        return makeError(where + "not a d2dpo checkpoint (format 0)");
    if (version > kFormatVersion)
        return makeError(where + "written by a newer d2dpo (format " + std::to_string(version) +
                         ", this build reads up to " + std::to_string(kFormatVersion) + ")");
    const auto size = readRaw<uint64_t>(bytes, sizeof kMagic + sizeof(uint32_t));
    const auto crc = readRaw<uint32_t>(bytes, sizeof kMagic + sizeof(uint32_t) + sizeof(uint64_t));
    if (bytes.size() - kHeaderSize != size)
        return makeError(where + "truncated or padded (" + std::to_string(bytes.size() - kHeaderSize) +
                         " payload bytes, expected " + std::to_string(size) + ")");
    const std::string_view payload(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
    if (crc32Of(payload) != crc)
        return makeError(where + "corrupt (checksum mismatch)");

    auto contents = version == 1 ? readLegacyCheckpoint(payload) : readCheckpointPayload(payload);
    std::string().swap(bytes); // every tensor is copied out now: the file's bytes go before the model is built
    if (!contents)
        return makeError(where + contents.error());
    try {
        auto model = modelFrom(contents.value());
        if (!model)
            return makeError(where + model.error());
        // A checksum proves the bytes are the ones written, not that the weights are numbers: a
        // model whose training diverged would evaluate and export as if it were sound.
        if (!allFinite(model->model))
            return makeError(where + "its weights hold NaN or infinite values (training diverged before it was "
                                     "written); it cannot be used");
        model->model->to(device);
        return model;
    } catch (const std::exception& e) {
        return makeError(where + "unreadable contents: " + userMessage(e));
    }
}

} // namespace d2dpo
