// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/vocabulary.h"

namespace d2dpo {

Vocabulary::Vocabulary(std::string symbols, bool padded)
    : m_symbols(std::move(symbols))
    , m_padded(padded)
{
    m_tokenOf.fill(-1);
    for (size_t i = 0; i < m_symbols.size(); ++i)
        m_tokenOf[static_cast<unsigned char>(m_symbols[i])] = int64_t(i);
}

std::string Vocabulary::format(const int64_t* tokens, int64_t length) const
{
    int64_t end = length;
    if (m_padded)
        while (end > 0 && tokens[end - 1] == padToken())
            --end;
    if (end == 0 && length > 0)
        return std::string(1, kPadSymbol);
    std::string text;
    text.reserve(size_t(end));
    for (int64_t i = 0; i < end; ++i) {
        const int64_t token = tokens[i];
        if (token >= 0 && token < int64_t(m_symbols.size()))
            text += m_symbols[size_t(token)];
        else if (token == padToken())
            text += kPadSymbol;
        else if (token == maskToken())
            text += kMaskSymbol;
        else
            text += '?';
    }
    return text;
}

Result<std::vector<int64_t>> Vocabulary::parse(const std::string& text, int64_t length) const
{
    const auto quoted = [&] {
        // Appended piece by piece: GCC 12 at -O3 warns (wrongly) about `"literal" + std::string`.
        std::string q(1, '"');
        q.append(text, 0, 80);
        q.append(text.size() > 80 ? "...\"" : "\"");
        return q;
    };
    if (int64_t(text.size()) > length)
        return makeError(quoted() + " has " + std::to_string(text.size()) + " symbols; this task's sequences have " +
                         (m_padded ? "at most " : "") + std::to_string(length));
    if (!m_padded && int64_t(text.size()) != length)
        return makeError(quoted() + " has " + std::to_string(text.size()) + " symbols; this task's sequences have " +
                         std::to_string(length));
    std::vector<int64_t> tokens;
    tokens.reserve(size_t(length));
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const int64_t token = (m_padded && c == kPadSymbol) ? padToken() : tokenOf(c);
        if (token < 0) {
            std::string message(1, '\'');
            message += c;
            message += "' at position " + std::to_string(i + 1) + " of " + quoted() + " is not a symbol of this task (";
            message += m_symbols;
            message += m_padded ? ", '.' for a pad)" : ")";
            return makeError(message);
        }
        tokens.push_back(token);
    }
    tokens.resize(size_t(length), padToken());
    return tokens;
}

Result<std::string> namedVocabulary(const std::string& name)
{
    if (name == "protein")
        return std::string("ACDEFGHIKLMNPQRSTVWYX");
    if (name == "dna")
        return std::string("ACGT");
    if (name == "rna")
        return std::string("ACGU");
    return makeError("unknown vocabulary '" + name + "' (known: protein, dna, rna; or symbols:LIST, or data)");
}

} // namespace d2dpo
