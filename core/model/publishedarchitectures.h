// SPDX-License-Identifier: GPL-3.0-or-later
// The architectures d2dpo reads from published weights, by the name a checkpoint's spec keeps
// (ModelConfig::architecture): "ESM2" and "DPLM" (esmdenoiser.h, kind "esm") and "MDLM"
// (ditdenoiser.h, kind "mdlm"). What the import, the checkpoint reader, the export and the
// desktop's import dialog ask of any of them - its shape in words, its vocabulary contract, its
// network - is answered here once, so none of them names an architecture's class.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/config.h"
#include "base/modelvocabulary.h"
#include "base/result.h"
#include "model/slotteddenoiser.h"

namespace d2dpo {

/// The architecture's shape read from its config.json, before any weight is read.
struct PublishedShape {
    std::string summary;     ///< "6 layers of width 320, 20 heads" (or "blocks" for MDLM)
    int64_t layers = 0;      ///< attention layers
    int64_t headWidth = 0;   ///< each head's width (whether the fused attention kernel runs)
    int64_t linears = 0;     ///< matrix products per forward (the oneDNN count the import reports)
    int64_t vocabSize = 0;   ///< the model's ids V
    int64_t parameters = 0;
};

/// The ModelConfig kind of an architecture: "esm" (ESM2, DPLM) or "mdlm" (MDLM).
std::string publishedKind(const std::string& architecture);

/// The shape, or why the config cannot be computed exactly (the error names the key).
Result<PublishedShape> publishedShape(const std::string& architecture, const std::string& configJson);

/// The vocabulary contract from the file's vocab.txt tokens (esmvocabulary.h, ditvocabulary.h);
/// `padded` names its pad as the task's pad.
Result<ModelVocabulary> publishedVocabulary(const std::string& architecture, const std::string& configJson,
                                            const std::vector<std::string>& tokens, bool padded);

/// The network, its weights taken from `tensors` (keys under `prefix`), for a task of `length`
/// positions framed and mapped by `vocabulary`.
Result<std::shared_ptr<SlottedDenoiser>> publishedNetwork(const std::string& architecture, const std::string& configJson,
                                                          const ModelVocabulary& vocabulary, int64_t length,
                                                          const std::string& prefix,
                                                          std::vector<std::pair<std::string, torch::Tensor>> tensors);

/// The same for a stored model's spec.
Result<std::shared_ptr<SlottedDenoiser>> publishedNetwork(const ModelSpec& spec,
                                                          std::vector<std::pair<std::string, torch::Tensor>> tensors);

} // namespace d2dpo
