// SPDX-License-Identifier: GPL-3.0-or-later
// One sequence drawn as a row of cells, one colour per token: clear at N = 10, still readable at
// N = 64 (at most 32 cells a row, so N = 64 takes two rows of 32; when cells are narrow every
// 8th position is numbered so positions can be counted).
#pragma once

#include <QString>
#include <QWidget>

namespace d2dpo::ui {

class SequenceStrip final : public QWidget {
    Q_OBJECT

public:
    explicit SequenceStrip(QWidget* parent = nullptr);

    /// Token text such as "1110000"; '_' is a mask; empty shows an empty frame.
    void setTokens(const QString& tokens);
    QString tokens() const { return m_tokens; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    /// The fill colour of a token character.
    static QColor colourOf(QChar token);

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
};

} // namespace d2dpo::ui
