// SPDX-License-Identifier: GPL-3.0-or-later
// The vocabulary contract (base/modelvocabulary.h) of an ESM-family model, made from its
// `vocab.txt` (one token a line, the line number its id): the task's symbols are the 20 standard
// amino acids, the mask is <mask>, every sequence is framed <cls> ... <eos> as ESM was trained,
// and <pad> is the task's pad when its lengths vary. The rarer letters ESM knows (X B U Z O) are
// not generated. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "base/modelvocabulary.h"
#include "base/result.h"

namespace d2dpo {

/// The standard amino acids, the task's symbols.
inline constexpr char kAminoAcids[] = "ACDEFGHIKLMNPQRSTVWY";

/// vocab.txt's text -> its tokens, or why not (an empty line, a token twice, a control character).
Result<std::vector<std::string>> readVocabularyTokens(const std::string& text);

/// The contract for `tokens`; `padded` names <pad> as the task's pad. The error names the token missing.
Result<ModelVocabulary> esmVocabulary(const std::vector<std::string>& tokens, bool padded);

} // namespace d2dpo
