// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/esmvocabulary.h"

#include <algorithm>
#include <map>

#include "base/untrustedtext.h"

namespace d2dpo {

namespace {

constexpr size_t kMaxTokens = 1 << 20;
constexpr size_t kMaxTokenBytes = 256;

} // namespace

Result<std::vector<std::string>> readVocabularyTokens(const std::string& text)
{
    std::vector<std::string> tokens;
    std::map<std::string, size_t> seen;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        std::string token = text.substr(start, end - start);
        if (!token.empty() && token.back() == '\r')
            token.pop_back();
        start = end + 1;
        const std::string line = std::to_string(tokens.size() + 1);
        if (token.empty())
            return makeError("its vocab.txt has an empty line " + line + " (each line is one token, its id the line number - 1)");
        if (token.size() > kMaxTokenBytes || std::any_of(token.begin(), token.end(), [](char c) {
                return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
            }))
            return makeError("its vocab.txt's line " + line + " is not a token (too long, or control characters)");
        if (!seen.emplace(token, tokens.size()).second)
            return makeError("its vocab.txt names '" + excerpt(token, 40) + "' twice (lines " +
                             std::to_string(seen[token] + 1) + " and " + line + ")");
        tokens.push_back(std::move(token));
        if (tokens.size() > kMaxTokens)
            return makeError("its vocab.txt has more than " + std::to_string(kMaxTokens) + " tokens");
    }
    if (tokens.empty())
        return makeError("its vocab.txt is empty");
    return tokens;
}

Result<ModelVocabulary> esmVocabulary(const std::vector<std::string>& tokens, bool padded)
{
    std::map<std::string, int64_t> id;
    for (size_t i = 0; i < tokens.size(); ++i)
        id.emplace(tokens[i], int64_t(i));
    const auto find = [&](const std::string& token) -> Result<int64_t> {
        const auto it = id.find(token);
        if (it == id.end())
            return makeError("its vocab.txt has no '" + token + "' (an ESM vocabulary has <cls>, <pad>, <eos>, "
                             "<mask> and the 20 standard amino acids)");
        return it->second;
    };
    ModelVocabulary v;
    v.symbols = kAminoAcids;
    for (char c : v.symbols) {
        auto symbol = find(std::string(1, c));
        if (!symbol)
            return makeError(symbol.error());
        v.symbolIds.push_back(symbol.value());
    }
    auto mask = find("<mask>"), cls = find("<cls>"), eos = find("<eos>"), pad = find("<pad>");
    for (const auto* r : {&mask, &cls, &eos, &pad})
        if (!*r)
            return makeError(r->error());
    v.maskId = mask.value();
    v.begin = {cls.value()};
    v.end = {eos.value()};
    v.padId = padded ? pad.value() : -1;
    v.size = int64_t(tokens.size());
    if (Status s = validate(v); !s)
        return makeError("its vocabulary: " + s.error());
    return v;
}

} // namespace d2dpo
