// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/checkpoint.h"

#include <cctype>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <string_view>
#include <tuple>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include "base/failurereport.h"
#include "base/safeoutput.h"
#include "base/untrustedtext.h"
#include "model/torchscriptdenoiser.h"
#include "model/loradenoiser.h"
#include "model/memoryarchive.h"
#include "model/scriptoperations.h"
#include "model/transformerdenoiser.h"
#include "tasks/task.h"

namespace d2dpo {

namespace {

constexpr char kMagic[8] = {'D', '2', 'D', 'P', 'O', 'C', 'K', 'P'};
constexpr uint32_t kFormatVersion = 1;
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
        torch::serialize::OutputArchive archive;
        archive.write("info", c10::IValue(infoToJson(info)));
        std::string scriptedBytes;
        int64_t weightBytes = 0;
        if (const auto* scripted = dynamic_cast<const TorchScriptDenoiser*>(model.get())) {
            // A model brought in travels with its code: its TorchScript archive, as bytes, which
            // hold its current weights too, so they are not written a second time.
            scriptedBytes = scripted->archive();
            weightBytes = int64_t(scriptedBytes.size());
            archive.write("torchscript",
                          torch::from_blob(scriptedBytes.data(), {weightBytes}, torch::dtype(torch::kUInt8)));
        } else {
            torch::serialize::OutputArchive weights;
            for (const auto& item : model->named_parameters()) {
                weights.write(item.key(), item.value().detach().to(torch::kCPU));
                weightBytes += item.value().numel() * int64_t(item.value().element_size());
            }
            for (const auto& item : model->named_buffers())
                weights.write(item.key(), item.value().to(torch::kCPU), /*is_buffer=*/true);
            archive.write("weights", weights);
        }
        payload.reserve(size_t(weightBytes + weightBytes / 64 + (int64_t(16) << 20)));
        archive.save_to(appendingArchiveWriter(payload, outOfMemory));
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

    try {
        // The payload is a TorchScript archive: checked before it is loaded, as a model's is.
        if (Status s = checkArchiveBeforeLoading(payload); !s)
            return makeError(where + s.error());
        torch::serialize::InputArchive archive;
        archive.load_from(payload.data(), payload.size(), torch::Device(torch::kCPU));
        std::string().swap(bytes); // every record is read now: the file's bytes go before the model is built
        c10::IValue infoValue;
        archive.read("info", infoValue);
        auto info = infoFromJson(infoValue.toStringRef());
        if (!info)
            return makeError(where + info.error());

        LoadedCheckpoint loaded;
        loaded.info = info.value();
        auto task = makeTask(loaded.info.spec.task);
        if (!task)
            return makeError(where + task.error());
        if (loaded.info.spec.model.isTorchScript()) {
            torch::Tensor code;
            if (!archive.try_read("torchscript", code))
                return makeError(where + "its TorchScript module is missing");
            code = code.contiguous();
            const auto* data = reinterpret_cast<const char*>(code.data_ptr<uint8_t>());
            auto scripted = TorchScriptDenoiser::load(std::string_view(data, size_t(code.numel())),
                                                      loaded.info.spec.model.vocabulary, loaded.info.spec.task.length);
            if (!scripted)
                return makeError(where + scripted.error());
            loaded.model = scripted.value();
        } else {
            loaded.model = makeDenoiser(loaded.info.spec, task.value()->vocabSize(), torch::Device(torch::kCPU));
        }
        // A model brought in carries its weights in its TorchScript archive; checkpoints written
        // before 2026-11-27 also have them apart, and those are the ones read then.
        torch::serialize::InputArchive weights;
        const bool apart = archive.try_read("weights", weights);
        if (!apart && !loaded.info.spec.model.isTorchScript())
            return makeError(where + "its weights are missing");
        torch::NoGradGuard noGrad;
        auto copyInto = [&](const std::string& name, torch::Tensor& target, bool isBuffer) -> Status {
            torch::Tensor stored;
            if (!weights.try_read(name, stored, isBuffer))
                return makeError(where + "weight '" + name + "' is missing");
            if (stored.sizes() != target.sizes())
                return makeError(where + "weight '" + name + "' has the wrong shape");
            target.copy_(stored);
            return Ok{};
        };
        for (auto& item : loaded.model->named_parameters())
            if (Status s = apart ? copyInto(item.key(), item.value(), false) : Status(Ok{}); !s)
                return makeError(s.error());
        for (auto& item : loaded.model->named_buffers())
            if (Status s = apart ? copyInto(item.key(), item.value(), true) : Status(Ok{}); !s)
                return makeError(s.error());
        // A checksum proves the bytes are the ones written, not that the weights are numbers: a
        // model whose training diverged would evaluate and export as if it were sound.
        if (!allFinite(loaded.model))
            return makeError(where + "its weights hold NaN or infinite values (training diverged before it was "
                                     "written); it cannot be used");
        loaded.model->to(device);
        return loaded;
    } catch (const std::exception& e) {
        return makeError(where + "unreadable contents: " + userMessage(e));
    }
}

} // namespace d2dpo
