// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernels/layernorm.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "kernels/vectorclones.h"
#include "kernels/vectormath.h"

namespace d2dpo {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

/// Rows per task of the backward's column sums. Fixed, not derived from the thread count, so the
/// weight and bias gradients are summed in the same order however many threads run.
constexpr int64_t kRowsPerChunk = 128;

/// Each row: mean, 1 / sqrt(var + eps) (kept for the backward) and the normalized, scaled row.
template <typename T>
[[gnu::always_inline]] inline void normalizeRows(const T* __restrict x, const T* __restrict w, const T* __restrict b,
                                                 T* __restrict y, T* __restrict mean, T* __restrict rstd,
                                                 int64_t rows, int64_t width, T eps)
{
    for (int64_t r = 0; r < rows; ++r) {
        const T* __restrict xr = x + r * width;
        T* __restrict yr = y + r * width;
        const T m = vectormath::rowSum(xr, width) / T(width);
        for (int64_t e = 0; e < width; ++e) // (x - m)^2, staged in y
            yr[e] = (xr[e] - m) * (xr[e] - m);
        const T s = T(1) / std::sqrt(vectormath::rowSum(yr, width) / T(width) + eps);
        for (int64_t e = 0; e < width; ++e)
            yr[e] = (xr[e] - m) * s * w[e] + b[e];
        mean[r] = m;
        rstd[r] = s;
    }
}

/// dx = rstd (dy w - mean(dy w) - xhat mean(dy w xhat)) for each row; the rows' dy xhat and dy
/// added to dw and db. Scratch: 2 * width.
template <typename T>
[[gnu::always_inline]] inline void normalizeRowsBackward(const T* __restrict x, const T* __restrict w,
                                                         const T* __restrict mean, const T* __restrict rstd,
                                                         const T* __restrict dy, T* __restrict dx, T* __restrict dw,
                                                         T* __restrict db, int64_t rows, int64_t width,
                                                         T* __restrict scratch)
{
    T* __restrict xhat = scratch;
    T* __restrict dyw = scratch + width;
    for (int64_t r = 0; r < rows; ++r) {
        const T* __restrict xr = x + r * width;
        const T* __restrict dyr = dy + r * width;
        T* __restrict dxr = dx + r * width;
        const T m = mean[r], s = rstd[r];
        for (int64_t e = 0; e < width; ++e) {
            xhat[e] = (xr[e] - m) * s;
            dyw[e] = dyr[e] * w[e];
            dw[e] += dyr[e] * xhat[e];
            db[e] += dyr[e];
        }
        const T meanDyw = vectormath::rowSum(dyw, width) / T(width);
        for (int64_t e = 0; e < width; ++e) // dyw xhat, staged in dx
            dxr[e] = dyw[e] * xhat[e];
        const T meanDywXhat = vectormath::rowSum(dxr, width) / T(width);
        for (int64_t e = 0; e < width; ++e)
            dxr[e] = s * (dyw[e] - meanDyw - xhat[e] * meanDywXhat);
    }
}

D2DPO_VECTOR_CLONES void forwardFloat(const float* x, const float* w, const float* b, float* y, float* mean,
                                      float* rstd, int64_t rows, int64_t width, float eps)
{
    normalizeRows(x, w, b, y, mean, rstd, rows, width, eps);
}
D2DPO_VECTOR_CLONES void backwardFloat(const float* x, const float* w, const float* mean, const float* rstd,
                                       const float* dy, float* dx, float* dw, float* db, int64_t rows, int64_t width,
                                       float* scratch)
{
    normalizeRowsBackward(x, w, mean, rstd, dy, dx, dw, db, rows, width, scratch);
}

void forward(const float* x, const float* w, const float* b, float* y, float* mean, float* rstd, int64_t rows,
             int64_t width, float eps)
{
    forwardFloat(x, w, b, y, mean, rstd, rows, width, eps);
}
void forward(const double* x, const double* w, const double* b, double* y, double* mean, double* rstd, int64_t rows,
             int64_t width, double eps)
{
    normalizeRows(x, w, b, y, mean, rstd, rows, width, eps);
}
void backward(const float* x, const float* w, const float* mean, const float* rstd, const float* dy, float* dx,
              float* dw, float* db, int64_t rows, int64_t width, float* scratch)
{
    backwardFloat(x, w, mean, rstd, dy, dx, dw, db, rows, width, scratch);
}
void backward(const double* x, const double* w, const double* mean, const double* rstd, const double* dy, double* dx,
              double* dw, double* db, int64_t rows, int64_t width, double* scratch)
{
    normalizeRowsBackward(x, w, mean, rstd, dy, dx, dw, db, rows, width, scratch);
}

struct Normalized {
    torch::Tensor y, mean, rstd;
};

/// x [R, E] contiguous.
Normalized forwardTensor(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, double eps)
{
    const int64_t rows = x.size(0), width = x.size(1);
    Normalized out{torch::empty_like(x), torch::empty({rows}, x.options()), torch::empty({rows}, x.options())};
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "d2dpo_layer_norm", [&] {
        const auto* in = x.data_ptr<scalar_t>();
        const auto* w = weight.data_ptr<scalar_t>();
        const auto* b = bias.data_ptr<scalar_t>();
        auto* y = out.y.data_ptr<scalar_t>();
        auto* mean = out.mean.data_ptr<scalar_t>();
        auto* rstd = out.rstd.data_ptr<scalar_t>();
        at::parallel_for(0, rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
            forward(in + begin * width, w, b, y + begin * width, mean + begin, rstd + begin, end - begin, width,
                    scalar_t(eps));
        });
    });
    return out;
}

/// -> {dx [R, E], dw [E], db [E]}.
tensor_list backwardTensor(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& mean,
                           const torch::Tensor& rstd, const torch::Tensor& dy)
{
    const int64_t rows = x.size(0), width = x.size(1);
    const int64_t chunks = std::max<int64_t>(1, (rows + kRowsPerChunk - 1) / kRowsPerChunk);
    auto dx = torch::empty_like(x);
    auto partial = torch::zeros({chunks, 2, width}, x.options()); // per chunk: dw, db
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "d2dpo_layer_norm_backward", [&] {
        const auto* in = x.data_ptr<scalar_t>();
        const auto* w = weight.data_ptr<scalar_t>();
        const auto* m = mean.data_ptr<scalar_t>();
        const auto* s = rstd.data_ptr<scalar_t>();
        const auto* g = dy.data_ptr<scalar_t>();
        auto* out = dx.data_ptr<scalar_t>();
        auto* sums = partial.data_ptr<scalar_t>();
        at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
            std::vector<scalar_t> scratch(size_t(2 * width));
            for (int64_t c = begin; c < end; ++c) {
                const int64_t r0 = c * kRowsPerChunk, count = std::min(kRowsPerChunk, rows - r0);
                backward(in + r0 * width, w, m + r0, s + r0, g + r0 * width, out + r0 * width,
                         sums + c * 2 * width, sums + c * 2 * width + width, count, width, scratch.data());
            }
        });
    });
    const auto totals = partial.sum(0); // [2, E], chunk order fixed
    return {dx, totals[0], totals[1]};
}

class LayerNorm : public torch::autograd::Function<LayerNorm> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                                 const torch::Tensor& bias, double eps)
    {
        auto out = forwardTensor(x, weight, bias, eps);
        ctx->save_for_backward({x, weight, out.mean, out.rstd});
        return out.y;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOutputs)
    {
        const auto saved = ctx->get_saved_variables();
        auto grads = backwardTensor(saved[0], saved[1], saved[2], saved[3], gradOutputs[0].contiguous());
        return {grads[0], grads[1], grads[2], torch::Tensor()};
    }
};

} // namespace

torch::Tensor layerNorm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, double eps)
{
    const int64_t width = x.size(-1);
    const bool kernel = x.device().is_cpu() &&
                        (x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble) &&
                        weight.defined() && bias.defined() && weight.scalar_type() == x.scalar_type() &&
                        bias.scalar_type() == x.scalar_type() && weight.numel() == width && bias.numel() == width;
    if (!kernel)
        return torch::layer_norm(x, {width}, weight, bias, eps);
    const auto rows = x.reshape({-1, width}).contiguous();
    const auto w = weight.contiguous(), b = bias.contiguous();
    const bool track = torch::GradMode::is_enabled() && (rows.requires_grad() || w.requires_grad() || b.requires_grad());
    const auto y = track ? LayerNorm::apply(rows, w, b, eps) : forwardTensor(rows, w, b, eps).y;
    return y.view(x.sizes());
}

torch::Tensor layerNorm(const torch::nn::LayerNorm& norm, const torch::Tensor& x)
{
    TORCH_CHECK(norm->options.elementwise_affine() && norm->options.normalized_shape().size() == 1,
                "layerNorm: a module with a weight and a bias over one dimension");
    return layerNorm(x, norm->weight, norm->bias, norm->options.eps());
}

} // namespace d2dpo
