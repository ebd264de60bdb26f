// SPDX-License-Identifier: GPL-3.0-or-later
// One live plot of the training dashboard: named series that take points as they arrive and are
// drawn on a ~30 Hz timer only when something changed (never once per step), horizontal
// baselines (the reference model's values), axes with names and units, a legend, a lone point
// drawn as a dot; and what the user does with it (metricplotview.cpp): a hover read-out of the
// nearest point, Ctrl + wheel zoom and drag pan with a visible reset, and a context menu to reset
// the view or save the plot as PNG or PDF.
#pragma once

#include <QColor>
#include <QString>
#include <QTimer>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPItemTracer;
class QMouseEvent;
class QResizeEvent;
class QToolButton;

namespace d2dpo::ui {

class MetricPlot final : public QWidget {
    Q_OBJECT

public:
    MetricPlot(const QString& title, const QString& xLabel, const QString& yLabel, QWidget* parent = nullptr);
    ~MetricPlot() override;

    /// Adds a series drawn as a line (on the right-hand axis when `rightAxis`); returns its index.
    int addSeries(const QString& name, const QColor& color, bool withMarkers = false, bool rightAxis = false);
    /// Names the right-hand axis (shown once a series uses it).
    void setRightAxisLabel(const QString& label);
    void append(int series, double x, double y);
    /// A horizontal dashed line at `y` in the series' colour (the legend's one "reference" entry
    /// names every such line); calling again moves it.
    void setBaseline(int series, double y);
    /// Fixed y range (ratios live in [0, 1]); by default the y axis follows the data.
    void setFixedYRange(double lower, double upper);
    /// Fixed x range (a run's steps: the curves grow across the plot); clear() lifts it.
    void setFixedXRange(double lower, double upper);
    /// Removes every point and baseline (a new run, or another past run shown).
    void clear();
    /// Removes the series themselves (a run of another task plots other metrics).
    void removeAllSeries();

    int seriesCount() const { return int(m_series.size()); }
    int pointCount(int series) const;
    double lastValue(int series) const;
    /// How many times the plot has been drawn (tests: bounded replotting).
    int replotCount() const { return m_replots; }

    bool savePng(const QString& path, int width = 1200, int height = 800);
    bool savePdf(const QString& path, int width = 1200, int height = 800);
    QCustomPlot* customPlot() const { return m_plot; }
    /// Whether the user zoomed or panned (the view then stays theirs until reset).
    bool viewMovedByUser() const { return m_userMovedView; }

public Q_SLOTS:
    void resetView();

private:
    struct Series {
        QCPGraph* graph = nullptr;
        QCPItemStraightLine* baseline = nullptr;
        QColor color;
        bool rightAxis = false;
        bool withMarkers = false;
        bool hasBaseline = false;
        double baselineValue = 0;
    };
    void markDirty();
    /// `now`: draw even if another plot has just drawn (saving to a file).
    void replotIfDirty(bool now);
    // The user's view (metricplotview.cpp).
    void setUpUserView();
    void setUserMovedView(bool moved);
    void placeResetButton();
    void showReadout(QMouseEvent* event);
    void showContextMenu(const QPoint& position);
    void saveWithDialog(const QString& format);
    void rescale();
    /// As many legend entries a row as the width holds; no legend when it would take more than a
    /// quarter of the plot's height (the hover read-out still names each curve).
    void fitLegend();

protected:
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:

    QCustomPlot* m_plot = nullptr;
    QCPItemTracer* m_tracer = nullptr;
    QCPItemText* m_readout = nullptr;
    QToolButton* m_resetButton = nullptr; ///< shown while the view is the user's
    QCPGraph* m_referenceLegend = nullptr; ///< one entry for every baseline: "reference (dashed)"
    std::vector<Series> m_series;
    QTimer m_replotTimer;
    bool m_dirty = false;
    bool m_userMovedView = false;
    bool m_fixedY = false;
    bool m_fixedX = false;
    double m_xLower = 0;
    double m_xUpper = 1;
    double m_yLower = 0;
    double m_yUpper = 1;
    int m_replots = 0;
    static qint64 s_lastReplotEnd; ///< when any plot last finished drawing (ms on a shared clock)
};

} // namespace d2dpo::ui
