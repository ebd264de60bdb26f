// SPDX-License-Identifier: GPL-3.0-or-later
// The pair as one grid, so a position sits in the same column on both sides: each row band holds
// the left sequence's row (◀), a marker row with a red bar under every column that differs, and
// the right sequence's row (▶); the position of each side's first residue is at the row's start.
// Cells are coloured by symbolColour() and show their symbol; a gap is a '-' on no fill,
// and the rule's motif matches are framed. Only the bands in view are painted, with no widget per
// cell (a pair of length 1000 paints in milliseconds); taller pairs scroll. It never takes the
// focus: keys stay with the Label view.
#pragma once

#include <QAbstractScrollArea>

#include <array>

#include "ui/label/pairgrid/pairgridcolumns.h"
#include "ui/label/pairgrid/pairgridgeometry.h"

namespace d2dpo::ui {

class PairGrid final : public QAbstractScrollArea {
    Q_OBJECT

public:
    explicit PairGrid(QWidget* parent = nullptr);

    /// The columns to draw, in an alphabet: "binary", "dna", "rna", "protein" or "text".
    void setColumns(PairColumns columns, const QString& alphabet);
    const PairColumns& columns() const { return m_columns; }
    QString alphabet() const { return m_alphabet; }
    /// The largest cell: the view scales it with the window.
    void setMaxCell(int pixels);

    /// Scrolls a long pair by whole views (negative: up), for keys such as Page Up/Down.
    void scrollPages(int pages);

    /// Where things are at the current width (grid coordinates, not scrolled); also before the
    /// widget is shown, when resize() has sent no resize event yet.
    PairGridGeometry geometryNow() const;
    /// The number at the start of one side's row in a band ("51"; empty for a row of gaps only).
    QString rowLabel(PairSide side, int band) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    /// The colour a motif match is framed in, and a difference marked with (the legend's too).
    static QColor motifColour();
    static QColor differenceColour();

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void relayout();
    void paintBand(QPainter& painter, int band, int offset) const;
    void paintSide(QPainter& painter, PairSide side, int from, int to, int offset) const;
    QString rowLabel(PairSide side, int from, int to) const;
    /// What the geometry would be at a width (the widget's own, as a scroll bar may take).
    PairGridGeometry fitTo(int width) const;

    PairColumns m_columns;
    QString m_alphabet = QStringLiteral("binary");
    int m_maxCell = 44;
    PairGridGeometry m_geometry;
    /// Fill and ink per ASCII symbol for the alphabet (painting looks them up).
    std::array<QColor, 128> m_fill;
    std::array<QColor, 128> m_ink;
};

} // namespace d2dpo::ui
