// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/ditvocabulary.h"

#include <map>

namespace d2dpo {

namespace {

bool canBeSymbol(const std::string& token)
{
    return token.size() == 1 && token[0] > ' ' && token[0] <= '~' && token[0] != '_' && token[0] != '.';
}

} // namespace

Result<ModelVocabulary> ditVocabulary(const std::vector<std::string>& tokens, int64_t vocabSize, int64_t configMask,
                                      bool padded)
{
    if (int64_t(tokens.size()) > vocabSize)
        return makeError("its vocab.txt names " + std::to_string(tokens.size()) + " tokens, more than its config's "
                         "vocab_size (" + std::to_string(vocabSize) + ")");
    std::map<char, int64_t> symbols;
    int64_t mask = -1, pad = -1;
    for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string& token = tokens[i];
        if (canBeSymbol(token))
            symbols.emplace(token[0], int64_t(i));
        else if (token == "[MASK]" || token == "<mask>")
            mask = int64_t(i);
        else if (token == "[PAD]" || token == "<pad>")
            pad = int64_t(i);
    }
    if (mask < 0 && configMask >= 0)
        mask = configMask;
    if (mask < 0) {
        if (int64_t(tokens.size()) != vocabSize - 1)
            return makeError("its vocab.txt has no [MASK] token, and the mask is not the one id after its tokens (" +
                             std::to_string(tokens.size()) + " tokens for vocab_size " + std::to_string(vocabSize) +
                             "); name the ids in a vocabulary contract (--vocabulary FILE)");
        mask = vocabSize - 1; // MDLM: vocab_size = the tokenizer's + 1, the [MASK] appended last
    }
    if (padded && pad < 0)
        return makeError("the task's lengths vary, and its vocab.txt has no [PAD] token to fill them");
    ModelVocabulary v;
    for (const auto& [symbol, id] : symbols) {
        v.symbols.push_back(symbol);
        v.symbolIds.push_back(id);
    }
    v.maskId = mask;
    v.padId = padded ? pad : -1;
    v.size = vocabSize;
    if (Status s = validate(v); !s)
        return makeError("its vocabulary: " + s.error());
    return v;
}

} // namespace d2dpo
