// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/torchscriptprobe.h"

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "base/abandonablecall.h"
#include "model/device.h"
#include "model/torchscriptdenoiser.h"

namespace d2dpo {

namespace {

constexpr int64_t kProbeRows = 4;

/// Which call of the probe is running: its forward (twice), then a backward pass.
enum class ProbeStage { Forward, Backward };

Result<int64_t> probeOnThisThread(TorchScriptDenoiser& model, std::atomic<ProbeStage>& stage)
{
    const ModelVocabulary& v = model.vocabulary();
    const int64_t rows = kProbeRows, length = model.length(), real = model.vocabSize();
    const int64_t frame = int64_t(v.begin.size() + v.end.size());
    auto generator = makeGenerator(0, torch::kCPU);
    // A fully masked row, two partly masked ones and a clean one, at t = 0, 1/4, 3/4 and 1.
    auto tokens = torch::randint(0, real, {rows, length}, generator, torch::kLong);
    const auto masked = torch::rand({rows, length}, generator).lt(torch::tensor({1.0, 0.7, 0.3, 0.0}).unsqueeze(1));
    tokens = torch::where(masked, torch::full_like(tokens, real), tokens);
    const auto t = torch::tensor({0.0f, 0.25f, 0.75f, 1.0f});
    // First id 0 alone (in range for any model) tells the model's V, so that an id of the
    // vocabulary beyond it is named as such rather than as the index error it would raise.
    try {
        torch::NoGradGuard noGrad;
        model.eval();
        const auto plain = model.modelLogits(torch::zeros({rows, length + frame}, torch::kLong), t);
        if (plain.dim() == 3 && v.largestId() >= plain.size(2))
            return makeError("the vocabulary names id " + std::to_string(v.largestId()) + ", outside the model's " +
                             std::to_string(plain.size(2)) + " logits (ids 0.." + std::to_string(plain.size(2) - 1) +
                             ")");
    } catch (const std::exception&) {
        // Said below, with the probe batch itself.
    }
    const auto ids = model.modelIds(tokens);
    torch::Tensor logits;
    try {
        torch::NoGradGuard noGrad;
        model.eval();
        logits = model.modelLogits(ids, t);
    } catch (const std::exception& e) {
        return makeError("its forward failed on a probe batch of " + std::to_string(rows) + " sequences of " +
                         std::to_string(length + frame) + " ids: " + scriptError(e));
    }
    std::ostringstream shape;
    shape << logits.sizes();
    if (logits.dim() != 3 || logits.size(0) != rows || logits.size(1) != length + frame)
        return makeError("its forward returned shape " + shape.str() + " for input [" + std::to_string(rows) + ", " +
                         std::to_string(length + frame) + "]; it must return [B, L, V] logits, one row per input id");
    if (!torch::isFloatingType(logits.scalar_type()))
        return makeError("its forward returned " + std::string(c10::toString(logits.scalar_type())) +
                         " values; it must return float logits");
    const int64_t size = logits.size(2);
    if (v.size > 0 && v.size != size)
        return makeError("the vocabulary says the model has " + std::to_string(v.size) + " token ids, its logits have " +
                         std::to_string(size));
    if (v.largestId() >= size)
        return makeError("the vocabulary names id " + std::to_string(v.largestId()) + ", outside the model's " +
                         std::to_string(size) + " logits (ids 0.." + std::to_string(size - 1) + ")");
    const auto finite = torch::isfinite(logits).flatten(1).all(1);
    for (int64_t row = 0; row < rows; ++row)
        if (!finite[row].item<bool>())
            return makeError("its logits are not finite (NaN or infinite) at t = " +
                             std::to_string(t[row].item<float>()).substr(0, 4) +
                             " (map t to the model's noise level so that 0 and 1 stay finite)");
    // Then every t of a fine grid, each row masked as much as its t says: a model that fails only
    // in a band of t (0.4 < t < 0.6, say) is named here rather than met mid-run.
    {
        const int64_t grid = 33;
        const auto tGrid = torch::linspace(0.0, 1.0, grid);
        auto gridTokens = torch::randint(0, real, {grid, length}, generator, torch::kLong);
        const auto gridMasked = torch::rand({grid, length}, generator).ge(tGrid.unsqueeze(1));
        gridTokens = torch::where(gridMasked, torch::full_like(gridTokens, real), gridTokens);
        torch::Tensor gridFinite;
        try {
            torch::NoGradGuard noGrad;
            gridFinite = torch::isfinite(model.modelLogits(model.modelIds(gridTokens), tGrid)).flatten(1).all(1);
        } catch (const std::exception& e) {
            return makeError("its forward failed on a probe batch of " + std::to_string(grid) + " sequences (t from 0 to 1): " +
                             scriptError(e));
        }
        for (int64_t row = 0; row < grid; ++row)
            if (!gridFinite[row].item<bool>())
                return makeError("its logits are not finite (NaN or infinite) at t = " +
                                 std::to_string(tGrid[row].item<float>()).substr(0, 5) +
                                 " (one of " + std::to_string(grid) + " noise levels probed from 0 to 1)");
    }
    try {
        stage = ProbeStage::Backward;
        model.train(true);
        model.forward(tokens, t.clamp_max(0.999f)).logsumexp(-1).mean().backward();
        model.eval();
    } catch (const std::exception& e) {
        return makeError("a backward pass through its forward failed: " + scriptError(e));
    }
    bool anyGradient = false;
    for (auto& p : model.parameters()) {
        anyGradient = anyGradient || (p.grad().defined() && p.grad().abs().sum().item<double>() > 0);
        p.mutable_grad().reset();
    }
    if (!anyGradient)
        return makeError("its logits do not depend on any of its parameters: there is nothing to train");
    return size;
}

} // namespace

double probeSecondsAllowed(int64_t parameters) { return 60.0 + double(parameters) / 1e7; }

Result<int64_t> probeTorchScriptDenoiser(const std::shared_ptr<TorchScriptDenoiser>& model, const StopToken* stop,
                                         double limit)
{
    // The thread keeps the model, the stage and the result alive should it be abandoned.
    auto stage = std::make_shared<std::atomic<ProbeStage>>(ProbeStage::Forward);
    auto result = std::make_shared<std::optional<Result<int64_t>>>();
    const double seconds = limit > 0 ? limit : probeSecondsAllowed(parameterCount(Denoiser(model)));
    CallEnd end;
    try {
        end = callWithin(seconds, stop, [model, stage, result] { *result = probeOnThisThread(*model, *stage); });
    } catch (const std::exception& e) {
        return makeError("probing it failed: " + scriptError(e));
    }
    if (end == CallEnd::Returned)
        return result->value();
    const std::string call = *stage == ProbeStage::Backward
                                 ? std::string("a backward pass through its forward")
                                 : "its forward on a probe batch of " + std::to_string(kProbeRows) + " sequences of " +
                                       std::to_string(model->length() + model->vocabulary().begin.size() +
                                                      model->vocabulary().end.size()) +
                                       " ids";
    if (end == CallEnd::Stopped)
        return makeError("stopped while " + call + " ran; nothing was written");
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g s", seconds);
    return makeError(call + " did not return within " + shown +
                     " (a loop that never ends?); a denoiser's forward on so small a batch takes seconds");
}

} // namespace d2dpo
