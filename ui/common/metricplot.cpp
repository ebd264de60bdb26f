// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/common/metricplot.h"

#include <QElapsedTimer>
#include <QVBoxLayout>

#include <limits>
#include <optional>

#include "ui/common/qcustomplotinclude.h"

namespace d2dpo::ui {

namespace {

constexpr int kReplotIntervalMs = 33; // ~30 Hz at most, whatever the step rate
constexpr int kReplotGapMs = 6;        // the GUI thread's breathing room between two plots' redraws

const QElapsedTimer& replotClock()
{
    static const QElapsedTimer clock = [] {
        QElapsedTimer c;
        c.start();
        return c;
    }();
    return clock;
}

} // namespace

qint64 MetricPlot::s_lastReplotEnd = -1000;

MetricPlot::MetricPlot(const QString& title, const QString& xLabel, const QString& yLabel, QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    setMinimumSize(240, 180); // two side by side beside the Train view's settings fit a 1024 px screen

    m_plot->plotLayout()->insertRow(0);
    auto* heading = new QCPTextElement(m_plot, title, QFont(font().family(), font().pointSize() + 1, QFont::Bold));
    m_plot->plotLayout()->addElement(0, 0, heading);
    m_plot->xAxis->setLabel(xLabel);
    m_plot->yAxis->setLabel(yLabel);
    // The legend sits in a row of its own under the plot, its entries side by side: it never
    // covers a curve, at any size.
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(QFont(font().family(), font().pointSize() - 1));
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(2, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
    m_plot->legend->setMargins(QMargins(4, 0, 4, 2));
    // Few enough ticks that their labels never run together ("10001250") on a narrow plot.
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis, m_plot->yAxis2})
        axis->ticker()->setTickCount(4);
    m_plot->setInteractions(QCP::iRangeDrag); // zoom: Ctrl + wheel only (setUpUserView)
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setPlottingHint(QCP::phFastPolylines, true);

    m_tracer = new QCPItemTracer(m_plot);
    m_tracer->setStyle(QCPItemTracer::tsCircle);
    m_tracer->setSize(7);
    m_tracer->setVisible(false);
    m_readout = new QCPItemText(m_plot);
    m_readout->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_readout->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_readout->position->setCoords(0.02, 0.03);
    m_readout->setPadding(QMargins(4, 2, 4, 2));
    m_readout->setBrush(QColor(255, 255, 255, 220));
    m_readout->setPen(QPen(QColor(160, 160, 160)));
    m_readout->setVisible(false);

    setUpUserView();

    m_replotTimer.setSingleShot(true);
    m_replotTimer.setInterval(kReplotIntervalMs);
    connect(&m_replotTimer, &QTimer::timeout, this, [this] { replotIfDirty(false); });
}

MetricPlot::~MetricPlot() = default;

int MetricPlot::addSeries(const QString& name, const QColor& color, bool withMarkers, bool rightAxis)
{
    Series series;
    series.color = color;
    series.rightAxis = rightAxis;
    series.graph = rightAxis ? m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2) : m_plot->addGraph();
    if (rightAxis)
        m_plot->yAxis2->setVisible(true);
    series.graph->setName(name);
    series.graph->setPen(QPen(color, 1.6));
    series.withMarkers = withMarkers;
    if (withMarkers)
        series.graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    m_series.push_back(series);
    markDirty();
    return int(m_series.size()) - 1;
}

void MetricPlot::setRightAxisLabel(const QString& label) { m_plot->yAxis2->setLabel(label); }

void MetricPlot::append(int index, double x, double y)
{
    if (index < 0 || index >= int(m_series.size()))
        return;
    m_series[size_t(index)].graph->addData(x, y);
    markDirty();
}

void MetricPlot::setBaseline(int index, double y)
{
    if (index < 0 || index >= int(m_series.size()))
        return;
    Series& series = m_series[size_t(index)];
    if (!series.baseline) {
        QPen pen(series.color, 1.6, Qt::DashLine);
        series.baseline = new QCPItemStraightLine(m_plot);
        series.baseline->setPen(pen);
        series.baseline->point1->setAxes(m_plot->xAxis, series.graph->valueAxis());
        series.baseline->point2->setAxes(m_plot->xAxis, series.graph->valueAxis());
    }
    if (!m_referenceLegend) {
        // Items have no legend entry, and one per metric would crowd the legend: one grey dashed
        // entry says what every dashed line is (its colour says whose).
        m_referenceLegend = m_plot->addGraph();
        m_referenceLegend->setPen(QPen(QColor(110, 110, 110), 1.2, Qt::DashLine));
        m_referenceLegend->setName(tr("reference"));
    }
    series.baseline->point1->setCoords(0, y);
    series.baseline->point2->setCoords(1, y);
    series.baseline->setVisible(true);
    m_referenceLegend->addToLegend();
    series.hasBaseline = true;
    series.baselineValue = y;
    markDirty();
}

void MetricPlot::setFixedYRange(double lower, double upper)
{
    m_fixedY = true;
    m_yLower = lower;
    m_yUpper = upper;
    markDirty();
}

void MetricPlot::setFixedXRange(double lower, double upper)
{
    m_fixedX = upper > lower;
    m_xLower = lower;
    m_xUpper = upper;
    markDirty();
}

void MetricPlot::clear()
{
    m_fixedX = false;
    for (Series& series : m_series) {
        series.graph->data()->clear();
        if (series.baseline)
            series.baseline->setVisible(false);
        series.hasBaseline = false;
    }
    if (m_referenceLegend)
        m_referenceLegend->removeFromLegend();
    m_tracer->setVisible(false);
    m_readout->setVisible(false);
    setUserMovedView(false);
    markDirty();
}

void MetricPlot::removeAllSeries()
{
    clear();
    for (Series& series : m_series) {
        if (series.baseline)
            m_plot->removeItem(series.baseline);
        m_plot->removeGraph(series.graph);
    }
    m_series.clear();
    if (m_referenceLegend)
        m_plot->removeGraph(m_referenceLegend);
    m_referenceLegend = nullptr;
    markDirty();
}

int MetricPlot::pointCount(int index) const
{
    if (index < 0 || index >= int(m_series.size()))
        return 0;
    return m_series[size_t(index)].graph->dataCount();
}

double MetricPlot::lastValue(int index) const
{
    if (pointCount(index) == 0)
        return std::numeric_limits<double>::quiet_NaN();
    const auto data = m_series[size_t(index)].graph->data();
    return (data->constEnd() - 1)->value;
}

void MetricPlot::markDirty()
{
    m_dirty = true;
    if (!m_replotTimer.isActive())
        m_replotTimer.start();
}

void MetricPlot::rescale()
{
    // x over every series; y per axis, over its series and their baselines.
    std::optional<QCPRange> keys, left, right;
    auto widen = [](std::optional<QCPRange>& range, double lower, double upper) {
        range = range ? QCPRange(std::min(range->lower, lower), std::max(range->upper, upper)) : QCPRange(lower, upper);
    };
    for (const Series& series : m_series) {
        std::optional<QCPRange>& values = series.rightAxis ? right : left;
        bool found = false;
        if (series.graph->dataCount() > 0) {
            const QCPRange k = series.graph->getKeyRange(found);
            if (found)
                widen(keys, k.lower, k.upper);
            const QCPRange v = series.graph->getValueRange(found);
            if (found)
                widen(values, v.lower, v.upper);
        }
        if (series.hasBaseline)
            widen(values, series.baselineValue, series.baselineValue);
    }
    if (m_fixedX) { // padded (and y below): a point at an end, the last step's evaluation, is drawn whole
        m_plot->xAxis->setRange(m_xLower - 0.02 * (m_xUpper - m_xLower), m_xUpper + 0.02 * (m_xUpper - m_xLower));
    } else if (keys) { // padded too, and a lone key in the middle, not on the axis
        const double span = keys->upper - keys->lower;
        m_plot->xAxis->setRange(span > 0 ? QCPRange(keys->lower - 0.02 * span, keys->upper + 0.02 * span)
                                         : QCPRange(keys->lower - 0.5, keys->lower + 0.5));
    }
    auto fit = [](QCPAxis* axis, const std::optional<QCPRange>& values) {
        if (!values)
            return;
        const double span = std::max(values->upper - values->lower, 1e-6);
        axis->setRange(values->lower - 0.06 * span, values->upper + 0.06 * span);
    };
    if (m_fixedY)
        // Padded so that a baseline at an end (a reference VSR of 0) stands clear of the axis line.
        m_plot->yAxis->setRange(m_yLower - 0.06 * (m_yUpper - m_yLower), m_yUpper + 0.06 * (m_yUpper - m_yLower));
    else
        fit(m_plot->yAxis, left);
    fit(m_plot->yAxis2, right);
}

void MetricPlot::replotIfDirty(bool now)
{
    if (!m_dirty)
        return;
    // Plots that became dirty together would redraw back to back in one pass of the event
    // loop, stalling the GUI for the sum of their times: each waits for a gap after another's.
    if (!now && replotClock().elapsed() - s_lastReplotEnd < kReplotGapMs) {
        m_replotTimer.start(kReplotGapMs);
        return;
    }
    m_dirty = false;
    for (const Series& series : m_series) // a lone point of a line-only series: drawn as a dot
        if (!series.withMarkers)
            series.graph->setScatterStyle(series.graph->dataCount() == 1 ? QCPScatterStyle(QCPScatterStyle::ssDisc, 6)
                                                                         : QCPScatterStyle());
    if (!m_userMovedView)
        rescale();
    fitLegend();
    m_plot->replot();
    ++m_replots;
    s_lastReplotEnd = replotClock().elapsed();
}

void MetricPlot::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    placeResetButton();
    m_dirty = true;
    replotIfDirty(true); // the legend's rows follow the width at once
}

void MetricPlot::fitLegend()
{
    QCPLegend* legend = m_plot->legend;
    int widest = 1, tallest = 0, entries = 0;
    for (int i = 0; i < legend->itemCount(); ++i) {
        const QCPAbstractLegendItem* entry = legend->item(i); // null: an empty cell of the re-flowed grid
        if (!entry)
            continue;
        const QSize size = entry->minimumOuterSizeHint();
        widest = std::max(widest, size.width());
        tallest = std::max(tallest, size.height());
        ++entries;
    }
    const int columns = std::max(1, (m_plot->width() - 8) / widest);
    if (legend->wrap() != columns) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true); // re-flows the entries
    }
    const int rows = (entries + columns - 1) / columns;
    const bool fits = rows > 0 && rows * tallest + 2 <= m_plot->height() / 4;
    if (const bool shown = legend->layout() != nullptr; fits && !shown)
        m_plot->plotLayout()->addElement(2, 0, legend);
    else if (!fits && shown)
        m_plot->plotLayout()->take(legend);
    legend->setVisible(fits);
}

} // namespace d2dpo::ui
