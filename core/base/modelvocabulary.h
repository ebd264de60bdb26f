// SPDX-License-Identifier: GPL-3.0-or-later
// The vocabulary contract of a model brought in (a TorchScript denoiser, model/torchscriptdenoiser.h):
// which of the model's own token ids are the task's symbols, which id is the mask, the pad id when
// lengths vary, and the fixed tokens that frame every sequence (never masked, generated or shown).
// The file is JSON (docs/own-model.md):
//   {"symbols": {"0": 3, "1": 4}, "mask": 2, "pad": 1, "begin": [0], "end": [5], "size": 6}
// "pad", "begin", "end" and "size" (the model's vocabulary size V) are optional. The task's token
// order is its symbols sorted by character, then the pad. No torch here: the spec carries it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"

namespace d2dpo {

struct ModelVocabulary {
    std::string symbols;            ///< the task's symbols, one printable character each, sorted
    std::vector<int64_t> symbolIds; ///< the model's id of each symbol, in the order of `symbols`
    int64_t maskId = -1;
    int64_t padId = -1;             ///< -1: no pad (every sequence fills the length)
    std::vector<int64_t> begin;     ///< ids before every sequence
    std::vector<int64_t> end;       ///< ids after every sequence
    int64_t size = 0;               ///< V, the model's vocabulary (its logits' last size); 0 = not known

    bool padded() const { return padId >= 0; }
    /// The model's id of each of the task's real tokens (the symbols, then the pad).
    std::vector<int64_t> realTokenIds() const;
    /// The largest id named anywhere.
    int64_t largestId() const;
};

/// Reads and checks a vocabulary file; an error names the file and what is wrong.
Result<ModelVocabulary> readModelVocabulary(const std::string& path);
/// The contract's JSON text -> a checked vocabulary (duplicate keys are refused, not merged).
Result<ModelVocabulary> parseModelVocabulary(const std::string& text);
/// The contract's JSON (what export writes beside model.pt and what a spec stores).
nlohmann::json modelVocabularyToJson(const ModelVocabulary& vocabulary);
/// Throws nlohmann::json::exception on a malformed object (a spec's copy, already checked once).
ModelVocabulary modelVocabularyFromJson(const nlohmann::json& json);

/// Ok, or the first problem: too few symbols, a symbol that is not one printable character, a
/// missing mask, ids that collide, negative ids, ids outside `size` when it is known.
Status validate(const ModelVocabulary& vocabulary);

} // namespace d2dpo
