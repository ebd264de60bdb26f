#include "attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "vectorclones.h"
#include "vectormath.h"

namespace d2dpo {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

/// Where one head's rows live: row i of q is q + i * rowStride (k and v likewise); row i of the
/// merged output (or its gradient) is o + i * outStride. Each row is `width` contiguous values.
template <typename T>
struct Head {
    const T* q;
    const T* k;
    const T* v;
    int64_t rowStride;
    int64_t length;
    int64_t width;
};

template <typename T>
Head<T> headAt(const T* qkv, int64_t b, int64_t h, int64_t length, int64_t dModel, int64_t width)
{
    const T* base = qkv + b * length * 3 * dModel + h * width;
    return {base, base + dModel, base + 2 * dModel, 3 * dModel, length, width};
}

// The per-head loops below keep every innermost loop a contiguous multiply-add over j or e, so
// the compiler vectorizes them without reassociating any sum (results do not depend on
// -ffast-math). W > 0 is the head width known at compile time (the common 8, 16, 32, 64): the
// loops over e then unroll and their accumulators stay in vector registers. W = 0: any width.

using vectormath::kLanes;
using vectormath::Lanes;

/// Outputs computed together in the blocked loops below: they share each load of the other
/// operand and run independent multiply-add chains. One chain alone would wait out every
/// multiply-add's latency (4 cycles) before the next: a quarter of the machine's throughput.
constexpr int64_t kGroup = 4;

/// out[0:width] = sum_r coeff[r * coeffStride] * rows[r * rowStride + 0:width], accumulated in
/// chunks of 64 values (in registers when W is known).
template <int W, typename T>
[[gnu::always_inline]] inline void weightedRowSum(int64_t width, int64_t count, const T* __restrict coeff,
                                                  int64_t coeffStride, const T* __restrict rows, int64_t rowStride,
                                                  T* __restrict out)
{
    constexpr int64_t kChunk = 64;
    const int64_t w = W > 0 ? W : width;
    for (int64_t e0 = 0; e0 < w; e0 += kChunk) {
        const int64_t cw = std::min(kChunk, w - e0);
        T acc[kChunk];
        for (int64_t e = 0; e < cw; ++e)
            acc[e] = 0;
        for (int64_t r = 0; r < count; ++r) {
            const T c = coeff[r * coeffStride];
            const T* __restrict row = rows + r * rowStride + e0;
            for (int64_t e = 0; e < cw; ++e)
                acc[e] += c * row[e];
        }
        for (int64_t e = 0; e < cw; ++e)
            out[e0 + e] = acc[e];
    }
}

/// For o in [0, outputs): out[o * outStride + 0:width] = sum_r c(o, r) rows[r * rowStride + 0:width]
/// with c(o, r) = coeff[o * coeffNext + r * coeffStride]; kGroup outputs at a time, in vector
/// registers, where the width is a multiple of kLanes.
template <int W, typename T>
[[gnu::always_inline]] inline void weightedRowSums(int64_t width, int64_t outputs, int64_t count,
                                                   const T* __restrict coeff, int64_t coeffStride, int64_t coeffNext,
                                                   const T* __restrict rows, int64_t rowStride, T* __restrict out,
                                                   int64_t outStride)
{
    constexpr int64_t kVectors = 4; // up to 64 values of the width per pass
    const int64_t w = W > 0 ? W : width;
    int64_t o = 0;
    if (w % kLanes == 0) {
        for (; o + kGroup <= outputs; o += kGroup) {
            for (int64_t e0 = 0; e0 < w; e0 += kVectors * kLanes) {
                const int64_t vectors = std::min(kVectors, (w - e0) / kLanes);
                Lanes<T> acc[kGroup][kVectors] = {};
                for (int64_t r = 0; r < count; ++r) {
                    Lanes<T> row[kVectors];
                    for (int64_t v = 0; v < vectors; ++v)
                        vectormath::loadLanes(row[v], rows + r * rowStride + e0 + v * kLanes);
                    for (int64_t g = 0; g < kGroup; ++g) {
                        const T c = coeff[(o + g) * coeffNext + r * coeffStride];
                        for (int64_t v = 0; v < vectors; ++v)
                            acc[g][v] += c * row[v];
                    }
                }
                for (int64_t g = 0; g < kGroup; ++g)
                    for (int64_t v = 0; v < vectors; ++v)
                        vectormath::storeLanes(out + (o + g) * outStride + e0 + v * kLanes, acc[g][v]);
            }
        }
    }
    for (; o < outputs; ++o)
        weightedRowSum<W>(width, count, coeff + o * coeffNext, coeffStride, rows, rowStride, out + o * outStride);
}

/// out [N, N] = (a * scale) b^T for the rows of a and b (strides aStride, bStride, width w); bt is
/// a [w, N] scratch for b transposed, so the innermost loop runs over the N columns. Columns go in
/// blocks of kLanes accumulated in a register (accumulating in `out` would make every
/// multiply-add wait for the previous one's store).
template <int W, typename T>
[[gnu::always_inline]] inline void scaledRowProducts(int64_t width, int64_t n, const T* __restrict a, int64_t aStride,
                                                     const T* __restrict b, int64_t bStride, T scale,
                                                     T* __restrict out, T* __restrict bt)
{
    const int64_t w = W > 0 ? W : width;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t e = 0; e < w; ++e)
            bt[e * n + j] = b[j * bStride + e];
    const int64_t blocked = n - n % kLanes;
    int64_t i = 0;
    for (; i + kGroup <= n; i += kGroup) // kGroup rows at a time, sharing each column load
        for (int64_t j0 = 0; j0 < blocked; j0 += kLanes) {
            Lanes<T> acc[kGroup] = {};
            for (int64_t e = 0; e < w; ++e) {
                Lanes<T> column;
                vectormath::loadLanes(column, bt + e * n + j0);
                for (int64_t g = 0; g < kGroup; ++g)
                    acc[g] += (a[(i + g) * aStride + e] * scale) * column;
            }
            for (int64_t g = 0; g < kGroup; ++g)
                vectormath::storeLanes(out + (i + g) * n + j0, acc[g]);
        }
    for (; i < n; ++i)
        for (int64_t j0 = 0; j0 < blocked; j0 += kLanes) {
            Lanes<T> acc = {};
            for (int64_t e = 0; e < w; ++e) {
                Lanes<T> column;
                vectormath::loadLanes(column, bt + e * n + j0);
                acc += (a[i * aStride + e] * scale) * column;
            }
            vectormath::storeLanes(out + i * n + j0, acc);
        }
    for (i = 0; i < n; ++i) { // the columns past the last whole block
        T* __restrict row = out + i * n;
        for (int64_t j = blocked; j < n; ++j)
            row[j] = 0;
        for (int64_t e = 0; e < w; ++e) {
            const T ae = a[i * aStride + e] * scale;
            const T* __restrict btRow = bt + e * n;
            for (int64_t j = blocked; j < n; ++j)
                row[j] += ae * btRow[j];
        }
    }
}

// Probabilities are stored key-major: pt[j * N + i] = P[i][j], the weight of key j for query i.
// Then the softmax over j for every query i is a column operation: the maxima, the sums and the
// backward's dot products accumulate elementwise over rows j, vectorized over i, with no
// horizontal reduction.

/// pt [N, N] (scores of key j for query i at [j][i]) replaced by the softmax over j of each
/// column. Scratch: peak and sum, N each.
template <typename T>
[[gnu::always_inline]] inline void softmaxColumns(int64_t n, T* __restrict pt, T* __restrict peak, T* __restrict sum)
{
    for (int64_t i = 0; i < n; ++i) {
        peak[i] = pt[i];
        sum[i] = 0;
    }
    for (int64_t j = 1; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
            peak[i] = peak[i] < pt[j * n + i] ? pt[j * n + i] : peak[i];
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i) {
            const T e = vectormath::exp(pt[j * n + i] - peak[i]);
            pt[j * n + i] = e;
            sum[i] += e;
        }
    for (int64_t i = 0; i < n; ++i)
        sum[i] = T(1) / sum[i];
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
            pt[j * n + i] *= sum[i];
}

/// pt [N, N] = softmax over keys of (q * scale) k^T, key-major. Scratch: (width + 2) N.
template <int W, typename T>
[[gnu::always_inline]] inline void headProbabilities(const Head<T>& hd, T scale, T* pt, T* scratch)
{
    const int64_t n = hd.length;
    T* qt = scratch;
    T* columnScratch = scratch + hd.width * n;
    scaledRowProducts<W>(hd.width, n, hd.k, hd.rowStride, hd.q, hd.rowStride, scale, pt, qt);
    softmaxColumns(n, pt, columnScratch, columnScratch + n);
}

/// out rows (stride outStride) = P v, from key-major pt.
template <int W, typename T>
[[gnu::always_inline]] inline void headOutput(const Head<T>& hd, const T* pt, T* out, int64_t outStride)
{
    const int64_t n = hd.length;
    weightedRowSums<W>(hd.width, n, n, pt, n, 1, hd.v, hd.rowStride, out, outStride);
}

/// Gradients of one head from key-major pt. gradOut rows have stride outStride; dq, dk, dv rows
/// have the qkv row stride. Scratch: vt [width, N], dst [N, N] and dot [N].
template <int W, typename T>
[[gnu::always_inline]] inline void headBackward(const Head<T>& hd, T scale, const T* __restrict pt, const T* gradOut,
                                                int64_t outStride, T* dq, T* dk, T* dv, T* vt, T* __restrict dst,
                                                T* __restrict dot)
{
    const int64_t n = hd.length, rs = hd.rowStride;
    // dP^T = v dO^T, then the softmax's backward, dS = P (dP - rowsum(P dP)) times the scale that
    // multiplied the scores, all key-major.
    scaledRowProducts<W>(hd.width, n, hd.v, rs, gradOut, outStride, T(1), dst, vt);
    for (int64_t i = 0; i < n; ++i)
        dot[i] = 0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
            dot[i] += pt[j * n + i] * dst[j * n + i];
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
            dst[j * n + i] = pt[j * n + i] * (dst[j * n + i] - dot[i]) * scale;
    weightedRowSums<W>(hd.width, n, n, dst, n, 1, hd.k, rs, dq, rs);             // dQ = dS k
    weightedRowSums<W>(hd.width, n, n, dst, 1, n, hd.q, rs, dk, rs);             // dK = dS^T q
    weightedRowSums<W>(hd.width, n, n, pt, 1, n, gradOut, outStride, dv, rs);    // dV = P^T dO
}

/// Runs CALL with W set to the head width as a compile-time constant where it is one of the
/// common widths, else with W = 0. A macro, not a lambda: a lambda's body would be a function of
/// its own, compiled for the baseline target instead of the clone's (target_clones below).
#define D2DPO_WITH_WIDTH(width, CALL)                                                                                  \
    switch (width) {                                                                                                   \
    case 8: {                                                                                                          \
        constexpr int W = 8;                                                                                           \
        CALL;                                                                                                          \
        break;                                                                                                         \
    }                                                                                                                  \
    case 16: {                                                                                                         \
        constexpr int W = 16;                                                                                          \
        CALL;                                                                                                          \
        break;                                                                                                         \
    }                                                                                                                  \
    case 32: {                                                                                                         \
        constexpr int W = 32;                                                                                          \
        CALL;                                                                                                          \
        break;                                                                                                         \
    }                                                                                                                  \
    case 64: {                                                                                                         \
        constexpr int W = 64;                                                                                          \
        CALL;                                                                                                          \
        break;                                                                                                         \
    }                                                                                                                  \
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
                                       int64_t outStride, float* dq, float* dk, float* dv, float* vt, float* dst,
                                       float* dot)
{
    D2DPO_WITH_WIDTH(hd.width, (headBackward<W>(hd, scale, pt, gradOut, outStride, dq, dk, dv, vt, dst, dot)))
}

void probabilities(const Head<float>& hd, float scale, float* pt, float* scratch)
{
    probabilitiesFloat(hd, scale, pt, scratch);
}
void probabilities(const Head<double>& hd, double scale, double* pt, double* scratch)
{
    headProbabilities<0>(hd, scale, pt, scratch);
}
void output(const Head<float>& hd, const float* pt, float* o, int64_t os) { outputFloat(hd, pt, o, os); }
void output(const Head<double>& hd, const double* pt, double* o, int64_t os) { headOutput<0>(hd, pt, o, os); }
void backward(const Head<float>& hd, float scale, const float* pt, const float* g, int64_t os, float* dq, float* dk,
              float* dv, float* vt, float* dst, float* dot)
{
    backwardFloat(hd, scale, pt, g, os, dq, dk, dv, vt, dst, dot);
}
void backward(const Head<double>& hd, double scale, const double* pt, const double* g, int64_t os, double* dq,
              double* dk, double* dv, double* vt, double* dst, double* dot)
{
    headBackward<0>(hd, scale, pt, g, os, dq, dk, dv, vt, dst, dot);
}

struct Shape {
    int64_t batch, length, dModel, heads, width;

    Shape(const torch::Tensor& qkv, int64_t heads)
        : batch(qkv.size(0))
        , length(qkv.size(1))
        , dModel(qkv.size(2) / 3)
        , heads(heads)
        , width(dModel / heads)
    {
    }
    int64_t units() const { return batch * heads; }
    /// (batch, head) units per parallel task: enough multiply-adds to be worth a task.
    int64_t grain() const { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, length * length * width)); }
};

/// Attention probabilities of a contiguous qkv, key-major: [B, H, N (key), N (query)].
torch::Tensor probabilities(const torch::Tensor& qkv, const Shape& s)
{
    auto probs = torch::empty({s.batch, s.heads, s.length, s.length}, qkv.options());
    AT_DISPATCH_FLOATING_TYPES(qkv.scalar_type(), "attention_probabilities", [&] {
        const auto* data = qkv.data_ptr<scalar_t>();
        auto* out = probs.data_ptr<scalar_t>();
        const auto scale = scalar_t(1.0 / std::sqrt(double(s.width)));
        at::parallel_for(0, s.units(), s.grain(), [&](int64_t begin, int64_t end) {
            std::vector<scalar_t> scratch(size_t((s.width + 2) * s.length));
            for (int64_t u = begin; u < end; ++u)
                probabilities(headAt(data, u / s.heads, u % s.heads, s.length, s.dModel, s.width), scale,
                              out + u * s.length * s.length, scratch.data());
        });
    });
    return probs;
}

/// Merged output [B, N, E] from the probabilities and v.
torch::Tensor attend(const torch::Tensor& probs, const torch::Tensor& qkv, const Shape& s)
{
    auto merged = torch::empty({s.batch, s.length, s.dModel}, qkv.options());
    AT_DISPATCH_FLOATING_TYPES(qkv.scalar_type(), "attention_output", [&] {
        const auto* data = qkv.data_ptr<scalar_t>();
        const auto* p = probs.data_ptr<scalar_t>();
        auto* out = merged.data_ptr<scalar_t>();
        at::parallel_for(0, s.units(), s.grain(), [&](int64_t begin, int64_t end) {
            for (int64_t u = begin; u < end; ++u) {
                const int64_t b = u / s.heads, h = u % s.heads;
                output(headAt(data, b, h, s.length, s.dModel, s.width), p + u * s.length * s.length,
                       out + b * s.length * s.dModel + h * s.width, s.dModel);
            }
        });
    });
    return merged;
}

torch::Tensor attentionGradient(const torch::Tensor& qkv, const torch::Tensor& probs, const torch::Tensor& gradOut,
                                const Shape& s)
{
    auto grad = torch::empty_like(qkv);
    AT_DISPATCH_FLOATING_TYPES(qkv.scalar_type(), "attention_backward", [&] {
        const auto* data = qkv.data_ptr<scalar_t>();
        const auto* p = probs.data_ptr<scalar_t>();
        const auto* g = gradOut.data_ptr<scalar_t>();
        auto* dqkv = grad.data_ptr<scalar_t>();
        const auto scale = scalar_t(1.0 / std::sqrt(double(s.width)));
        at::parallel_for(0, s.units(), s.grain(), [&](int64_t begin, int64_t end) {
            std::vector<scalar_t> vt(size_t(s.width * s.length));
            std::vector<scalar_t> ds(size_t((s.length + 1) * s.length));
            for (int64_t u = begin; u < end; ++u) {
                const int64_t b = u / s.heads, h = u % s.heads;
                auto* dq = dqkv + b * s.length * 3 * s.dModel + h * s.width;
                backward(headAt(data, b, h, s.length, s.dModel, s.width), scale, p + u * s.length * s.length,
                         g + b * s.length * s.dModel + h * s.width, s.dModel, dq, dq + s.dModel, dq + 2 * s.dModel,
                         vt.data(), ds.data(), ds.data() + s.length * s.length);
            }
        });
    });
    return grad;
}

class FusedSelfAttention : public torch::autograd::Function<FusedSelfAttention> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& qkv, int64_t heads)
    {
        const Shape s(qkv, heads);
        auto probs = probabilities(qkv, s);
        auto merged = attend(probs, qkv, s);
        ctx->save_for_backward({qkv, probs});
        ctx->saved_data["heads"] = heads;
        return merged;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOutputs)
    {
        const auto saved = ctx->get_saved_variables();
        const Shape s(saved[0], ctx->saved_data["heads"].toInt());
        return {attentionGradient(saved[0], saved[1], gradOutputs[0].contiguous(), s), torch::Tensor()};
    }
};

} // namespace

torch::Tensor referenceSelfAttention(const torch::Tensor& qkv, int64_t heads)
{
    const int64_t batch = qkv.size(0), length = qkv.size(1), dModel = qkv.size(2) / 3, width = dModel / heads;
    const auto parts = qkv.view({batch, length, 3, heads, width}).permute({2, 0, 3, 1, 4}); // 3 x [B, H, N, w]
    const auto scores = torch::matmul(parts[0], parts[1].transpose(-2, -1)) * (1.0 / std::sqrt(double(width)));
    const auto attended = torch::matmul(scores.softmax(-1), parts[2]);                   // [B, H, N, w]
    return attended.transpose(1, 2).reshape({batch, length, dModel});
}

torch::Tensor selfAttention(const torch::Tensor& qkv, int64_t heads)
{
    TORCH_CHECK(qkv.dim() == 3 && qkv.size(2) % (3 * heads) == 0, "selfAttention: qkv must be [B, D, 3E] with E a "
                                                                   "multiple of the head count");
    const bool fused = qkv.device().is_cpu() &&
                       (qkv.scalar_type() == torch::kFloat || qkv.scalar_type() == torch::kDouble);
    if (!fused)
        return referenceSelfAttention(qkv, heads);
    const auto input = qkv.contiguous();
    if (torch::GradMode::is_enabled() && input.requires_grad())
        return FusedSelfAttention::apply(input, heads);
    // Nothing will ask for gradients (the reference model, sampling): skip the autograd node.
    const Shape s(input, heads);
    return attend(probabilities(input, s), input, s);
}

} // namespace d2dpo
