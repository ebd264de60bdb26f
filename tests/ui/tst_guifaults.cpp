// SPDX-License-Identifier: GPL-3.0-or-later
// The desktop faults a new user hit at protein length, one test each: the wheel over a closed
// drop-down scrolls the page instead of changing a setting; a plot's legend never takes more than
// a quarter of it; the Label view's model box changes which pairs are shown.
#include <QApplication>
#include <QComboBox>
#include <QScrollArea>
#include <QTemporaryDir>
#include <QWheelEvent>
#include <QtTest/QtTest>

#include <memory>

#include "base/config.h"
#include "store/preferencestore.h"
#include "support/labelviewfixture.h"
#include "ui/labelview.h"
#include "ui/metricplot.h"
#include "ui/qcustomplotinclude.h"
#include "ui/trainsettingsform.h"
#include "ui/wheelguard.h"

using namespace d2dpo;

namespace {

/// One notch of the wheel at the middle of `widget`, as Qt delivers it; whether it was accepted.
bool turnWheel(QWidget* widget, int notches)
{
    const QPointF at(widget->width() / 2.0, widget->height() / 2.0);
    QWheelEvent wheel(at, widget->mapToGlobal(at), QPoint(), QPoint(0, -120 * notches), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &wheel);
    return wheel.isAccepted();
}

ModelRecord binaryModel(const std::string& id, int length)
{
    ModelRecord m;
    m.id = id;
    m.kind = "pretrained";
    m.name = id;
    m.path = "/models/" + id + ".d2dpo";
    ModelSpec spec;
    spec.task.length = length;
    m.specJson = toJson(spec, false);
    return m;
}

} // namespace

class GuiFaults : public test::LabelViewFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { ui::installWheelGuard(*qApp); }

    void theWheelOverAClosedDropDownLeavesItAndScrollsThePage()
    {
        QScrollArea area;
        auto* form = new ui::TrainSettingsForm;
        area.setWidget(form);
        area.resize(400, 200);
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        const auto boxes = form->findChildren<QComboBox*>();
        QVERIFY(boxes.size() >= 3); // Times t, Masks, Loss, Keep best…
        for (QComboBox* box : boxes) {
            QVERIFY2(box->focusPolicy() != Qt::WheelFocus, qPrintable(box->objectName())); // the wheel gives no focus
            const int before = box->currentIndex();
            // Left unaccepted, Qt hands the event on to the parents: the scroll area scrolls.
            QVERIFY2(!turnWheel(box, 1), qPrintable(box->objectName()));
            QVERIFY(!turnWheel(box, -1));
            QCOMPARE(box->currentIndex(), before);
        }
        // Clicked (focused), a drop-down takes the wheel as it always did.
        QComboBox* box = boxes.front();
        box->setFocus();
        QTRY_VERIFY(box->hasFocus());
        box->setCurrentIndex(0);
        QVERIFY(turnWheel(box, 1));
        QCOMPARE(box->currentIndex(), 1);
    }

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
    }

    void theModelBoxChangesWhichPairsAreShown()
    {
        freshStore();
        QVERIFY(m_store->addModel(binaryModel("ten", 10)).ok());
        QVERIFY(m_store->addModel(binaryModel("twelve", 12)).ok());
        QVERIFY(m_store->addPairs(test::binaryPairs(3), "generated").ok());
        std::vector<ShownPair> longer = test::binaryPairs(3);
        for (ShownPair& p : longer) {
            p.left += "01";
            p.right += "01";
            p.task = "binary-integers:12";
        }
        QVERIFY(m_store->addPairs(longer, "generated").ok());
        showView();
        auto* box = m_view->findChild<QComboBox*>(QString(), Qt::FindDirectChildrenOnly);
        QVERIFY(box);
        QCOMPARE(box->count(), 2);
        QVERIFY2(box->itemText(1).contains("binary integers, N=12"), qPrintable(box->itemText(1))); // its task is named
        // The newest model (N=12) is chosen: its task's pairs are shown, not the older task's.
        QVERIFY(m_view->currentPair());
        QCOMPARE(m_view->currentPair()->task, std::string("binary-integers:12"));
        box->setCurrentIndex(0);
        Q_EMIT box->activated(0);
        QVERIFY(m_view->currentPair());
        QCOMPARE(m_view->currentPair()->task, std::string("binary-integers:10"));
        QTest::qWait(50); // painted: a press now is about this pair
        // Every pair of the chosen task is labelled before any of the other.
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(m_view->currentPair()->task, std::string("binary-integers:10"));
            press(Qt::Key_Left);
        }
        QVERIFY2(!m_view->currentPair(), m_view->currentPair() ? m_view->currentPair()->task.c_str() : "");
        box->setCurrentIndex(1);
        Q_EMIT box->activated(1);
        QVERIFY(m_view->currentPair());
        QCOMPARE(m_view->currentPair()->task, std::string("binary-integers:12"));
    }
};

QTEST_MAIN(GuiFaults)
#include "tst_guifaults.moc"
