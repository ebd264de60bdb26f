// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/sequencestrip.h"

#include <QPainter>
#include <QPaintEvent>

#include <algorithm>
#include <cmath>

namespace d2dpo::ui {

namespace {
constexpr double kMaxCell = 44;
constexpr double kMinCell = 8;
constexpr int kMaxPerRow = 32;
constexpr int kCellHeight = 44;
constexpr int kTickHeight = 14;
constexpr int kRowGap = 6;
} // namespace

SequenceStrip::SequenceStrip(QWidget* parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void SequenceStrip::setTokens(const QString& tokens)
{
    m_tokens = tokens;
    setFixedHeight(stripHeight());
    updateGeometry();
    update();
}

QColor SequenceStrip::colourOf(QChar token)
{
    // Two-token tasks read as ink on paper; further tokens get distinct, colour-blind-safe hues.
    static const QColor palette[] = {QColor(0xee, 0xf1, 0xf5), QColor(0x1d, 0x4e, 0x89), QColor(0xe6, 0x9f, 0x00),
                                     QColor(0x00, 0x9e, 0x73), QColor(0xcc, 0x79, 0xa7), QColor(0x56, 0xb4, 0xe9),
                                     QColor(0xd5, 0x5e, 0x00), QColor(0xf0, 0xe4, 0x42), QColor(0x7f, 0x7f, 0x7f),
                                     QColor(0x33, 0x33, 0x33)};
    if (token == QLatin1Char('_'))
        return QColor(0xc8, 0xc8, 0xc8);
    const int index = token.digitValue();
    return index >= 0 && index < 10 ? palette[index] : QColor(Qt::red);
}

SequenceStrip::Layout SequenceStrip::layoutFor(int width) const
{
    // Rows follow from the length alone (so the height is known before the width is): at most
    // kMaxPerRow cells a row, positions spread evenly over the rows.
    Layout layout;
    const int n = std::max<int>(1, int(m_tokens.size()));
    layout.rows = rowsFor(n);
    layout.perRow = (n + layout.rows - 1) / layout.rows;
    layout.cell = std::min(kMaxCell, double(std::max(1, width)) / layout.perRow);
    return layout;
}

int SequenceStrip::rowsFor(int length) { return std::max(1, (length + kMaxPerRow - 1) / kMaxPerRow); }

int SequenceStrip::stripHeight() const
{
    const int rows = rowsFor(std::max<int>(1, int(m_tokens.size())));
    return rows * (kCellHeight + kTickHeight) + (rows - 1) * kRowGap;
}

QSize SequenceStrip::sizeHint() const
{
    const int perRow = layoutFor(1).perRow;
    return {int(perRow * 30), stripHeight()};
}

QSize SequenceStrip::minimumSizeHint() const { return {int(layoutFor(1).perRow * kMinCell), stripHeight()}; }

void SequenceStrip::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, false);
    if (m_tokens.isEmpty()) {
        painter.setPen(QPen(palette().mid().color(), 1, Qt::DashLine));
        painter.drawRect(rect().adjusted(0, 0, -1, -1));
        return;
    }
    const Layout layout = layoutFor(width());
    const double offset = std::max(0.0, (width() - layout.perRow * layout.cell) / 2); // centre the cells
    const double gap = layout.cell >= 16 ? 2 : 1;
    QFont tickFont = font();
    tickFont.setPointSizeF(std::max(6.5, tickFont.pointSizeF() * 0.75));
    painter.setFont(tickFont);
    for (int i = 0; i < m_tokens.size(); ++i) {
        const int row = i / layout.perRow;
        const int column = i % layout.perRow;
        const double x = offset + column * layout.cell;
        const double y = row * (kCellHeight + kTickHeight + kRowGap);
        const QRectF cell(x + gap / 2, y, layout.cell - gap, kCellHeight);
        painter.fillRect(cell, colourOf(m_tokens[i]));
        painter.setPen(QColor(0, 0, 0, 40));
        painter.drawRect(cell);
        // Position marks: every position when cells are wide, else every 8th.
        const bool mark = layout.cell >= 28 || i % 8 == 0;
        if (mark) {
            painter.setPen(palette().text().color());
            painter.drawText(QRectF(x, y + kCellHeight, std::max(layout.cell, 24.0), kTickHeight),
                             Qt::AlignLeft | Qt::AlignVCenter, QString::number(i + 1));
        }
    }
}

} // namespace d2dpo::ui
