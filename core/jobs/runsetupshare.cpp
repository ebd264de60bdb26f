// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/runsetupshare.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "distributed/traininggroup.h"

namespace d2dpo {

namespace {

/// The other ranks' side: rank 0's message read into `setup`, and room made for its pairs.
void receiveSetup(const nlohmann::json& message, SharedRunSetup& setup, TrainingPairs& pairs, torch::Device device)
{
    using json = nlohmann::json;
    setup.error = message.at("error").get<std::string>();
    if (!setup.error.empty())
        return;
    setup.settingsJson = message.at("settings").get<std::string>();
    setup.startStep = message.at("start_step").get<int64_t>();
    setup.evalSamples = message.at("eval_samples").get<int64_t>();
    setup.referenceVsr = message.at("reference_vsr").is_null()
                             ? std::nullopt
                             : std::optional<double>(message.at("reference_vsr").get<double>());
    const json& shape = message.at("pairs");
    const int64_t count = shape.at("count").get<int64_t>();
    const int64_t length = shape.at("length").get<int64_t>();
    pairs = TrainingPairs();
    pairs.winners = torch::empty({count, length}, torch::dtype(torch::kLong).device(device));
    pairs.losers = torch::empty({count, length}, torch::dtype(torch::kLong).device(device));
    if (shape.at("weighted").get<bool>())
        pairs.weights = torch::empty({count}, torch::dtype(torch::kFloat).device(device));
}

} // namespace

void shareRunSetup(TrainingGroup& group, SharedRunSetup& setup, TrainingPairs& pairs, torch::Device device,
                   std::chrono::seconds wait)
{
    using json = nlohmann::json;
    json message;
    if (group.isMain()) {
        if (setup.error.empty()) { // the dtypes the others make room in
            pairs.winners = pairs.winners.to(torch::kLong).contiguous();
            pairs.losers = pairs.losers.to(torch::kLong).contiguous();
            if (pairs.weights.defined())
                pairs.weights = pairs.weights.to(torch::kFloat).contiguous();
        }
        message = {{"error", setup.error},
                   {"settings", setup.settingsJson},
                   {"start_step", setup.startStep},
                   {"eval_samples", setup.evalSamples},
                   {"reference_vsr", setup.referenceVsr ? json(*setup.referenceVsr) : json(nullptr)}};
        if (setup.error.empty())
            message["pairs"] = {{"count", pairs.winners.size(0)},
                                {"length", pairs.winners.size(1)},
                                {"weighted", pairs.weights.defined()}};
    }
    message = json::parse(group.shareFromMain(message.dump(), wait));
    if (!group.isMain())
        receiveSetup(message, setup, pairs, device);
    if (!setup.error.empty())
        return;
    std::vector<torch::Tensor> tensors{pairs.winners, pairs.losers};
    if (pairs.weights.defined())
        tensors.push_back(pairs.weights);
    group.broadcastFromMain(tensors);
}

} // namespace d2dpo
