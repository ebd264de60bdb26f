// SPDX-License-Identifier: GPL-3.0-or-later
#include "experts/comparisonreport.h"

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "experts/bradleyterry.h"

namespace d2dpo {

const char* const kComparisonConventions =
    "Each label of a comparison's pair is one game between the two models whose samples it showed. A pick is a "
    "win; a tie and a both-bad are each half a win to both models (the arena convention); a skip is no game. "
    "Intervals: 95% percentile bootstrap over the games.";

namespace {

nlohmann::json number(double value)
{
    return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

nlohmann::json interval(const Interval& i) { return {number(i.low), number(i.high)}; }

double winRate(const std::vector<Game>& games, const std::vector<int64_t>& pick, int model)
{
    double won = 0, played = 0;
    for (int64_t index : pick) {
        const Game& g = games[size_t(index)];
        if (g.first == model || g.second == model) {
            won += g.first == model ? g.score : 1 - g.score;
            played += 1;
        }
    }
    return played > 0 ? won / played : std::nan("");
}

} // namespace

ComparisonReport measureComparison(const ComparisonRecord& comparison, const std::vector<JudgedLabel>& labels,
                                   int resamples, uint64_t seed)
{
    ComparisonReport report;
    report.comparisonId = comparison.id;
    report.pairs = comparison.pairs;
    const int models = int(comparison.modelIds.size());
    auto indexOf = [&](const std::string& id) {
        for (int i = 0; i < models; ++i)
            if (comparison.modelIds[size_t(i)] == id)
                return i;
        return -1;
    };
    std::vector<Game> games;
    std::vector<int64_t> bothBad;
    for (const JudgedLabel& l : labels) {
        const int left = indexOf(l.leftModelId), right = indexOf(l.rightModelId);
        if (l.comparisonId != comparison.id || left < 0 || right < 0 || left == right)
            continue;
        if (l.choice == Choice::Skip) {
            ++report.skips;
            continue;
        }
        const double score = l.choice == Choice::Left ? 1 : l.choice == Choice::Right ? 0 : 0.5;
        games.push_back({left, right, score});
        bothBad.push_back(l.choice == Choice::BothBad);
    }
    report.games = int64_t(games.size());
    std::vector<int64_t> all(games.size());
    for (size_t i = 0; i < all.size(); ++i)
        all[i] = int64_t(i);
    auto fitOf = [&](const std::vector<int64_t>& pick) {
        std::vector<Game> resampled;
        resampled.reserve(pick.size());
        for (int64_t i : pick)
            resampled.push_back(games[size_t(i)]);
        return fitBradleyTerry(models, resampled);
    };
    const std::vector<double> fit = fitOf(all);
    // One set of resamples for every figure: each resample's fit and win rates, kept as numbers.
    std::vector<std::vector<double>> fits, winRates;
    forEachResample(report.games, resamples, seed, [&](const std::vector<int64_t>& pick) {
        fits.push_back(fitOf(pick));
        std::vector<double> rates;
        for (int i = 0; i < models; ++i)
            rates.push_back(winRate(games, pick, i));
        winRates.push_back(std::move(rates));
    });
    auto intervalOf = [&](const std::function<double(size_t)>& figure) {
        std::vector<double> values;
        for (size_t r = 0; r < fits.size(); ++r)
            values.push_back(figure(r));
        return percentileInterval(std::move(values), resamples);
    };
    for (int i = 0; i < models; ++i) {
        ModelStanding s;
        s.modelId = comparison.modelIds[size_t(i)];
        for (const Game& g : games)
            s.games += g.first == i || g.second == i;
        s.winRate = winRate(games, all, i);
        s.winRateInterval = intervalOf([&](size_t r) { return winRates[r][size_t(i)]; });
        s.score = fit[size_t(i)];
        s.scoreInterval = intervalOf([&](size_t r) { return fits[r][size_t(i)]; });
        report.models.push_back(s);
    }
    for (int i = 0; i < models; ++i)
        for (int j = i + 1; j < models; ++j) {
            HeadToHead h;
            h.first = comparison.modelIds[size_t(i)];
            h.second = comparison.modelIds[size_t(j)];
            for (size_t k = 0; k < games.size(); ++k) {
                const Game& g = games[k];
                if (!((g.first == i && g.second == j) || (g.first == j && g.second == i)))
                    continue;
                const double forI = g.first == i ? g.score : 1 - g.score;
                h.firstWins += forI == 1;
                h.secondWins += forI == 0;
                h.ties += forI == 0.5;
                h.bothBad += bothBad[k];
            }
            h.firstBeatsSecond = winProbability(fit[size_t(i)], fit[size_t(j)]);
            h.interval = intervalOf([&](size_t r) { return winProbability(fits[r][size_t(i)], fits[r][size_t(j)]); });
            report.headToHead.push_back(h);
        }
    return report;
}

nlohmann::json toJson(const ComparisonReport& report)
{
    nlohmann::json models = nlohmann::json::array(), pairs = nlohmann::json::array();
    for (const ModelStanding& s : report.models)
        models.push_back({{"model", s.modelId}, {"games", s.games}, {"win_rate", number(s.winRate)},
                          {"win_rate_95", interval(s.winRateInterval)}, {"bt_score", number(s.score)},
                          {"bt_score_95", interval(s.scoreInterval)}});
    for (const HeadToHead& h : report.headToHead)
        pairs.push_back({{"models", {h.first, h.second}}, {"first_wins", h.firstWins}, {"second_wins", h.secondWins},
                         {"ties", h.ties}, {"both_bad", h.bothBad}, {"p_first_beats_second", number(h.firstBeatsSecond)},
                         {"p_first_beats_second_95", interval(h.interval)}});
    return {{"comparison", report.comparisonId}, {"pairs", report.pairs}, {"games", report.games},
            {"skips", report.skips}, {"models", models}, {"head_to_head", pairs},
            {"conventions", kComparisonConventions}};
}

} // namespace d2dpo
