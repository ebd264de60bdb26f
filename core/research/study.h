// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo study`: a grid of D2-DPO settings times seeds, each run a `reproduce` from a shared
// pretrained reference, and what the grid shows. This file is the plan (which settings a group
// holds and the flags that make them) and the reading of the runs' report.json into curves with a
// spread over seeds and one table row per setting. Running the processes is the CLI's job.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"

namespace d2dpo {

struct StudySetting {
    std::string name;               ///< "complementary", "loss-ipo", "beta-1"...
    std::string group;              ///< "estimator", "loss", "noise", "beta"
    std::vector<std::string> flags; ///< reproduce's options that make it
    std::string noise = "masking";  ///< which pretrained reference it starts from
};

/// The settings of the named groups (estimator, loss, noise, beta), each once; "paper" (the
/// defaults) first. An unknown group is an error naming the known ones.
Result<std::vector<StudySetting>> studySettings(const std::vector<std::string>& groups);

/// One run of the grid, read back from its report.json.
struct StudyRun {
    std::string setting;
    uint64_t seed = 0;
    std::string ruleMetric;                                  ///< "odd_ratio"
    std::map<std::string, std::vector<std::pair<int64_t, double>>> series; ///< metric -> (step, value), loss included
    double gradientStd = 0;
    double gradientMeanNorm = 0;
    std::string best;                                        ///< the best checkpoint's description, if kept
};
Result<StudyRun> readStudyRun(const std::string& reportPath, const std::string& setting, uint64_t seed);

/// A metric's curve over seeds: at each step the mean and the sample standard deviation.
struct StudyCurve {
    std::vector<double> steps, mean, spread;
};

/// One setting's line of the table, each figure a mean over seeds (with its standard deviation).
struct StudyRow {
    std::string setting;
    int seeds = 0;
    int reachedGoal = 0;           ///< seeds whose rule share reached the goal
    double stepsToGoal = 0;        ///< mean over the seeds that reached it
    double finalRule = 0, finalRuleSd = 0;
    double finalVsr = 0, finalVsrSd = 0;
    double referenceVsr = 0;
    double finalTv = 0;        ///< StudyResults::tvMetric's final value; NaN when the task has none
    double finalDiversity = 0; ///< StudyResults::diversityMetric's final value; NaN when the task has none
    double gradientStd = 0, gradientRelative = 0;
};

struct StudyResults {
    std::vector<StudyRow> rows;                                        ///< in the plan's order
    std::map<std::string, std::map<std::string, StudyCurve>> curves;   ///< metric -> setting -> curve
    std::vector<std::string> settingOrder;
    std::string ruleMetric;
    std::string tvMetric;        ///< "tv_from_odd_uniform" (binary integers), or "" when the task has no such metric
    std::string diversityMetric; ///< "entropy" where the task has it, else "unique_share", else ""
};

/// Curves and table from the runs; `goal` is the rule share "steps to goal" waits for.
StudyResults summarizeStudy(const std::vector<StudyRun>& runs, const std::vector<std::string>& settingOrder,
                            double goal);

/// The table as the CLI prints it and docs/paper-experiment.md shows it (Markdown).
std::string studyTable(const StudyResults& results, double goal);
/// Every point of every run: setting,seed,step,metric,value.
std::string studyCsv(const std::vector<StudyRun>& runs);
/// The table's figures: one line per setting.
std::string studySummaryCsv(const StudyResults& results);

} // namespace d2dpo
