// SPDX-License-Identifier: GPL-3.0-or-later
// One sequence drawn as rows of cells, one colour per symbol from the task's alphabet: the two
// binary colours, nucleotides A/C/G/T(U) in the usual four colours, amino acids by chemical class
// as sequence viewers colour them, plain text on light cells. Every cell also shows its symbol (in
// a contrasting ink), so a sequence reads without colour too. Cells grow with the window up to the
// largest cell size the view sets. At most 32 cells a row (long sequences wrap);
// when cells are narrow every 8th position is numbered so positions can be counted. A pad ('.')
// is a hatched light cell and a mask ('_') a grey one.
#pragma once

#include <QString>
#include <QWidget>

namespace d2dpo::ui {

class SequenceStrip final : public QWidget {
    Q_OBJECT

public:
    explicit SequenceStrip(QWidget* parent = nullptr);

    /// The alphabet the colours come from: "binary", "dna", "rna", "protein" or "text".
    void setAlphabet(const QString& alphabet);
    QString alphabet() const { return m_alphabet; }
    /// Token text such as "1110000" or "MKV"; '_' is a mask, '.' a pad; empty shows an empty frame.
    void setTokens(const QString& tokens);
    QString tokens() const { return m_tokens; }

    /// The largest cell (its height, and its width when there is room): the view scales it with
    /// the window.
    void setMaxCell(double pixels);
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    /// The fill colour of a symbol in an alphabet.
    static QColor colourOf(QChar symbol, const QString& alphabet = QStringLiteral("binary"));

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    struct Layout {
        double cell = 0;
        int perRow = 0;
        int rows = 0;
    };
    Layout layoutFor(int width) const;
    static int rowsFor(int length);
    int stripHeight() const;

    QString m_tokens;
    QString m_alphabet = QStringLiteral("binary");
    double m_maxCell = 44;
};

} // namespace d2dpo::ui
