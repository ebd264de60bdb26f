// SPDX-License-Identifier: GPL-3.0-or-later
// Stopping and resuming from the desktop: a run stopped from the Train view keeps its
// checkpoint and resumes from the past runs to its planned step count with its curve continued;
// closing the window on SIGINT/SIGTERM stops a run as Quit does, without a question.
#include <QApplication>
#include <QComboBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <csignal>

#include "support/referencestore.h"
#include "support/testsupport.h"

#include "io/checkpoint.h"
#include "model/denoiser.h"
#include "store/preferencestore.h"
#include "ui/shell/closeonsignals.h"
#include "ui/shell/mainwindow.h"
#include "ui/common/metricplot.h"
#include "ui/train/trainsettingsform.h"
#include "ui/train/trainview.h"

using namespace d2dpo;
using namespace d2dpo::ui;

class TestStopResume final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    test::TinyCheckpoint m_reference; ///< a tiny untrained binary-integers model (N = 8)
    int m_stores = 0;

    /// A new store holding the tiny reference model.
    std::unique_ptr<PreferenceStore> storeWithReference()
    {
        const auto file = m_dir.filePath(QStringLiteral("s%1.sqlite").arg(++m_stores)).toStdString();
        return test::storeWithReference(file, m_reference);
    }

    /// Quick settings: `steps` steps, evaluated (and checkpointed) every 20.
    static void quickSettings(TrainView& view, int steps)
    {
        view.useRulePairs(true, 300);
        auto* form = view.settingsForm();
        const std::pair<const char*, QString> values[] = {{"steps", QString::number(steps)},
                                                          {"batch", QStringLiteral("8")},
                                                          {"evalEvery", QStringLiteral("20")},
                                                          {"evalSamples", QStringLiteral("30")},
                                                          {"samplingSteps", QStringLiteral("8")}};
        for (const auto& [field, text] : values)
            form->findChild<QLineEdit*>(QString::fromLatin1(field))->setText(text);
        form->findChild<QComboBox*>(QStringLiteral("device"))->setCurrentIndex(1); // CPU
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        test::TinyCheckpointOptions tiny;
        tiny.length = 8;
        auto written = test::writeTinyCheckpoint(m_dir.filePath(QStringLiteral("tiny.d2dpo")).toStdString(), tiny);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
        m_reference = written.value();
    }

    void aStoppedRunResumesFromThePastRuns()
    {
        auto store = storeWithReference();
        QVERIFY(store);
        TrainView view(*store);
        quickSettings(view, 120);
        QSignalSpy finished(&view, &TrainView::runFinished);
        QVERIFY2(view.start(), qPrintable(view.logText()));
        QTRY_VERIFY_WITH_TIMEOUT(view.lossPlot()->pointCount(0) >= 45, 60000); // past the checkpoint at 40
        view.stop();
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.at(0).at(0).value<RunStatus>(), RunStatus::Stopped);
        const RunRecord stopped = store->runs().value().back();
        QCOMPARE(stopped.status, RunStatus::Stopped);
        QVERIFY(!stopped.resultModelId.empty()); // the checkpoint written at the stop

        // The past runs offer Resume for the stopped run; pressing it goes on to step 120.
        auto* runs = view.findChild<QListWidget*>(QStringLiteral("runs"));
        auto* resume = view.findChild<QPushButton*>(QStringLiteral("resume"));
        QVERIFY(runs && resume);
        runs->setCurrentRow(0);
        QTRY_VERIFY(resume->isEnabled());
        resume->click();
        QVERIFY(view.training());
        QVERIFY(!resume->isEnabled());
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.at(1).at(0).value<RunStatus>(), RunStatus::Completed);
        const RunRecord done = *store->run(stopped.id).value();
        QCOMPARE(done.status, RunStatus::Completed);
        const auto loss = store->metricSeries(stopped.id, "loss").value();
        QCOMPARE(loss.size(), size_t(120));
        QCOMPARE(loss.back().first, int64_t(120));
        QCOMPARE(view.lossPlot()->pointCount(0), 120); // the stored curve, continued live
        QVERIFY(store->model(done.resultModelId).value()->path.find("step-000120") != std::string::npos);
        runs->setCurrentRow(0);
        QVERIFY(!resume->isEnabled()); // a completed run does not resume
    }

    void theStartAndStopButtonsStayInViewAt1024x640()
    {
        auto store = storeWithReference();
        QVERIFY(store);
        MainWindow window(std::move(store));
        window.resize(1024, 640);
        window.showView(1);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        for (const char* name : {"start", "stop"}) {
            auto* button = window.findChild<QPushButton*>(QString::fromLatin1(name));
            QVERIFY(button);
            const QRect inWindow(button->mapTo(&window, QPoint(0, 0)), button->size());
            QVERIFY2(window.rect().contains(inWindow), name);
            QVERIFY2(!button->visibleRegion().isEmpty(), name); // not scrolled out of view
        }
    }

    void closingOnASignalStopsTheRunWithoutAsking()
    {
        auto store = storeWithReference();
        QVERIFY(store);
        PreferenceStore* kept = store.get();
        MainWindow window(std::move(store));
        auto* view = window.findChild<TrainView*>();
        QVERIFY(view);
        quickSettings(*view, 100000);
        bool closed = false;
        CloseOnSignals onSignals(&window, [&] {
            window.closeWithoutAsking();
            closed = true;
        });
        window.show();
        QVERIFY2(view->start(), qPrintable(view->logText()));
        QTRY_VERIFY_WITH_TIMEOUT(view->lossPlot()->pointCount(0) >= 25, 60000);
        std::raise(SIGTERM); // the handler only writes to a pipe; the window closes in the event loop
        QTRY_VERIFY_WITH_TIMEOUT(closed, 10000);
        QVERIFY(!view->training());
        QVERIFY(!window.isVisible());
        const RunRecord run = kept->runs().value().back();
        QCOMPARE(run.status, RunStatus::Stopped);
        QVERIFY(!run.resultModelId.empty());
        QVERIFY(loadCheckpoint(kept->model(run.resultModelId).value()->path, torch::kCPU).ok());
    }
};

QTEST_MAIN(TestStopResume)
#include "tst_stopresume.moc"
