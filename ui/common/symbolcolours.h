// SPDX-License-Identifier: GPL-3.0-or-later
// The colours of a task's symbols, one scheme per alphabet, shared by the pair grid, its legend
// and the sequence logos so they cannot drift apart: the two binary colours, nucleotides A/C/G/T(U)
// in the usual four colours, amino acids by chemical class after Clustal X (the colours Jalview
// users know), paper for plain text (the letter says it all); '_' (a mask) grey, '.' (a pad) white.
#pragma once

#include <QChar>
#include <QColor>
#include <QString>

namespace d2dpo::ui {

/// The fill colour of `symbol` in `alphabet` ("binary", "dna", "rna", "protein" or "text").
QColor symbolColour(QChar symbol, const QString& alphabet = QStringLiteral("binary"));

} // namespace d2dpo::ui
