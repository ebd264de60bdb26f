// SPDX-License-Identifier: GPL-3.0-or-later
// What a set of sequences looks like position by position: the symbol counts at each position,
// the conservation (Shannon entropy, in bits) and the information content a sequence logo draws,
// and the composition per symbol over all positions. The sequences are the task's text: symbols,
// then pads ('.') at the end or nothing (format() leaves trailing pads out); position p of every
// sequence is compared with position p of every other, as the task's grid lays them out (no
// alignment: the model writes position p as position p).
//
// Information content, after WebLogo (Schneider et al. 1986; Crooks et al. 2004):
//   R(p) = log2 K - (H(p) + e(n)),  H(p) = -sum_s f(s, p) log2 f(s, p),  e(n) = (K - 1) / (2 ln 2 n)
// where K is the number of symbols, f the frequencies among the n sequences with a symbol at p
// (pads excluded) and e(n) the small-sample correction: the entropy a sample of n underestimates
// by, to first order (Miller-Madow). R is clamped to [0, log2 K]: with few sequences a column of
// random symbols would otherwise show negative information. A logo's letter is f x R bits tall.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace d2dpo {

struct PositionProfile {
    std::string symbols;   ///< the K symbols counted, in column order (the pad is not one)
    int64_t sequences = 0; ///< how many sequences were profiled
    /// counts[p * K + k]: sequences with symbols[k] at position p (0-based).
    std::vector<int64_t> counts;
    /// Per position: sequences that hold a character that is not a symbol there (neither counted
    /// nor ended: a mask or a foreign letter).
    std::vector<int64_t> others;
    std::vector<double> ended;       ///< per position: share of the sequences already ended (pads)
    std::vector<double> entropy;     ///< per position: H in bits over the counted symbols (0 when none)
    std::vector<double> correction;  ///< per position: e(n) in bits (0 when n is 0)
    std::vector<double> information; ///< per position: R in bits, clamped to [0, log2 K]

    int64_t length() const { return int64_t(entropy.size()); }
    int64_t symbolCount() const { return int64_t(symbols.size()); }
    int64_t count(int64_t position, int64_t symbol) const { return counts[size_t(position * symbolCount() + symbol)]; }
    /// n at `position`: the sequences with a symbol (of `symbols`) there.
    int64_t residues(int64_t position) const;
    /// f(symbol, position); 0 when no sequence has a symbol there.
    double frequency(int64_t position, int64_t symbol) const;
    /// log2 K: the most information a position can hold.
    double maxBits() const;
    /// The share of each symbol over all positions of all sequences (pads and others excluded).
    std::vector<double> composition() const;
};

/// Shannon entropy in bits of `counts` (zeros skipped); 0 for no counts.
double entropyBits(const std::vector<int64_t>& counts);
/// WebLogo's small-sample correction e(n) = (K - 1) / (2 ln 2 n) in bits; 0 when n is 0.
double smallSampleCorrection(int64_t symbols, int64_t n);

/// Profiles `sequences` over `symbols` at `length` positions (at least the longest sequence
/// without its trailing pads; 0 takes the longest). Positions past a sequence's end count it as
/// ended there.
PositionProfile profilePositions(const std::vector<std::string>& sequences, const std::string& symbols,
                                 int64_t length = 0);

} // namespace d2dpo
