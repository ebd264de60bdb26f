// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/pairgrid/pairgridcolumns.h"

#include <QCoreApplication>

#include <algorithm>

namespace d2dpo::ui {

namespace {

constexpr QChar kMissing = QLatin1Char(' ');

bool isResidue(QChar c) { return c != PairColumns::kGap && c != kMissing; }

/// Numbers each side's residues along its row and marks the columns of its motif's residues.
void numberSide(const QString& row, const MotifSpans& spans, std::vector<int>& numbers, std::vector<bool>& motif)
{
    numbers.assign(size_t(row.size()), 0);
    motif.assign(size_t(row.size()), false);
    int residue = 0; // residues before this column
    for (int column = 0; column < row.size(); ++column) {
        numbers[size_t(column)] = residue + 1;
        if (!isResidue(row[column]))
            continue;
        motif[size_t(column)] = std::any_of(spans.begin(), spans.end(), [&](const std::pair<int, int>& s) {
            return residue >= s.first && residue < s.second;
        });
        ++residue;
    }
}

PairColumns build(QString left, QString right, const MotifSpans& leftMotif, const MotifSpans& rightMotif,
                  bool aligned)
{
    PairColumns columns;
    const qsizetype width = std::max(left.size(), right.size());
    columns.left = left.leftJustified(width, kMissing);
    columns.right = right.leftJustified(width, kMissing);
    columns.aligned = aligned;
    columns.differs.assign(size_t(width), false);
    for (qsizetype i = 0; i < width; ++i) {
        const QChar a = columns.left[i];
        const QChar b = columns.right[i];
        columns.differs[size_t(i)] = a != b;
        columns.differences += a != b;
        columns.gaps += (a == PairColumns::kGap) + (b == PairColumns::kGap);
    }
    numberSide(columns.left, leftMotif, columns.leftNumber, columns.leftMotif);
    numberSide(columns.right, rightMotif, columns.rightNumber, columns.rightMotif);
    return columns;
}

} // namespace

QString PairColumns::summary() const
{
    const auto count = [](int n, const char* one, const char* many) {
        return QStringLiteral("%1 %2").arg(n).arg(QCoreApplication::translate("PairColumns", n == 1 ? one : many));
    };
    if (size() == 0)
        return {};
    if (differences == 0)
        return QCoreApplication::translate("PairColumns", "Identical over %1").arg(count(size(), "position", "positions"));
    if (!aligned)
        return QCoreApplication::translate("PairColumns", "%1 over %2")
            .arg(count(differences, "difference", "differences"), count(size(), "position", "positions"));
    return QCoreApplication::translate("PairColumns", "%1 over %2 (%3)")
        .arg(count(differences, "difference", "differences"), count(size(), "aligned column", "aligned columns"),
             count(gaps, "gap", "gaps"));
}

PairColumns columnsOf(const QString& left, const QString& right, const MotifSpans& leftMotif,
                      const MotifSpans& rightMotif)
{
    return build(left, right, leftMotif, rightMotif, false);
}

PairColumns alignedColumnsOf(const QString& leftRow, const QString& rightRow, const MotifSpans& leftMotif,
                             const MotifSpans& rightMotif)
{
    return build(leftRow, rightRow, leftMotif, rightMotif, true);
}

} // namespace d2dpo::ui
