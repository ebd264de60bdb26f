// SPDX-License-Identifier: GPL-3.0-or-later
// How many labels each way of choosing pairs needs, measured with a simulated labeler (the task's
// rule). Round after round, candidate pairs are drawn from the current model (as the desktop's
// "Label pairs from this model" does), some of them are chosen and labelled by the rule, D2-DPO
// fine-tunes the reference on every decisive label so far, and the fine-tuned model is measured.
// "random" takes the candidates in the draw's order; "least-sure" takes those whose implicit
// reward margin under the current model (against the reference) is nearest 0 (jobs/pairscorer.h);
// "surest" those whose margin is farthest from 0: the pairs the current model tells apart most
// clearly, which a labeler is likely to decide (rather than tie) and which a fine-tuning from the
// reference, where every margin is 0 again, still learns from.
// The figures: the labels spent when the rule share first reaches the goal, and the rule share
// averaged over the rounds (the area under the curve, steadier than a first crossing).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/result.h"
#include "base/trainlistener.h"

namespace d2dpo {

enum class PairSelection { Random, LeastSure, Surest };
const char* toString(PairSelection selection);
std::optional<PairSelection> pairSelectionFromString(const std::string& text);

struct LabelStudyConfig {
    std::string referenceCheckpoint;
    std::string rule;             ///< "" = the reference's task's
    PairSelection selection = PairSelection::Random;
    int64_t labelsPerRound = 32;
    int64_t candidatesPerRound = 256; ///< candidate pairs drawn from the current model each round
    int64_t maxLabels = 512;
    DpoConfig dpo;                ///< dpo.steps: the steps of each round's fine-tuning (from the reference)
    SamplingConfig sampling;
    int64_t evalSamples = 1000;
    double goal = 0.9;
    int marginDraws = 16;
    uint64_t seed = 0;
};

Status validate(const LabelStudyConfig& config);

struct LabelStudyRound {
    int64_t labels = 0;      ///< labels spent so far
    int64_t decisive = 0;    ///< of them, left or right (what D2-DPO trains on)
    double ruleShare = 0;    ///< the fine-tuned model's (round 0: the reference's)
    double vsr = 0;
    double meanAbsMargin = 0; ///< over the pairs chosen this round, under the model that drew them (0 in round 0)
    double seconds = 0;      ///< since the run started
};

struct LabelStudyRun {
    PairSelection selection = PairSelection::Random;
    uint64_t seed = 0;
    std::string ruleMetric;
    std::vector<LabelStudyRound> rounds; ///< round 0 is the reference
    std::optional<int64_t> labelsToGoal; ///< labels at the first round whose rule share reached the goal
};

/// Runs one selection with one seed in the calling thread; `onRound` hears each round. Spends the
/// whole budget (the goal only marks labelsToGoal); ends early when the model draws one sequence only
/// (no pair to ask about), and with an error when `stop` is raised.
Result<LabelStudyRun> runLabelStudy(const LabelStudyConfig& config, const std::string& device, const StopToken& stop,
                                    const std::function<void(const LabelStudyRound&)>& onRound = {});

/// One selection's line of the table, over its seeds.
struct LabelStudyRow {
    PairSelection selection = PairSelection::Random;
    int seeds = 0;
    int reachedGoal = 0;
    double labelsToGoal = 0, labelsToGoalSd = 0; ///< over the seeds that reached it
    double medianLabelsToGoal = 0;
    double decisiveShare = 0;  ///< decisive labels / labels, over every round of every seed
    double meanAbsMargin = 0;  ///< of the chosen pairs, over every labelled round
    double meanRule = 0, meanRuleSd = 0; ///< the rule share averaged over the labelled rounds (the curve's area)
    double finalRule = 0, finalVsr = 0;
    double seconds = 0;        ///< mean wall time of a run
};

/// One row per selection that ran (random first).
std::vector<LabelStudyRow> summarizeLabelStudy(const std::vector<LabelStudyRun>& runs);
/// The table (Markdown) as the CLI prints it and docs/experts.md shows it.
std::string labelStudyTable(const std::vector<LabelStudyRow>& rows, double goal, int64_t maxLabels);
/// Every round of every run: selection,seed,labels,decisive,rule_share,vsr,mean_abs_margin,seconds.
std::string labelStudyCsv(const std::vector<LabelStudyRun>& runs);
/// The rule share after each round's labels: the mean and standard deviation over seeds (a run that
/// ran out of candidates before the budget leaves the later rounds to the others). x: labels.
struct LabelStudyCurve {
    std::vector<double> labels, mean, spread;
};
LabelStudyCurve labelStudyCurve(const std::vector<LabelStudyRun>& runs, PairSelection selection);

} // namespace d2dpo
