// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/common/sequencelogo.h"

#include <algorithm>
#include <numeric>

#include <QPainter>

#include "ui/common/symbolcolours.h"

namespace d2dpo::ui {

namespace {

// The logo's rows, top to bottom, in pixels.
constexpr int AxisWidth = 44;     // the bits axis and its numbers
constexpr int TitleHeight = 16;   // the set's name
constexpr int StackHeight = 96;   // maxBits bits of letters
constexpr int StripGap = 3;
constexpr int StripHeight = 8;    // the entropy strip
constexpr int NumberHeight = 14;  // position numbers
constexpr int RightMargin = 8;
constexpr double MinGlyphHeight = 0.25; // a letter thinner than this draws nothing a person sees

} // namespace

SequenceLogo::SequenceLogo(QWidget* parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void SequenceLogo::setProfile(const PositionProfile& profile, const QString& alphabet, const QString& title)
{
    m_profile = profile;
    m_alphabet = alphabet;
    m_title = title;
    updateGeometry();
    resize(sizeHint());
    update();
}

void SequenceLogo::setColumnWidth(int pixels)
{
    m_columnWidth = std::clamp(pixels, 8, 40);
    updateGeometry();
    resize(sizeHint());
    update();
}

void SequenceLogo::setMaxBits(double bits)
{
    m_maxBits = std::max(0.0, bits);
    update();
}

QSize SequenceLogo::sizeHint() const
{
    const int width = AxisWidth + int(m_profile.length()) * m_columnWidth + RightMargin;
    const int height = TitleHeight + StackHeight + StripGap + StripHeight + NumberHeight;
    return {std::max(width, AxisWidth + 10 * m_columnWidth), height};
}

QSize SequenceLogo::minimumSizeHint() const { return sizeHint(); }

QRectF SequenceLogo::stackArea() const
{
    return QRectF(AxisWidth, TitleHeight, double(m_profile.length()) * m_columnWidth, StackHeight);
}

double SequenceLogo::columnX(int position) const { return AxisWidth + double(position) * m_columnWidth; }

QVector<SequenceLogo::Glyph> SequenceLogo::glyphsAt(int position) const
{
    QVector<Glyph> glyphs;
    const double maxBits = m_maxBits > 0 ? m_maxBits : m_profile.maxBits();
    if (position < 0 || position >= m_profile.length() || maxBits <= 0)
        return glyphs;
    const double pixelsPerBit = StackHeight / maxBits;
    const double bits = m_profile.information[size_t(position)];
    // Least frequent at the bottom, so the symbol a position is about reads on top (WebLogo's order).
    std::vector<int64_t> order(size_t(m_profile.symbolCount()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return m_profile.frequency(position, a) < m_profile.frequency(position, b);
    });
    double bottom = stackArea().bottom();
    const double left = columnX(position) + 0.5;
    for (int64_t k : order) {
        const double height = m_profile.frequency(position, k) * bits * pixelsPerBit;
        if (height < MinGlyphHeight)
            continue;
        glyphs.push_back({QChar::fromLatin1(m_profile.symbols[size_t(k)]),
                          QRectF(left, bottom - height, m_columnWidth - 1.0, height)});
        bottom -= height;
    }
    return glyphs;
}

const QPainterPath& SequenceLogo::letterPath(QChar symbol) const
{
    auto found = m_paths.find(symbol);
    if (found == m_paths.end()) {
        QFont font(QStringLiteral("DejaVu Sans"));
        font.setBold(true);
        font.setPixelSize(64);
        QPainterPath path;
        path.addText(0, 0, font, QString(symbol));
        found = m_paths.insert(symbol, path);
    }
    return *found;
}

QColor SequenceLogo::letterColour(QChar symbol) const
{
    // The pair view's fills, except those too pale to read as ink (binary 0, plain text).
    const QColor fill = symbolColour(symbol, m_alphabet);
    return fill.lightnessF() > 0.82 ? QColor(0x40, 0x40, 0x40) : fill.darker(115);
}

void SequenceLogo::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    render(painter);
}

void SequenceLogo::render(QPainter& painter) const
{
    painter.fillRect(QRect(QPoint(0, 0), sizeHint()), QColor(Qt::white));
    painter.setRenderHint(QPainter::Antialiasing, true);
    QFont small = font();
    small.setPixelSize(10);
    painter.setFont(small);
    painter.setPen(QColor(0x30, 0x30, 0x30));
    if (!m_title.isEmpty())
        painter.drawText(QRectF(AxisWidth, 0, sizeHint().width() - AxisWidth, TitleHeight),
                         Qt::AlignLeft | Qt::AlignVCenter, m_title);
    drawAxis(painter);
    for (int p = 0; p < m_profile.length(); ++p)
        for (const Glyph& glyph : glyphsAt(p)) {
            const QPainterPath& path = letterPath(glyph.symbol);
            const QRectF box = path.boundingRect();
            if (box.isEmpty())
                continue;
            // Stretch the letter's outline to fill its rectangle exactly: a logo letter's height is
            // its share of the bits, not a font size.
            QTransform fit;
            fit.translate(glyph.rect.left(), glyph.rect.top());
            fit.scale(glyph.rect.width() / box.width(), glyph.rect.height() / box.height());
            fit.translate(-box.left(), -box.top());
            painter.fillPath(fit.map(path), letterColour(glyph.symbol));
        }
    drawEntropyStrip(painter);
    drawPositionNumbers(painter);
}

void SequenceLogo::drawAxis(QPainter& painter) const
{
    const double maxBits = m_maxBits > 0 ? m_maxBits : m_profile.maxBits();
    const QRectF area = stackArea();
    painter.setPen(QColor(0x60, 0x60, 0x60));
    painter.drawLine(QPointF(AxisWidth - 4, area.top()), QPointF(AxisWidth - 4, area.bottom()));
    if (maxBits <= 0)
        return;
    const double step = maxBits > 3 ? 1.0 : 0.5;
    for (double bits = 0; bits <= maxBits + 1e-9; bits += step) {
        const double y = area.bottom() - bits / maxBits * area.height();
        painter.drawLine(QPointF(AxisWidth - 7, y), QPointF(AxisWidth - 4, y));
        painter.drawText(QRectF(0, y - 6, AxisWidth - 9, 12), Qt::AlignRight | Qt::AlignVCenter,
                         QString::number(bits, 'g', 2));
    }
    painter.save();
    painter.translate(8, area.center().y());
    painter.rotate(-90);
    painter.drawText(QRectF(-30, -6, 60, 12), Qt::AlignCenter, tr("bits"));
    painter.restore();
}

void SequenceLogo::drawEntropyStrip(QPainter& painter) const
{
    const double maxBits = m_profile.maxBits();
    const double top = stackArea().bottom() + StripGap;
    const QColor pale(0xf2, 0xf2, 0xf2);
    const QColor dark(0x1d, 0x4e, 0x89);
    painter.setPen(Qt::NoPen);
    for (int p = 0; p < m_profile.length(); ++p) {
        const QRectF cell(columnX(p), top, m_columnWidth, StripHeight);
        if (m_profile.residues(p) == 0 || maxBits <= 0) {
            painter.fillRect(cell, QBrush(QColor(0, 0, 0, 40), Qt::BDiagPattern));
            continue;
        }
        // Conserved (H = 0) dark, uniform (H = log2 K) pale.
        const double conserved = 1.0 - std::clamp(m_profile.entropy[size_t(p)] / maxBits, 0.0, 1.0);
        const auto mix = [&](int a, int b) { return int(a + (b - a) * conserved); };
        painter.fillRect(cell, QColor(mix(pale.red(), dark.red()), mix(pale.green(), dark.green()),
                                      mix(pale.blue(), dark.blue())));
    }
    painter.setPen(QColor(0x60, 0x60, 0x60));
    painter.drawText(QRectF(0, top - 3, AxisWidth - 6, StripHeight + 6), Qt::AlignRight | Qt::AlignVCenter, tr("H"));
}

void SequenceLogo::drawPositionNumbers(QPainter& painter) const
{
    const double top = stackArea().bottom() + StripGap + StripHeight;
    painter.setPen(QColor(0x50, 0x50, 0x50));
    for (int p = 0; p < m_profile.length(); ++p) {
        const int number = p + 1;
        if (number != 1 && number % 10 != 0)
            continue;
        const double centre = columnX(p) + m_columnWidth / 2.0;
        painter.drawLine(QPointF(centre, top), QPointF(centre, top + 3));
        painter.drawText(QRectF(centre - 20, top + 2, 40, NumberHeight - 2), Qt::AlignHCenter | Qt::AlignTop,
                         QString::number(number));
    }
}

} // namespace d2dpo::ui
