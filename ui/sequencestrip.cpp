// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/sequencestrip.h"

#include <QPainter>
#include <QPaintEvent>

#include <algorithm>
#include <cmath>

namespace d2dpo::ui {

namespace {
constexpr double kMinCell = 8;
constexpr int kMaxPerRow = 32;
constexpr int kTickHeight = 14;
constexpr int kRowGap = 6;
} // namespace

SequenceStrip::SequenceStrip(QWidget* parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void SequenceStrip::setMaxCell(double pixels)
{
    if (qFuzzyCompare(pixels, m_maxCell))
        return;
    m_maxCell = std::max(16.0, pixels);
    setFixedHeight(stripHeight());
    updateGeometry();
    update();
}

void SequenceStrip::setTokens(const QString& tokens)
{
    m_tokens = tokens;
    setAccessibleDescription(tokens); // a screen reader reads the symbols the cells show
    setFixedHeight(stripHeight());
    updateGeometry();
    update();
}

void SequenceStrip::setAlphabet(const QString& alphabet)
{
    m_alphabet = alphabet;
    update();
}

QColor SequenceStrip::colourOf(QChar symbol, const QString& alphabet)
{
    if (symbol == QLatin1Char('_'))
        return QColor(0xc8, 0xc8, 0xc8);
    if (symbol == QLatin1Char('.'))
        return QColor(0xfa, 0xfa, 0xfa);
    const char c = symbol.toLatin1();
    if (alphabet == QLatin1String("binary"))
        return c == '0' ? QColor(0xee, 0xf1, 0xf5) : c == '1' ? QColor(0x1d, 0x4e, 0x89) : QColor(Qt::red);
    if (alphabet == QLatin1String("dna") || alphabet == QLatin1String("rna")) {
        switch (c) { // the colours nucleotide viewers use
        case 'A': return QColor(0x64, 0xc8, 0x64);
        case 'C': return QColor(0x64, 0x96, 0xf0);
        case 'G': return QColor(0xf5, 0xb0, 0x41);
        case 'T':
        case 'U': return QColor(0xf0, 0x6e, 0x6e);
        default: return QColor(0xdd, 0xdd, 0xdd);
        }
    }
    if (alphabet == QLatin1String("protein")) {
        // By chemical class, after Clustal X's scheme (the colours Jalview users know).
        if (QByteArrayLiteral("AILMFWV").contains(c))
            return QColor(0x80, 0xa0, 0xf0); // hydrophobic
        if (QByteArrayLiteral("KR").contains(c))
            return QColor(0xf0, 0x50, 0x50); // positive
        if (QByteArrayLiteral("DE").contains(c))
            return QColor(0xc0, 0x48, 0xc0); // negative
        if (QByteArrayLiteral("STNQ").contains(c))
            return QColor(0x40, 0xc0, 0x40); // polar
        if (c == 'C')
            return QColor(0xf0, 0x80, 0x80); // cysteine
        if (c == 'G')
            return QColor(0xf0, 0x90, 0x48); // glycine
        if (c == 'P')
            return QColor(0xc0, 0xc0, 0x00); // proline
        if (QByteArrayLiteral("HY").contains(c))
            return QColor(0x15, 0xa4, 0xa4); // aromatic
        return QColor(0xdd, 0xdd, 0xdd);     // X and the rest
    }
    return QColor(0xf4, 0xf1, 0xe8); // text: paper, the letter says it all
}

SequenceStrip::Layout SequenceStrip::layoutFor(int width) const
{
    // Rows follow from the length alone (so the height is known before the width is): at most
    // kMaxPerRow cells a row, positions spread evenly over the rows.
    Layout layout;
    const int n = std::max<int>(1, int(m_tokens.size()));
    layout.rows = rowsFor(n);
    layout.perRow = (n + layout.rows - 1) / layout.rows;
    layout.cell = std::min(m_maxCell, double(std::max(1, width)) / layout.perRow);
    return layout;
}

int SequenceStrip::rowsFor(int length) { return std::max(1, (length + kMaxPerRow - 1) / kMaxPerRow); }

int SequenceStrip::stripHeight() const
{
    const int rows = rowsFor(std::max<int>(1, int(m_tokens.size())));
    return rows * (int(m_maxCell) + kTickHeight) + (rows - 1) * kRowGap;
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
        const int cellHeight = int(m_maxCell);
        const double y = row * (cellHeight + kTickHeight + kRowGap);
        const QRectF cell(x + gap / 2, y, layout.cell - gap, cellHeight);
        painter.fillRect(cell, colourOf(m_tokens[i], m_alphabet));
        if (m_tokens[i] == QLatin1Char('.'))
            painter.fillRect(cell, QBrush(QColor(0, 0, 0, 30), Qt::BDiagPattern));
        painter.setPen(QColor(0, 0, 0, 40));
        painter.drawRect(cell);
        if (m_tokens[i] != QLatin1Char('.') && layout.cell >= 10) {
            QFont letter = font();
            letter.setBold(true);
            letter.setPixelSize(int(std::clamp(layout.cell * 0.55, 8.0, 40.0)));
            painter.setFont(letter);
            // Ink that contrasts with the fill: light on dark cells, dark on light ones.
            const QColor fill = colourOf(m_tokens[i], m_alphabet);
            painter.setPen(fill.lightnessF() < 0.5 ? QColor(0xf4, 0xf4, 0xf4) : QColor(0x20, 0x20, 0x20));
            painter.drawText(cell, Qt::AlignCenter, QString(m_tokens[i]));
            painter.setFont(tickFont);
        }
        // Position marks: every position when cells are wide, else every 8th.
        const bool mark = layout.cell >= 28 || i % 8 == 0;
        if (mark) {
            painter.setPen(palette().text().color());
            painter.drawText(QRectF(x, y + cellHeight, std::max(layout.cell, 24.0), kTickHeight),
                             Qt::AlignLeft | Qt::AlignVCenter, QString::number(i + 1));
        }
    }
}

} // namespace d2dpo::ui
