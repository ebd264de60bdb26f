// SPDX-License-Identifier: GPL-3.0-or-later
// A maintainer's window on a team store never waits on the server, against a real PostgreSQL
// server: the Label view's model list, its new pairs (drawn, written and queued), auto-labelling
// with the rule and its undo, a gold mark, the queue settings, the Train view's count of usable
// pairs, a run resumed, a blind comparison and its results, and an import of preferences are read
// and written off the window's thread. Each is asked for with every server process of the
// maintainer stopped (SIGSTOP: a server that hangs rather than refuses), and the longest turn of
// the window's event loop is measured; new connections (the pool's) are served meanwhile.
#include <QApplication>
#include <QComboBox>
#include <QInputDialog>
#include <QStatusBar>
#include <QTimer>
#include <QLabel>
#include <QDoubleSpinBox>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QtTest/QtTest>

#include "base/config.h"
#include "store/preferencestore.h"
#include "support/pgbackends.h"
#include "support/pgserver.h"
#include "support/teamwindowsetup.h"
#include "support/referencestore.h"
#include "support/storerecords.h"
#include "support/tinycheckpoint.h"
#include "ui/common/modellistreader.h"
#include "ui/label/labelview.h"
#include "ui/label/pairsupply.h"
#include "ui/label/queuesettingsdialog.h"
#include "ui/models/comparemodelsdialog.h"
#include "ui/models/comparisonresults.h"
#include "ui/shell/mainwindow.h"
#include "ui/team/teamlabelchannel.h"
#include "ui/train/trainview.h"

using namespace d2dpo;
using namespace d2dpo::test;
using namespace d2dpo::ui;

namespace {

/// The longest turn of the window's event loop while `done` is false (at most `limitMs`).
qint64 longestTurnUntil(const std::function<bool()>& done, int limitMs)
{
    QElapsedTimer clock, watched;
    qint64 longest = 0;
    for (watched.start(); !done() && watched.elapsed() < limitMs;) {
        clock.start();
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        longest = std::max(longest, clock.elapsed());
        QTest::qWait(5);
    }
    return longest;
}

/// Over this, a call waited on the stopped server (its answer limit is 30 s).
constexpr qint64 kStallMs = 2000;

} // namespace

class TestTeamMaintainer final : public QObject {
    Q_OBJECT

    PostgresServer* m_server = nullptr;
    QTemporaryDir m_data;

    /// A new team store (made by its owner), opened as the maintainer mona.
    std::unique_ptr<PreferenceStore> maintainer(const std::string& db)
    {
        if (!openOrFail(m_server->superuserUrl(db)))
            return nullptr;
        return openOrFail(m_server->url("mona", "mona-secret", db));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_data.isValid());
        m_server = teamWindowSetUp(m_data);
        if (!m_server)
            QSKIP(("no PostgreSQL server: " + PostgresServer::unavailableReason()).c_str());
        QVERIFY(openOrFail(m_server->superuserUrl(m_server->createDatabase("maintainer")))); // the roles
        std::string error;
        QVERIFY2(makeRoleIn(*m_server, "mona", "mona-secret", "d2dpo_maintainer", &error), error.c_str());
    }

    void theLabelViewGeneratesAndAutoLabelsWithTheServerStopped()
    {
        const std::string db = m_server->createDatabase("maintainerlabel");
        TinyCheckpointOptions tiny;
        tiny.length = 10;
        const auto written = writeTinyCheckpoint(m_data.filePath("tiny.d2dpo").toStdString(), tiny);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
        auto store = maintainer(db);
        QVERIFY(store && store->canMaintain());
        LabelView view(*store);
        QVERIFY(view.teamChannel());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::qWait(300);
        StoppedBackends stopped(backendsOf(*m_server, "mona")); // the window's connection and the worker's
        QVERIFY(stopped.stopped());

        // New pairs: drawn, written and queued without the window's connection.
        QElapsedTimer clock;
        clock.start();
        view.generateFrom(QString::fromStdString(written->path), 6);
        const qint64 asking = clock.elapsed();
        const qint64 generating = longestTurnUntil([&] { return !view.supply().busy(); }, 25000);
        QVERIFY(!view.supply().busy());
        auto owner = openOrFail(m_server->superuserUrl(db)); // a role whose server processes still answer
        QCOMPARE(owner->pendingPairs(100).value().size(), size_t(6));
        QCOMPARE(owner->models().value().size(), size_t(1)); // the model the pairs came from

        // Auto-labelling: read, planned and written on a connection of the job's own.
        int asked = -1;
        view.setAutoLabelConfirmation([&](int count) {
            asked = count;
            return true;
        });
        QStringList said;
        connect(&view, &LabelView::statusMessage, this, [&said](const QString& message) { said << message; });
        clock.start();
        view.autoLabelWithRule();
        const qint64 autoAsking = clock.elapsed();
        const qint64 autoLabelling =
            longestTurnUntil([&] { return !said.filter(QStringLiteral("Auto-labelled")).isEmpty(); }, 20000);
        QVERIFY2(!said.filter(QStringLiteral("Auto-labelled")).isEmpty(), qPrintable(said.join(QStringLiteral(" | "))));
        QVERIFY(asked > 0);

        // Ctrl+Z takes the batch back, and a gold mark is written, on connections of their own.
        clock.start();
        view.undo();
        const qint64 undoAsking = clock.elapsed();
        const qint64 undoing = longestTurnUntil([&] { return !said.filter(QStringLiteral("Undid the")).isEmpty(); }, 20000);
        QVERIFY2(!said.filter(QStringLiteral("Undid the")).isEmpty(), qPrintable(said.join(QStringLiteral(" | "))));
        QVERIFY(view.currentPair()); // the batch's pairs are shown again
        const int64_t goldId = view.currentPair()->id;
        clock.start();
        view.markGold(Choice::Left);
        const qint64 goldAsking = clock.elapsed();
        QVERIFY(!view.currentPair() || view.currentPair()->id != goldId); // the next pair at once
        const qint64 marking =
            longestTurnUntil([&] { return !said.filter(QStringLiteral("is a gold pair now")).isEmpty(); }, 20000);
        QVERIFY2(!said.filter(QStringLiteral("is a gold pair now")).isEmpty(), qPrintable(said.join(QStringLiteral(" | "))));
        stopped.resume();

        const qint64 longest =
            std::max({asking, generating, autoAsking, autoLabelling, undoAsking, undoing, goldAsking, marking});
        qInfo("with the server stopped: Generate %lld ms, the turns while drawing and writing at most %lld ms; "
              "auto-label %lld ms, its turns at most %lld ms",
              static_cast<long long>(asking), static_cast<long long>(generating), static_cast<long long>(autoAsking),
              static_cast<long long>(autoLabelling));
        qInfo("undo of the batch %lld ms, its turns at most %lld ms; a gold mark %lld ms, its turns at most %lld ms",
              static_cast<long long>(undoAsking), static_cast<long long>(undoing), static_cast<long long>(goldAsking),
              static_cast<long long>(marking));
        QVERIFY2(longest < kStallMs, qPrintable(QStringLiteral("the window's thread was held %1 ms").arg(longest)));
        QCOMPARE(owner->labels(false).value().size(), size_t(0));     // every auto-label taken back
        QCOMPARE(owner->labels(true).value().size(), size_t(asked)); // kept as history
        QVERIFY(!owner->markGold(goldId, Choice::Left));             // a gold pair already
        // Once the server answers, the Model box lists it (read by the worker) with its task.
        QTRY_COMPARE_WITH_TIMEOUT(view.findChild<QComboBox*>()->count(), 1, 15000);
        QVERIFY2(view.findChild<QComboBox*>()->itemText(0).contains(QString::fromStdString(written->id)),
                 qPrintable(view.findChild<QComboBox*>()->itemText(0)));
    }

    void theQueueSettingsAreReadAndWrittenOffTheWindowsThread()
    {
        const std::string db = m_server->createDatabase("maintainerqueue");
        auto store = maintainer(db);
        QVERIFY(store);
        QTest::qWait(100);
        StoppedBackends stopped(backendsOf(*m_server, "mona"));
        QVERIFY(stopped.stopped());
        QElapsedTimer clock;
        clock.start();
        QueueSettingsDialog dialog(*store);
        dialog.show();
        const qint64 opening = clock.elapsed();
        auto* overlap = dialog.findChild<QSpinBox*>(QStringLiteral("overlap"));
        QVERIFY(!overlap->isEnabled()); // until the settings are read
        const qint64 reading = longestTurnUntil([&] { return overlap->isEnabled(); }, 15000);
        QVERIFY(overlap->isEnabled());
        QVERIFY2(dialog.findChild<QLabel*>(QStringLiteral("margins"))->text().contains(QLatin1String("No pair is pending")),
                 qPrintable(dialog.findChild<QLabel*>(QStringLiteral("margins"))->text()));
        overlap->setValue(3);
        QSignalSpy changed(&dialog, &QueueSettingsDialog::queueChanged);
        clock.start();
        dialog.accept();
        const qint64 accepting = clock.elapsed();
        const qint64 writing = longestTurnUntil([&] { return changed.count() > 0; }, 15000);
        stopped.resume();
        QCOMPARE(changed.count(), 1);
        QVERIFY(!dialog.isVisible());
        QCOMPARE(openOrFail(m_server->superuserUrl(db))->queueSettings().value().overlap, 3);
        const qint64 longest = std::max({opening, reading, accepting, writing});
        qInfo("with the server stopped: the queue dialog opened in %lld ms, OK took %lld ms, turns at most %lld ms",
              static_cast<long long>(opening), static_cast<long long>(accepting),
              static_cast<long long>(std::max(reading, writing)));
        QVERIFY2(longest < kStallMs, qPrintable(QStringLiteral("the window's thread was held %1 ms").arg(longest)));
    }

    void theTrainViewCountsAndResumesOffTheWindowsThread()
    {
        const std::string db = m_server->createDatabase("maintainertrain");
        TinyCheckpointOptions tiny;
        tiny.length = 10;
        const auto written = writeTinyCheckpoint(m_data.filePath("reference.d2dpo").toStdString(), tiny);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
        auto owner = storeWithReference(m_server->superuserUrl(db), written.value());
        QVERIFY(owner);
        const std::string id = written->id;
        const auto ids = owner
                             ->addPairs({{0, "1110000000", "1100000000", id, id, "binary-integers:10"},
                                         {0, "1000000000", "1111000000", id, id, "binary-integers:10"}},
                                        "generated")
                             .value();
        QVERIFY(owner->addLabel(ids[0], Choice::Left, "ana", 500));
        QVERIFY(owner->addLabel(ids[1], Choice::Right, "ben", 500));
        RunRecord run; // stopped before it kept a checkpoint: nothing to resume from
        run.kind = RunKind::D2dpo;
        run.referenceModelId = id;
        const int64_t runId = owner->startRun(run).value();
        QVERIFY(owner->finishRun(runId, RunStatus::Stopped, "", ""));
        auto store = maintainer(db);
        QVERIFY(store);
        TrainView train(*store);
        train.show();
        QVERIFY(QTest::qWaitForWindowExposed(&train));
        auto* labelers = train.findChild<QListWidget*>(QStringLiteral("labelers"));
        auto* summary = train.findChild<QLabel*>(QStringLiteral("pairSummary"));
        QVERIFY(labelers && summary);
        QTRY_VERIFY2_WITH_TIMEOUT(labelers->count() == 2, qPrintable(summary->text()), 10000); // counted in the background
        QTRY_VERIFY(summary->text().contains(QLatin1String("2 labelled pairs")));
        QTest::qWait(100);
        StoppedBackends stopped(backendsOf(*m_server, "mona"));
        QVERIFY(stopped.stopped());
        QElapsedTimer clock;
        clock.start();
        labelers->item(0)->setCheckState(Qt::Unchecked); // ticking a labeler counts again
        const qint64 ticking = clock.elapsed();
        QVERIFY2(summary->text().contains(QLatin1String("Counting")), qPrintable(summary->text()));
        // Resume reads on connections of its own (served: new server processes): the run cannot
        // resume, and says why.
        clock.start();
        QVERIFY(train.resume(runId));
        const qint64 resuming = clock.elapsed();
        const QString cannot = QStringLiteral("cannot resume run #%1").arg(runId);
        const qint64 reading = longestTurnUntil([&] { return train.logText().contains(cannot); }, 15000);
        QVERIFY2(train.logText().contains(cannot), qPrintable(train.logText()));
        // The count waits on its connection's stopped process; the window does not.
        const qint64 counting = longestTurnUntil([] { return false; }, 1500);
        QVERIFY2(summary->text().contains(QLatin1String("Counting")), qPrintable(summary->text()));
        stopped.resume();
        QTRY_VERIFY2_WITH_TIMEOUT(summary->text().contains(QLatin1String("1 labelled pair")),
                                  qPrintable(summary->text()), 15000);
        QVERIFY(!train.training());
        const qint64 longest = std::max({ticking, counting, resuming, reading});
        qInfo("with the server stopped: a tick %lld ms, Resume %lld ms, turns at most %lld ms",
              static_cast<long long>(ticking), static_cast<long long>(resuming),
              static_cast<long long>(std::max(counting, reading)));
        QVERIFY2(longest < kStallMs, qPrintable(QStringLiteral("the window's thread was held %1 ms").arg(longest)));
    }

    void aComparisonIsListedDrawnAndStoredOffTheWindowsThread()
    {
        const std::string db = m_server->createDatabase("maintainercompare");
        auto store = maintainer(db);
        QVERIFY(store);
        auto owner = openOrFail(m_server->superuserUrl(db));
        std::vector<ModelRecord> made;
        for (uint64_t seed : {3, 4}) {
            TinyCheckpointOptions tiny;
            tiny.seed = seed;
            const auto written =
                writeTinyCheckpoint(m_data.filePath(QStringLiteral("compare%1.d2dpo").arg(seed)).toStdString(), tiny);
            QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
            ModelRecord m;
            m.id = written->id;
            m.parentId = made.empty() ? std::string() : made.front().id;
            m.kind = made.empty() ? "pretrained" : "d2dpo";
            m.name = "model " + std::to_string(seed);
            m.path = written->path;
            m.specJson = toJson(written->spec);
            QVERIFY(owner->addModel(m));
            made.push_back(m);
        }
        QTest::qWait(100);
        StoppedBackends stopped(backendsOf(*m_server, "mona"));
        QVERIFY(stopped.stopped());
        QElapsedTimer clock;
        clock.start();
        CompareModelsDialog dialog(*store, QString::fromStdString(made.back().id));
        dialog.show();
        const qint64 opening = clock.elapsed();
        const qint64 listing = longestTurnUntil([&] { return dialog.tickedModels().size() == 2; }, 15000);
        QCOMPARE(dialog.tickedModels().size(), qsizetype(2)); // the model and its reference, read by a reader
        dialog.setPairsPerTwoModels(4);
        QSignalSpy created(&dialog, &CompareModelsDialog::comparisonCreated);
        clock.start();
        QVERIFY(dialog.start());
        const qint64 starting = clock.elapsed();
        const qint64 drawing = longestTurnUntil([&] { return created.count() > 0; }, 30000);
        stopped.resume();
        QCOMPARE(created.count(), 1);
        QVERIFY2(dialog.lastError().isEmpty(), qPrintable(dialog.lastError()));
        const auto comparisons = owner->comparisons().value();
        QCOMPARE(comparisons.size(), size_t(1));
        QCOMPARE(comparisons.front().id, dialog.createdComparison());
        const qint64 longest = std::max({opening, listing, starting, drawing});
        qInfo("with the server stopped: Compare models opened in %lld ms and started in %lld ms, turns at most %lld ms",
              static_cast<long long>(opening), static_cast<long long>(starting),
              static_cast<long long>(std::max(listing, drawing)));
        QVERIFY2(longest < kStallMs, qPrintable(QStringLiteral("the window's thread was held %1 ms").arg(longest)));
    }

    void preferencesAreImportedOffTheWindowsThread()
    {
        const std::string db = m_server->createDatabase("maintainerimport");
        TinyCheckpointOptions tiny;
        tiny.length = 10;
        const auto written = writeTinyCheckpoint(m_data.filePath("imported.d2dpo").toStdString(), tiny);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
        auto owner = storeWithReference(m_server->superuserUrl(db), written.value());
        QVERIFY(owner);
        auto store = openOrFail(m_server->url("mona", "mona-secret", db));
        QVERIFY(store);
        const QString file = m_data.filePath(QStringLiteral("preferences.jsonl"));
        QFile jsonl(file);
        QVERIFY(jsonl.open(QIODevice::WriteOnly));
        jsonl.write("{\"chosen\": \"1110000001\", \"rejected\": \"1100000000\"}\n"
                    "{\"chosen\": \"1000000001\", \"rejected\": \"1111000000\"}\n");
        jsonl.close();
        MainWindow window(std::move(store));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::qWait(300);
        const ModelList models = ModelListReader::readNow(*owner);
        StoppedBackends stopped(backendsOf(*m_server, "mona"));
        QVERIFY(stopped.stopped());
        // The task's question is the one modal step; it is answered as soon as it shows.
        QTimer answer;
        connect(&answer, &QTimer::timeout, this, [] {
            if (auto* dialog = qobject_cast<QInputDialog*>(QApplication::activeModalWidget()))
                dialog->accept();
        });
        answer.start(20);
        QElapsedTimer clock;
        clock.start();
        window.importPreferencesAs(file, models);
        const qint64 asking = clock.elapsed();
        auto* bar = window.statusBar();
        const qint64 importing =
            longestTurnUntil([&] { return bar->currentMessage().startsWith(QLatin1String("Imported")); }, 20000);
        stopped.resume();
        QCOMPARE(bar->currentMessage(), QStringLiteral("Imported 2 preferences"));
        QCOMPARE(owner->preferences().value().size(), size_t(2));
        qInfo("with the server stopped: the import (its question answered) %lld ms, turns at most %lld ms",
              static_cast<long long>(asking), static_cast<long long>(importing));
        QVERIFY2(importing < kStallMs, qPrintable(QStringLiteral("the window's thread was held %1 ms").arg(importing)));
    }

    void theComparisonResultsNeverReadOnTheWindowsThread()
    {
        const std::string db = m_server->createDatabase("maintainerresults");
        auto store = maintainer(db);
        QVERIFY(store);
        auto owner = openOrFail(m_server->superuserUrl(db));
        QVERIFY(owner->addModel(modelRecord("ref", "", "pretrained")));
        QVERIFY(owner->addModel(modelRecord("tuned", "ref", "d2dpo")));
        std::vector<ShownPair> blind = somePairs(2);
        for (ShownPair& p : blind) {
            p.leftModelId = "ref";
            p.rightModelId = "tuned";
        }
        const int64_t first = owner->addComparison("binary-integers:8", {"ref", "tuned"}, blind).value();
        ComparisonResults results(*store);
        results.setPollInterval(200);
        results.show();
        QTRY_VERIFY(results.report() && results.report()->comparisonId == first);
        const int64_t second = owner->addComparison("binary-integers:8", {"ref", "tuned"}, {blind.front()}).value();
        QTest::qWait(100);
        StoppedBackends stopped(backendsOf(*m_server, "mona"));
        QVERIFY(stopped.stopped());
        // Asking for the new comparison, the Refresh button and the polls all list the comparisons
        // through the look's connection, never the window's.
        QElapsedTimer clock;
        clock.start();
        QVERIFY(results.showComparison(second));
        results.refresh(true);
        const qint64 asking = clock.elapsed();
        const qint64 turns = longestTurnUntil([] { return false; }, 1500);
        stopped.resume();
        QTRY_VERIFY_WITH_TIMEOUT(results.report() && results.report()->comparisonId == second, 15000);
        QCOMPARE(results.shownComparison(), second);
        qInfo("with the server stopped: the comparison results asked for in %lld ms, turns at most %lld ms",
              static_cast<long long>(asking), static_cast<long long>(turns));
        QVERIFY2(std::max(asking, turns) < kStallMs,
                 qPrintable(QStringLiteral("the window's thread was held %1 ms").arg(std::max(asking, turns))));
    }
};

QTEST_MAIN(TestTeamMaintainer)
#include "tst_teammaintainer.moc"
