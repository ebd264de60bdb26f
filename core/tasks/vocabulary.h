// SPDX-License-Identifier: GPL-3.0-or-later
// A task's vocabulary: one printable character per token, an optional pad token after the
// symbols (sequences of varying length end in pads, MDLM-style) and the mask token after that.
// format() and parse() are the only ways a sequence becomes text and back: the store, JSONL,
// the pair generator, samples, exports and the Label view all go through them. No torch.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace d2dpo {

class Vocabulary {
public:
    static constexpr char kMaskSymbol = '_';
    static constexpr char kPadSymbol = '.';

    Vocabulary(std::string symbols, bool padded);

    const std::string& symbols() const { return m_symbols; }
    bool padded() const { return m_padded; }
    /// Real tokens: the symbols, then the pad when there is one. The mask token is size().
    int64_t size() const { return int64_t(m_symbols.size()) + (m_padded ? 1 : 0); }
    int64_t padToken() const { return m_padded ? int64_t(m_symbols.size()) : -1; }
    int64_t maskToken() const { return size(); }
    /// The token of a symbol, or -1.
    int64_t tokenOf(char symbol) const { return m_tokenOf[static_cast<unsigned char>(symbol)]; }

    /// Text for people: a symbol per token, '.' for a pad, '_' for a mask; pads at the end are left
    /// out (a sequence of nothing but pads reads ".").
    std::string format(const int64_t* tokens, int64_t length) const;
    std::string format(const std::vector<int64_t>& tokens) const { return format(tokens.data(), int64_t(tokens.size())); }
    /// format()'s text -> exactly `length` tokens (pads added at the end when the vocabulary has
    /// one). The error names the first symbol that is not a token (a mask is never accepted) and
    /// its position, or the length.
    Result<std::vector<int64_t>> parse(const std::string& text, int64_t length) const;

private:
    std::string m_symbols;
    bool m_padded;
    std::array<int64_t, 256> m_tokenOf{};
};

/// The symbols of a named vocabulary: "protein" (the 20 amino acids and X; a data file
/// read with it keeps X only when it has one), "dna", "rna";
/// an error lists the names.
Result<std::string> namedVocabulary(const std::string& name);

} // namespace d2dpo
