// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/scriptlinear.h"

#include <cstdlib>
#include <string_view>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/library.h>
#include <torch/script.h>

#include "kernels/onednnlinear.h"

namespace d2dpo {

namespace {

torch::Tensor linearOp(const torch::Tensor& x, const torch::Tensor& w, const c10::optional<torch::Tensor>& b)
{
    return onednnLinear(x, w, b ? std::optional<torch::Tensor>(*b) : std::nullopt);
}

void collectLinears(torch::jit::Block* block, std::vector<torch::jit::Node*>& found)
{
    static const auto linear = c10::Symbol::fromQualString("aten::linear");
    for (torch::jit::Node* node : block->nodes()) {
        if (node->kind() == linear && node->inputs().size() == 3)
            found.push_back(node);
        for (torch::jit::Block* inner : node->blocks())
            collectLinears(inner, found);
    }
}

} // namespace

int64_t routeScriptLinears(torch::jit::Graph& graph)
{
    if (const char* choice = std::getenv("D2DPO_SCRIPT_LINEAR"); choice && std::string_view(choice) == "plain")
        return 0;
    if (!onednnGemmAvailable())
        return 0;
    std::vector<torch::jit::Node*> found;
    collectLinears(graph.block(), found);
    static const auto routed = c10::Symbol::fromQualString("d2dpo::linear");
    for (torch::jit::Node* node : found) {
        // Just before the node it replaces, in its block: the same inputs, read at the same moment.
        torch::jit::WithInsertPoint here(node);
        torch::jit::Value* out = graph.insert(routed, {node->input(0), node->input(1), node->input(2)});
        out->setType(node->output()->type());
        node->output()->replaceAllUsesWith(out);
        node->destroy();
    }
    return int64_t(found.size());
}

} // namespace d2dpo

TORCH_LIBRARY_FRAGMENT(d2dpo, library)
{
    library.def("linear(Tensor x, Tensor w, Tensor? b) -> Tensor", &d2dpo::linearOp);
}
