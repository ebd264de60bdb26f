// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/measurements/assayhistogram.h"

#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ui/common/qcustomplotinclude.h"

namespace d2dpo::ui {

AssayHistogram::AssayHistogram(QWidget* parent)
    : QWidget(parent)
{
    m_plot = new QCustomPlot(this);
    m_plot->setMinimumHeight(150);
    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, tr("Values"), QFont(font().family(), font().pointSize() + 1, QFont::Bold));
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->xAxis->setLabel(tr("measured value"));
    m_plot->yAxis->setLabel(tr("measurements"));
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
}

std::vector<double> AssayHistogram::binEdges(std::vector<double> values)
{
    if (values.empty())
        return {};
    std::sort(values.begin(), values.end());
    const double low = values.front(), high = values.back();
    if (!(high > low))
        return {low - 0.5, high + 0.5};
    // Freedman-Diaconis: width 2 IQR / n^(1/3), robust to a few outliers a plate reader gives.
    const auto quantile = [&](double q) { return values[size_t(q * double(values.size() - 1))]; };
    const double iqr = quantile(0.75) - quantile(0.25);
    const double n = double(values.size());
    int bins = iqr > 0 ? int(std::ceil((high - low) / (2 * iqr / std::cbrt(n)))) : int(std::ceil(std::sqrt(n)));
    bins = std::clamp(bins, 5, 60);
    std::vector<double> edges;
    for (int i = 0; i <= bins; ++i)
        edges.push_back(low + (high - low) * double(i) / double(bins));
    return edges;
}

void AssayHistogram::clear()
{
    m_plot->clearPlottables();
    m_title->setText(tr("Values"));
    m_bins = 0;
    m_plot->replot();
}

void AssayHistogram::draw(const QString& name, const std::vector<double>& values, const QString& direction)
{
    m_plot->clearPlottables();
    const std::vector<double> edges = binEdges(values);
    m_bins = edges.empty() ? 0 : int(edges.size()) - 1;
    if (m_bins == 0) {
        clear();
        return;
    }
    QVector<double> keys, counts(m_bins, 0.0);
    const double width = edges[1] - edges[0];
    for (int i = 0; i < m_bins; ++i)
        keys << (edges[size_t(i)] + edges[size_t(i) + 1]) / 2;
    for (double v : values) // the last edge belongs to the last bin
        ++counts[std::clamp(int((v - edges.front()) / width), 0, m_bins - 1)];
    auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    const QColor colour(70, 130, 180);
    bars->setPen(QPen(colour.darker(130)));
    bars->setBrush(colour);
    bars->setWidth(width * 0.95);
    bars->setData(keys, counts, true);
    const double mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
    m_title->setText(tr("%1: %L2 values, mean %3 (%4 is better)")
                         .arg(name)
                         .arg(qint64(values.size()))
                         .arg(mean, 0, 'g', 4)
                         .arg(direction == QLatin1String("lower") ? tr("lower") : tr("higher")));
    m_plot->xAxis->setRange(edges.front() - width, edges.back() + width);
    m_plot->yAxis->setRange(0, *std::max_element(counts.begin(), counts.end()) * 1.1);
    m_plot->replot();
}

} // namespace d2dpo::ui
