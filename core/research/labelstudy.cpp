// SPDX-License-Identifier: GPL-3.0-or-later
#include "research/labelstudy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "diffusion/implicitreward.h"
#include "diffusion/sampler.h"
#include "facades/openmodel.h"
#include "jobs/pairgenerator.h"
#include "jobs/pairscorer.h"
#include "model/device.h"
#include "train/dpotrainer.h"
#include "train/evaluation.h"
#include "research/seedstats.h"

namespace d2dpo {

const char* toString(PairSelection selection)
{
    switch (selection) {
    case PairSelection::LeastSure:
        return "least-sure";
    case PairSelection::Surest:
        return "surest";
    case PairSelection::Random:
        break;
    }
    return "random";
}

std::optional<PairSelection> pairSelectionFromString(const std::string& text)
{
    if (text == "random")
        return PairSelection::Random;
    if (text == "least-sure")
        return PairSelection::LeastSure;
    if (text == "surest")
        return PairSelection::Surest;
    return std::nullopt;
}

Status validate(const LabelStudyConfig& config)
{
    if (config.labelsPerRound < 1 || config.labelsPerRound > 100000)
        return makeError("the labels per round must be in 1..100000");
    if (config.candidatesPerRound < config.labelsPerRound || config.candidatesPerRound > 1000000)
        return makeError("the candidate pairs per round must be in labels-per-round..1000000");
    if (config.maxLabels < 1 || config.maxLabels > 10000000)
        return makeError("the label budget must be in 1..10000000");
    if (config.evalSamples < 1 || config.evalSamples > 1000000)
        return makeError("the evaluation samples must be in 1..1000000");
    if (!(config.goal > 0 && config.goal <= 1))
        return makeError("the goal (a rule share) must be in (0, 1]");
    if (config.marginDraws < 1 || config.marginDraws > 4096)
        return makeError("the margin's draws must be in 1..4096");
    if (Status s = validate(config.dpo); !s)
        return s;
    return validate(config.sampling);
}

namespace {

using Clock = std::chrono::steady_clock;

/// Pairs as (first, second) [P, D] int64 token tensors.
std::pair<torch::Tensor, torch::Tensor> tokensOf(const Task& task, const std::vector<ShownPair>& pairs)
{
    std::vector<int64_t> left, right;
    for (const ShownPair& pair : pairs) {
        for (const auto& [text, into] : {std::pair{&pair.left, &left}, std::pair{&pair.right, &right}}) {
            auto tokens = task.parse(*text);
            if (!tokens)
                throw std::runtime_error("a drawn sequence cannot be read: " + tokens.error());
            into->insert(into->end(), tokens->begin(), tokens->end());
        }
    }
    const auto shape = std::vector<int64_t>{int64_t(pairs.size()), task.length()};
    return {torch::tensor(left).view(shape), torch::tensor(right).view(shape)};
}

/// The state of one run between rounds.
class Study {
public:
    Study(const LabelStudyConfig& config, OpenedModel opened, const StopToken& stop)
        : m_config(config), m_model(std::move(opened)), m_stop(stop), m_start(Clock::now())
    {
        m_base = m_model.checkpoint.model;
        m_reference = frozenCopy(m_base);
        m_current = m_reference;
    }

    /// The current model measured; every round with the same draws, so rounds compare models.
    SampleMetrics measure()
    {
        auto generator = makeGenerator(m_config.seed + 1, m_model.device);
        return evaluateModel(m_current, task(), spec().noise, m_config.sampling, m_config.evalSamples, generator,
                             &m_stop);
    }

    /// Candidate pairs drawn from the current model, in the draw's random order. A pair labelled
    /// before may come again, as it may in the Label view (a model sure of a few sequences draws them
    /// over and over): its second label is another decisive or tied pair to train on.
    std::vector<ShownPair> candidates(int round)
    {
        const auto sampler = makeSampler(m_current, spec().noise, task().vocabSize(), m_config.sampling);
        auto generator = makeGenerator(m_config.seed * 7919 + uint64_t(round), m_model.device);
        const auto texts = formatRows(task(), sampler->sample(2 * m_config.candidatesPerRound, generator, 1024));
        return formPairs(texts, "", m_config.candidatesPerRound, m_config.seed * 31 + uint64_t(round));
    }

    std::vector<double> margins(const std::vector<ShownPair>& pairs, int round)
    {
        if (pairs.empty())
            return {};
        auto [first, second] = tokensOf(task(), pairs);
        auto generator = makeGenerator(m_config.seed * 104729 + uint64_t(round), m_model.device);
        MarginEstimate estimate;
        estimate.draws = m_config.marginDraws;
        Denoiser reference = m_reference;
        const auto m = implicitRewardMargins(m_current, reference, *m_model.noise, first.to(m_model.device),
                                             second.to(m_model.device), m_config.dpo, estimate, generator)
                           .contiguous();
        return std::vector<double>(m.data_ptr<double>(), m.data_ptr<double>() + m.numel());
    }

    /// The rule labels the chosen pairs; returns the mean |margin| over them.
    double label(const std::vector<ShownPair>& chosen, const std::vector<double>& chosenMargins)
    {
        double sum = 0;
        for (size_t i = 0; i < chosen.size(); ++i) {
            const ShownPair& pair = chosen[i];
            ++m_labels;
            sum += std::abs(chosenMargins[i]);
            auto choice = task().ruleChoice(pair.left, pair.right);
            if (!choice)
                throw std::runtime_error(choice.error());
            if (choice.value() != Choice::Left && choice.value() != Choice::Right)
                continue;
            const bool leftWins = choice.value() == Choice::Left;
            m_winners.push_back(leftWins ? pair.left : pair.right);
            m_losers.push_back(leftWins ? pair.right : pair.left);
        }
        return chosen.empty() ? 0 : sum / double(chosen.size());
    }

    /// D2-DPO from the reference on every decisive label so far, with the same draws each round (so
    /// that rounds differ by their labels only); false when stopped.
    bool train()
    {
        if (m_winners.empty())
            return true;
        Denoiser policy = m_base->deepCopy();
        policy->train(true);
        DpoTrainer trainer(policy, task(), *m_model.noise,
                           DpoTrainerOptions(spec(), m_config.dpo).sampling(m_config.sampling).seed(m_config.seed * 613));
        std::vector<ShownPair> decisive;
        for (size_t i = 0; i < m_winners.size(); ++i)
            decisive.push_back({0, m_winners[i], m_losers[i], "", "", ""});
        auto [winners, losers] = tokensOf(task(), decisive);
        trainer.setPreferences(winners, losers);
        for (int step = 0; step < m_config.dpo.steps; ++step) {
            if (m_stop.stopRequested())
                return false;
            trainer.trainStep(false);
        }
        m_current = trainer.policy();
        m_current->eval();
        return true;
    }

    const Task& task() const { return *m_model.task; }
    const ModelSpec& spec() const { return m_model.checkpoint.info.spec; }
    int64_t labels() const { return m_labels; }
    int64_t decisive() const { return int64_t(m_winners.size()); }
    double seconds() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }

private:
    const LabelStudyConfig& m_config;
    OpenedModel m_model;
    const StopToken& m_stop;
    Clock::time_point m_start;
    Denoiser m_base;      ///< the reference's weights, never trained: each round's fine-tuning starts here
    Denoiser m_reference; ///< its frozen copy, against which margins are measured
    Denoiser m_current;   ///< the latest fine-tuned model (the reference before any label)
    std::vector<std::string> m_winners, m_losers;
    int64_t m_labels = 0;
};

} // namespace

Result<LabelStudyRun> runLabelStudy(const LabelStudyConfig& config, const std::string& device, const StopToken& stop,
                                    const std::function<void(const LabelStudyRound&)>& onRound)
{
    if (Status s = validate(config); !s)
        return makeError(s.error());
    auto opened = openModel(config.referenceCheckpoint, device, config.rule);
    if (!opened)
        return makeError(opened.error());
    if (!opened->task->rule())
        return makeError("the model's task has no rule for the simulated labeler: name one with --rule");
    try {
        Study study(config, std::move(opened.value()), stop);
        LabelStudyRun run;
        run.selection = config.selection;
        run.seed = config.seed;
        const auto record = [&](const SampleMetrics& metrics, double meanAbsMargin) {
            LabelStudyRound round{study.labels(), study.decisive(), metrics.valueOr0(metrics.ruleMetric), metrics.vsr(),
                                  meanAbsMargin, study.seconds()};
            run.ruleMetric = metrics.ruleMetric;
            run.rounds.push_back(round);
            if (onRound)
                onRound(round);
            if (!run.labelsToGoal && round.ruleShare >= config.goal)
                run.labelsToGoal = round.labels;
        };
        record(study.measure(), 0);
        // Every run spends the whole budget (after the goal too), so that the curves and their areas
        // compare over the same labels.
        for (int round = 1; study.labels() < config.maxLabels; ++round) {
            if (stop.stopRequested())
                return makeError("stopped");
            std::vector<ShownPair> candidates = study.candidates(round);
            if (candidates.empty())
                break; // the model draws one sequence only: no pair to ask about
            const size_t take = size_t(std::min<int64_t>(
                {config.labelsPerRound, config.maxLabels - study.labels(), int64_t(candidates.size())}));
            // Least sure (surest): every candidate scored, the smallest (largest) |margin| taken. Random:
            // the draw's order, only the taken ones scored (for the table's mean |margin|).
            std::vector<ShownPair> chosen;
            std::vector<double> chosenMargins;
            if (config.selection != PairSelection::Random) {
                const std::vector<double> margins = study.margins(candidates, round);
                std::vector<size_t> order = leastSureFirst(margins, config.seed * 17 + uint64_t(round));
                if (config.selection == PairSelection::Surest)
                    std::reverse(order.begin(), order.end());
                for (size_t index : order) {
                    if (chosen.size() == take)
                        break;
                    chosen.push_back(candidates[index]);
                    chosenMargins.push_back(margins[index]);
                }
            } else {
                chosen.assign(candidates.begin(), candidates.begin() + std::ptrdiff_t(take));
                chosenMargins = study.margins(chosen, round);
            }
            const double meanAbsMargin = study.label(chosen, chosenMargins);
            if (!study.train())
                return makeError("stopped");
            record(study.measure(), meanAbsMargin);
        }
        return run;
    } catch (const EvaluationStopped&) {
        return makeError("stopped");
    } catch (const std::exception& e) {
        return makeError("the label study failed: " + userMessage(e));
    }
}

namespace {

double mean(const std::vector<double>& v) { return moments(v).mean; }
/// 0 without a spread to measure (fewer than two values).
double sampleSd(const std::vector<double>& v) { return v.size() < 2 ? 0 : moments(v).sd; }

} // namespace

std::vector<LabelStudyRow> summarizeLabelStudy(const std::vector<LabelStudyRun>& runs)
{
    std::vector<LabelStudyRow> rows;
    for (PairSelection selection : {PairSelection::Random, PairSelection::LeastSure, PairSelection::Surest}) {
        LabelStudyRow row;
        row.selection = selection;
        std::vector<double> toGoal, finalRule, finalVsr, seconds, margins, areas;
        int64_t labels = 0, decisive = 0;
        for (const LabelStudyRun& run : runs) {
            if (run.selection != selection || run.rounds.empty())
                continue;
            ++row.seeds;
            if (run.labelsToGoal) {
                ++row.reachedGoal;
                toGoal.push_back(double(*run.labelsToGoal));
            }
            const LabelStudyRound& last = run.rounds.back();
            finalRule.push_back(last.ruleShare);
            finalVsr.push_back(last.vsr);
            seconds.push_back(last.seconds);
            labels += last.labels;
            decisive += last.decisive;
            double area = 0;
            for (size_t i = 1; i < run.rounds.size(); ++i) {
                margins.push_back(run.rounds[i].meanAbsMargin);
                area += run.rounds[i].ruleShare;
            }
            if (run.rounds.size() > 1)
                areas.push_back(area / double(run.rounds.size() - 1));
        }
        if (row.seeds == 0)
            continue;
        row.labelsToGoal = mean(toGoal);
        row.labelsToGoalSd = sampleSd(toGoal);
        std::sort(toGoal.begin(), toGoal.end());
        row.medianLabelsToGoal = toGoal.empty() ? std::nan("")
                                 : toGoal.size() % 2 ? toGoal[toGoal.size() / 2]
                                                     : (toGoal[toGoal.size() / 2 - 1] + toGoal[toGoal.size() / 2]) / 2;
        row.decisiveShare = labels > 0 ? double(decisive) / double(labels) : std::nan("");
        row.meanAbsMargin = mean(margins);
        row.meanRule = mean(areas);
        row.meanRuleSd = sampleSd(areas);
        row.finalRule = mean(finalRule);
        row.finalVsr = mean(finalVsr);
        row.seconds = mean(seconds);
        rows.push_back(row);
    }
    return rows;
}

std::string labelStudyTable(const std::vector<LabelStudyRow>& rows, double goal, int64_t maxLabels)
{
    std::string out = "| pairs | seeds at rule share " + fixed(goal, 2) + " | labels needed (mean ± sd) | median | "
                      "rule share over the rounds (mean ± sd) | decisive labels | mean abs margin of the chosen | "
                      "rule share at the end (" + std::to_string(maxLabels) + " labels unless said) | VSR there | "
                      "s per run |\n"
                      "|---|---|---|---|---|---|---|---|---|---|\n";
    for (const LabelStudyRow& r : rows)
        out += std::string("| ") + toString(r.selection) + " | " + std::to_string(r.reachedGoal) + "/" +
               std::to_string(r.seeds) + " | " +
               (r.reachedGoal ? fixed(r.labelsToGoal, 0) + " ± " + fixed(r.labelsToGoalSd, 0)
                              : "not within " + std::to_string(maxLabels)) +
               " | " + fixed(r.medianLabelsToGoal, 0) + " | " + fixed(r.meanRule, 3) + " ± " + fixed(r.meanRuleSd, 3) +
               " | " + fixed(r.decisiveShare, 3) + " | " +
               fixed(r.meanAbsMargin, 4) + " | " + fixed(r.finalRule, 3) + " | " + fixed(r.finalVsr, 3) + " | " +
               fixed(r.seconds, 0) + " |\n";
    return out;
}

std::string labelStudyCsv(const std::vector<LabelStudyRun>& runs)
{
    std::string out = "selection,seed,labels,decisive,rule_share,vsr,mean_abs_margin,seconds\n";
    for (const LabelStudyRun& run : runs)
        for (const LabelStudyRound& r : run.rounds)
            out += std::string(toString(run.selection)) + "," + std::to_string(run.seed) + "," +
                   std::to_string(r.labels) + "," + std::to_string(r.decisive) + "," + fixed(r.ruleShare, 6) + "," +
                   fixed(r.vsr, 6) + "," + fixed(r.meanAbsMargin, 6) + "," + fixed(r.seconds, 3) + "\n";
    return out;
}

LabelStudyCurve labelStudyCurve(const std::vector<LabelStudyRun>& runs, PairSelection selection)
{
    size_t rounds = 0;
    for (const LabelStudyRun& run : runs)
        if (run.selection == selection)
            rounds = std::max(rounds, run.rounds.size());
    LabelStudyCurve curve;
    for (size_t i = 0; i < rounds; ++i) {
        std::vector<double> share, labels;
        for (const LabelStudyRun& run : runs)
            if (run.selection == selection && i < run.rounds.size()) {
                share.push_back(run.rounds[i].ruleShare);
                labels.push_back(double(run.rounds[i].labels));
            }
        curve.labels.push_back(mean(labels));
        curve.mean.push_back(mean(share));
        curve.spread.push_back(sampleSd(share));
    }
    return curve;
}

} // namespace d2dpo
