// SPDX-License-Identifier: GPL-3.0-or-later
#include "experts/bradleyterry.h"

#include <cmath>

namespace d2dpo {

namespace {
constexpr double kTiePrior = 0.01;
constexpr int kMaxIterations = 10'000;
constexpr double kTolerance = 1e-10;
} // namespace

std::vector<double> fitBradleyTerry(int models, const std::vector<Game>& games)
{
    const size_t n = size_t(std::max(models, 0));
    std::vector<double> wins(n, 0);
    std::vector<std::vector<double>> met(n, std::vector<double>(n, 0)); // games between i and j
    for (const Game& g : games) {
        if (g.first < 0 || g.second < 0 || size_t(g.first) >= n || size_t(g.second) >= n || g.first == g.second)
            continue;
        wins[size_t(g.first)] += g.score;
        wins[size_t(g.second)] += 1 - g.score;
        met[size_t(g.first)][size_t(g.second)] += 1;
        met[size_t(g.second)][size_t(g.first)] += 1;
    }
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
            if (i != j && met[i][j] > 0) {
                met[i][j] += kTiePrior;
                wins[i] += kTiePrior / 2;
            }
    std::vector<double> strength(n, 1.0);
    for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
        double change = 0;
        std::vector<double> next(n, 1.0);
        for (size_t i = 0; i < n; ++i) {
            double denominator = 0;
            for (size_t j = 0; j < n; ++j)
                if (j != i && met[i][j] > 0)
                    denominator += met[i][j] / (strength[i] + strength[j]);
            next[i] = denominator > 0 ? wins[i] / denominator : strength[i];
        }
        // Only ratios are identified: keep the geometric mean of the models that played at 1.
        double logMean = 0;
        int played = 0;
        for (size_t i = 0; i < n; ++i)
            if (wins[i] > 0) {
                logMean += std::log(next[i]);
                ++played;
            }
        logMean = played ? logMean / played : 0;
        for (size_t i = 0; i < n; ++i) {
            next[i] = wins[i] > 0 ? next[i] / std::exp(logMean) : 1.0;
            change = std::max(change, std::abs(std::log(next[i]) - std::log(strength[i])));
        }
        strength = std::move(next);
        if (change < kTolerance)
            break;
    }
    std::vector<double> logStrength(n);
    for (size_t i = 0; i < n; ++i)
        logStrength[i] = std::log(strength[i]);
    return logStrength;
}

double winProbability(double logStrengthI, double logStrengthJ)
{
    return 1 / (1 + std::exp(logStrengthJ - logStrengthI));
}

} // namespace d2dpo
