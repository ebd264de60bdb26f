// SPDX-License-Identifier: GPL-3.0-or-later
// Where the pair grid puts each cell. Long sequences go in rows of whole blocks of 10 columns (as
// many blocks as fit at a readable cell size), so every row starts at a multiple of 10; short ones
// (up to 32 symbols, when they fit) in one row of big cells. Each row band holds the left
// sequence's row, a thin marker row for the differences and the right sequence's row, so a column
// is the same position on both sides. A gutter at each row's start holds the position numbers.
// The columns never depend on the height, so the widget's height follows from its width alone.
#pragma once

#include <QRect>

#include "ui/label/pairgrid/pairgridcolumns.h"

namespace d2dpo::ui {

struct PairGridGeometry {
    static constexpr int kBlock = 10;

    int columns = 0;     ///< how many columns the pair has
    int perRow = 1;      ///< columns a row: whole blocks of 10, or all of a short pair
    int bands = 0;       ///< row bands
    int cell = 0;        ///< a cell's side in pixels (cells are square)
    int blockGap = 0;    ///< the space between two blocks of 10 in a row
    int gutter = 0;      ///< the width of the position numbers at a row's start
    int marker = 0;      ///< the height of the differences row between the two sides
    int bandGap = 0;     ///< the space between two bands
    int left = 0;        ///< where the gutter starts (the grid is centred)

    /// `width` the pixels there are, `maxCell` the largest cell the view allows, `gutter` the
    /// width the position numbers need.
    static PairGridGeometry fit(int columns, int width, int maxCell, int gutter);

    int bandHeight() const { return 2 * cell + marker; }
    int bandTop(int band) const { return band * (bandHeight() + bandGap); }
    int height() const { return bands == 0 ? 0 : bandTop(bands) - bandGap; }
    int width() const;
    int bandOf(int column) const { return column / perRow; }
    /// The band whose area (with the gap below it) holds a y; clamped to the bands there are.
    int bandAt(int y) const;
    /// A cell of one side, in the grid's coordinates (unscrolled).
    QRect cellRect(PairSide side, int column) const;
    /// The differences marker of a column, between the two cells.
    QRect markerRect(int column) const;
    /// The gutter beside one side's row of a band.
    QRect gutterRect(PairSide side, int band) const;
};

} // namespace d2dpo::ui
