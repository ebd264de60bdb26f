// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernels/rotary.h"

#include <cstring>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "kernels/vectorclones.h"

namespace d2dpo {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

/// n inv_freq_j at the given float positions, [P, w/2], in float32 as ESM computes them (every
/// path's arithmetic: the kernel's tables and the generic rotation alike).
torch::Tensor anglesAt(const torch::Tensor& positions, int64_t w)
{
    const auto invFreq = 1.0 / torch::pow(10000.0, torch::arange(0, w, 2, positions.options().dtype(torch::kLong))
                                                           .to(torch::kFloat) /
                                                       double(w));
    return torch::outer(positions, invFreq);
}

torch::Tensor angles(int64_t length, int64_t w, const torch::TensorOptions& options)
{
    return anglesAt(torch::arange(length, options.dtype(torch::kFloat)), w);
}

/// Their cosines and sines in float32, for the kernel.
std::pair<torch::Tensor, torch::Tensor> angleTables(int64_t length, int64_t w, const torch::TensorOptions& options)
{
    const auto a = angles(length, w, options);
    return {a.cos().contiguous(), a.sin().contiguous()};
}

/// heads [..., w] turned by angles a [..., w/2] (broadcast against the heads' leading dimensions)
/// with LibTorch's operators, in the heads' own type: a double model turns in double.
torch::Tensor turnGeneric(const torch::Tensor& heads, const torch::Tensor& a)
{
    const int64_t half = heads.size(-1) / 2;
    const auto both = torch::cat({a, a}, -1).to(heads.scalar_type());
    const auto swapped = torch::cat({-heads.narrow(-1, half, half), heads.narrow(-1, 0, half)}, -1); // (-x2, x1)
    return heads * both.cos() + swapped * both.sin();
}

torch::Tensor genericRotary(const torch::Tensor& x, int64_t rotated, int64_t w)
{
    const int64_t b = x.size(0), length = x.size(1);
    const auto a = angles(length, w, x.options()).view({1, length, 1, w / 2});
    const auto heads = x.narrow(2, 0, rotated).view({b, length, -1, w});
    const auto turned = turnGeneric(heads, a).view({b, length, rotated});
    return rotated == x.size(2) ? turned : torch::cat({turned, x.narrow(2, rotated, x.size(2) - rotated)}, 2);
}

/// One row's heads turned by its angles (cos, sin: w/2 each), forward or back (the opposite angle).
D2DPO_VECTOR_CLONES void turnRow(const float* x, float* y, const float* c, const float* s, int64_t heads, int64_t half,
                                 bool back)
{
    const float sign = back ? -1.0f : 1.0f;
    for (int64_t h = 0; h < heads; ++h) {
        const float* __restrict in = x + h * 2 * half;
        float* __restrict out = y + h * 2 * half;
        for (int64_t j = 0; j < half; ++j) {
            const float a = in[j], b = in[j + half], sj = sign * s[j];
            out[j] = a * c[j] - b * sj;
            out[j + half] = b * c[j] + a * sj;
        }
    }
}

/// rows of x [B * L, C], contiguous, into y: the first `rotated` columns turned, the rest copied.
void turnRows(const torch::Tensor& x, torch::Tensor& y, int64_t length, int64_t rotated, int64_t w,
              const torch::Tensor& cos, const torch::Tensor& sin, bool back)
{
    const int64_t rows = x.size(0) * x.size(1), columns = x.size(2), half = w / 2, heads = rotated / w;
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const float* c = cos.data_ptr<float>();
    const float* s = sin.data_ptr<float>();
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, columns));
    at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t n = r % length;
            turnRow(in + r * columns, out + r * columns, c + n * half, s + n * half, heads, half, back);
            if (rotated < columns)
                std::memcpy(out + r * columns + rotated, in + r * columns + rotated,
                            size_t(columns - rotated) * sizeof(float));
        }
    });
}

class Rotary : public torch::autograd::Function<Rotary> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t rotated, int64_t w)
    {
        const auto in = x.contiguous();
        auto [cos, sin] = angleTables(x.size(1), w, x.options());
        auto out = torch::empty_like(in);
        turnRows(in, out, x.size(1), rotated, w, cos, sin, false);
        ctx->save_for_backward({cos, sin});
        ctx->saved_data["rotated"] = rotated;
        ctx->saved_data["w"] = w;
        return out;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOutputs)
    {
        const auto saved = ctx->get_saved_variables();
        const auto grad = gradOutputs[0].contiguous();
        auto out = torch::empty_like(grad);
        turnRows(grad, out, grad.size(1), ctx->saved_data["rotated"].toInt(), ctx->saved_data["w"].toInt(), saved[0],
                 saved[1], true);
        return {out, torch::Tensor(), torch::Tensor()};
    }
};

} // namespace

torch::Tensor rotaryEmbeddingAt(const torch::Tensor& rows, const torch::Tensor& positions, int64_t headWidth)
{
    TORCH_CHECK(rows.dim() == 2 && positions.dim() == 1 && positions.size(0) == rows.size(0) && headWidth > 0 &&
                    headWidth % 2 == 0 && rows.size(1) % headWidth == 0,
                "rotary embedding at positions: rows [P, C] of whole heads of an even width, one position a row");
    const auto a = anglesAt(positions.to(torch::kFloat), headWidth).view({rows.size(0), 1, headWidth / 2});
    return turnGeneric(rows.view({rows.size(0), -1, headWidth}), a).view_as(rows);
}

torch::Tensor rotaryEmbedding(const torch::Tensor& x, int64_t rotated, int64_t headWidth)
{
    TORCH_CHECK(x.dim() == 3 && headWidth > 0 && headWidth % 2 == 0 && rotated % headWidth == 0 && rotated > 0 &&
                    rotated <= x.size(2),
                "rotary embedding: x [B, L, C] with whole heads of an even width in its first columns");
    if (!x.device().is_cpu() || x.scalar_type() != torch::kFloat)
        return genericRotary(x, rotated, headWidth);
    if (torch::GradMode::is_enabled() && x.requires_grad())
        return Rotary::apply(x, rotated, headWidth);
    auto out = torch::empty_like(x, torch::MemoryFormat::Contiguous);
    auto [cos, sin] = angleTables(x.size(1), headWidth, x.options());
    turnRows(x.contiguous(), out, x.size(1), rotated, headWidth, cos, sin, false);
    return out;
}

} // namespace d2dpo
