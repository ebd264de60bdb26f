// SPDX-License-Identifier: GPL-3.0-or-later
// A sequence logo of one set of sequences (analysis/positionprofile.h): at each position the
// symbols stacked by frequency, the most frequent on top, each letter f x R bits tall on a bits
// axis; beneath, a thin strip of the position's entropy (dark = conserved, pale = anything goes)
// and the position numbers (1 and every tenth). Columns have a fixed width, so the widget is as
// wide as its positions: put it in a scroll area for 150-1000 positions, and two logos of the
// same length and column width line up position for position. The letters take the colours of
// the pair view (symbolColour()).
#pragma once

#include <QHash>
#include <QPainterPath>
#include <QString>
#include <QVector>
#include <QWidget>

#include "analysis/positionprofile.h"

namespace d2dpo::ui {

class SequenceLogo final : public QWidget {
    Q_OBJECT

public:
    /// One letter as drawn: its symbol and the rectangle it fills.
    struct Glyph {
        QChar symbol;
        QRectF rect;
    };

    explicit SequenceLogo(QWidget* parent = nullptr);

    /// `alphabet` picks the colours ("protein", "dna", "rna", "binary", "text"); `title` is drawn
    /// at the top left ("model: 2000 samples").
    void setProfile(const PositionProfile& profile, const QString& alphabet, const QString& title = {});
    const PositionProfile& profile() const { return m_profile; }
    /// Pixels per position (8 to 40); the widget resizes to fit its positions.
    void setColumnWidth(int pixels);
    int columnWidth() const { return m_columnWidth; }
    /// The bits axis runs 0..maxBits: by default the profile's log2 K; two logos shown together
    /// share one scale.
    void setMaxBits(double bits);

    /// The letters at `position` (0-based), bottom to top, in widget coordinates.
    QVector<Glyph> glyphsAt(int position) const;
    /// The area the letters stack in: its height is maxBits bits.
    QRectF stackArea() const;
    /// The x of `position`'s column (0-based), its left edge.
    double columnX(int position) const;

    /// Paints the logo at its size onto `painter` (PNG and SVG export draw with this).
    void render(QPainter& painter) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    void drawAxis(QPainter& painter) const;
    void drawEntropyStrip(QPainter& painter) const;
    void drawPositionNumbers(QPainter& painter) const;
    /// The outline of `symbol` in the logo font, filled into a rect with fillRectWithLetter.
    const QPainterPath& letterPath(QChar symbol) const;
    QColor letterColour(QChar symbol) const;

    PositionProfile m_profile;
    QString m_alphabet = QStringLiteral("text");
    QString m_title;
    int m_columnWidth = 14;
    double m_maxBits = 0; ///< 0: the profile's own
    mutable QHash<QChar, QPainterPath> m_paths;
};

} // namespace d2dpo::ui
