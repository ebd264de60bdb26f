// SPDX-License-Identifier: GPL-3.0-or-later
// The key to the pair grid, under it: what each colour means in the pair's alphabet (Clustal X's
// classes for amino acids, one colour per base for DNA and RNA, the two binary colours; nothing
// for plain text, where the letter says it all), then the grid's own marks: a difference, a motif
// match, a gap. Swatches come from symbolColour(), so the key cannot drift from the cells.
// Entries flow onto as many lines as the width needs.
#pragma once

#include <QWidget>

namespace d2dpo::ui {

class PairGridLegend final : public QWidget {
    Q_OBJECT

public:
    explicit PairGridLegend(QWidget* parent = nullptr);

    /// `motif` the rule's pattern when it marks matches ("H.{3}H"), else empty; `gaps` whether
    /// the grid shows an alignment's gaps; `pads` whether it shows hatched cells past a sequence's end.
    void setContent(const QString& alphabet, const QString& motif, bool gaps, bool pads = false);
    /// The entries' texts in order ("hydrophobic AILMFWV", ..., "difference"), as drawn.
    QStringList entries() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    enum class Mark { Swatch, Difference, Motif, Gap, Pad };
    struct Entry {
        Mark mark;
        QColor colour;
        QString text;
    };
    /// Each entry's rectangle (swatch and text) when flowed at a width.
    QList<QRect> flow(int width) const;
    int heightFor(int width) const;

    QList<Entry> m_entries;
};

} // namespace d2dpo::ui
