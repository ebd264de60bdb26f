// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/pairgrid/pairgridlegend.h"

#include <QPainter>

#include <algorithm>

#include "ui/label/pairgrid/pairgrid.h"
#include "ui/common/symbolcolours.h"

namespace d2dpo::ui {

namespace {
constexpr int kSwatch = 14;
constexpr int kSpacing = 14; // between entries
constexpr int kLineGap = 4;

/// The classes of an alphabet: a symbol of each (for its colour) and what the key says.
QList<std::pair<QChar, QString>> classesOf(const QString& alphabet)
{
    if (alphabet == QLatin1String("protein"))
        return {{QLatin1Char('A'), QObject::tr("hydrophobic AILMFWV")},
                {QLatin1Char('K'), QObject::tr("positive KR")},
                {QLatin1Char('D'), QObject::tr("negative DE")},
                {QLatin1Char('S'), QObject::tr("polar STNQ")},
                {QLatin1Char('C'), QObject::tr("cysteine C")},
                {QLatin1Char('G'), QObject::tr("glycine G")},
                {QLatin1Char('P'), QObject::tr("proline P")},
                {QLatin1Char('H'), QObject::tr("aromatic HY")}};
    if (alphabet == QLatin1String("dna") || alphabet == QLatin1String("rna")) {
        const QChar last = alphabet == QLatin1String("dna") ? QLatin1Char('T') : QLatin1Char('U');
        QList<std::pair<QChar, QString>> bases;
        for (QChar base : {QChar(u'A'), QChar(u'C'), QChar(u'G'), last})
            bases.append({base, QString(base)});
        return bases;
    }
    if (alphabet == QLatin1String("binary"))
        return {{QLatin1Char('1'), QObject::tr("1")}, {QLatin1Char('0'), QObject::tr("0")}};
    return {}; // text: paper cells, the letter says it all
}
} // namespace

PairGridLegend::PairGridLegend(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("pairLegend"));
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    setAccessibleName(tr("Colour key"));
}

void PairGridLegend::setContent(const QString& alphabet, const QString& motif, bool gaps, bool pads)
{
    m_entries.clear();
    for (const auto& [symbol, text] : classesOf(alphabet))
        m_entries.append({Mark::Swatch, symbolColour(symbol, alphabet), text});
    m_entries.append({Mark::Difference, PairGrid::differenceColour(), tr("difference")});
    if (!motif.isEmpty())
        m_entries.append({Mark::Motif, PairGrid::motifColour(), tr("motif %1").arg(motif)});
    if (gaps)
        m_entries.append({Mark::Gap, palette().mid().color(), tr("gap")});
    if (pads)
        m_entries.append({Mark::Pad, symbolColour(QLatin1Char('.'), alphabet), tr("past the end")});
    setAccessibleDescription(entries().join(QStringLiteral(", ")));
    updateGeometry();
    update();
}

QStringList PairGridLegend::entries() const
{
    QStringList texts;
    for (const Entry& entry : m_entries)
        texts.append(entry.text);
    return texts;
}

QList<QRect> PairGridLegend::flow(int width) const
{
    const QFontMetrics metrics(font());
    const int line = std::max(kSwatch, metrics.height());
    QList<QRect> rects;
    int x = 0, y = 0;
    for (const Entry& entry : m_entries) {
        const int w = kSwatch + 5 + metrics.horizontalAdvance(entry.text);
        if (x > 0 && x + w > width) {
            x = 0;
            y += line + kLineGap;
        }
        rects.append(QRect(x, y, w, line));
        x += w + kSpacing;
    }
    return rects;
}

int PairGridLegend::heightFor(int width) const
{
    const QList<QRect> rects = flow(width);
    return rects.isEmpty() ? 0 : rects.back().bottom() + 1;
}

QSize PairGridLegend::sizeHint() const
{
    const int width = testAttribute(Qt::WA_Resized) ? this->width() : 900;
    return {width, heightFor(width)};
}

QSize PairGridLegend::minimumSizeHint() const { return {100, sizeHint().height()}; }

void PairGridLegend::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (height() != heightFor(width()))
        updateGeometry(); // another number of lines: the layout gives the new height
}

void PairGridLegend::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    const QList<QRect> rects = flow(width());
    for (qsizetype i = 0; i < rects.size(); ++i) {
        const Entry& entry = m_entries[i];
        const QRect swatch(rects[i].x(), rects[i].center().y() - kSwatch / 2, kSwatch, kSwatch);
        switch (entry.mark) {
        case Mark::Swatch:
            painter.fillRect(swatch, entry.colour);
            painter.setPen(QColor(0, 0, 0, 60));
            painter.drawRect(swatch.adjusted(0, 0, -1, -1));
            break;
        case Mark::Difference: // the red bar between two cells that differ
            painter.fillRect(swatch.adjusted(0, kSwatch / 3, 0, -kSwatch / 3), entry.colour);
            break;
        case Mark::Motif: // the frame around a match
            painter.setPen(QPen(entry.colour, 2));
            painter.drawRect(swatch.adjusted(1, 1, -1, -1));
            break;
        case Mark::Gap:
            painter.setPen(entry.colour);
            painter.drawText(swatch, Qt::AlignCenter, QStringLiteral("-"));
            break;
        case Mark::Pad: // as the grid draws a pad: its colour, hatched
            painter.fillRect(swatch, entry.colour);
            painter.fillRect(swatch, QBrush(QColor(0, 0, 0, 30), Qt::BDiagPattern));
            painter.setPen(QColor(0, 0, 0, 40));
            painter.drawRect(swatch.adjusted(0, 0, -1, -1));
            break;
        }
        painter.setPen(palette().text().color());
        painter.drawText(rects[i].adjusted(kSwatch + 5, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, entry.text);
    }
}

} // namespace d2dpo::ui
