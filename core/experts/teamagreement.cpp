// SPDX-License-Identifier: GPL-3.0-or-later
#include "experts/teamagreement.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace d2dpo {

const char* const kAgreementConventions =
    "A judgement is which of two sequences a labeler preferred, whichever side each was shown on, or a tie, or "
    "both bad: four nominal categories. Skips are no judgement (missing). An item is one showing of a pair of "
    "sequences: the k-th label a labeler gave that pair of sequences (in any pair or import) meets the k-th label "
    "each other labeler gave it. Gold pairs are left out of agreement and measure accuracy instead, where a tie "
    "or both-bad on a gold pair counts as wrong.";

namespace {

enum Category { FirstBetter = 0, SecondBetter = 1, Tie = 2, BothBad = 3 };

/// One pair of sequences, whatever pair id or side it had: the task and the two texts in order.
std::string itemKey(const JudgedLabel& l)
{
    const bool inOrder = l.left < l.right;
    return l.task + '\n' + (inOrder ? l.left : l.right) + '\n' + (inOrder ? l.right : l.left);
}

int categoryOf(const JudgedLabel& l)
{
    if (l.choice == Choice::Tie)
        return Tie;
    if (l.choice == Choice::BothBad)
        return BothBad;
    const std::string& chosen = l.choice == Choice::Left ? l.left : l.right;
    return chosen == std::min(l.left, l.right) ? FirstBetter : SecondBetter;
}

double share(int64_t part, int64_t whole) { return whole > 0 ? double(part) / double(whole) : std::nan(""); }

nlohmann::json number(double value)
{
    return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

nlohmann::json interval(const Interval& i) { return {number(i.low), number(i.high)}; }

} // namespace

TeamAgreement measureAgreement(const std::vector<JudgedLabel>& labels, const std::string& task, int resamples,
                               uint64_t seed)
{
    std::map<std::string, LabelerProfile> profiles;
    std::map<std::string, std::vector<double>> decideTimes;
    std::map<std::string, std::map<std::string, int>> items; // item -> labeler -> category
    std::map<std::pair<std::string, std::string>, int> seen;  // (labeler, pair of sequences) -> judged so far
    for (const JudgedLabel& l : labels) {
        if (!task.empty() && l.task != task)
            continue;
        LabelerProfile& p = profiles[l.labeler];
        p.labeler = l.labeler;
        ++p.labels;
        decideTimes[l.labeler].push_back(double(l.decideMs));
        if (l.choice == Choice::Left || l.choice == Choice::Right) {
            ++p.sided;
            p.leftShare += l.choice == Choice::Left;
        }
        if (l.choice == Choice::Skip)
            continue;
        if (l.purpose == PairPurpose::Gold) {
            ++p.goldJudged;
            p.goldCorrect += l.goldAnswer && *l.goldAnswer == l.choice;
            continue;
        }
        ++p.judged;
        // Labels come oldest first: a labeler's k-th judgement of these two sequences is showing k.
        const std::string key = itemKey(l);
        const int showing = seen[{l.labeler, key}]++;
        items[key + '\n' + std::to_string(showing)][l.labeler] = categoryOf(l);
    }

    TeamAgreement report;
    report.items = int64_t(items.size());
    std::vector<std::vector<int>> units;
    for (const auto& [key, byLabeler] : items)
        if (byLabeler.size() >= 2) {
            std::vector<int> unit;
            for (const auto& [labeler, category] : byLabeler)
                unit.push_back(category);
            units.push_back(std::move(unit));
        }
    report.sharedItems = int64_t(units.size());
    report.alpha = krippendorffAlpha(units);
    report.alphaInterval = bootstrapInterval(int64_t(units.size()), [&](const std::vector<int64_t>& pick) {
        std::vector<std::vector<int>> resampled;
        resampled.reserve(pick.size());
        for (int64_t i : pick)
            resampled.push_back(units[size_t(i)]);
        return krippendorffAlpha(resampled);
    }, resamples, seed);

    // Kappa for each two labelers, over the items both judged.
    for (auto first = profiles.begin(); first != profiles.end(); ++first)
        for (auto second = std::next(first); second != profiles.end(); ++second) {
            std::vector<int> a, b;
            for (const auto& [key, byLabeler] : items) {
                auto x = byLabeler.find(first->first), y = byLabeler.find(second->first);
                if (x != byLabeler.end() && y != byLabeler.end()) {
                    a.push_back(x->second);
                    b.push_back(y->second);
                }
            }
            if (a.empty())
                continue;
            LabelerPairAgreement pair{first->first, second->first, int64_t(a.size()), cohensKappa(a, b), {}};
            pair.interval = bootstrapInterval(int64_t(a.size()), [&](const std::vector<int64_t>& pick) {
                std::vector<int> ra, rb;
                for (int64_t i : pick) {
                    ra.push_back(a[size_t(i)]);
                    rb.push_back(b[size_t(i)]);
                }
                return cohensKappa(ra, rb);
            }, resamples, seed);
            report.pairs.push_back(std::move(pair));
        }

    // Agreement with the majority of the others, where at least two others judged and more than
    // half of them chose one category.
    for (auto& [name, p] : profiles) {
        int64_t agreeing = 0;
        for (const auto& [key, byLabeler] : items) {
            auto mine = byLabeler.find(name);
            if (mine == byLabeler.end() || byLabeler.size() < 3)
                continue;
            std::map<int, int> others;
            for (const auto& [labeler, category] : byLabeler)
                if (labeler != name)
                    ++others[category];
            for (const auto& [category, count] : others)
                if (2 * count > int(byLabeler.size() - 1)) {
                    ++p.majorityItems;
                    agreeing += category == mine->second;
                }
        }
        p.majorityAgreement = share(agreeing, p.majorityItems);
        p.leftShare = share(int64_t(p.leftShare), p.sided);
        p.medianDecideMs = median(decideTimes[name]);
        p.goldAccuracy = share(p.goldCorrect, p.goldJudged);
        report.labelers.push_back(p);
    }
    return report;
}

nlohmann::json toJson(const TeamAgreement& report)
{
    nlohmann::json pairs = nlohmann::json::array(), labelers = nlohmann::json::array();
    for (const LabelerPairAgreement& p : report.pairs)
        pairs.push_back({{"labelers", {p.first, p.second}}, {"shared", p.shared}, {"kappa", number(p.kappa)},
                         {"kappa_95", interval(p.interval)}});
    for (const LabelerProfile& p : report.labelers)
        labelers.push_back({{"labeler", p.labeler}, {"labels", p.labels}, {"judged", p.judged},
                            {"majority_items", p.majorityItems}, {"majority_agreement", number(p.majorityAgreement)},
                            {"sided", p.sided}, {"left_share", number(p.leftShare)},
                            {"median_decide_ms", number(p.medianDecideMs)}, {"gold_judged", p.goldJudged},
                            {"gold_correct", p.goldCorrect}, {"gold_accuracy", number(p.goldAccuracy)}});
    return {{"items", report.items}, {"shared_items", report.sharedItems}, {"alpha", number(report.alpha)},
            {"alpha_95", interval(report.alphaInterval)}, {"cohen_kappa", pairs}, {"labelers", labelers},
            {"conventions", kAgreementConventions}};
}

} // namespace d2dpo
