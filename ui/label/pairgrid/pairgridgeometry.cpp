// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/pairgrid/pairgridgeometry.h"

#include <algorithm>

namespace d2dpo::ui {

namespace {
constexpr int kShort = 32;      // a pair this short stays in one row while its cells stay readable
constexpr int kReadable = 16;   // the smallest cell a letter reads well in
constexpr int kComfortable = 28; // the largest cell worth a row's fewer blocks
} // namespace

PairGridGeometry PairGridGeometry::fit(int columns, int width, int maxCell, int gutter)
{
    PairGridGeometry g;
    g.columns = columns;
    g.gutter = gutter;
    const int room = std::max(1, width - gutter);
    if (columns <= 0) {
        g.bands = 0;
        return g;
    }
    if (columns <= kShort && room / columns >= kReadable) {
        // One row: a binary integer or a word reads best whole, in big cells.
        g.perRow = columns;
        g.cell = std::min(maxCell, room / columns);
    } else {
        // Blocks of 10: the most whole blocks a row at a comfortable cell (bigger on bigger
        // windows), never more blocks than the pair fills.
        g.blockGap = 6;
        const int comfortable = std::clamp(maxCell * 2 / 5, kReadable, kComfortable);
        const int fit = (room + g.blockGap) / (kBlock * comfortable + g.blockGap);
        const int blocks = std::clamp(fit, 1, (columns + kBlock - 1) / kBlock);
        g.perRow = blocks * kBlock;
        g.cell = std::max(4, std::min(maxCell, (room - (blocks - 1) * g.blockGap) / g.perRow));
    }
    g.bands = (columns + g.perRow - 1) / g.perRow;
    g.marker = std::max(4, g.cell * 3 / 10);
    g.bandGap = std::max(6, g.cell / 2);
    g.left = std::max(0, (width - g.width()) / 2);
    return g;
}

int PairGridGeometry::width() const
{
    const int blocks = (perRow + kBlock - 1) / kBlock;
    return gutter + perRow * cell + (blockGap > 0 ? (blocks - 1) * blockGap : 0);
}

int PairGridGeometry::bandAt(int y) const
{
    if (bands == 0)
        return 0;
    return std::clamp(y / (bandHeight() + bandGap), 0, bands - 1);
}

QRect PairGridGeometry::cellRect(PairSide side, int column) const
{
    const int band = bandOf(column);
    const int inRow = column % perRow;
    const int x = left + gutter + inRow * cell + (blockGap > 0 ? (inRow / kBlock) * blockGap : 0);
    const int y = bandTop(band) + (side == PairSide::Left ? 0 : cell + marker);
    return {x, y, cell, cell};
}

QRect PairGridGeometry::markerRect(int column) const
{
    const QRect above = cellRect(PairSide::Left, column);
    return {above.x(), above.bottom() + 1, cell, marker};
}

QRect PairGridGeometry::gutterRect(PairSide side, int band) const
{
    const int y = bandTop(band) + (side == PairSide::Left ? 0 : cell + marker);
    return {left, y, gutter, cell};
}

} // namespace d2dpo::ui
