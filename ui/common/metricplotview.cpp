// SPDX-License-Identifier: GPL-3.0-or-later
// MetricPlot: what the user does with a plot. Zoom is Ctrl + wheel (a bare wheel over a plot had
// zoomed it without a sign while the user scrolled the page), a drag pans, and either shows a
// "Reset view" button on the plot until it is pressed (or the plot double-clicked); hovering reads
// out the nearest point; the context menu saves the plot.
#include "ui/common/metricplot.h"

#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QHelpEvent>
#include <QToolButton>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>

#include "ui/common/qcustomplotinclude.h"

namespace d2dpo::ui {

void MetricPlot::setUpUserView()
{
    m_plot->installEventFilter(this);
    m_resetButton = new QToolButton(m_plot);
    m_resetButton->setObjectName(QStringLiteral("resetView"));
    m_resetButton->setText(tr("Reset view"));
    m_resetButton->setAutoRaise(false);
    m_resetButton->hide();
    connect(m_resetButton, &QToolButton::clicked, this, &MetricPlot::resetView);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
        if (event->buttons() & Qt::LeftButton) // a drag pans: the view is the user's now
            setUserMovedView(true);
        showReadout(event);
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, &MetricPlot::resetView);
    m_plot->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_plot, &QWidget::customContextMenuRequested, this, &MetricPlot::showContextMenu);
}

bool MetricPlot::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_plot && event->type() == QEvent::ToolTip) { // what the curves are, then how to move
        const QString how = tr("Ctrl + wheel zooms, a drag pans, a double-click resets the view.");
        QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(),
                           toolTip().isEmpty() ? how : toolTip() + QStringLiteral("\n\n") + how, m_plot);
        return true;
    }
    if (watched == m_plot && event->type() == QEvent::Wheel) {
        const bool zoom = static_cast<QWheelEvent*>(event)->modifiers() & Qt::ControlModifier;
        bool anyPoint = false;
        for (const Series& series : m_series)
            anyPoint = anyPoint || series.graph->dataCount() > 0;
        m_plot->setInteraction(QCP::iRangeZoom, zoom && anyPoint); // an empty plot has nothing to zoom into
        if (!zoom || !anyPoint) {
            event->ignore(); // the page under the plot may scroll
            return true;
        }
        setUserMovedView(true);
    }
    return QWidget::eventFilter(watched, event);
}

void MetricPlot::setUserMovedView(bool moved)
{
    m_userMovedView = moved;
    m_resetButton->setVisible(moved);
    placeResetButton();
}

void MetricPlot::placeResetButton()
{
    m_resetButton->adjustSize();
    m_resetButton->move(m_plot->width() - m_resetButton->width() - 6, 4);
    m_resetButton->raise();
}

void MetricPlot::resetView()
{
    setUserMovedView(false);
    markDirty();
}

bool MetricPlot::savePng(const QString& path, int width, int height)
{
    replotIfDirty(true);
    return m_plot->savePng(path, width, height);
}

bool MetricPlot::savePdf(const QString& path, int width, int height)
{
    replotIfDirty(true);
    return m_plot->savePdf(path, width, height);
}

void MetricPlot::showReadout(QMouseEvent* event)
{
    // The point nearest to the cursor, on screen, across every series.
    const QPointF cursor = event->position();
    double bestDistance = 30.0; // pixels: farther than this shows nothing
    QCPGraph* bestGraph = nullptr;
    double bestKey = 0, bestValue = 0;
    for (const Series& series : m_series) {
        QCPGraph* graph = series.graph;
        if (graph->dataCount() == 0)
            continue;
        const double key = m_plot->xAxis->pixelToCoord(cursor.x());
        auto it = graph->data()->findBegin(key);
        for (auto candidate : {it, it == graph->data()->constBegin() ? it : it - 1}) {
            for (auto probe = candidate; probe != graph->data()->constEnd() && probe - candidate < 2; ++probe) {
                const double dx = m_plot->xAxis->coordToPixel(probe->key) - cursor.x();
                const double dy = graph->valueAxis()->coordToPixel(probe->value) - cursor.y();
                const double distance = std::hypot(dx, dy);
                if (distance < bestDistance) {
                    bestDistance = distance;
                    bestGraph = graph;
                    bestKey = probe->key;
                    bestValue = probe->value;
                }
            }
        }
    }
    const bool show = bestGraph != nullptr;
    if (show) {
        m_tracer->setGraph(bestGraph);
        m_tracer->setGraphKey(bestKey);
        m_tracer->setPen(bestGraph->pen());
        m_readout->setText(QStringLiteral("%1\n%2 %3: %4")
                               .arg(bestGraph->name(), m_plot->xAxis->label())
                               .arg(bestKey, 0, 'g', 6)
                               .arg(bestValue, 0, 'g', 5));
    }
    if (show != m_tracer->visible() || show) {
        m_tracer->setVisible(show);
        m_readout->setVisible(show);
        m_dirty = true;
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void MetricPlot::showContextMenu(const QPoint& position)
{
    QMenu menu(this);
    menu.addAction(tr("Reset view"), this, &MetricPlot::resetView);
    menu.addSeparator();
    menu.addAction(tr("Save plot as PNG…"), this, [this] { saveWithDialog(QStringLiteral("png")); });
    menu.addAction(tr("Save plot as PDF…"), this, [this] { saveWithDialog(QStringLiteral("pdf")); });
    menu.exec(m_plot->mapToGlobal(position));
}

void MetricPlot::saveWithDialog(const QString& format)
{
    const QString filter = format == QLatin1String("png") ? tr("PNG image (*.png)") : tr("PDF document (*.pdf)");
    const QString path = QFileDialog::getSaveFileName(this, tr("Save plot"), QStringLiteral("plot.") + format, filter);
    if (path.isEmpty())
        return;
    const bool saved = format == QLatin1String("png") ? savePng(path) : savePdf(path);
    if (!saved)
        QMessageBox::warning(this, tr("Save plot"), tr("Could not write %1.").arg(path));
}

} // namespace d2dpo::ui
