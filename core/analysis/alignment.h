// SPDX-License-Identifier: GPL-3.0-or-later
// A global pairwise alignment of two sequences with affine gaps (Gotoh), for the pair view at
// protein lengths: the two gapped strings, the score, the identity and a column map a viewer draws.
// The dynamic programme and its traceback are parasail's (Daily 2016; Debian's libparasail-dev),
// a vectorised, well-kept C library already checked against EMBOSS by its author: a 1000 x 1000
// protein alignment with traceback takes about a millisecond. The scores are ours (below), handed
// to parasail as a matrix over the characters the two sequences use, so the score this file
// recomputes from a gapped pair (AlignmentScoring::score) is the one parasail optimised.
//
// Scoring, by alphabet (TaskInfo::alphabet()):
//   protein    BLOSUM62; a symbol outside BLOSUM62's (U, O) scores as X. Gap open 10, extend 1.
//   dna, rna   +5 for a match, -4 for a mismatch (EMBOSS's EDNAFULL on A/C/G/T). Open 10, extend 1.
//   otherwise  +1 / -1 (binary, words). Open 10, extend 1 would forbid every gap there, so 2 and 1.
// A gap of length L costs open + (L - 1) x extend (EMBOSS's and parasail's convention: needle's
// "gapopen 10, gapextend 0.5" is the same form; we keep integer penalties). Unlike needle's
// default, gaps at the ends cost as much as inside (a true Needleman-Wunsch global alignment):
// two samples of one task start at position 1 together, so an overhang is a real difference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace d2dpo {

/// How an alignment is scored: a substitution score per pair of characters and affine gaps.
struct AlignmentScoring {
    enum class Matrix { Blosum62, Nucleotide, MatchMismatch };
    Matrix matrix = Matrix::MatchMismatch;
    int gapOpen = 2;   ///< the cost of a gap's first position
    int gapExtend = 1; ///< the cost of each further position of the same gap

    /// The scoring used for sequences of `alphabet` ("protein", "dna", "rna", anything else).
    static AlignmentScoring forAlphabet(const std::string& alphabet);
    /// "BLOSUM62, gap open 10, extend 1" for people and figure captions.
    std::string describe() const;
    /// The score of aligning `a` with `b` (symmetric).
    int substitution(char a, char b) const;
    /// The score of a gapped pair of equal length ('-' a gap; a column of two gaps is refused by
    /// throwing std::invalid_argument, as are unequal lengths): what the test recomputes.
    int score(const std::string& gappedFirst, const std::string& gappedSecond) const;
};

struct Alignment {
    std::string first;  ///< the first sequence with '-' for each gap
    std::string second; ///< the second, the same length as `first`
    int score = 0;
    int64_t identical = 0; ///< columns with the same symbol in both
    int64_t aligned = 0;   ///< columns with a symbol in both (no gap)
    /// Per column, the 0-based position of each sequence's symbol there, -1 for a gap: the map a
    /// viewer needs to mark a column's positions in the ungapped sequences.
    std::vector<int> firstPositions;
    std::vector<int> secondPositions;

    /// identical / aligned columns (EMBOSS's "Similarity" denominators differ; this is the share
    /// of the positions compared that agree); 0 when no column is aligned.
    double identity() const { return aligned > 0 ? double(identical) / double(aligned) : 0.0; }
    int64_t columns() const { return int64_t(first.size()); }
    int64_t gaps() const { return columns() - aligned; }
};

/// `text` without the pads ('.') at its end: what an alignment compares.
std::string withoutTrailingPads(const std::string& text);

/// The optimal global alignment of `first` and `second` (trailing pads dropped first) under
/// `scoring`. An error only when the aligner cannot run (out of memory); empty sequences align
/// as all gaps.
Result<Alignment> alignGlobal(const std::string& first, const std::string& second, const AlignmentScoring& scoring);

/// alignGlobal() with the scoring of `alphabet`.
Result<Alignment> alignGlobal(const std::string& first, const std::string& second, const std::string& alphabet);

} // namespace d2dpo
