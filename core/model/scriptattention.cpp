// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/scriptattention.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_map>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/ir/subgraph_matcher.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/subgraph_rewrite.h>
#include <torch/library.h>
#include <torch/script.h>

#include "kernels/attention.h"
#include "model/scriptlinear.h"

namespace d2dpo {

namespace {

/// dim as an index into `rank` dimensions, or -1 where it names none.
int64_t wrapped(int64_t dim, int64_t rank)
{
    if (dim < -rank || dim >= rank)
        return -1;
    return dim < 0 ? dim + rank : dim;
}

/// The multiplier of the scores where the kernel can compute this attention exactly as written,
/// else nothing.
std::optional<double> kernelScale(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t t0,
                                  int64_t t1, const c10::Scalar& c, bool divide, int64_t dim,
                                  const std::optional<c10::ScalarType>& dtype)
{
    const int64_t rank = q.dim();
    if ((rank != 3 && rank != 4) || k.sizes() != q.sizes() || v.sizes() != q.sizes() || q.numel() == 0)
        return std::nullopt;
    if (!kernelBeatsBatchedProducts(q.size(-1))) // exact there too, but slower
        return std::nullopt;
    const bool lastTwo = std::min(wrapped(t0, rank), wrapped(t1, rank)) == rank - 2 &&
                         std::max(wrapped(t0, rank), wrapped(t1, rank)) == rank - 1;
    if (!lastTwo || wrapped(dim, rank) != rank - 1 || dtype.has_value())
        return std::nullopt;
    const auto type = q.scalar_type();
    if ((type != torch::kFloat && type != torch::kDouble) || k.scalar_type() != type || v.scalar_type() != type)
        return std::nullopt;
    if (!q.device().is_cpu() || !k.device().is_cpu() || !v.device().is_cpu())
        return std::nullopt;
    if (!(c.isFloatingPoint() || c.isIntegral(/*includeBool=*/false)))
        return std::nullopt;
    const double scale = divide ? 1.0 / c.toDouble() : c.toDouble();
    if (!std::isfinite(scale))
        return std::nullopt;
    return scale;
}

torch::Tensor attentionOp(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t t0, int64_t t1,
                          const c10::Scalar& c, bool divide, int64_t dim, c10::optional<c10::ScalarType> dtype)
{
    return scriptAttention(q, k, v, t0, t1, c, divide, dim,
                           dtype ? std::optional<c10::ScalarType>(*dtype) : std::optional<c10::ScalarType>());
}

/// How the scores are scaled in the expressions the rewrite finds, as TorchScript compiles them.
struct Scaling {
    const char* node; ///< between the scores and the softmax
    const char* divide; ///< d2dpo::attention's divide argument
};

constexpr Scaling kScalings[] = {{"aten::div", "1"}, {"aten::mul", "0"}};

std::string scaledPattern(const Scaling& s)
{
    return std::string("graph(%q, %k, %v, %t0, %t1, %c, %dim, %dtype):\n"
                       "  %kt = aten::transpose(%k, %t0, %t1)\n"
                       "  %s = aten::matmul(%q, %kt)\n"
                       "  %z = ") +
           s.node +
           "(%s, %c)\n"
           "  %p = aten::softmax(%z, %dim, %dtype)\n"
           "  %o = aten::matmul(%p, %v)\n"
           "  return (%o)";
}

std::string scaledReplacement(const Scaling& s)
{
    return std::string("graph(%q, %k, %v, %t0, %t1, %c, %dim, %dtype):\n"
                       "  %divide : bool = prim::Constant[value=") +
           s.divide +
           "]()\n"
           "  %o = d2dpo::attention(%q, %k, %v, %t0, %t1, %c, %divide, %dim, %dtype)\n"
           "  return (%o)";
}

std::string unscaledPattern()
{
    return "graph(%q, %k, %v, %t0, %t1, %dim, %dtype):\n"
           "  %kt = aten::transpose(%k, %t0, %t1)\n"
           "  %s = aten::matmul(%q, %kt)\n"
           "  %p = aten::softmax(%s, %dim, %dtype)\n"
           "  %o = aten::matmul(%p, %v)\n"
           "  return (%o)";
}

std::string unscaledReplacement()
{
    return "graph(%q, %k, %v, %t0, %t1, %dim, %dtype):\n"
           "  %divide : bool = prim::Constant[value=0]()\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %o = d2dpo::attention(%q, %k, %v, %t0, %t1, %one, %divide, %dim, %dtype)\n"
           "  return (%o)";
}

/// Whether a match may be replaced. The rewriter puts d2dpo::attention right after the last of its
/// inputs is made, not where the expression was: that is the same only when q, k and v are made
/// in the expression's own block (not outside an `if` or a loop it is in) and nothing writes to
/// them, or to what they view, in between. And only a number scales the scores in
/// d2dpo::attention: a division by a tensor stays as written.
bool replaceable(const std::shared_ptr<torch::jit::Graph>& graph, const torch::jit::Match& match,
                 const std::unordered_map<std::string, torch::jit::Value*>& patternValues)
{
    if (const auto c = patternValues.find("c"); c != patternValues.end()) {
        const auto kind = match.values_map.at(c->second)->type()->kind();
        if (kind != c10::TypeKind::FloatType && kind != c10::TypeKind::IntType)
            return false;
    }
    torch::jit::Block* block = match.anchor->owningBlock();
    torch::jit::AliasDb aliases(graph); // of the graph as it is now: earlier matches replaced
    for (const char* name : {"q", "k", "v"}) {
        const torch::jit::Value* value = match.values_map.at(patternValues.at(name));
        if (value->node()->owningBlock() != block || aliases.hasWriters(value))
            return false;
    }
    return true;
}

/// The nodes of `block` and of the blocks inside it whose kind is one of `kinds`.
int64_t countNodes(torch::jit::Block* block, std::initializer_list<c10::Symbol> kinds)
{
    int64_t count = 0;
    for (torch::jit::Node* node : block->nodes()) {
        count += std::find(kinds.begin(), kinds.end(), node->kind()) != kinds.end();
        for (torch::jit::Block* inner : node->blocks())
            count += countNodes(inner, kinds);
    }
    return count;
}

/// Every call to another method or function replaced by its body, to a depth of 32 calls. One
/// Inline pass goes one level down while the executor's optimisation is off (each callee's graph
/// goes in as written, its own calls included): torchscriptdenoiser.cpp turns the optimisation off.
void inlineEverything(torch::jit::Graph& graph)
{
    const std::initializer_list<c10::Symbol> calls{c10::prim::CallMethod, c10::prim::CallFunction};
    for (int depth = 0; depth < 32 && countNodes(graph.block(), calls) > 0; ++depth)
        torch::jit::Inline(graph);
}

} // namespace

torch::Tensor scriptAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t t0,
                              int64_t t1, const c10::Scalar& c, bool divide, int64_t dim,
                              std::optional<c10::ScalarType> dtype)
{
    const auto scale = kernelScale(q, k, v, t0, t1, c, divide, dim, dtype);
    if (!scale) { // what the model's code says, op for op
        auto scores = torch::matmul(q, k.transpose(t0, t1));
        scores = divide ? scores.div(c) : scores.mul(c);
        const auto probabilities = dtype ? torch::softmax(scores, dim, *dtype) : torch::softmax(scores, dim);
        return torch::matmul(probabilities, v);
    }
    // [G, N, W] is one head per group; [B, H, N, W] is packed as the kernel reads it, [B, N, 3E].
    const bool grouped = q.dim() == 3;
    const auto q4 = grouped ? q.unsqueeze(1) : q, k4 = grouped ? k.unsqueeze(1) : k, v4 = grouped ? v.unsqueeze(1) : v;
    const int64_t batch = q4.size(0), heads = q4.size(1), length = q4.size(2), width = q4.size(3);
    const auto packed = torch::stack({q4.transpose(1, 2), k4.transpose(1, 2), v4.transpose(1, 2)}, 2)
                            .view({batch, length, 3 * heads * width});
    // Contiguous, as matmul's result is: the model's code may view() it.
    const auto out = selfAttention(packed, heads, *scale).view({batch, length, heads, width}).transpose(1, 2);
    return (grouped ? out.squeeze(1) : out).contiguous();
}

namespace {

void fuseAttention(std::shared_ptr<torch::jit::Graph>& graph)
{
    const auto filter = [&graph](const torch::jit::Match& match,
                                 const std::unordered_map<std::string, torch::jit::Value*>& values) {
        return replaceable(graph, match, values);
    };
    for (const Scaling& scaling : kScalings) {
        torch::jit::SubgraphRewriter rewriter;
        rewriter.RegisterRewritePattern(scaledPattern(scaling), scaledReplacement(scaling));
        rewriter.runOnGraph(graph, filter);
    }
    torch::jit::SubgraphRewriter unscaled;
    unscaled.RegisterRewritePattern(unscaledPattern(), unscaledReplacement());
    unscaled.runOnGraph(graph, filter);
}

bool plain(const char* variable)
{
    const char* choice = std::getenv(variable);
    return choice && std::string_view(choice) == "plain";
}

} // namespace

FusedForward fuseScriptForward(const torch::jit::Module& module)
{
    auto graph = module.get_method("forward").graph()->copy();
    inlineEverything(*graph);
    FusedForward fused;
    if (!plain("D2DPO_SCRIPT_ATTENTION")) {
        fuseAttention(graph);
        fused.rewritten = countNodes(graph->block(), {c10::Symbol::fromQualString("d2dpo::attention")});
    }
    fused.linears = routeScriptLinears(*graph); // none when D2DPO_SCRIPT_LINEAR is "plain"
    if (fused.rewritten > 0 || fused.linears > 0) {
        fused.function = std::make_shared<torch::jit::GraphFunction>("d2dpo_fused_forward", graph, nullptr);
        fused.function->getSchema(); // made lazily and unlocked: made here, before any thread calls it
    }
    return fused;
}

} // namespace d2dpo

TORCH_LIBRARY(d2dpo, library)
{
    library.def("attention(Tensor q, Tensor k, Tensor v, int t0, int t1, Scalar c, bool divide, int dim, "
                "ScalarType? dtype) -> Tensor",
                &d2dpo::attentionOp);
}
