// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernels/onednnlinear.h"

#include <cstdlib>
#include <dlfcn.h>
#include <string_view>
#include <type_traits>

#include <torch/torch.h>

#include "kernels/matmulprecision.h"

namespace d2dpo {

namespace {

// dnnl_sgemm as dnnl.h declares it (oneDNN 2 and 3 alike): row-major C = alpha op(A) op(B) + beta C,
// returning dnnl_status_t (0: success). Declared here rather than from libdnnl-dev's header, since
// the library is found at run time.
using Sgemm = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                      int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// dnnl_gemm_bf16bf16f32: the same with bf16 operands (as uint16_t) and float32 accumulation and C.
using GemmBf16 = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                         int64_t lda, const uint16_t* b, int64_t ldb, float beta, float* c, int64_t ldc);

void* findOnednn(const char* symbolName)
{
    if (const char* choice = std::getenv("D2DPO_ONEDNN_GEMM"); choice && std::string_view(choice) == "off")
        return nullptr;
    // The oneDNN LibTorch already loaded first (one runtime, the one measured), then either version.
    if (void* symbol = dlsym(RTLD_DEFAULT, symbolName))
        return symbol;
    for (const int flags : {RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD, RTLD_NOW | RTLD_LOCAL})
        for (const char* name : {"libdnnl.so.2", "libdnnl.so.3"})
            if (void* library = dlopen(name, flags))
                if (void* symbol = dlsym(library, symbolName))
                    return symbol;
    return nullptr;
}

Sgemm sgemm()
{
    static const auto found = reinterpret_cast<Sgemm>(findOnednn("dnnl_sgemm")); // thread-safe once
    return found;
}

/// oneDNN's bf16 gemm where it runs here: oneDNN 2 has it for AVX-512 and later only, and answers
/// "unimplemented" elsewhere, so one 1x1 product decides.
GemmBf16 findGemmBf16()
{
    const auto found = reinterpret_cast<GemmBf16>(findOnednn("dnnl_gemm_bf16bf16f32"));
    if (!found)
        return nullptr;
    const uint16_t one = 0x3f80; // 1.0 in bf16
    float product = 0;
    return found('N', 'N', 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &product, 1) == 0 && product == 1.0f ? found
                                                                                                        : nullptr;
}

GemmBf16 gemmBf16()
{
    static const GemmBf16 found = findGemmBf16(); // thread-safe once
    return found;
}

/// C [m, n] = op(A) op(B) (+ C when accumulate), row-major; op is a transpose where the flag says 'T'.
void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
          bool accumulate, float* c, int64_t ldc)
{
    const int status = sgemm()(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc);
    TORCH_CHECK(status == 0, "oneDNN's sgemm failed (dnnl_status_t ", status, ")");
}

/// The same product with bf16 operands (contiguous kBFloat16 tensors' data) into float32 C.
void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const at::BFloat16* a, int64_t lda, const at::BFloat16* b,
          int64_t ldb, bool accumulate, float* c, int64_t ldc)
{
    const int status = gemmBf16()(ta, tb, m, n, k, 1.0f, reinterpret_cast<const uint16_t*>(a), lda,
                                  reinterpret_cast<const uint16_t*>(b), ldb, accumulate ? 1.0f : 0.0f, c, ldc);
    TORCH_CHECK(status == 0, "oneDNN's bf16 gemm failed (dnnl_status_t ", status, ")");
}

/// CPU float32 operands of a linear layer's shapes (either gemm's precondition).
bool cpuFloatOperands(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b)
{
    const auto cpuFloat = [](const torch::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == torch::kFloat; };
    return cpuFloat(x) && cpuFloat(w) && w.dim() == 2 && x.dim() >= 1 && x.size(-1) == w.size(1) && x.numel() > 0 &&
           w.numel() > 0 && !x.is_sparse() && !w.is_sparse() &&
           (!b.defined() || (cpuFloat(b) && b.dim() == 1 && b.size(0) == w.size(0)));
}

/// A float32 tensor as the gemm of element type T reads it: itself, or rounded to bf16 (to nearest even).
template <typename T>
torch::Tensor operand(const torch::Tensor& t)
{
    if constexpr (std::is_same_v<T, float>)
        return t.contiguous();
    else
        return t.to(torch::kBFloat16).contiguous();
}

/// rows [M, K] and w [N, K], contiguous operands of type T -> float32 [M, N].
template <typename T>
torch::Tensor forwardRows(const torch::Tensor& rows, const torch::Tensor& w, const torch::Tensor& b)
{
    const int64_t m = rows.size(0), k = rows.size(1), n = w.size(0);
    auto out = b.defined() ? b.expand({m, n}).contiguous() : torch::empty({m, n}, torch::dtype(torch::kFloat));
    gemm('N', 'T', m, n, k, rows.data_ptr<T>(), k, w.data_ptr<T>(), k, b.defined(), out.data_ptr<float>(), n);
    return out;
}

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

/// The linear layer with its three products on oneDNN's gemm of element type T (float: sgemm; bf16:
/// bf16 operands, float32 accumulation). Takes and returns float32. The backward pass reads the
/// operands as the forward's gemm did: float32 keeps the tensors it was given, bf16 its rounded
/// copies (memory beside the float32 input, half its size).
template <typename T>
class OnednnLinear : public torch::autograd::Function<OnednnLinear<T>> {
public:
    // The bias as an optional: LibTorch 1.13's Function::apply refuses an undefined tensor.
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& rows, const torch::Tensor& w,
                                 const c10::optional<torch::Tensor>& b)
    {
        const auto rowsT = operand<T>(rows), wT = operand<T>(w);
        ctx->save_for_backward({rowsT, wT});
        ctx->saved_data["bias"] = b.has_value();
        return forwardRows<T>(rowsT, wT, b.value_or(torch::Tensor()));
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOutputs)
    {
        // The products below are not recorded: a gradient of these gradients would be silently zero.
        TORCH_CHECK(!torch::GradMode::is_enabled(), "d2dpo's oneDNN linear layer has no second derivative "
                                                    "(set D2DPO_SCRIPT_LINEAR=plain for create_graph)");
        const auto saved = ctx->get_saved_variables();
        const auto &rows = saved[0], &w = saved[1];
        const auto grad32 = gradOutputs[0].contiguous();
        const auto grad = operand<T>(grad32);
        const int64_t m = rows.size(0), k = rows.size(1), n = w.size(0);
        const auto float32 = torch::dtype(torch::kFloat);
        torch::Tensor gradRows, gradW, gradB;
        if (ctx->needs_input_grad(0)) { // [M, K] = grad [M, N] w [N, K]
            gradRows = torch::empty({m, k}, float32);
            gemm('N', 'N', m, k, n, grad.template data_ptr<T>(), n, w.template data_ptr<T>(), k, false,
                 gradRows.data_ptr<float>(), k);
        }
        if (ctx->needs_input_grad(1)) { // [N, K] = grad^T [N, M] rows [M, K]
            gradW = torch::empty({n, k}, float32);
            gemm('T', 'N', n, k, m, grad.template data_ptr<T>(), n, rows.template data_ptr<T>(), k, false,
                 gradW.data_ptr<float>(), k);
        }
        if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2))
            gradB = grad32.sum(0);
        return {gradRows, gradW, gradB};
    }
};

template <typename T>
torch::Tensor linearRows(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b)
{
    const int64_t k = x.size(-1), n = w.size(0);
    auto outSizes = x.sizes().vec();
    outSizes.back() = n;
    const auto rows = x.reshape({-1, k});
    const auto bias = b.defined() ? b.contiguous() : b;
    const bool track =
        torch::GradMode::is_enabled() && (x.requires_grad() || w.requires_grad() || (b.defined() && b.requires_grad()));
    // Nothing will ask for gradients (the reference model, sampling): no autograd node.
    const auto out = track ? OnednnLinear<T>::apply(rows, w, b.defined() ? c10::optional<torch::Tensor>(bias)
                                                                          : c10::nullopt)
                           : forwardRows<T>(operand<T>(rows), operand<T>(w), bias);
    return out.view(outSizes);
}

/// bf16 products on a CPU where oneDNN's bf16 gemm does not run (no oneDNN, an older processor, or
/// D2DPO_ONEDNN_GEMM=off): the same arithmetic, bf16-rounded operands multiplied with float32 sums,
/// on LibTorch's float32 products. As slow as float32; it exists so that the numbers never depend
/// on which library ran them.
class RoundedLinear : public torch::autograd::Function<RoundedLinear> {
public:
    static torch::Tensor rounded(const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kFloat); }

    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& rows, const torch::Tensor& w,
                                 const c10::optional<torch::Tensor>& b)
    {
        const auto rowsR = rounded(rows), wR = rounded(w);
        ctx->save_for_backward({rowsR, wR});
        ctx->saved_data["bias"] = b.has_value();
        return b ? torch::addmm(*b, rowsR, wR.t()) : torch::mm(rowsR, wR.t());
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOutputs)
    {
        const auto saved = ctx->get_saved_variables();
        const auto grad = rounded(gradOutputs[0]);
        torch::Tensor gradRows, gradW, gradB;
        if (ctx->needs_input_grad(0))
            gradRows = torch::mm(grad, saved[1]);
        if (ctx->needs_input_grad(1))
            gradW = torch::mm(grad.t(), saved[0]);
        if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2))
            gradB = gradOutputs[0].sum(0);
        return {gradRows, gradW, gradB};
    }
};

torch::Tensor roundedLinear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b)
{
    auto outSizes = x.sizes().vec();
    outSizes.back() = w.size(0);
    const auto rows = x.reshape({-1, x.size(-1)});
    return RoundedLinear::apply(rows, w, b.defined() ? c10::optional<torch::Tensor>(b) : c10::nullopt).view(outSizes);
}

/// bf16 products on a GPU: LibTorch's own on bf16 copies of the operands (tensor cores), the result
/// rounded to bf16 as torch.autocast's is, the bias added in float32. Autograd carries the
/// gradients back to the float32 tensors through the casts.
torch::Tensor castLinear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b)
{
    const auto out = torch::linear(x.to(torch::kBFloat16), w.to(torch::kBFloat16)).to(x.scalar_type());
    return b.defined() ? out + b : out;
}

} // namespace

bool onednnGemmAvailable() { return sgemm() != nullptr; }

torch::Tensor onednnLinear(const torch::Tensor& x, const torch::Tensor& w, const std::optional<torch::Tensor>& bias)
{
    const torch::Tensor b = bias.value_or(torch::Tensor());
    if (matmulPrecision() == Precision::BFloat16 && x.is_floating_point() && x.scalar_type() != torch::kDouble) {
        if (cpuFloatOperands(x, w, b))
            return gemmBf16() ? linearRows<at::BFloat16>(x, w, b) : roundedLinear(x, w, b);
        return castLinear(x, w, b);
    }
    if (sgemm() && cpuFloatOperands(x, w, b))
        return linearRows<float>(x, w, b);
    return torch::linear(x, w, b);
}

torch::Tensor linearAtPrecision(const torch::Tensor& x, const torch::Tensor& w, const std::optional<torch::Tensor>& b)
{
    if (matmulPrecision() == Precision::Float32)
        return torch::linear(x, w, b.value_or(torch::Tensor()));
    return onednnLinear(x, w, b);
}

} // namespace d2dpo
