// SPDX-License-Identifier: GPL-3.0-or-later
// The vocabulary contract (base/modelvocabulary.h) of an MDLM model, made from a `vocab.txt` beside
// its weights (one token a line, the line number its id; MDLM's release carries its tokenizer's
// name, not its tokens, so the file is the user's, or the one d2dpo's export writes): the task's
// symbols are the tokens that are one character a symbol can be (printable ASCII other than space,
// '_' and '.'), the mask is the [MASK] (or <mask>) token, else the config's mask_token_id, else the
// id after the file's last token (MDLM appends one when its tokenizer has none), and [PAD] (or
// <pad>) is the pad when lengths
// vary. No frame: MDLM reads the sequence alone. For a word-piece vocabulary (GPT-2's), a
// vocabulary contract names the ids instead (docs/published-weights.md). Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/modelvocabulary.h"
#include "base/result.h"

namespace d2dpo {

/// The contract for `tokens` of a network with `vocabSize` ids; `padded` names the pad token as
/// the task's pad. The error says what is missing.
/// `configMask` is the config's mask_token_id (-1: none), which a file without [MASK] follows.
Result<ModelVocabulary> ditVocabulary(const std::vector<std::string>& tokens, int64_t vocabSize, int64_t configMask,
                                      bool padded);

} // namespace d2dpo
