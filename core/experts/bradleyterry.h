// SPDX-License-Identifier: GPL-3.0-or-later
// Bradley-Terry strengths from pairwise games: P(i beats j) = p_i / (p_i + p_j), fitted by
// Hunter's (2004) minorisation-maximisation iterations. A tie is half a win to each side, as the
// arena leaderboards count them. A game of weight 0.01 tied between every two models that met
// keeps the fit finite when one model wins every game (the hand-solvable cases move by < 0.001).
#pragma once

#include <cstdint>
#include <vector>

namespace d2dpo {

struct Game {
    int first = 0;      ///< model index
    int second = 0;
    double score = 0.5; ///< for the first: 1 a win, 0.5 a tie, 0 a loss
};

/// log p_i for `models` models, centred on 0; a model in no game gets 0.
std::vector<double> fitBradleyTerry(int models, const std::vector<Game>& games);

/// P(i beats j) from two log-strengths.
double winProbability(double logStrengthI, double logStrengthJ);

} // namespace d2dpo
