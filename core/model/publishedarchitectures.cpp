// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/publishedarchitectures.h"

#include "model/ditarchitecture.h"
#include "model/ditdenoiser.h"
#include "model/ditvocabulary.h"
#include "model/esmarchitecture.h"
#include "model/esmdenoiser.h"
#include "model/esmvocabulary.h"

namespace d2dpo {

namespace {

bool isDit(const std::string& architecture) { return architecture == "MDLM"; }

} // namespace

std::string publishedKind(const std::string& architecture) { return isDit(architecture) ? "mdlm" : "esm"; }

Result<PublishedShape> publishedShape(const std::string& architecture, const std::string& configJson)
{
    if (isDit(architecture)) {
        auto a = ditArchitecture(configJson);
        if (!a)
            return makeError(a.error());
        // per block: q|k|v, out, up, down, adaLN; the time embedding's two, the output's two
        return PublishedShape{std::to_string(a->blocks) + " blocks of width " + std::to_string(a->hidden) + ", " +
                                  std::to_string(a->heads) + " heads, " +
                                  (a->timeConditioning ? "time-conditioned" : "time conditioning off"),
                              a->blocks, a->headWidth(), 5 * a->blocks + 4, a->vocabSize, ditParameterCount(a.value())};
    }
    auto a = esmArchitecture(configJson);
    if (!a)
        return makeError(a.error());
    // per layer: q|k|v, out, up, down; the head's dense and decoder
    return PublishedShape{std::to_string(a->layers) + " layers of width " + std::to_string(a->hidden) + ", " +
                              std::to_string(a->heads) + " heads",
                          a->layers, a->headWidth(), 4 * a->layers + 2, a->vocabSize, esmParameterCount(a.value())};
}

Result<ModelVocabulary> publishedVocabulary(const std::string& architecture, const std::string& configJson,
                                            const std::vector<std::string>& tokens, bool padded)
{
    if (!isDit(architecture))
        return esmVocabulary(tokens, padded);
    auto a = ditArchitecture(configJson);
    if (!a)
        return makeError(a.error());
    if (tokens.empty())
        return makeError("MDLM's release names its tokenizer, not its tokens: put a vocab.txt beside the weights (a "
                         "token a line, its id the line number - 1) or name the ids in a vocabulary contract "
                         "(--vocabulary FILE)");
    return ditVocabulary(tokens, a->vocabSize, a->maskTokenId, padded);
}

Result<std::shared_ptr<SlottedDenoiser>> publishedNetwork(const std::string& architecture, const std::string& configJson,
                                                          const ModelVocabulary& vocabulary, int64_t length,
                                                          const std::string& prefix,
                                                          std::vector<std::pair<std::string, torch::Tensor>> tensors)
{
    if (isDit(architecture)) {
        auto a = ditArchitecture(configJson);
        if (!a)
            return makeError(a.error());
        auto network = DitDenoiser::fromWeights(a.value(), vocabulary, length, prefix, std::move(tensors));
        if (!network)
            return makeError(network.error());
        return std::shared_ptr<SlottedDenoiser>(network.value());
    }
    auto a = esmArchitecture(configJson);
    if (!a)
        return makeError(a.error());
    auto network = EsmDenoiser::fromWeights(a.value(), vocabulary, length, prefix, std::move(tensors));
    if (!network)
        return makeError(network.error());
    return std::shared_ptr<SlottedDenoiser>(network.value());
}

Result<std::shared_ptr<SlottedDenoiser>> publishedNetwork(const ModelSpec& spec,
                                                          std::vector<std::pair<std::string, torch::Tensor>> tensors)
{
    return publishedNetwork(spec.model.architecture, spec.model.weightsConfig, spec.model.vocabulary, spec.task.length,
                            spec.model.keyPrefix, std::move(tensors));
}

} // namespace d2dpo
