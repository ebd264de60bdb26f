// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/publishedweights.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "base/safeoutput.h"
#include "base/untrustedtext.h"
#include "io/safetensors.h"
#include "model/esmvocabulary.h"

namespace d2dpo {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxTextBytes = 4 << 20; ///< config.json and vocab.txt

constexpr char kConvert[] =
    "convert it where you trust it: python3 -c \"from transformers import AutoModelForMaskedLM as M; "
    "M.from_pretrained('IN').save_pretrained('OUT', safe_serialization=True)\"";

Result<std::string> readText(const fs::path& path, int64_t limit)
{
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        return makeError("'" + path.string() + "' " + (fs::exists(path, ec) ? "is not a regular file" : "does not exist"));
    const auto size = int64_t(fs::file_size(path, ec));
    if (ec || size > limit)
        return makeError("'" + path.string() + "' " + (ec ? "cannot be read: " + ec.message() :
                                                          "is larger than " + std::to_string(limit) + " bytes"));
    std::ifstream in(path, std::ios::binary);
    std::string bytes(static_cast<size_t>(size), '\0');
    if (!in || !in.read(bytes.data(), size))
        return makeError("'" + path.string() + "' cannot be read (no permission?)");
    return bytes;
}

/// Why a pickled checkpoint is refused, or Ok for anything else.
Status refusePickle(const fs::path& file)
{
    const std::string ext = file.extension().string();
    if (ext == ".bin" || ext == ".pt" || ext == ".pth" || ext == ".ckpt" || ext == ".pkl")
        return makeError("'" + file.filename().string() +
                         "' is a pickle, which runs code when loaded; d2dpo reads weights only as safetensors. " +
                         kConvert);
    return Ok{};
}

std::string architectureOf(const nlohmann::json& config, const std::string& prefix)
{
    if (config.value("model_type", std::string()) == "mdlm")
        return "MDLM";
    if (prefix == "net.")
        return "DPLM";
    if (config.contains("architectures") && config.at("architectures").is_array())
        for (const auto& name : config.at("architectures"))
            if (name.is_string() && name.get<std::string>().find("DPLM") != std::string::npos)
                return "DPLM";
    return "ESM2";
}

} // namespace

bool isPublishedWeightsPath(const std::string& path)
{
    std::error_code ec;
    return fs::is_directory(path, ec) || fs::path(path).extension() == ".safetensors";
}

std::vector<std::string> publishedWeightsFiles(const std::string& path)
{
    std::error_code ec;
    const fs::path given(path);
    const bool folder = fs::is_directory(given, ec);
    const fs::path root = folder ? given : (given.has_parent_path() ? given.parent_path() : fs::path("."));
    return {(folder ? root / "model.safetensors" : given).string(), (root / "config.json").string(),
            (root / "vocab.txt").string()};
}

Result<PublishedWeights> readPublishedWeights(const std::string& path, const std::function<Status(int64_t)>& admit,
                                              bool contractGiven)
{
    const std::string where = "weights '" + path + "': ";
    std::error_code ec;
    fs::path folder(path), weights;
    if (fs::is_directory(folder, ec)) {
        weights = folder / "model.safetensors";
        if (!fs::exists(weights, ec)) {
            if (fs::exists(folder / "model.safetensors.index.json", ec))
                return makeError(where + "its weights are sharded (model.safetensors.index.json); join them into one "
                                         "model.safetensors (save_pretrained(..., max_shard_size='100GB'))");
            for (const char* pickled : {"pytorch_model.bin", "model.pt", "model.ckpt"})
                if (fs::exists(folder / pickled, ec))
                    return makeError(where + refusePickle(folder / pickled).error());
            return makeError(where + "the folder has no model.safetensors");
        }
    } else {
        if (!fs::exists(folder, ec))
            return makeError(where + "does not exist");
        if (Status s = refusePickle(folder); !s)
            return makeError(where + s.error());
        if (folder.extension() != ".safetensors")
            return makeError(where + "not a folder or a .safetensors file");
        weights = folder;
        folder = folder.has_parent_path() ? folder.parent_path() : fs::path(".");
    }
    PublishedWeights out;
    out.weightsPath = weights.string();
    auto config = readText(folder / "config.json", kMaxTextBytes);
    if (!config)
        return makeError(where + "its config.json: " + config.error());
    out.configJson = config.value();
    nlohmann::json configObject;
    try {
        if (Status s = checkJsonDepth(out.configJson, 16); !s)
            return makeError(where + "its config.json is " + s.error());
        configObject = nlohmann::json::parse(out.configJson);
    } catch (const nlohmann::json::exception& e) {
        return makeError(where + "its config.json is not JSON: " + e.what());
    }
    const std::string modelType = configObject.is_object() && configObject.value("model_type", nlohmann::json()).is_string()
                                      ? configObject.at("model_type").get<std::string>()
                                      : "";
    if (modelType != "esm" && modelType != "mdlm")
        return makeError(where + "its config.json names model_type '" + excerpt(modelType, 40) +
                         "'; d2dpo reads ESM2 and DPLM ('esm') and MDLM ('mdlm') weights natively. Other models come "
                         "in as TorchScript: d2dpo import --torchscript (docs/own-model.md)");
    // MDLM's release names its tokenizer rather than carrying tokens: its vocab.txt is optional
    // (a vocabulary contract can name the ids instead).
    if (modelType == "esm" || (!contractGiven && fs::exists(folder / "vocab.txt", ec))) {
        auto vocabulary = readText(folder / "vocab.txt", kMaxTextBytes);
        if (!vocabulary)
            return makeError(where + "its vocab.txt: " + vocabulary.error());
        auto tokens = readVocabularyTokens(vocabulary.value());
        if (!tokens)
            return makeError(where + tokens.error());
        out.tokens = std::move(tokens.value());
    }

    if (!fs::is_regular_file(weights, ec))
        return makeError(where + "'" + weights.string() + "' is not a regular file");
    const auto size = int64_t(fs::file_size(weights, ec));
    if (ec)
        return makeError(where + "cannot read the size of model.safetensors: " + ec.message());
    if (admit)
        if (Status s = admit(size); !s)
            return makeError(where + s.error());
    std::string bytes(static_cast<size_t>(size), '\0');
    {
        std::ifstream in(weights, std::ios::binary);
        if (!in || !in.read(bytes.data(), size))
            return makeError(where + "model.safetensors cannot be read (no permission?)");
    }
    auto file = readSafetensors(bytes);
    if (!file)
        return makeError(where + "its model.safetensors " + file.error());
    bytes.clear();
    bytes.shrink_to_fit();
    out.tensors = std::move(file.value().tensors);
    // DPLM saves ESM2 under "net.", MDLM's release its DiT under "backbone."
    const std::string wrapper = modelType == "mdlm" ? "backbone." : "net.";
    bool wrapped = !out.tensors.empty();
    for (const auto& [name, tensor] : out.tensors)
        wrapped = wrapped && name.rfind(wrapper, 0) == 0;
    out.prefix = wrapped ? wrapper : "";
    out.architecture = architectureOf(configObject, out.prefix);
    return out;
}

Status writePublishedWeights(const std::string& folder, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                             const std::string& configJson, const std::vector<std::string>& tokens,
                             const std::vector<std::string>& inputs)
{
    std::vector<std::pair<std::string, torch::Tensor>> cpu;
    cpu.reserve(tensors.size());
    for (const auto& [name, tensor] : tensors)
        cpu.emplace_back(name, tensor.detach().to(torch::kCPU, tensor.is_floating_point() ? torch::kFloat32 : tensor.scalar_type()));
    const std::map<std::string, std::string> metadata{{"format", "pt"}}; // what transformers writes
    std::string bytes;
    bytes.reserve(size_t(safetensorsBytes(cpu, metadata)));
    if (!appendSafetensors(bytes, cpu, metadata))
        return makeError("not enough memory to write model.safetensors");
    cpu.clear();
    std::string vocabulary;
    for (const auto& token : tokens)
        vocabulary += token + "\n";
    const fs::path root(folder);
    for (const auto& [name, text] : {std::pair<const char*, const std::string*>{"model.safetensors", &bytes},
                                     {"config.json", &configJson},
                                     {"vocab.txt", &vocabulary}}) {
        if (text->empty()) { // no tokens came in (MDLM with a vocabulary contract): none go out
            std::error_code ec;
            const fs::path stale = fs::weakly_canonical(root / name, ec);
            const bool isInput = std::any_of(inputs.begin(), inputs.end(), [&](const std::string& input) {
                std::error_code e;
                return fs::weakly_canonical(input, e) == stale;
            });
            if (!isInput)
                fs::remove(root / name, ec);
            continue;
        }
        if (Status s = AtomicFile::write((root / name).string(), *text, inputs); !s)
            return makeError(std::string(name) + ": " + s.error());
    }
    return Ok{};
}

} // namespace d2dpo
