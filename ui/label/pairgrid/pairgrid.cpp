// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/pairgrid/pairgrid.h"

#include <QPainter>
#include <QPaintEvent>
#include <QScrollBar>
#include <QStyle>

#include <algorithm>

#include "ui/common/symbolcolours.h"

namespace d2dpo::ui {

namespace {
constexpr int kUnlaidWidth = 900; // the width assumed before the layout gives one
constexpr int kMinBands = 2;      // the fewest bands the grid shrinks to before it scrolls

QString sideMark(PairSide side) { return side == PairSide::Left ? QStringLiteral("◀") : QStringLiteral("▶"); }

QFont gutterFont(const QFont& base, int cell)
{
    QFont font = base;
    font.setPixelSize(std::clamp(cell / 2, 10, 15));
    return font;
}

bool isDrawn(QChar c) { return c != QLatin1Char(' '); }
} // namespace

PairGrid::PairGrid(QWidget* parent) : QAbstractScrollArea(parent)
{
    setFrameShape(QFrame::NoFrame);
    setFocusPolicy(Qt::NoFocus); // the Label view takes every key
    viewport()->setFocusPolicy(Qt::NoFocus);
    viewport()->setBackgroundRole(QPalette::Window); // the cells stand on the window, not on a white box
    verticalScrollBar()->setFocusPolicy(Qt::NoFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the rows wrap instead
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    setObjectName(QStringLiteral("pairGrid"));
    setAccessibleName(tr("The pair, left above right in each row band"));
    setColumns({}, m_alphabet);
}

QColor PairGrid::motifColour() { return QColor(0x11, 0x11, 0x11); }
QColor PairGrid::differenceColour() { return QColor(0xd6, 0x27, 0x28); }

void PairGrid::setColumns(PairColumns columns, const QString& alphabet)
{
    m_columns = std::move(columns);
    m_alphabet = alphabet;
    for (int c = 0; c < 128; ++c) {
        m_fill[size_t(c)] = symbolColour(QChar(c), alphabet);
        // Ink that contrasts with the fill: light on dark cells, dark on light ones.
        m_ink[size_t(c)] = m_fill[size_t(c)].lightnessF() < 0.5 ? QColor(0xf4, 0xf4, 0xf4) : QColor(0x20, 0x20, 0x20);
    }
    setAccessibleDescription(tr("Left: %1. Right: %2. %3")
                                 .arg(m_columns.left.trimmed(), m_columns.right.trimmed(), m_columns.summary()));
    verticalScrollBar()->setValue(0); // a new pair starts at its first position
    relayout();
}

void PairGrid::setMaxCell(int pixels)
{
    pixels = std::max(16, pixels);
    if (pixels == m_maxCell)
        return;
    m_maxCell = pixels;
    relayout();
}

PairGridGeometry PairGrid::fitTo(int width) const
{
    // A scroll bar's width is kept free whether it shows or not: the columns never depend on the
    // height, so showing the bar cannot change the rows (and the height) it was shown for.
    const int room = width - style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, this);
    const int cell = m_maxCell;
    const QFontMetrics metrics(gutterFont(font(), cell));
    const int digits = int(QString::number(std::max(1, m_columns.size())).size());
    const int gutter = metrics.horizontalAdvance(sideMark(PairSide::Right) + QStringLiteral(" ") +
                                                 QString(digits, QLatin1Char('8'))) + 8;
    return PairGridGeometry::fit(m_columns.size(), room, cell, gutter);
}

void PairGrid::relayout()
{
    const int before = m_geometry.height();
    m_geometry = geometryNow();
    verticalScrollBar()->setRange(0, std::max(0, m_geometry.height() - viewport()->height()));
    verticalScrollBar()->setPageStep(viewport()->height());
    verticalScrollBar()->setSingleStep(m_geometry.bandHeight() + m_geometry.bandGap);
    if (m_geometry.height() != before)
        updateGeometry(); // the layout gives the grid its new height where there is room
    viewport()->update();
}

void PairGrid::resizeEvent(QResizeEvent* event)
{
    QAbstractScrollArea::resizeEvent(event);
    relayout();
}

QSize PairGrid::sizeHint() const
{
    const PairGridGeometry g = geometryNow();
    return {g.width() + style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, this), std::max(24, g.height() + 2)};
}

QSize PairGrid::minimumSizeHint() const
{
    const PairGridGeometry g = geometryNow();
    const int shortest = g.bands <= kMinBands ? g.height() + 2 : g.bandTop(kMinBands);
    return {240, std::max(24, shortest)};
}

void PairGrid::scrollPages(int pages)
{
    QScrollBar* bar = verticalScrollBar();
    bar->setValue(bar->value() + pages * bar->pageStep());
}

PairGridGeometry PairGrid::geometryNow() const
{
    return fitTo(testAttribute(Qt::WA_Resized) ? width() : kUnlaidWidth);
}

QString PairGrid::rowLabel(PairSide side, int band) const
{
    const int perRow = geometryNow().perRow;
    return rowLabel(side, band * perRow, std::min(m_columns.size(), (band + 1) * perRow));
}

QString PairGrid::rowLabel(PairSide side, int from, int to) const
{
    const QString& symbols = m_columns.symbols(side);
    for (int column = from; column < to; ++column)
        if (symbols[column] != PairColumns::kGap && isDrawn(symbols[column]))
            return QString::number(m_columns.numbers(side)[size_t(from)]);
    return {}; // only gaps, or past the side's end
}

void PairGrid::paintEvent(QPaintEvent* event)
{
    QPainter painter(viewport());
    painter.setRenderHint(QPainter::Antialiasing, false);
    if (m_columns.size() == 0) {
        painter.setPen(QPen(palette().mid().color(), 1, Qt::DashLine));
        painter.drawRect(viewport()->rect().adjusted(0, 0, -1, -1));
        return;
    }
    // Only the bands the dirty rectangle touches: at length 1000 most are out of view.
    const int offset = verticalScrollBar()->value();
    const QRect dirty = event->rect().translated(0, offset);
    const int first = m_geometry.bandAt(dirty.top());
    const int last = m_geometry.bandAt(dirty.bottom());
    for (int band = first; band <= last; ++band)
        paintBand(painter, band, offset);
}

void PairGrid::paintBand(QPainter& painter, int band, int offset) const
{
    const PairGridGeometry& g = m_geometry;
    const int from = band * g.perRow;
    const int to = std::min(m_columns.size(), from + g.perRow);
    painter.setFont(gutterFont(font(), g.cell));
    for (PairSide side : {PairSide::Left, PairSide::Right}) {
        const QRect gutter = g.gutterRect(side, band).translated(0, -offset).adjusted(0, 0, -6, 0);
        painter.setPen(palette().text().color());
        painter.drawText(gutter, Qt::AlignRight | Qt::AlignVCenter,
                         sideMark(side) + QStringLiteral(" ") + rowLabel(side, from, to));
    }
    paintSide(painter, PairSide::Left, from, to, offset);
    paintSide(painter, PairSide::Right, from, to, offset);
    const int gap = g.cell >= 16 ? 2 : 1;
    for (int column = from; column < to; ++column)
        if (m_columns.differs[size_t(column)])
            painter.fillRect(g.markerRect(column).translated(0, -offset).adjusted(gap / 2 + 1, 1, -gap, -1),
                             differenceColour());
}

void PairGrid::paintSide(QPainter& painter, PairSide side, int from, int to, int offset) const
{
    const PairGridGeometry& g = m_geometry;
    const QString& symbols = m_columns.symbols(side);
    const int gap = g.cell >= 16 ? 2 : 1;
    QFont letter = font();
    letter.setBold(true);
    letter.setPixelSize(std::clamp(g.cell * 11 / 20, 8, 40));
    painter.setFont(letter);
    const bool letters = g.cell >= 10;
    for (int column = from; column < to; ++column) {
        const QChar c = symbols[column];
        if (!isDrawn(c))
            continue; // past this side's end
        const QRect cell = g.cellRect(side, column).translated(0, -offset).adjusted(gap / 2, 0, -gap / 2 - 1, -1);
        if (c == PairColumns::kGap) {
            painter.setPen(palette().mid().color());
            painter.drawText(cell, Qt::AlignCenter, QStringLiteral("-"));
            continue;
        }
        const size_t code = c.unicode() < 128 ? c.unicode() : size_t('?');
        painter.fillRect(cell, m_fill[code]);
        if (c == QLatin1Char('.'))
            painter.fillRect(cell, QBrush(QColor(0, 0, 0, 30), Qt::BDiagPattern));
        painter.setPen(QColor(0, 0, 0, 40));
        painter.drawRect(cell);
        if (letters && c != QLatin1Char('.')) {
            painter.setPen(m_ink[code]);
            painter.drawText(cell, Qt::AlignCenter, QString(c));
        }
    }
    // A frame around each run of motif cells in this row.
    const std::vector<bool>& motif = m_columns.motif(side);
    painter.setPen(QPen(motifColour(), g.cell >= 16 ? 2.0 : 1.0));
    painter.setBrush(Qt::NoBrush);
    for (int column = from; column < to;) {
        if (!motif[size_t(column)]) {
            ++column;
            continue;
        }
        int end = column;
        while (end + 1 < to && motif[size_t(end + 1)])
            ++end;
        const QRect run = g.cellRect(side, column).united(g.cellRect(side, end)).translated(0, -offset);
        painter.drawRect(run.adjusted(0, 0, -1, -1));
        column = end + 1;
    }
}

} // namespace d2dpo::ui
