// SPDX-License-Identifier: GPL-3.0-or-later
// The live plots as a scientist reads them: the legend never takes more than a quarter of a plot;
// a reference line at the bottom of a ratio's range stands clear of the axis; a lone point is
// drawn; the bare wheel never zooms (Ctrl + wheel does, and a visible button resets the view).
#include <QApplication>
#include <QDir>
#include <QToolButton>
#include <QWheelEvent>
#include <QtTest/QtTest>

#include "ui/common/metricplot.h"
#include "ui/common/qcustomplotinclude.h"

using namespace d2dpo;

namespace {

/// One notch of the wheel at the middle of `widget` with `modifiers`; whether it was accepted.
bool turnWheel(QWidget* widget, Qt::KeyboardModifiers modifiers)
{
    const QPointF at(widget->width() / 2.0, widget->height() / 2.0);
    QWheelEvent wheel(at, widget->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, modifiers,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &wheel);
    return wheel.isAccepted();
}

} // namespace

class TestMetricPlot : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void theLegendNeverTakesMoreThanAQuarterOfAPlot_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("a quarter of 1024x640") << QSize(300, 190);
        QTest::newRow("a quarter of 1280x800") << QSize(390, 260);
        QTest::newRow("narrow") << QSize(260, 180);
        QTest::newRow("wide") << QSize(900, 500);
    }

    void theLegendNeverTakesMoreThanAQuarterOfAPlot()
    {
        QFETCH(QSize, size);
        // A sequence task's metrics: five curves, each with its reference's dashed line.
        ui::MetricPlot plot(QStringLiteral("Task metrics"), QStringLiteral("step"), QStringLiteral("share"));
        for (const char* name : {"vsr", "rule_share", "in_data_share", "novel_share", "unique_share"}) {
            const int s = plot.addSeries(QString::fromLatin1(name), QColor(Qt::blue));
            plot.append(s, 0, 0.5);
            plot.append(s, 10, 0.6);
            plot.setBaseline(s, 0.55);
        }
        plot.resize(size);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        QVERIFY(plot.savePng(QDir::temp().filePath(QStringLiteral("legend.png")), size.width(), size.height()));
        QCPLegend* legend = plot.customPlot()->legend;
        const int taken = legend->visible() ? legend->outerRect().height() : 0;
        QVERIFY2(taken <= size.height() / 4, qPrintable(QStringLiteral("legend %1 px of %2").arg(taken).arg(size.height())));
        // One entry names every dashed line: 5 curves and "reference", not 10 entries.
        QCOMPARE(legend->itemCount(), 6);
        if (size.width() >= 390)
            QVERIFY2(legend->visible(), "a plot of a quarter of 1280x800 or more keeps its legend");
        QVERIFY(plot.customPlot()->axisRect()->height() >= size.height() / 2);
        // Re-flowed at every width: entries that no longer fill the grid leave empty cells.
        for (int width = 180; width <= 1000; width += 23) {
            plot.resize(width, size.height());
            QCoreApplication::processEvents();
            QVERIFY(!legend->visible() || legend->outerRect().height() <= size.height() / 4);
        }
    }

    void aReferenceAtZeroStandsClearOfTheAxisAndALonePointIsDrawn()
    {
        ui::MetricPlot plot(QStringLiteral("Samples"), QStringLiteral("step"), QStringLiteral("share"));
        plot.setFixedYRange(0, 1.04);
        const int vsr = plot.addSeries(QStringLiteral("vsr"), QColor(Qt::blue));
        plot.setBaseline(vsr, 0); // a random model's VSR
        plot.append(vsr, 0, 0.4); // the first evaluation alone
        plot.resize(400, 260);
        QVERIFY(plot.savePng(QDir::temp().filePath(QStringLiteral("lonepoint.png")), 400, 260));
        QCPAxis* y = plot.customPlot()->yAxis;
        const double gap = y->coordToPixel(y->range().lower) - y->coordToPixel(0);
        QVERIFY2(gap >= 6, qPrintable(QStringLiteral("the reference line is %1 px above the axis").arg(gap)));
        QCPGraph* graph = plot.customPlot()->graph(0);
        QVERIFY(!graph->scatterStyle().isNone()); // one point of a line: a dot
        plot.append(vsr, 10, 0.5);
        QVERIFY(plot.savePng(QDir::temp().filePath(QStringLiteral("twopoints.png")), 400, 260));
        QVERIFY(graph->scatterStyle().isNone()); // a line now
    }

    void theBareWheelNeverZoomsCtrlWheelDoesAndAButtonResets()
    {
        ui::MetricPlot plot(QStringLiteral("Loss"), QStringLiteral("step"), QStringLiteral("loss"));
        const int loss = plot.addSeries(QStringLiteral("loss"), QColor(Qt::blue));
        plot.resize(400, 260);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        QCustomPlot* custom = plot.customPlot();
        auto* reset = plot.findChild<QToolButton*>(QStringLiteral("resetView"));
        QVERIFY(reset);
        // An empty plot: nothing to zoom into, with or without Ctrl.
        QVERIFY(!turnWheel(custom, Qt::ControlModifier));
        QVERIFY(!plot.viewMovedByUser());
        plot.append(loss, 0, 1.0);
        plot.append(loss, 100, 0.5);
        QVERIFY(plot.savePng(QDir::temp().filePath(QStringLiteral("zoom.png")), 400, 260));
        const QCPRange before = custom->xAxis->range();
        QVERIFY(!turnWheel(custom, Qt::NoModifier)); // passed on: the page may scroll
        QCOMPARE(custom->xAxis->range(), before);
        QVERIFY(!plot.viewMovedByUser());
        QVERIFY(reset->isHidden());
        turnWheel(custom, Qt::ControlModifier);
        QVERIFY(custom->xAxis->range().size() < before.size());
        QVERIFY(plot.viewMovedByUser());
        QVERIFY(!reset->isHidden());
        reset->click();
        QVERIFY(!plot.viewMovedByUser());
        QVERIFY(reset->isHidden());
        QVERIFY(plot.savePng(QDir::temp().filePath(QStringLiteral("zoom.png")), 400, 260));
        QCOMPARE(custom->xAxis->range(), before);
    }
};

QTEST_MAIN(TestMetricPlot)
#include "tst_metricplot.moc"
