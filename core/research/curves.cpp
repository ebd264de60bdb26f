// SPDX-License-Identifier: GPL-3.0-or-later
#include "research/curves.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/metricnames.h"
#include "base/safeoutput.h"

namespace d2dpo {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json metricsJson(const SampleMetrics& m) { return json::parse(m.toJson()); }

/// All or nothing, never over a device, FIFO or folder (base/safeoutput.h): `reproduce --force`
/// writes into a folder that may hold anything.
Status writeFile(const fs::path& path, const std::string& text) { return AtomicFile::write(path.string(), text); }

std::string number(double v)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", v);
    return buffer;
}

} // namespace

std::string reportToJson(const ReproduceReport& r)
{
    json pretrain = json::array();
    for (const auto& p : r.pretrainProgress)
        pretrain.push_back({{"step", p.step}, {metric::kLoss, p.loss}});
    json dpo = json::array();
    for (const auto& p : r.dpoProgress) {
        json row = {{"step", p.step}, {metric::kLoss, p.loss}, {metric::kStepsPerSecond, p.stepsPerSecond}};
        if (p.rewards)
            for (const auto& [name, value] : metric::named(*p.rewards))
                row[name] = value;
        dpo.push_back(row);
    }
    json evaluations = json::array();
    for (const auto& e : r.evaluations) {
        json row = metricsJson(e.metrics);
        row["step"] = e.step;
        evaluations.push_back(row);
    }
    const auto& c = r.config;
    return json{{"config",
                 {{"model", json::parse(toJson(c.spec))},
                  {"pretrain", json::parse(toJson(c.pretrain))},
                  {"d2dpo", json::parse(toJson(c.dpo, c.schedule))},
                  {"sampling", json::parse(toJson(c.sampling))},
                  {"preference_pairs", c.preferencePairs},
                  {"seed", c.seed}}},
                {"runtime", r.runtime},
                {"seconds", {{"pretrain", r.pretrainSeconds},
                             {"evaluate_reference", r.referenceEvalSeconds},
                             {"d2dpo", r.dpoSeconds}}},
                {"reference", metricsJson(r.reference)},
                {"sampler", r.sampler},
                {"gradient", {{"std", r.gradientStd}, {"mean_norm", r.gradientMeanNorm}}},
                {"best", {{"checkpoint", r.dpoFinished.bestCheckpointPath}, {"description", r.dpoFinished.bestDescription}}},
                {"finetuned", metricsJson(r.finetuned)},
                {"d2dpo_status", toString(r.dpoFinished.status)},
                {"checkpoints", {{"reference", r.referenceCheckpoint}, {"finetuned", r.finetunedCheckpoint}}},
                {"curves", {{"pretrain", pretrain}, {"d2dpo", dpo}, {"evaluations", evaluations}}}}
        .dump(2);
}

Status writeCurves(const std::string& folder, const ReproduceReport& r)
{
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        return makeError("cannot create '" + folder + "': " + ec.message());
    const fs::path root(folder);

    using namespace metric;
    const auto header = [](std::initializer_list<const char*> names) {
        std::string line = "step";
        for (const char* name : names)
            line += std::string(",") + name;
        return line + "\n";
    };
    std::string pretrain = header({kLoss});
    for (const auto& p : r.pretrainProgress)
        pretrain += std::to_string(p.step) + "," + number(p.loss) + "\n";
    std::string dpo = header({kLoss, kRewardsChosen, kRewardsRejected, kRewardsMargins, kRewardsAccuracies,
                              kStepsPerSecond});
    for (const auto& p : r.dpoProgress) {
        const RewardStats rw = p.rewards.value_or(RewardStats{});
        dpo += std::to_string(p.step) + "," + number(p.loss) + "," + number(rw.chosen) + "," + number(rw.rejected) +
               "," + number(rw.margins) + "," + number(rw.accuracies) + "," + number(p.stepsPerSecond) + "\n";
    }
    // The columns are the task's metrics, as the reference's evaluation declares them.
    // (Appended piece by piece: GCC 12 at -O3 warns, wrongly, about `"," + std::string`.)
    std::string evals = "step";
    if (!r.evaluations.empty())
        for (const MetricValue& v : r.evaluations.front().metrics.values) {
            evals += ',';
            evals += v.name;
        }
    evals += ',';
    evals += kSamples;
    evals += '\n';
    for (const auto& e : r.evaluations) {
        evals += std::to_string(e.step);
        for (const MetricValue& v : r.evaluations.front().metrics.values) {
            evals += ',';
            evals += number(e.metrics.valueOr0(v.name));
        }
        evals += ',';
        evals += std::to_string(e.metrics.samples);
        evals += '\n';
    }
    for (const auto& [name, text] : {std::pair{"pretrain.csv", pretrain}, std::pair{"d2dpo.csv", dpo},
                                     std::pair{"evaluations.csv", evals},
                                     std::pair{"report.json", reportToJson(r) + "\n"}})
        if (Status s = writeFile(root / name, text); !s)
            return s;
    return Ok{};
}

} // namespace d2dpo
