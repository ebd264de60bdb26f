// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/common/samplehistogram.h"

#include <QVBoxLayout>

#include <algorithm>

#include "ui/common/qcustomplotinclude.h"

namespace d2dpo::ui {

SampleHistogram::SampleHistogram(QWidget* parent)
    : QWidget(parent)
{
    m_plot = new QCustomPlot(this);
    m_plot->setMinimumHeight(150); // the Models view fits 1024x640
    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, tr("Samples"), QFont(font().family(), font().pointSize() + 1, QFont::Bold));
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->yAxis->setLabel(tr("share of samples"));
    // The legend in a row of its own under the bars: it never covers one, at any size.
    m_plot->legend->setVisible(true);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setWrap(2);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(2, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
}

void SampleHistogram::clear()
{
    m_plot->clearPlottables();
    m_plot->replot();
}

void SampleHistogram::draw(const std::optional<ModelSummary>& model, const QString& modelName,
                           const std::optional<ModelSummary>& reference, const QString& referenceName)
{
    m_plot->clearPlottables();
    auto* group = new QCPBarsGroup(m_plot);
    double maxShare = 0.05;
    int bins = 0;
    QStringList labels;
    QString axis;
    auto addBars = [&](const std::optional<ModelSummary>& drawn, const QString& label, const QColor& color) {
        if (!drawn)
            return;
        const SampleMetrics& metrics = drawn->metrics;
        auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(label);
        bars->setPen(QPen(color.darker(130)));
        bars->setBrush(color);
        bars->setWidth(0.4);
        bars->setBarsGroup(group);
        const double total = std::max<int64_t>(1, metrics.samples);
        QVector<double> keys, values;
        const Histogram& histogram = metrics.histogram;
        for (size_t i = 0; i < histogram.counts.size(); ++i) {
            keys << double(i);
            values << double(histogram.counts[i]) / total;
        }
        keys << double(histogram.counts.size());
        values << double(histogram.invalid) / total;
        if (labels.size() < int(histogram.labels.size())) {
            labels.clear();
            for (const std::string& label : histogram.labels)
                labels << QString::fromStdString(label);
            axis = QString::fromStdString(histogram.axis);
        }
        for (double v : values)
            maxShare = std::max(maxShare, v);
        bins = std::max(bins, int(keys.size()));
        bars->setData(keys, values, true);
    };
    addBars(reference, tr("reference: %1").arg(referenceName), QColor(160, 160, 160));
    addBars(model, tr("this model: %1").arg(modelName), QColor(255, 127, 14));
    // The task's bin labels (i, length...), and the last bin named for what it holds.
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    const int every = bins > 24 ? (bins + 15) / 16 : 1;
    for (int i = 0; i + 1 < bins; i += every)
        ticker->addTick(i, i < labels.size() ? labels[i] : QString::number(i));
    m_plot->xAxis->setLabel(axis);
    const int64_t each = model ? model->metrics.samples : reference ? reference->metrics.samples : 0;
    m_title->setText(each == 0        ? tr("Samples (being drawn)")
                     : axis.isEmpty() ? tr("Samples (%1 each)").arg(each)
                                      : tr("Samples over %1 (%2 each)").arg(axis).arg(each));
    if (bins > 0)
        ticker->addTick(bins - 1, tr("invalid"));
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setRange(-0.7, std::max(1, bins) - 0.3);
    m_plot->yAxis->setRange(0, maxShare * 1.08);
    m_plot->replot();
}

} // namespace d2dpo::ui
