// SPDX-License-Identifier: GPL-3.0-or-later
// A model published as weights plus a config, as `transformers`' save_pretrained writes it: a
// folder with `model.safetensors`, `config.json` and `vocab.txt`. Read as data: the safetensors
// reader checks every offset before a byte is copied, and nothing in the folder is ever run. A
// pickle (`pytorch_model.bin`, `.pt`, `.ckpt`) is refused unread, with the command that converts
// it where the user trusts it. The architecture is recognised from config.json's model_type and the
// weights' key prefix: "ESM2" (EsmForMaskedLM, keys "esm.*" and "lm_head.*"), "DPLM" (the same
// network saved under "net.") or "MDLM" (model_type "mdlm": its DiT, saved under "backbone."; its
// vocab.txt optional, since MDLM's release names a tokenizer instead). Writing puts the same files in
// a folder, keys and shapes as read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "base/result.h"

namespace d2dpo {

struct PublishedWeights {
    std::string architecture;         ///< "ESM2", "DPLM" or "MDLM"
    std::string prefix;               ///< before every key: "", "net." or "backbone."
    std::string configJson;           ///< config.json, verbatim
    std::vector<std::string> tokens;  ///< vocab.txt, a token a line (empty: MDLM without one)
    std::vector<std::pair<std::string, torch::Tensor>> tensors;
    std::string weightsPath;          ///< the model.safetensors read
};

/// `path` is the folder, or its model.safetensors (config.json and vocab.txt beside it). `admit`
/// hears the safetensors file's size before it is read and may refuse it (the memory check).
/// `contractGiven`: a vocabulary contract names the ids, so MDLM's vocab.txt is not read.
Result<PublishedWeights> readPublishedWeights(const std::string& path,
                                              const std::function<Status(int64_t bytes)>& admit = {},
                                              bool contractGiven = false);

/// Whether `path` looks like published weights (a folder, or a .safetensors file) rather than a
/// TorchScript archive: what File > Import model and `d2dpo import` use to pick the path.
bool isPublishedWeightsPath(const std::string& path);

/// The files `path` (a folder or its model.safetensors) names: the weights, config.json and
/// vocab.txt, whether they exist or not (what a command reads, never to be written over).
std::vector<std::string> publishedWeightsFiles(const std::string& path);

/// Writes model.safetensors (`tensors` as float32, in order), config.json and vocab.txt (none
/// when `tokens` is empty) into `folder`, each atomically; never over one of `inputs`.
Status writePublishedWeights(const std::string& folder, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                             const std::string& configJson, const std::vector<std::string>& tokens,
                             const std::vector<std::string>& inputs = {});

} // namespace d2dpo
