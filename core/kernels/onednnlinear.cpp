// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernels/onednnlinear.h"

#include <cstdlib>
#include <dlfcn.h>
#include <string_view>

#include <torch/torch.h>

namespace d2dpo {

namespace {

// dnnl_sgemm as dnnl.h declares it (oneDNN 2 and 3 alike): row-major C = alpha op(A) op(B) + beta C,
// returning dnnl_status_t (0: success). Declared here rather than from libdnnl-dev's header, since
// the library is found at run time.
using Sgemm = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                      int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

Sgemm findSgemm()
{
    if (const char* choice = std::getenv("D2DPO_ONEDNN_GEMM"); choice && std::string_view(choice) == "off")
        return nullptr;
    // The oneDNN LibTorch already loaded first (one runtime, the one measured), then either version.
    if (void* symbol = dlsym(RTLD_DEFAULT, "dnnl_sgemm"))
        return reinterpret_cast<Sgemm>(symbol);
    for (const int flags : {RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD, RTLD_NOW | RTLD_LOCAL})
        for (const char* name : {"libdnnl.so.2", "libdnnl.so.3"})
            if (void* library = dlopen(name, flags))
                if (void* symbol = dlsym(library, "dnnl_sgemm"))
                    return reinterpret_cast<Sgemm>(symbol);
    return nullptr;
}

Sgemm sgemm()
{
    static const Sgemm found = findSgemm(); // thread-safe once
    return found;
}

/// C [m, n] = op(A) op(B) (+ C when accumulate), row-major; op is a transpose where the flag says 'T'.
void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
          bool accumulate, float* c, int64_t ldc)
{
    const int status = sgemm()(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc);
    TORCH_CHECK(status == 0, "oneDNN's sgemm failed (dnnl_status_t ", status, ")");
}

bool takes(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b)
{
    const auto cpuFloat = [](const torch::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == torch::kFloat; };
    return sgemm() && cpuFloat(x) && cpuFloat(w) && w.dim() == 2 && x.dim() >= 1 && x.size(-1) == w.size(1) &&
           x.numel() > 0 && w.numel() > 0 && !x.is_sparse() && !w.is_sparse() &&
           (!b.defined() || (cpuFloat(b) && b.dim() == 1 && b.size(0) == w.size(0)));
}

/// rows [M, K] and w [N, K], both contiguous -> [M, N].
torch::Tensor forwardRows(const torch::Tensor& rows, const torch::Tensor& w, const torch::Tensor& b)
{
    const int64_t m = rows.size(0), k = rows.size(1), n = w.size(0);
    auto out = b.defined() ? b.expand({m, n}).contiguous() : torch::empty({m, n}, rows.options());
    gemm('N', 'T', m, n, k, rows.data_ptr<float>(), k, w.data_ptr<float>(), k, b.defined(), out.data_ptr<float>(), n);
    return out;
}

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

class OnednnLinear : public torch::autograd::Function<OnednnLinear> {
public:
    // The bias as an optional: LibTorch 1.13's Function::apply refuses an undefined tensor.
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& rows, const torch::Tensor& w,
                                 const c10::optional<torch::Tensor>& b)
    {
        ctx->save_for_backward({rows, w});
        ctx->saved_data["bias"] = b.has_value();
        return forwardRows(rows, w, b.value_or(torch::Tensor()));
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOutputs)
    {
        // The products below are not recorded: a gradient of these gradients would be silently zero.
        TORCH_CHECK(!torch::GradMode::is_enabled(), "d2dpo's oneDNN linear layer has no second derivative "
                                                    "(set D2DPO_SCRIPT_LINEAR=plain for create_graph)");
        const auto saved = ctx->get_saved_variables();
        const auto &rows = saved[0], &w = saved[1];
        const auto grad = gradOutputs[0].contiguous();
        const int64_t m = rows.size(0), k = rows.size(1), n = w.size(0);
        torch::Tensor gradRows, gradW, gradB;
        if (ctx->needs_input_grad(0)) { // [M, K] = grad [M, N] w [N, K]
            gradRows = torch::empty({m, k}, rows.options());
            gemm('N', 'N', m, k, n, grad.data_ptr<float>(), n, w.data_ptr<float>(), k, false,
                 gradRows.data_ptr<float>(), k);
        }
        if (ctx->needs_input_grad(1)) { // [N, K] = grad^T [N, M] rows [M, K]
            gradW = torch::empty({n, k}, w.options());
            gemm('T', 'N', n, k, m, grad.data_ptr<float>(), n, rows.data_ptr<float>(), k, false,
                 gradW.data_ptr<float>(), k);
        }
        if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2))
            gradB = grad.sum(0);
        return {gradRows, gradW, gradB};
    }
};

} // namespace

bool onednnGemmAvailable() { return sgemm() != nullptr; }

torch::Tensor onednnLinear(const torch::Tensor& x, const torch::Tensor& w, const std::optional<torch::Tensor>& bias)
{
    const torch::Tensor b = bias.value_or(torch::Tensor());
    if (!takes(x, w, b))
        return torch::linear(x, w, b);
    const int64_t k = x.size(-1), n = w.size(0);
    auto outSizes = x.sizes().vec();
    outSizes.back() = n;
    const auto rows = x.reshape({-1, k}).contiguous();
    const auto weight = w.contiguous();
    const auto bias1 = b.defined() ? b.contiguous() : b;
    const bool track =
        torch::GradMode::is_enabled() && (x.requires_grad() || w.requires_grad() || (b.defined() && b.requires_grad()));
    // Nothing will ask for gradients (the reference model, sampling): no autograd node.
    const auto out =
        track ? OnednnLinear::apply(rows, weight, b.defined() ? c10::optional<torch::Tensor>(bias1) : c10::nullopt)
              : forwardRows(rows, weight, bias1);
    return out.view(outSizes);
}

} // namespace d2dpo
