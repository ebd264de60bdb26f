// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "kernels/attentionhead.h"
#include "kernels/vectorclones.h"

namespace d2dpo {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

using attentionhead::Head;
using attentionhead::headBackward;
using attentionhead::headOutput;
using attentionhead::headProbabilities;
using attentionhead::paddedCount;

/// Runs CALL with W set to the head width as a compile-time constant where it is one of the
/// common widths, else with W = 0. A macro, not a lambda: a lambda's body would be a function of
/// its own, compiled for the baseline target instead of the clone's (target_clones below).
#define D2DPO_WIDTH_CASE(width, CALL)                                                                                  \
    case width: {                                                                                                      \
        constexpr int W = width;                                                                                       \
        CALL;                                                                                                          \
        break;                                                                                                         \
    }
#define D2DPO_WITH_WIDTH(width, CALL)                                                                                  \
    switch (width) {                                                                                                   \
        D2DPO_WIDTH_CASE(8, CALL)                                                                                      \
        D2DPO_WIDTH_CASE(16, CALL)                                                                                     \
        D2DPO_WIDTH_CASE(24, CALL)                                                                                     \
        D2DPO_WIDTH_CASE(32, CALL)                                                                                     \
        D2DPO_WIDTH_CASE(64, CALL)                                                                                     \
    default: {                                                                                                         \
        constexpr int W = 0;                                                                                           \
        CALL;                                                                                                          \
    }                                                                                                                  \
    }

D2DPO_VECTOR_CLONES void probabilitiesFloat(const Head<float>& hd, float scale, float* pt, float* scratch)
{
    D2DPO_WITH_WIDTH(hd.width, (headProbabilities<W>(hd, scale, pt, scratch)))
}
D2DPO_VECTOR_CLONES void outputFloat(const Head<float>& hd, const float* pt, float* out, int64_t outStride)
{
    D2DPO_WITH_WIDTH(hd.width, (headOutput<W>(hd, pt, out, outStride)))
}
D2DPO_VECTOR_CLONES void backwardFloat(const Head<float>& hd, float scale, const float* pt, const float* gradOut,
                                       int64_t outStride, float* dq, float* dk, float* dv, float* scratch)
{
    D2DPO_WITH_WIDTH(hd.width, (headBackward<W>(hd, scale, pt, gradOut, outStride, dq, dk, dv, scratch)))
}

void probabilities(const Head<float>& hd, float scale, float* p, float* s) { probabilitiesFloat(hd, scale, p, s); }
void probabilities(const Head<double>& hd, double c, double* p, double* s) { headProbabilities<0>(hd, c, p, s); }
void output(const Head<float>& hd, const float* pt, float* o, int64_t os) { outputFloat(hd, pt, o, os); }
void output(const Head<double>& hd, const double* pt, double* o, int64_t os) { headOutput<0>(hd, pt, o, os); }
void backward(const Head<float>& hd, float scale, const float* pt, const float* g, int64_t os, float* dq, float* dk,
              float* dv, float* scratch)
{
    backwardFloat(hd, scale, pt, g, os, dq, dk, dv, scratch);
}
void backward(const Head<double>& hd, double scale, const double* pt, const double* g, int64_t os, double* dq,
              double* dk, double* dv, double* scratch)
{
    headBackward<0>(hd, scale, pt, g, os, dq, dk, dv, scratch);
}

/// Which queries attend over which keys. Queries are flat rows: of qkv [B * N] for
/// self-attention, of q [P] for attentionAt. Group g holds the queries [firstQuery[g],
/// firstQuery[g] + queries[g]) of sequence sequence[g]; its heads' probabilities start at
/// probOffset[g], each [N, paddedCount(queries[g])].
struct Plan {
    int64_t keys = 0, heads = 0, width = 0, dModel = 0;
    double scale = 0; ///< what the scores q k^T are multiplied by before the softmax
    std::vector<int64_t> sequence, firstQuery, queries, probOffset;
    int64_t probTotal = 0;

    void add(int64_t seq, int64_t first, int64_t count)
    {
        sequence.push_back(seq);
        firstQuery.push_back(first);
        queries.push_back(count);
        probOffset.push_back(probTotal);
        probTotal += heads * keys * paddedCount(count);
    }
    int64_t units() const { return int64_t(sequence.size()) * heads; }
    /// (group, head) units per parallel task: enough multiply-adds to be worth a task.
    int64_t grain() const { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, keys * keys * width)); }
};

Plan planShape(int64_t keys, int64_t dModel, int64_t heads, double scale)
{
    Plan plan;
    plan.keys = keys;
    plan.heads = heads;
    plan.dModel = dModel;
    plan.width = dModel / heads;
    plan.scale = scale;
    return plan;
}

double defaultScale(int64_t dModel, int64_t heads) { return 1.0 / std::sqrt(double(dModel / heads)); }

/// Every position of every sequence is a query.
Plan selfAttentionPlan(int64_t batch, int64_t length, int64_t dModel, int64_t heads, double scale)
{
    Plan plan = planShape(length, dModel, heads, scale);
    for (int64_t b = 0; b < batch; ++b)
        plan.add(b, b * length, length);
    return plan;
}

/// Queries at the strictly ascending flat positions `rows` into [B * N].
Plan subsetPlan(const torch::Tensor& rows, int64_t batch, int64_t length, int64_t dModel, int64_t heads)
{
    Plan plan = planShape(length, dModel, heads, defaultScale(dModel, heads));
    const auto r = rows.to(torch::kCPU, torch::kLong).contiguous();
    const int64_t* row = r.data_ptr<int64_t>();
    const int64_t count = r.numel();
    for (int64_t p = 0; p < count; ++p)
        TORCH_CHECK(row[p] >= 0 && row[p] < batch * length && (p == 0 || row[p] > row[p - 1]),
                    "attentionAt: rows must be strictly ascending positions in [0, B * N)");
    for (int64_t p = 0; p < count;) {
        const int64_t seq = row[p] / length;
        int64_t end = p + 1;
        while (end < count && row[end] / length == seq)
            ++end;
        plan.add(seq, p, end - p);
        p = end;
    }
    return plan;
}

/// Where the operands are: query row r at q + r * qStride; key row j of sequence b at
/// kv + (b * N + j) * kvStride, its value vOffset further. Gradients have the same layout.
template <typename T>
struct Operands {
    T* q;
    int64_t qStride;
    T* kv;
    int64_t kvStride;
    int64_t vOffset;
};

template <typename T>
Head<T> headOf(const Operands<const T>& ops, const Plan& plan, int64_t g, int64_t h)
{
    const T* k = ops.kv + plan.sequence[g] * plan.keys * ops.kvStride + h * plan.width;
    return {ops.q + plan.firstQuery[g] * ops.qStride + h * plan.width,
            ops.qStride,
            plan.queries[g],
            paddedCount(plan.queries[g]),
            k,
            k + ops.vOffset,
            ops.kvStride,
            plan.keys,
            plan.width};
}

template <typename T>
T* probsOf(T* pt, const Plan& plan, int64_t g, int64_t h)
{
    return pt + plan.probOffset[g] + h * plan.keys * paddedCount(plan.queries[g]);
}

/// Attention probabilities, key-major per (group, head).
template <typename T>
torch::Tensor probabilities(const Operands<const T>& ops, const Plan& plan, const torch::TensorOptions& options)
{
    auto probs = torch::empty({plan.probTotal}, options);
    T* out = probs.data_ptr<T>();
    const auto scale = T(plan.scale);
    at::parallel_for(0, plan.units(), plan.grain(), [&](int64_t begin, int64_t end) {
        std::vector<T> scratch(size_t((plan.width + 2) * paddedCount(plan.keys)));
        for (int64_t u = begin; u < end; ++u) {
            const int64_t g = u / plan.heads, h = u % plan.heads;
            probabilities(headOf(ops, plan, g, h), scale, probsOf(out, plan, g, h), scratch.data());
        }
    });
    return probs;
}

/// Output rows [queries, E] from the probabilities and v.
template <typename T>
torch::Tensor attend(const torch::Tensor& probs, const Operands<const T>& ops, const Plan& plan, int64_t queryRows,
                     const torch::TensorOptions& options)
{
    auto merged = torch::empty({queryRows, plan.dModel}, options);
    const T* p = probs.data_ptr<T>();
    T* out = merged.data_ptr<T>();
    at::parallel_for(0, plan.units(), plan.grain(), [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end; ++u) {
            const int64_t g = u / plan.heads, h = u % plan.heads;
            output(headOf(ops, plan, g, h), probsOf(p, plan, g, h),
                   out + plan.firstQuery[g] * plan.dModel + h * plan.width, plan.dModel);
        }
    });
    return merged;
}

/// Gradients into `grads` (laid out as ops), from the output's gradient [queries, E].
template <typename T>
void attentionGradient(const Operands<const T>& ops, const torch::Tensor& probs, const torch::Tensor& gradOut,
                       const Plan& plan, const Operands<T>& grads)
{
    const T* p = probs.data_ptr<T>();
    const T* g0 = gradOut.data_ptr<T>();
    const auto scale = T(plan.scale);
    at::parallel_for(0, plan.units(), plan.grain(), [&](int64_t begin, int64_t end) {
        std::vector<T> scratch(size_t((plan.width + plan.keys + 1) * paddedCount(plan.keys)));
        for (int64_t u = begin; u < end; ++u) {
            const int64_t g = u / plan.heads, h = u % plan.heads;
            T* dq = grads.q + plan.firstQuery[g] * grads.qStride + h * plan.width;
            T* dk = grads.kv + plan.sequence[g] * plan.keys * grads.kvStride + h * plan.width;
            backward(headOf(ops, plan, g, h), scale, probsOf(p, plan, g, h),
                     g0 + plan.firstQuery[g] * plan.dModel + h * plan.width, plan.dModel, dq, dk,
                     dk + grads.vOffset, scratch.data());
        }
    });
}

/// The operands of self-attention over a contiguous qkv [B, N, 3E].
template <typename T>
Operands<T> packedOperands(T* qkv, int64_t dModel)
{
    return {qkv, 3 * dModel, qkv + dModel, 3 * dModel, dModel};
}

/// The operands of attentionAt: q [P, E], kv [B, N, 2E], both contiguous.
template <typename T>
Operands<T> splitOperands(T* q, T* kv, int64_t dModel)
{
    return {q, dModel, kv, 2 * dModel, dModel};
}

/// A forward pass: the output and the probabilities its backward needs.
struct Attended {
    torch::Tensor merged, probs;
};

/// Self-attention over a contiguous qkv [B, N, 3E]: merged [B, N, E].
Attended selfForward(const torch::Tensor& qkv, int64_t heads, double scale)
{
    const int64_t batch = qkv.size(0), length = qkv.size(1), dModel = qkv.size(2) / 3;
    const Plan plan = selfAttentionPlan(batch, length, dModel, heads, scale);
    Attended out;
    AT_DISPATCH_FLOATING_TYPES(qkv.scalar_type(), "attention_forward", [&] {
        const auto ops = packedOperands<const scalar_t>(qkv.data_ptr<scalar_t>(), dModel);
        out.probs = probabilities(ops, plan, qkv.options());
        out.merged = attend(out.probs, ops, plan, batch * length, qkv.options()).view({batch, length, dModel});
    });
    return out;
}

/// attentionAt over contiguous q [P, E] and kv [B, N, 2E]: merged [P, E].
Attended subsetForward(const torch::Tensor& q, const torch::Tensor& kv, const torch::Tensor& rows, int64_t heads)
{
    const int64_t dModel = q.size(1);
    const Plan plan = subsetPlan(rows, kv.size(0), kv.size(1), dModel, heads);
    Attended out;
    AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "attention_at_forward", [&] {
        const auto ops = splitOperands<const scalar_t>(q.data_ptr<scalar_t>(), kv.data_ptr<scalar_t>(), dModel);
        out.probs = probabilities(ops, plan, q.options());
        out.merged = attend(out.probs, ops, plan, q.size(0), q.options());
    });
    return out;
}

class FusedSelfAttention : public torch::autograd::Function<FusedSelfAttention> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& qkv, int64_t heads, double scale)
    {
        auto out = selfForward(qkv, heads, scale);
        ctx->save_for_backward({qkv, out.probs});
        ctx->saved_data["heads"] = heads;
        ctx->saved_data["scale"] = scale;
        return out.merged;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOutputs)
    {
        const auto saved = ctx->get_saved_variables();
        const auto& qkv = saved[0];
        const int64_t batch = qkv.size(0), length = qkv.size(1), dModel = qkv.size(2) / 3;
        const Plan plan = selfAttentionPlan(batch, length, dModel, ctx->saved_data["heads"].toInt(),
                                            ctx->saved_data["scale"].toDouble());
        auto grad = torch::empty_like(qkv); // every row of q, k and v is written
        const auto gradOut = gradOutputs[0].contiguous();
        AT_DISPATCH_FLOATING_TYPES(qkv.scalar_type(), "attention_backward", [&] {
            attentionGradient(packedOperands<const scalar_t>(qkv.data_ptr<scalar_t>(), dModel), saved[1], gradOut,
                              plan, packedOperands(grad.data_ptr<scalar_t>(), dModel));
        });
        return {grad, torch::Tensor(), torch::Tensor()};
    }
};

class FusedAttentionAt : public torch::autograd::Function<FusedAttentionAt> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& kv,
                                 const torch::Tensor& rows, int64_t heads)
    {
        auto out = subsetForward(q, kv, rows, heads);
        ctx->save_for_backward({q, kv, out.probs, rows});
        ctx->saved_data["heads"] = heads;
        return out.merged;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOutputs)
    {
        const auto saved = ctx->get_saved_variables();
        const auto &q = saved[0], &kv = saved[1];
        const int64_t dModel = q.size(1);
        const Plan plan = subsetPlan(saved[3], kv.size(0), kv.size(1), dModel, ctx->saved_data["heads"].toInt());
        auto gradQ = torch::empty_like(q);
        auto gradKv = torch::zeros_like(kv); // sequences without a query receive no gradient
        const auto gradOut = gradOutputs[0].contiguous();
        AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "attention_at_backward", [&] {
            attentionGradient(
                splitOperands<const scalar_t>(q.data_ptr<scalar_t>(), kv.data_ptr<scalar_t>(), dModel), saved[2],
                gradOut, plan, splitOperands(gradQ.data_ptr<scalar_t>(), gradKv.data_ptr<scalar_t>(), dModel));
        });
        return {gradQ, gradKv, torch::Tensor(), torch::Tensor()};
    }
};

bool kernelTakes(const torch::Tensor& t)
{
    return t.device().is_cpu() && (t.scalar_type() == torch::kFloat || t.scalar_type() == torch::kDouble);
}

} // namespace

torch::Tensor referenceSelfAttention(const torch::Tensor& qkv, int64_t heads, double scale)
{
    const int64_t batch = qkv.size(0), length = qkv.size(1), dModel = qkv.size(2) / 3, width = dModel / heads;
    const auto parts = qkv.view({batch, length, 3, heads, width}).permute({2, 0, 3, 1, 4}); // 3 x [B, H, N, w]
    const auto scores = torch::matmul(parts[0], parts[1].transpose(-2, -1)) * scale;
    const auto attended = torch::matmul(scores.softmax(-1), parts[2]);                   // [B, H, N, w]
    return attended.transpose(1, 2).reshape({batch, length, dModel});
}

torch::Tensor referenceSelfAttention(const torch::Tensor& qkv, int64_t heads)
{
    return referenceSelfAttention(qkv, heads, defaultScale(qkv.size(2) / 3, heads));
}

torch::Tensor selfAttention(const torch::Tensor& qkv, int64_t heads, double scale)
{
    TORCH_CHECK(qkv.dim() == 3 && qkv.size(2) % (3 * heads) == 0, "selfAttention: qkv must be [B, D, 3E] with E a "
                                                                   "multiple of the head count");
    if (!kernelTakes(qkv))
        return referenceSelfAttention(qkv, heads, scale);
    const auto input = qkv.contiguous();
    if (torch::GradMode::is_enabled() && input.requires_grad())
        return FusedSelfAttention::apply(input, heads, scale);
    // Nothing will ask for gradients (the reference model, sampling): skip the autograd node.
    return selfForward(input, heads, scale).merged;
}

bool kernelBeatsBatchedProducts(int64_t width) { return width == 8 || width == 16 || width == 24 || width == 32; }

torch::Tensor selfAttention(const torch::Tensor& qkv, int64_t heads)
{
    return selfAttention(qkv, heads, defaultScale(qkv.size(2) / 3, heads));
}

torch::Tensor referenceAttentionAt(const torch::Tensor& q, const torch::Tensor& kv, const torch::Tensor& rows,
                                   int64_t heads)
{
    const int64_t batch = kv.size(0), length = kv.size(1), dModel = q.size(1);
    const auto queries = torch::zeros({batch * length, dModel}, q.options()).index_copy(0, rows, q);
    const auto qkv = torch::cat({queries.view({batch, length, dModel}), kv}, 2);
    return referenceSelfAttention(qkv, heads).reshape({-1, dModel}).index_select(0, rows);
}

torch::Tensor attentionAt(const torch::Tensor& q, const torch::Tensor& kv, const torch::Tensor& rows, int64_t heads)
{
    TORCH_CHECK(q.dim() == 2 && kv.dim() == 3 && kv.size(2) == 2 * q.size(1) && q.size(1) % heads == 0 &&
                    rows.dim() == 1 && rows.size(0) == q.size(0),
                "attentionAt: q must be [P, E], kv [B, N, 2E] and rows [P], with E a multiple of the head count");
    if (!kernelTakes(q) || q.scalar_type() != kv.scalar_type())
        return referenceAttentionAt(q, kv, rows, heads);
    const auto query = q.contiguous(), keysValues = kv.contiguous();
    const bool track = torch::GradMode::is_enabled() && (query.requires_grad() || keysValues.requires_grad());
    return track ? FusedAttentionAt::apply(query, keysValues, rows, heads)
                 : subsetForward(query, keysValues, rows, heads).merged;
}

} // namespace d2dpo
