// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/common/symbolcolours.h"

#include <QByteArray>

namespace d2dpo::ui {

QColor symbolColour(QChar symbol, const QString& alphabet)
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

} // namespace d2dpo::ui
