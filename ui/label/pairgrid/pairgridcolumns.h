// SPDX-License-Identifier: GPL-3.0-or-later
// What the pair grid draws, before any geometry: the two sequences as columns of one grid (column
// by column, or aligned with gaps '-' when asked and their lengths differ), which columns differ,
// which cells lie in a match of the rule's motif, and each side's own residue number per column
// (the numbers part once gaps are inserted). Built once per pair, so painting only looks things up.
#pragma once

#include <QString>

#include <utility>
#include <vector>

namespace d2dpo::ui {

enum class PairSide { Left, Right };

struct PairColumns {
    static constexpr QChar kGap = QLatin1Char('-');

    QString left;  ///< one symbol per column; '-' a gap; a column past the shorter side's end is ' '
    QString right; ///< as long as left
    std::vector<bool> differs;   ///< per column: the two symbols differ (a gap or a missing cell too)
    std::vector<bool> leftMotif; ///< per column: the left symbol lies in a match of the motif
    std::vector<bool> rightMotif;
    /// Per column, the 1-based number of the side's residue there; at a gap or past the end, the
    /// number the next residue will have.
    std::vector<int> leftNumber;
    std::vector<int> rightNumber;
    int differences = 0;
    int gaps = 0;         ///< gap cells over both sides
    bool aligned = false; ///< the columns come from an alignment

    int size() const { return int(left.size()); }
    const QString& symbols(PairSide side) const { return side == PairSide::Left ? left : right; }
    const std::vector<bool>& motif(PairSide side) const { return side == PairSide::Left ? leftMotif : rightMotif; }
    const std::vector<int>& numbers(PairSide side) const { return side == PairSide::Left ? leftNumber : rightNumber; }
    /// "12 differences over 150 positions", "3 differences over 152 aligned columns (4 gaps)".
    QString summary() const;
};

using MotifSpans = std::vector<std::pair<int, int>>; ///< [begin, end) in a sequence's own characters

/// Column by column: position i of each side in column i.
PairColumns columnsOf(const QString& left, const QString& right, const MotifSpans& leftMotif = {},
                      const MotifSpans& rightMotif = {});
/// From an alignment's two rows (equal lengths, '-' for a gap): the spans are still about the
/// sequences without gaps.
PairColumns alignedColumnsOf(const QString& leftRow, const QString& rightRow, const MotifSpans& leftMotif = {},
                             const MotifSpans& rightMotif = {});

} // namespace d2dpo::ui
