// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernels/fusedadam.h"

#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

#include <torch/torch.h>

#include "kernels/vectorclones.h"

namespace d2dpo {

namespace {

struct Update {
    float beta1, beta2, eps, weightDecay;
    float stepSize;          ///< lr / (1 - beta1^step)
    float biasCorrection2Sqrt; ///< sqrt(1 - beta2^step)
};

// The order of operations follows torch::optim::Adam (1.13): grad += wd p; m = b1 m + (1 - b1) g;
// v = b2 v + (1 - b2) g^2; p -= stepSize m / (sqrt(v) / sqrt(bc2) + eps).
D2DPO_VECTOR_CLONES void adamUpdate(float* __restrict p, const float* __restrict g, float* __restrict m,
                                    float* __restrict v, int64_t n, Update u)
{
    const float keep1 = u.beta1, take1 = 1.0f - u.beta1, keep2 = u.beta2, take2 = 1.0f - u.beta2;
    for (int64_t i = 0; i < n; ++i) {
        const float grad = u.weightDecay != 0 ? g[i] + u.weightDecay * p[i] : g[i];
        const float mi = m[i] * keep1 + take1 * grad;
        const float vi = v[i] * keep2 + take2 * grad * grad;
        m[i] = mi;
        v[i] = vi;
        p[i] -= u.stepSize * (mi / (std::sqrt(vi) / u.biasCorrection2Sqrt + u.eps));
    }
}

bool fusable(const torch::Tensor& p)
{
    const auto& g = p.grad();
    return p.device().is_cpu() && p.scalar_type() == torch::kFloat && p.is_contiguous() && g.is_contiguous() &&
           g.scalar_type() == torch::kFloat && !g.is_sparse();
}

bool fits(const torch::Tensor& moment, const torch::Tensor& p)
{
    return moment.defined() && moment.sizes() == p.sizes() && moment.scalar_type() == p.scalar_type() &&
           moment.device() == p.device() && moment.is_contiguous() && !moment.is_sparse();
}

std::string shapeOf(const torch::Tensor& t)
{
    if (!t.defined())
        return "no tensor";
    std::ostringstream out;
    out << t.sizes() << " " << t.scalar_type();
    return out.str();
}

} // namespace

std::string FusedAdam::stateMismatch() const
{
    size_t index = 0;
    for (const auto& group : param_groups())
        for (const auto& p : group.params()) {
            const auto found = state_.find(adamStateKey<decltype(state_)::key_type>(p.unsafeGetTensorImpl()));
            if (found != state_.end() && found->second) {
                const auto& state = static_cast<const torch::optim::AdamParamState&>(*found->second);
                for (const torch::Tensor& moment : {state.exp_avg(), state.exp_avg_sq()})
                    if (!fits(moment, p))
                        return "parameter " + std::to_string(index) + " is " + shapeOf(p) + " but its moment is " +
                               shapeOf(moment);
            }
            ++index;
        }
    return {};
}

torch::Tensor FusedAdam::step(LossClosure closure)
{
    for (const auto& group : param_groups()) {
        if (static_cast<const torch::optim::AdamOptions&>(group.options()).amsgrad())
            return Adam::step(std::move(closure));
        for (const auto& p : group.params())
            if (p.grad().defined() && !fusable(p))
                return Adam::step(std::move(closure));
    }

    torch::NoGradGuard noGrad;
    torch::Tensor loss;
    if (closure) {
        at::AutoGradMode enableGrad(true);
        loss = closure();
    }
    for (auto& group : param_groups()) {
        const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
        for (auto& p : group.params()) {
            if (!p.grad().defined())
                continue;
            // The state lives where torch::optim::Adam keeps it, under the same key.
            auto& slot = state_[adamStateKey<decltype(state_)::key_type>(p.unsafeGetTensorImpl())];
            if (!slot) {
                auto fresh = std::make_unique<torch::optim::AdamParamState>();
                fresh->step(0);
                fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
                fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
                slot = std::move(fresh);
            }
            auto& state = static_cast<torch::optim::AdamParamState&>(*slot);
            // The kernel below writes p.numel() values through the moments' pointers.
            TORCH_CHECK(fits(state.exp_avg(), p) && fits(state.exp_avg_sq(), p),
                        "Adam's moments do not fit their parameter: ", shapeOf(p), " against ",
                        shapeOf(state.exp_avg()), " and ", shapeOf(state.exp_avg_sq()));
            state.step(state.step() + 1);
            const auto [beta1, beta2] = options.betas();
            const double biasCorrection1 = 1 - std::pow(beta1, double(state.step()));
            const double biasCorrection2 = 1 - std::pow(beta2, double(state.step()));
            const Update u{float(beta1),
                           float(beta2),
                           float(options.eps()),
                           float(options.weight_decay()),
                           float(options.lr() / biasCorrection1),
                           float(std::sqrt(biasCorrection2))};
            adamUpdate(p.data_ptr<float>(), p.grad().data_ptr<float>(), state.exp_avg().data_ptr<float>(),
                       state.exp_avg_sq().data_ptr<float>(), p.numel(), u);
        }
    }
    return loss;
}

} // namespace d2dpo
