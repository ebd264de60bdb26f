// SPDX-License-Identifier: GPL-3.0-or-later
#include "research/study.h"
#include "research/seedstats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace d2dpo {

using nlohmann::json;

namespace {

const std::vector<StudySetting>& allSettings()
{
    static const std::vector<StudySetting> settings = {
        {"paper", "", {}},
        {"stratified-t", "estimator", {"--t-sampling", "stratified"}},
        {"t-samples-4", "estimator", {"--t-samples", "4"}},
        {"vrpo-4", "estimator", {"--vrpo-samples", "4"}},
        {"complementary", "estimator", {"--mask-coupling", "complementary"}},
        {"ipo", "loss", {"--loss", "ipo"}},
        {"hinge", "loss", {"--loss", "hinge"}},
        {"robust-0.1", "loss", {"--loss", "robust", "--label-smoothing", "0.1"}},
        {"cdpo-0.1", "loss", {"--label-smoothing", "0.1"}},
        {"rpo-1", "loss", {"--rpo-alpha", "1"}},
        {"uniform", "noise", {}, "uniform"},
        {"beta-0.01", "beta", {"--beta", "0.01"}},
        {"beta-1", "beta", {"--beta", "1"}},
    };
    return settings;
}

std::string general(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
}

/// The first metric whose name starts with `prefix`, or "".
std::string findMetric(const StudyRun& run, const std::string& prefix)
{
    for (const auto& [name, points] : run.series)
        if (name.rfind(prefix, 0) == 0)
            return name;
    return {};
}

double lastValue(const StudyRun& run, const std::string& metric)
{
    const auto it = run.series.find(metric);
    return it == run.series.end() || it->second.empty() ? std::nan("") : it->second.back().second;
}

} // namespace

Result<std::vector<StudySetting>> studySettings(const std::vector<std::string>& groups)
{
    const std::set<std::string> known{"estimator", "loss", "noise", "beta"};
    for (const std::string& group : groups)
        if (!known.count(group))
            return makeError("unknown study group '" + group + "' (known: estimator, loss, noise, beta)");
    std::vector<StudySetting> chosen{allSettings().front()};
    for (const StudySetting& s : allSettings())
        if (std::find(groups.begin(), groups.end(), s.group) != groups.end())
            chosen.push_back(s);
    return chosen;
}

Result<StudyRun> readStudyRun(const std::string& reportPath, const std::string& setting, uint64_t seed)
{
    std::ifstream in(reportPath);
    if (!in)
        return makeError("cannot read '" + reportPath + "'");
    try {
        const json report = json::parse(in);
        if (report.value("d2dpo_status", std::string()) != "completed")
            return makeError("'" + reportPath + "' is the report of a run that did not complete");
        StudyRun run;
        run.setting = setting;
        run.seed = seed;
        run.ruleMetric = report.at("reference").value("rule_metric", std::string());
        for (const json& row : report.at("curves").at("d2dpo"))
            run.series["loss"].push_back({row.at("step").get<int64_t>(), row.at("loss").get<double>()});
        for (const json& row : report.at("curves").at("evaluations"))
            for (const auto& [name, value] : row.items())
                if (value.is_number() && name != "step" && name != "samples" && name != "seed")
                    run.series[name].push_back({row.at("step").get<int64_t>(), value.get<double>()});
        if (report.contains("gradient")) {
            run.gradientStd = report["gradient"].value("std", 0.0);
            run.gradientMeanNorm = report["gradient"].value("mean_norm", 0.0);
        }
        if (report.contains("best"))
            run.best = report["best"].value("description", std::string());
        return run;
    } catch (const json::exception& e) {
        return makeError("'" + reportPath + "' is not a reproduce report: " + e.what());
    }
}

StudyResults summarizeStudy(const std::vector<StudyRun>& runs, const std::vector<std::string>& settingOrder,
                            double goal)
{
    StudyResults results;
    results.settingOrder = settingOrder;
    for (const std::string& setting : settingOrder) {
        std::vector<const StudyRun*> mine;
        // A run without its task's rule share or VSR (another task's report) has nothing to add.
        for (const StudyRun& run : runs)
            if (run.setting == setting && run.series.count(run.ruleMetric) && run.series.count("vsr") &&
                !run.series.at("vsr").empty())
                mine.push_back(&run);
        if (mine.empty())
            continue;
        const std::string rule = mine.front()->ruleMetric;
        if (results.ruleMetric.empty())
            results.ruleMetric = rule;
        const std::string tv = findMetric(*mine.front(), "tv_from");
        const std::string diversity = mine.front()->series.count("entropy")        ? "entropy"
                                      : mine.front()->series.count("unique_share") ? "unique_share"
                                                                                   : "";
        if (results.tvMetric.empty())
            results.tvMetric = tv;
        if (results.diversityMetric.empty())
            results.diversityMetric = diversity;
        StudyRow row;
        row.setting = setting;
        row.seeds = int(mine.size());
        std::vector<double> steps, finalRule, finalVsr, referenceVsr, finalTv, finalDiversity, gradStd, gradRel;
        for (const StudyRun* run : mine) {
            const auto& share = run->series.at(rule);
            for (const auto& [step, value] : share)
                if (value >= goal) {
                    steps.push_back(double(step));
                    break;
                }
            finalRule.push_back(lastValue(*run, rule));
            finalVsr.push_back(lastValue(*run, "vsr"));
            referenceVsr.push_back(run->series.at("vsr").front().second);
            if (!tv.empty())
                finalTv.push_back(lastValue(*run, tv));
            if (!diversity.empty())
                finalDiversity.push_back(lastValue(*run, diversity));
            gradStd.push_back(run->gradientStd);
            gradRel.push_back(run->gradientMeanNorm > 0 ? run->gradientStd / run->gradientMeanNorm : 0);
        }
        row.reachedGoal = int(steps.size());
        row.stepsToGoal = moments(steps).mean;
        std::tie(row.finalRule, row.finalRuleSd) = std::pair{moments(finalRule).mean, moments(finalRule).sd};
        std::tie(row.finalVsr, row.finalVsrSd) = std::pair{moments(finalVsr).mean, moments(finalVsr).sd};
        row.referenceVsr = moments(referenceVsr).mean;
        row.finalTv = moments(finalTv).mean;
        row.finalDiversity = moments(finalDiversity).mean;
        row.gradientStd = moments(gradStd).mean;
        row.gradientRelative = moments(gradRel).mean;
        results.rows.push_back(row);

        // Curves: the steps every seed has, mean and spread across seeds.
        for (const auto& [metric, points] : mine.front()->series) {
            StudyCurve curve;
            for (size_t i = 0; i < points.size(); ++i) {
                std::vector<double> values;
                for (const StudyRun* run : mine) {
                    const auto it = run->series.find(metric);
                    if (it != run->series.end() && i < it->second.size() && it->second[i].first == points[i].first)
                        values.push_back(it->second[i].second);
                }
                if (values.size() != mine.size())
                    continue;
                const Moments m = moments(values);
                curve.steps.push_back(double(points[i].first));
                curve.mean.push_back(m.mean);
                curve.spread.push_back(m.sd);
            }
            results.curves[metric][setting] = curve;
        }
    }
    return results;
}

std::string studyTable(const StudyResults& r, double goal)
{
    std::ostringstream out;
    const std::string rule = r.ruleMetric.empty() ? "rule share" : r.ruleMetric;
    // The task's own names for the spread columns (binary integers: TV from odd-uniform, entropy).
    const bool tv = !r.tvMetric.empty(), diversity = !r.diversityMetric.empty();
    out << "| setting | steps to " << rule << " >= " << general(goal) << " | final " << rule << " | VSR (reference) | "
        << (tv ? r.tvMetric + " | " : "") << (diversity ? r.diversityMetric + " | " : "")
        << "grad std at step 0 | std / norm |\n|---|---|---|---|" << (tv ? "---|" : "") << (diversity ? "---|" : "")
        << "---|---|\n";
    for (const StudyRow& row : r.rows) {
        const std::string steps = row.reachedGoal == 0 ? "never"
                                  : fixed(row.stepsToGoal, 0) +
                                        (row.reachedGoal < row.seeds ? " (" + std::to_string(row.reachedGoal) + "/" +
                                                                           std::to_string(row.seeds) + " seeds)"
                                                                     : "");
        out << "| " << row.setting << " | " << steps << " | " << fixed(row.finalRule, 3) << " ± "
            << fixed(row.finalRuleSd, 3) << " | " << fixed(row.finalVsr, 3) << " (" << fixed(row.referenceVsr, 3)
            << ") | " << (tv ? fixed(row.finalTv, 3) + " | " : "")
            << (diversity ? fixed(row.finalDiversity, r.diversityMetric == "entropy" ? 2 : 3) + " | " : "")
            << general(row.gradientStd) << " | " << fixed(row.gradientRelative, 2) << " |\n";
    }
    return out.str();
}

std::string studyCsv(const std::vector<StudyRun>& runs)
{
    std::string csv = "setting,seed,step,metric,value\n";
    for (const StudyRun& run : runs)
        for (const auto& [metric, points] : run.series)
            for (const auto& [step, value] : points) {
                csv += run.setting;
                csv += ',';
                csv += std::to_string(run.seed);
                csv += ',';
                csv += std::to_string(step);
                csv += ',';
                csv += metric;
                csv += ',';
                csv += general(value);
                csv += '\n';
            }
    return csv;
}

std::string studySummaryCsv(const StudyResults& r)
{
    std::string csv = "setting,seeds,reached_goal,steps_to_goal,final_rule,final_rule_sd,final_vsr,final_vsr_sd,"
                      "reference_vsr,final_tv,final_diversity,gradient_std,gradient_std_over_norm\n";
    for (const StudyRow& row : r.rows) {
        for (const std::string& cell :
             {row.setting, std::to_string(row.seeds), std::to_string(row.reachedGoal), general(row.stepsToGoal),
              general(row.finalRule), general(row.finalRuleSd), general(row.finalVsr), general(row.finalVsrSd),
              general(row.referenceVsr), general(row.finalTv), general(row.finalDiversity), general(row.gradientStd)}) {
            csv += cell;
            csv += ',';
        }
        csv += general(row.gradientRelative);
        csv += '\n';
    }
    return csv;
}

} // namespace d2dpo
