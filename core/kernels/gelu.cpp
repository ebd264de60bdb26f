// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernels/gelu.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "kernels/vectorclones.h"
#include "kernels/vectormath.h"

namespace d2dpo {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

/// Values per parallel task: a few microseconds of work.
constexpr int64_t kGrain = 32768;

template <typename T>
[[gnu::always_inline]] inline void geluForward(const T* __restrict x, T* __restrict y, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        y[i] = x[i] * vectormath::normalCdf(x[i]);
}

/// d/dx x Phi(x) = Phi(x) + x phi(x), phi(x) = e^{-x^2 / 2} / sqrt(2 pi).
template <typename T>
[[gnu::always_inline]] inline void geluBackward(const T* __restrict x, const T* __restrict g, T* __restrict dx,
                                                int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        const T gauss = vectormath::exp(T(-0.5) * x[i] * x[i]); // shared by Phi and phi
        dx[i] = g[i] * (vectormath::normalCdf(x[i], gauss) + x[i] * T(0.39894228040143268) * gauss);
    }
}

D2DPO_VECTOR_CLONES void forwardFloat(const float* x, float* y, int64_t n) { geluForward(x, y, n); }
D2DPO_VECTOR_CLONES void backwardFloat(const float* x, const float* g, float* dx, int64_t n)
{
    geluBackward(x, g, dx, n);
}

void forward(const float* x, float* y, int64_t n) { forwardFloat(x, y, n); }
void forward(const double* x, double* y, int64_t n) { geluForward(x, y, n); }
void backward(const float* x, const float* g, float* dx, int64_t n) { backwardFloat(x, g, dx, n); }
void backward(const double* x, const double* g, double* dx, int64_t n) { geluBackward(x, g, dx, n); }

torch::Tensor forwardTensor(const torch::Tensor& x)
{
    auto y = torch::empty_like(x);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "d2dpo_gelu", [&] {
        const auto* in = x.data_ptr<scalar_t>();
        auto* out = y.data_ptr<scalar_t>();
        at::parallel_for(0, x.numel(), kGrain,
                         [&](int64_t begin, int64_t end) { forward(in + begin, out + begin, end - begin); });
    });
    return y;
}

torch::Tensor backwardTensor(const torch::Tensor& x, const torch::Tensor& grad)
{
    auto dx = torch::empty_like(x);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "d2dpo_gelu_backward", [&] {
        const auto* in = x.data_ptr<scalar_t>();
        const auto* g = grad.data_ptr<scalar_t>();
        auto* out = dx.data_ptr<scalar_t>();
        at::parallel_for(0, x.numel(), kGrain, [&](int64_t begin, int64_t end) {
            backward(in + begin, g + begin, out + begin, end - begin);
        });
    });
    return dx;
}

class Gelu : public torch::autograd::Function<Gelu> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x)
    {
        ctx->save_for_backward({x});
        return forwardTensor(x);
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOutputs)
    {
        const auto x = ctx->get_saved_variables()[0];
        return {backwardTensor(x, gradOutputs[0].contiguous())};
    }
};

} // namespace

torch::Tensor exactGelu(const torch::Tensor& x)
{
    const bool kernel =
        x.device().is_cpu() && (x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble);
    if (!kernel)
        return torch::gelu(x);
    const auto input = x.contiguous();
    if (torch::GradMode::is_enabled() && input.requires_grad())
        return Gelu::apply(input);
    return forwardTensor(input); // nothing will ask for gradients: no autograd node
}

} // namespace d2dpo
