// SPDX-License-Identifier: GPL-3.0-or-later
// The desktop faults a new user hit at protein length, one test each (the Models and Train views'
// are in tst_modelsfaults): the wheel over a closed drop-down scrolls the page instead of changing
// a setting; the Label view's model box
// changes which pairs are shown; a status message stays with its view; an export's plain name;
// the keys say which side they pick; no button moves when hints are toggled; pair generation
// says how far it is; the Train view's advice on data size and on a run that made things worse.
#include <QApplication>
#include <QComboBox>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QWheelEvent>
#include <QtTest/QtTest>

#include <memory>

#include "base/batchadvice.h"
#include "base/config.h"
#include "store/preferencestore.h"
#include "support/labelviewfixture.h"
#include "support/tinycheckpoint.h"
#include "ui/label/keysdialog.h"
#include "ui/label/labelview.h"
#include "ui/label/labelviewparts.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/screenfit.h"
#include "ui/models/modelactions.h"
#include "ui/label/pairsupply.h"
#include "ui/common/qcustomplotinclude.h"
#include "ui/train/runadvice.h"
#include "ui/train/trainsettingsform.h"
#include "ui/common/wheelguard.h"

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
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // the views' settings stay out of the user's
        ui::installWheelGuard(*qApp);
    }

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
        // Every pair of the chosen task is labelled before any of the other.
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(m_view->currentPair()->task, std::string("binary-integers:10"));
            const int64_t shown = m_view->currentPair()->id;
            // A press before the pair is painted is ignored (by design): press until it counts.
            for (int tries = 0; tries < 100 && m_view->currentPair() && m_view->currentPair()->id == shown; ++tries)
                press(Qt::Key_Left);
        }
        QVERIFY2(!m_view->currentPair(), m_view->currentPair() ? m_view->currentPair()->task.c_str() : "");
        // The other task's pairs are not out of reach: the view says they wait and how to reach them.
        const QString said = ui::emptyQueueText(*m_store, "binary-integers:10", "tester", false);
        QVERIFY2(said.contains("3 pairs of other tasks are pending"), qPrintable(said));
        box->setCurrentIndex(1);
        Q_EMIT box->activated(1);
        QVERIFY(m_view->currentPair());
        QCOMPARE(m_view->currentPair()->task, std::string("binary-integers:12"));
    }

    /// A stored tiny model whose record says it was measured with vsr 0.1234 (2000 samples, seed 9).
    void aStatusMessageStaysWithTheViewItCameFrom()
    {
        freshStore();
        QVERIFY(m_store->addPairs(test::binaryPairs(2), "generated").ok());
        ui::MainWindow window(std::move(m_store));
        window.show();
        auto* tabs = window.findChild<QTabWidget*>();
        tabs->setCurrentIndex(0);
        window.statusBar()->showMessage(QStringLiteral("Label undone: the pair is shown again"), 8000);
        tabs->setCurrentIndex(2);
        QCOMPARE(window.statusBar()->currentMessage(), QString());
    }

    void theWindowFitsTheScreenItOpensOn()
    {
        // First launch: at most 1280x800, never larger than the screen (the offscreen one is smaller).
        QSettings().remove(QStringLiteral("window/geometry"));
        freshStore();
        QSize available;
        {
            ui::MainWindow window(std::move(m_store));
            available = window.screen()->availableGeometry().size();
            // ...with room for a window manager's frame: a 30 px title bar and borders.
            QVERIFY2(window.width() <= available.width() - ui::kFrameAllowance.width() && window.height() <= available.height() - ui::kFrameAllowance.height(),
                     qPrintable(QStringLiteral("%1x%2 on %3x%4").arg(window.width()).arg(window.height())
                                    .arg(available.width()).arg(available.height())));
            // Fits a 1024x640 laptop under a window manager: its minimum leaves room for the frame.
            const QSize least = window.minimumSizeHint().expandedTo(window.minimumSize());
            QVERIFY2(least.width() <= 1024 - ui::kFrameAllowance.width() && least.height() <= 640 - ui::kFrameAllowance.height(),
                     qPrintable(QStringLiteral("the window's least size is %1x%2").arg(least.width()).arg(least.height())));
            window.resize(available * 3); // as on a larger screen, saved on closing
            QSettings().setValue(QStringLiteral("window/geometry"), window.saveGeometry());
        }
        freshStore();
        ui::MainWindow again(std::move(m_store));
        QVERIFY(again.width() <= available.width() - ui::kFrameAllowance.width() && again.height() <= available.height() - ui::kFrameAllowance.height());
        QSettings().remove(QStringLiteral("window/geometry"));
    }

    void anExportOpensWhereTheLastOneWentWithAPlainName()
    {
        ModelRecord m;
        m.id = "abc";
        m.name = "d2dpo run 2 step 300";
        QCOMPARE(ui::suggestedExportName(m), QStringLiteral("d2dpo-run-2-step-300"));
        m.name = "Globins, fine-tuned/β=0.1";
        QCOMPARE(ui::suggestedExportName(m), QStringLiteral("d2dpo-globins-fine-tuned-0.1"));
        m.name = "///";
        QCOMPARE(ui::suggestedExportName(m), QStringLiteral("d2dpo-abc"));
    }

    void theLabelViewSaysWhichKeyPicksWhichSideAndOffersLayouts()
    {
        freshView(4);
        auto* left = m_view->findChild<QPushButton*>(QStringLiteral("leftButton"));
        auto* right = m_view->findChild<QPushButton*>(QStringLiteral("rightButton"));
        QVERIFY2(left->text().contains("keys ← · 1 · A"), qPrintable(left->text())); // the left hand's A picks left
        QVERIFY2(right->text().contains("keys → · 2 · L"), qPrintable(right->text()));
        // The dialog's layouts: initials (L left, R right) for who reads the key as a word.
        ui::KeysDialog dialog(ui::KeyBindings::defaults());
        auto* layouts = dialog.findChild<QComboBox*>(QStringLiteral("keyLayout"));
        QVERIFY(layouts && layouts->count() == 4);
        layouts->setCurrentIndex(3);
        Q_EMIT layouts->activated(3);
        QVERIFY2(layouts->itemText(3).startsWith("Initials"), qPrintable(layouts->itemText(3)));
        m_view->setKeyBindings(dialog.bindings());
        QVERIFY2(left->text().contains("keys ← · 1 · L"), qPrintable(left->text()));
        const int64_t shown = m_view->currentPair()->id;
        for (int tries = 0; tries < 100 && m_view->currentPair()->id == shown; ++tries)
            press(Qt::Key_L);
        QCOMPARE(lastLabel().pairId, shown);
        QCOMPARE(lastLabel().choice, Choice::Left); // L picks left in this layout
        QCOMPARE(ui::KeyBindings::withLayout(ui::KeyLayout::HomeRow).shown(ui::LabelAction::Left), QStringLiteral("← · 1 · F"));
    }

    void noButtonMovesWhenHintsAreToggled()
    {
        freshView(4);
        QVERIFY(m_view->currentPair());
        QCoreApplication::processEvents();
        const auto places = [this] {
            QList<QRect> out;
            for (QPushButton* b : m_view->findChildren<QPushButton*>())
                out << QRect(b->mapTo(m_view.get(), QPoint(0, 0)), b->size());
            return out;
        };
        const QList<QRect> before = places();
        m_view->setHintsVisible(false);
        QCoreApplication::processEvents();
        QCOMPARE(places(), before);
        m_view->setHintsVisible(true);
        QCoreApplication::processEvents();
        QCOMPARE(places(), before);
    }

    void pairGenerationSaysHowFarItIs()
    {
        // A tiny model: the supply reports its draws as they go and hands the pairs over in pieces
        // as they are drawn, the first of one pair, all of them adding up to what it says at the end.
        freshStore();
        auto tiny = test::writeTinyCheckpoint(m_dir.filePath(QStringLiteral("gen.d2dpo")).toStdString());
        QVERIFY(tiny.ok());
        ui::PairSupply supply;
        QSignalSpy progress(&supply, &ui::PairSupply::progress);
        QSignalSpy pieces(&supply, &ui::PairSupply::pairsReady);
        QSignalSpy finished(&supply, &ui::PairSupply::finished);
        QVERIFY(supply.request(QString::fromStdString(tiny->path), 50, 7));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QVERIFY2(progress.count() >= 4, qPrintable(QString::number(progress.count())));
        qint64 drawn = 0;
        for (const QList<QVariant>& report : progress) {
            QCOMPARE(report.at(1).toLongLong(), 100); // of twice the pairs asked for
            QVERIFY(report.at(0).toLongLong() >= drawn);
            drawn = report.at(0).toLongLong();
        }
        QCOMPARE(drawn, qint64(100));
        QVERIFY2(pieces.count() >= 5, qPrintable(QString::number(pieces.count())));
        QCOMPARE(pieces.first().at(0).value<ui::PairSupplyResult>().pairs.size(), size_t(1));
        size_t delivered = 0;
        for (const QList<QVariant>& piece : pieces)
            delivered += piece.at(0).value<ui::PairSupplyResult>().pairs.size();
        const auto end = finished.first().at(0).value<ui::PairSupplyResult>();
        QVERIFY(end.error.isEmpty() && end.pairs.empty());
        QCOMPARE(size_t(end.delivered), delivered);
        QCOMPARE(delivered, size_t(50));

        // Cancelled: it ends at the model's next pass, says so, and keeps what it handed over.
        pieces.clear();
        finished.clear();
        QVERIFY(supply.request(QString::fromStdString(tiny->path), 5000, 8));
        QTRY_VERIFY_WITH_TIMEOUT(pieces.count() >= 2, 60000);
        QElapsedTimer sinceCancel;
        sinceCancel.start();
        supply.cancel();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        qInfo("a request for 5000 pairs ended %lld ms after cancel()", sinceCancel.elapsed());
        QVERIFY(sinceCancel.elapsed() < 2000);
        const auto stopped = finished.first().at(0).value<ui::PairSupplyResult>();
        QVERIFY(stopped.stopped && stopped.error.isEmpty());
        delivered = 0;
        for (const QList<QVariant>& piece : pieces)
            delivered += piece.at(0).value<ui::PairSupplyResult>().pairs.size();
        QCOMPARE(size_t(stopped.delivered), delivered);
        QVERIFY(delivered > 0 && delivered < 5000);
        // The next request is not stopped by the last one's cancel.
        finished.clear();
        QVERIFY(supply.request(QString::fromStdString(tiny->path), 3, 9));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        const auto next = finished.first().at(0).value<ui::PairSupplyResult>();
        QVERIFY(!next.stopped && next.delivered == 3);
    }

    void theTrainViewSaysWhenThereAreTooFewPairsAndWhenARunMadeThingsWorse()
    {
        // 30 decisive labels on 150-residue globins made the model worse: said before the run.
        const QString few = ui::dataSizeAdvice(30, 150, false);
        QVERIFY2(few.contains("30 decisive pairs") && few.contains("about 300"), qPrintable(few));
        QVERIFY(ui::dataSizeAdvice(300, 150, false).isEmpty());
        QVERIFY(ui::dataSizeAdvice(5, 150, true).isEmpty()); // rule-made pairs: as many as asked for
        QVERIFY(ui::dataSizeAdvice(20, 8, false).isEmpty());
        QVERIFY(ui::dataSizeAdvice(0, 150, false).isEmpty()); // none: the data panel says so
        // A batch larger than the pairs at hand: said with what it costs and the batch to use.
        const std::string batch = batchLargerThanPairsWarning(64, 18);
        QVERIFY2(batch.find("64 pairs is more than the 18 at hand") != std::string::npos &&
                     batch.find("each about 3.6 times") != std::string::npos && batch.find("batch of 18 or fewer costs less a step") != std::string::npos,
                 batch.c_str());
        QVERIFY(batchLargerThanPairsWarning(18, 18).empty());
        QVERIFY(batchLargerThanPairsWarning(64, 0).empty()); // no pairs: the data panel says so
        // And after it, plainly: rule share 0.20 -> 0.14, VSR 0.70 -> 0.65.
        SampleMetrics reference, last;
        reference.ruleMetric = last.ruleMetric = "rule_share";
        reference.set("rule_share", 0.20, "");
        reference.set("vsr", 0.70, "");
        last.set("rule_share", 0.14, "");
        last.set("vsr", 0.65, "");
        const QString worse = ui::outcomeWarning(reference, last);
        QVERIFY2(worse.contains("rule_share) went down from 0.200 to 0.140") &&
                     worse.contains("valid share (vsr) went down from 0.700 to 0.650"),
                 qPrintable(worse));
        QVERIFY(ui::outcomeWarning(last, reference).isEmpty()); // better: nothing to warn about
        last.set("rule_share", 0.198, "");
        last.set("vsr", 0.70, "");
        QVERIFY(ui::outcomeWarning(reference, last).isEmpty()); // within the last digit shown
    }

};

QTEST_MAIN(GuiFaults)
#include "tst_guifaults.moc"
