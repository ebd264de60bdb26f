// SPDX-License-Identifier: GPL-3.0-or-later
// The Measurements view's histogram of one assay's values: every stored value (a sequence measured
// twice counts twice), in bins of equal width set by the Freedman-Diaconis rule (at least 5, at
// most 60), with the count, mean and which way is better in the title. Drag to pan, wheel to zoom.
#pragma once

#include <QString>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPTextElement;

namespace d2dpo::ui {

class AssayHistogram final : public QWidget {
    Q_OBJECT

public:
    explicit AssayHistogram(QWidget* parent = nullptr);

    /// Draws `values` of the assay `name` ("higher" or "lower" is better).
    void draw(const QString& name, const std::vector<double>& values, const QString& direction);
    void clear();
    /// The bars drawn (their count), for tests.
    int binCount() const { return m_bins; }

    /// The bin edges for `values`: sorted, first the minimum, last the maximum (one bin when all equal).
    static std::vector<double> binEdges(std::vector<double> values);

private:
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    int m_bins = 0;
};

} // namespace d2dpo::ui
