// SPDX-License-Identifier: GPL-3.0-or-later
// A model brought in as TorchScript, scripted in the test itself: a denoiser over ids 0, 1 (the
// symbols) and 2 (the mask) with an embedding table (no adapter goes there: its name says embed),
// a projection weight and a bias.
#pragma once

#include <sstream>

#include <QtGlobal>

#include <torch/script.h>

#include "base/modelvocabulary.h"
#include "model/torchscriptdenoiser.h"
#include "support/tinyconfigs.h"

namespace d2dpo::test {

inline std::shared_ptr<TorchScriptDenoiser> tinyScriptedModel(int64_t length)
{
    torch::manual_seed(4);
    torch::jit::Module module("__torch__.Tiny");
    module.register_parameter("embed_table", torch::randn({3, 8}), false);
    module.register_parameter("proj_weight", torch::randn({3, 8}) * 0.3, false);
    module.register_parameter("proj_bias", torch::zeros({3}), false);
    module.define("def forward(self, tokens: Tensor, t: Tensor) -> Tensor:\n"
                  "    x = self.embed_table[tokens] + t[:, None, None]\n"
                  "    return torch.matmul(x, self.proj_weight.t()) + self.proj_bias\n");
    std::ostringstream archive;
    module.save(archive);
    auto vocabulary = parseModelVocabulary("{\"symbols\": {\"0\": 0, \"1\": 1}, \"mask\": 2}");
    auto loaded = TorchScriptDenoiser::load(archive.str(), vocabulary.value(), length);
    if (!loaded)
        qFatal("%s", loaded.error().c_str());
    return loaded.value();
}

/// The spec a checkpoint of tinyScriptedModel(length) records.
inline ModelSpec tinyScriptedSpec(int64_t length)
{
    ModelSpec s = tinySpec(int(length));
    s.model.kind = "torchscript";
    s.model.vocabulary = parseModelVocabulary("{\"symbols\": {\"0\": 0, \"1\": 1}, \"mask\": 2}").value();
    s.model.vocabulary.size = 3;
    s.model.parameters = 2 * 3 * 8 + 3;
    return s;
}

} // namespace d2dpo::test
