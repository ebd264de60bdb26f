// SPDX-License-Identifier: GPL-3.0-or-later
// File ▸ Open team store…: the URL is tried on a worker thread against a real PostgreSQL server
// before anything closes; the dialog says who the connection labels as (a labeler's role, with its
// pairs to label) or why it cannot connect, opens only a URL that worked as typed, and remembers
// the URL without its password. And the Label view, on a team store, labels as the role, shows a
// labeler no maintainer's tools, and keeps a choice made while the server is out of reach; the
// Train view follows a run of another machine as it trains. A key press never waits on the server:
// with every server process of the labeler stopped, keys still label and the pairs move on.
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QTabWidget>
#include <QTreeWidget>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QtTest/QtTest>

#include <csignal>

#include "labeling/labeloutbox.h"
#include "store/preferencestore.h"
#include "support/pgbackends.h"
#include "support/pgserver.h"
#include "support/teamwindowsetup.h"
#include "support/storerecords.h"
#include "ui/label/labelview.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/storelaunch.h"
#include "ui/team/teamstoredialog.h"
#include "ui/models/comparisonresults.h"
#include "ui/models/modelsview.h"
#include "ui/experts/labelerspanel.h"
#include "ui/train/runhistory.h"
#include "ui/train/trainview.h"
#include "ui/common/metricplot.h"
#include "ui/team/teamlabelchannel.h"

using namespace d2dpo;
using namespace d2dpo::test;
using namespace d2dpo::ui;

class TestTeamStoreDialog final : public QObject {
    Q_OBJECT

    PostgresServer* m_server = nullptr;
    std::string m_database;
    QTemporaryDir m_data; ///< this machine's data folder (the label outboxes live there)

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_data.isValid());
        m_server = teamWindowSetUp(m_data);
        if (!m_server)
            QSKIP(("no PostgreSQL server: " + PostgresServer::unavailableReason()).c_str());
        m_database = m_server->createDatabase("dialog");
        auto owner = openOrFail(m_server->superuserUrl(m_database));
        QVERIFY(owner && owner->addPairs(somePairs(3), "generated"));
        std::string error;
        QVERIFY2(makeRoleIn(*m_server, "dora", "dora-secret", "d2dpo_labeler", &error), error.c_str());
    }

    void aWorkingUrlSaysWhoAndOpens()
    {
        TeamStoreDialog dialog;
        dialog.findChild<QLineEdit*>()->setText(QString::fromStdString(m_server->url("dora", "dora-secret", m_database)));
        QVERIFY(!dialog.canOpen());
        dialog.tryUrl();
        QTRY_VERIFY_WITH_TIMEOUT(dialog.canOpen(), 15000);
        QCOMPARE(dialog.statusText(), QStringLiteral("Connected as dora, a labeler, 3 pairs to label"));
        dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open)->click();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        const QString remembered = QSettings().value("store/teamUrl").toString();
        QVERIFY2(remembered.startsWith(QLatin1String("postgresql://dora@")), qPrintable(remembered));
        QVERIFY(!remembered.contains(QLatin1String("dora-secret")));
        // Typed again, the URL must be tried again before it opens.
        dialog.findChild<QLineEdit*>()->setText(dialog.url() + QLatin1Char(' '));
        QVERIFY(!dialog.canOpen());
    }

    void theNewWindowsCommandLineHoldsNoPassword()
    {
        const std::string password = "p@ss:w/rd?&=% x";
        std::string error;
        QVERIFY2(m_server->createLoginRole("eli", password, &error), error.c_str());
        QVERIFY2(m_server->exec("postgres", "GRANT d2dpo_labeler TO eli", &error), error.c_str());
        const StoreLaunch launch = storeLaunch(QString::fromStdString(m_server->url("eli", password, m_database)));
        QCOMPARE(launch.password, QString::fromStdString(password));
        QCOMPARE(launch.arguments.size(), 2);
        QVERIFY2(launch.arguments.last().startsWith(QLatin1String("postgresql://eli@")),
                 qPrintable(launch.arguments.last()));
        QVERIFY(!launch.arguments.join(QLatin1Char(' ')).contains(QLatin1String("p%40ss")));
        // The new window takes the password from its environment, once, and connects with it.
        qputenv(kStorePasswordVariable, launch.password.toUtf8());
        const QString handed = storeWithHandedPassword(launch.arguments.last());
        QVERIFY(qgetenv(kStorePasswordVariable).isEmpty());
        auto store = PreferenceStore::open(handed.toStdString());
        QVERIFY2(store, store ? "" : store.error().c_str());
        QCOMPARE(store.value()->teamIdentity(), std::string("eli"));
        QVERIFY(store.value()->displayName().find("p%40ss") == std::string::npos);
        // Without a handed password the store is named as given (~/.pgpass supplies it).
        QCOMPARE(storeWithHandedPassword(launch.arguments.last()), launch.arguments.last());
    }

    void aBadUrlSaysWhyAndOpensNothing()
    {
        TeamStoreDialog dialog;
        auto* edit = dialog.findChild<QLineEdit*>();
        edit->setText(QString::fromStdString(m_server->url("dora", "wrong", m_database)));
        dialog.tryUrl();
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.statusText().startsWith(QLatin1String("Connecting")), 15000);
        QVERIFY2(dialog.statusText().contains(QLatin1String("password authentication failed")),
                 qPrintable(dialog.statusText()));
        QVERIFY(!dialog.canOpen());
        edit->setText(QStringLiteral("/home/me/store.sqlite"));
        dialog.tryUrl();
        QTRY_COMPARE_WITH_TIMEOUT(dialog.statusText(), QStringLiteral("A team store's URL starts with postgresql://"),
                                  15000);
        QVERIFY(!dialog.canOpen());
    }

    void theLabelViewLabelsAsTheRole()
    {
        auto store = openOrFail(m_server->url("dora", "dora-secret", m_database));
        QVERIFY(store);
        MainWindow window(std::move(store));
        LabelView* view = window.labelView();
        view->setLabeler(QStringLiteral("someone else")); // a typed name is ignored on a team store
        QCOMPARE(view->labeler(), QStringLiteral("dora"));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(view->hasFocus() || QApplication::focusWidget());
        QTest::qWait(300); // the pair painted, as a person sees it before deciding
        // Sequences, not who made them: no model, and no claim that none did.
        QTRY_VERIFY(view->provenance().startsWith(QLatin1String("Pair #")));
        QVERIFY2(!view->provenance().contains(QLatin1String("·")), qPrintable(view->provenance()));
        QTest::keyClick(QApplication::focusWidget() ? QApplication::focusWidget() : view, Qt::Key_A); // left is better
        QTRY_COMPARE(window.store().labels(false).value().size(), size_t(1));
        QCOMPARE(window.store().labels(false).value()[0].labeler, std::string("dora"));
        // A labeler's desktop: no Train or Models view, no model to pick, no rule to label with.
        auto* tabs = window.findChild<QTabWidget*>();
        QVERIFY(tabs->isTabVisible(0) && !tabs->isTabVisible(1) && !tabs->isTabVisible(2));
        QVERIFY(!window.findChild<QPushButton*>(QStringLiteral("autoLabelButton"))->isVisible());
        QVERIFY(!view->findChild<QComboBox*>()->isVisible());
    }

    void theLabelViewKeepsAChoiceThroughAnOutage()
    {
        auto store = openOrFail(m_server->url("dora", "dora-secret", m_database));
        QVERIFY(store);
        MainWindow window(std::move(store));
        LabelView* view = window.labelView();
        QStringList said;
        connect(view, &LabelView::statusMessage, this, [&said](const QString& m) { said << m; });
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::qWait(300);
        const size_t before = window.store().labels(false).value().size();
        std::string error;
        QVERIFY2(m_server->exec("postgres", "ALTER ROLE dora NOLOGIN", &error), error.c_str());
        QVERIFY2(m_server->exec(m_database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                            "WHERE usename = 'dora'", &error),
                 error.c_str());
        QTest::keyClick(QApplication::focusWidget() ? QApplication::focusWidget() : view, Qt::Key_L);
        QTRY_VERIFY(!said.isEmpty() && said.last().startsWith(QLatin1String("The team store cannot be reached: 1 choice")));
        QVERIFY2(m_server->exec("postgres", "ALTER ROLE dora LOGIN", &error), error.c_str());
        QTRY_VERIFY_WITH_TIMEOUT(said.last() == QStringLiteral("The team store is back: 1 kept label written"), 12000);
        QCOMPARE(window.store().labels(false).value().size(), before + 1);
    }

    void aKeyPressNeverWaitsOnTheServer()
    {
        const std::string db = m_server->createDatabase("nowait");
        QVERIFY(openOrFail(m_server->superuserUrl(db))->addPairs(somePairs(6), "generated"));
        auto store = openOrFail(m_server->url("dora", "dora-secret", db));
        QVERIFY(store);
        MainWindow window(std::move(store));
        LabelView* view = window.labelView();
        QVERIFY(view->teamChannel());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(view->currentPair()); // claimed on the worker's connection
        QTest::qWait(300);
        // Every server process serving dora stops answering (a hung server, a dead network): any
        // call on the window's thread would wait for ever. A watchdog lets them go after 30 s, so
        // a broken build fails here rather than hangs.
        const std::vector<int> pids = backendsOf(*m_server, "dora");
        QVERIFY(pids.size() >= 2); // the window's connection and the worker's
        StoppedBackends stopped(pids);
        QVERIFY(stopped.stopped());
        QElapsedTimer clock;
        clock.start();
        QWidget* keys = QApplication::focusWidget() ? QApplication::focusWidget() : view;
        std::set<qint64> shown{view->currentPair()->id};
        for (int press = 0; press < 3; ++press) {
            QTest::keyClick(keys, press % 2 ? Qt::Key_L : Qt::Key_A);
            QVERIFY(view->currentPair());
            QVERIFY(shown.insert(view->currentPair()->id).second); // the next pair, at once
            QTest::qWait(150); // painted, and seen
        }
        const qint64 pressing = clock.elapsed();
        QCOMPARE(view->sessionCount(), 3);
        QVERIFY(view->teamChannel()->waiting() >= 2); // kept on disk, not on the server yet
        stopped.resume();
        QVERIFY2(pressing < 20000, qPrintable(QStringLiteral("3 presses took %1 ms").arg(pressing)));
        qInfo("3 presses with the server stopped took %lld ms (3 x 150 ms of it waiting for paint)",
              static_cast<long long>(pressing));
        QTRY_COMPARE_WITH_TIMEOUT(openOrFail(m_server->superuserUrl(db))->labels(false).value().size(), size_t(3),
                                  15000);
        QTRY_COMPARE(view->teamChannel()->waiting(), size_t(0));
    }

    void pairsAMaintainerAddsReachAnIdleLabeler()
    {
        const std::string db = m_server->createDatabase("idle");
        auto owner = openOrFail(m_server->superuserUrl(db));
        QVERIFY(owner->addPairs(somePairs(1), "generated"));
        auto store = openOrFail(m_server->url("dora", "dora-secret", db));
        QVERIFY(store);
        MainWindow window(std::move(store));
        LabelView* view = window.labelView();
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(view->currentPair());
        QTest::qWait(300);
        QTest::keyClick(QApplication::focusWidget() ? QApplication::focusWidget() : view, Qt::Key_A);
        auto said = [view] {
            for (QLabel* label : view->findChildren<QLabel*>())
                if (label->isVisible() && label->text().startsWith(QLatin1String("No pairs left")))
                    return label->text();
            return QString();
        };
        QTRY_COMPARE(said(), QStringLiteral("No pairs left for you to label. New pairs appear here as the team's "
                                            "maintainers add them."));
        QVERIFY(owner->addPairs(somePairs(3), "generated"));
        QTRY_VERIFY_WITH_TIMEOUT(view->currentPair(), 15000); // the next look for pairs finds them
        QTRY_COMPARE(openOrFail(m_server->superuserUrl(db))->labels(false).value().size(), size_t(1));
    }

    void theLabelersReportReadsOffTheWindowsThread()
    {
        auto store = openOrFail(m_server->url("dora", "dora-secret", m_database)); // dora's labels of the tests above
        QVERIFY(store);
        LabelersPanel panel(*store);
        panel.show();
        QTRY_VERIFY(panel.report().has_value() && !panel.busy());
        StoppedBackends stopped(backendsOf(*m_server, "dora")); // the window's connection and the panel's
        QVERIFY(stopped.stopped());
        panel.refresh(); // returns at once: the labels are read on the panel's own connection
        QVERIFY(panel.busy());
        stopped.resume();
        QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), 10000);
        QVERIFY(panel.report().has_value());
    }

    void comparisonResultsFollowOtherMachinesLabels()
    {
        std::string error;
        QVERIFY2(m_server->createLoginRole("mara", "mara-secret", &error), error.c_str());
        QVERIFY2(m_server->exec("postgres", "GRANT d2dpo_maintainer TO mara", &error), error.c_str());
        const std::string db = m_server->createDatabase("results");
        auto owner = openOrFail(m_server->superuserUrl(db));
        QVERIFY(owner->addModel(modelRecord("ref", "", "pretrained")));
        QVERIFY(owner->addModel(modelRecord("tuned", "ref", "d2dpo")));
        std::vector<ShownPair> blind = somePairs(2);
        for (ShownPair& p : blind) {
            p.leftModelId = "ref";
            p.rightModelId = "tuned";
        }
        const int64_t id = owner->addComparison("binary-integers:8", {"ref", "tuned"}, blind).value();
        auto store = openOrFail(m_server->url("mara", "mara-secret", db));
        QVERIFY(store);
        ComparisonResults results(*store);
        results.setPollInterval(200); // looked at on a pool thread on a team store
        results.show();
        QTRY_VERIFY(results.report() && results.report()->comparisonId == id);
        QCOMPARE(results.report()->games, int64_t(0));
        // Another machine's labeler labels a pair of it: the window follows within a few looks.
        const auto pending = owner->pendingPairs(10).value();
        QVERIFY(!pending.empty());
        QVERIFY(owner->addLabel(pending.front().id, Choice::Left, "ana", 900));
        QTRY_COMPARE_WITH_TIMEOUT(results.report()->games, int64_t(1), 10000);
    }

    void theTrainAndModelsTabsNeverWaitOnTheServer()
    {
        // Showing the Train or the Models tab lists the models (and the runs, and the labels'
        // counts) again: read off the window's thread, a server that stopped answering costs the
        // window nothing (it would wait up to the answer limit, 30 s, for each read).
        std::string error;
        QVERIFY2(m_server->createLoginRole("vera", "vera-secret", &error), error.c_str());
        QVERIFY2(m_server->exec("postgres", "GRANT d2dpo_maintainer TO vera", &error), error.c_str());
        const std::string db = m_server->createDatabase("modelstab");
        auto owner = openOrFail(m_server->superuserUrl(db));
        QVERIFY(owner && owner->addModel(modelRecord("ref", "", "pretrained")));
        // A fine-tuned model, chosen: its details say its run (where it stopped).
        RunRecord run;
        run.kind = RunKind::D2dpo;
        run.referenceModelId = "ref";
        const int64_t runId = owner->startRun(run).value();
        QVERIFY(owner->appendMetrics(runId, 3, {{"loss", 0.6}}));
        QVERIFY(owner->finishRun(runId, RunStatus::Completed, "", ""));
        QVERIFY(owner->addModel(modelRecord("tuned", "ref", "d2dpo", runId)));
        auto store = openOrFail(m_server->url("vera", "vera-secret", db));
        QVERIFY(store);
        MainWindow window(std::move(store));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* tabs = window.findChild<QTabWidget*>();
        QTRY_VERIFY(tabs);
        QCOMPARE(window.modelsView()->tree()->topLevelItemCount(), 1);
        QVERIFY(window.modelsView()->selectModel(QStringLiteral("tuned")));
        QVERIFY2(window.modelsView()->detailsText().contains(QStringLiteral("Run #%1").arg(runId)),
                 qPrintable(window.modelsView()->detailsText()));
        QTest::qWait(300);
        StoppedBackends stopped(backendsOf(*m_server, "vera"));
        QVERIFY(stopped.stopped());
        // Each tab shown, then what the reads bring when they land (on new connections, which the
        // stopped processes do not serve): the longest the window's thread is held.
        QElapsedTimer clock, watched;
        qint64 longest = 0;
        const auto turn = [&] {
            clock.start();
            QCoreApplication::processEvents();
            longest = std::max(longest, clock.elapsed());
        };
        clock.start();
        tabs->setCurrentIndex(1);
        const qint64 train = clock.elapsed();
        turn();
        clock.start();
        tabs->setCurrentIndex(2);
        const qint64 models = clock.elapsed();
        for (watched.start(); watched.elapsed() < 1500;)
            turn();
        QCOMPARE(window.modelsView()->tree()->topLevelItemCount(), 1);
        stopped.resume();
        longest = std::max({longest, train, models});
        QVERIFY2(longest < 2000, qPrintable(QStringLiteral("the window's thread was held %1 ms").arg(longest)));
        qInfo("with the server stopped: the Train tab %lld ms, the Models tab %lld ms, the longest turn of the "
              "event loop in 1.5 s after them %lld ms",
              static_cast<long long>(train), static_cast<long long>(models), static_cast<long long>(longest));
        QVERIFY(owner->addModel(modelRecord("tuned2", "ref", "d2dpo")));
        tabs->setCurrentIndex(0);
        tabs->setCurrentIndex(2);
        QTRY_COMPARE_WITH_TIMEOUT(window.modelsView()->tree()->topLevelItem(0)->childCount(), 2, 10000);
    }

    void aRunOfAnotherMachineIsFollowedLive()
    {
        std::string error;
        QVERIFY2(m_server->createLoginRole("mara", "mara-secret", &error), error.c_str());
        QVERIFY2(m_server->exec("postgres", "GRANT d2dpo_maintainer TO mara", &error), error.c_str());
        auto trainer = openOrFail(m_server->superuserUrl(m_database)); // the other machine's trainer
        QVERIFY(trainer->addModel(modelRecord("ref", "", "pretrained")));
        auto store = openOrFail(m_server->url("mara", "mara-secret", m_database));
        QVERIFY(store);
        MainWindow window(std::move(store));
        TrainView* train = window.trainView();
        auto* list = train->findChild<RunHistory*>()->findChild<QListWidget*>();
        QVERIFY(list);
        const int before = list->count();
        RunRecord record;
        record.kind = RunKind::D2dpo;
        record.referenceModelId = "ref";
        // As `d2dpo train --nproc 2` on another machine records who started it where.
        record.configJson = R"({"started_by": {"user": "mara", "host": "node7", "processes": 2}})";
        const int64_t runId = trainer->startRun(record).value();
        QVERIFY(trainer->appendMetrics(runId, 1, {{"loss", 0.69}}));
        // The list shows it within a look or two, as alive elsewhere.
        QTRY_COMPARE_WITH_TIMEOUT(list->count(), before + 1, 10000);
        QVERIFY2(list->item(0)->text().contains(QLatin1String("running in another process")),
                 qPrintable(list->item(0)->text()));
        QVERIFY2(list->item(0)->text().contains(QLatin1String("started by mara on node7, 2 processes")),
                 qPrintable(list->item(0)->text()));
        list->setCurrentRow(0);
        QTRY_COMPARE(train->lossPlot()->pointCount(0), 1); // read off the window's thread
        QVERIFY(trainer->appendMetrics(runId, 2, {{"loss", 0.60}}));
        QVERIFY(trainer->appendMetrics(runId, 3, {{"loss", 0.52}}));
        QTRY_COMPARE_WITH_TIMEOUT(train->lossPlot()->pointCount(0), 3, 10000); // its curve grows as it trains
        QVERIFY(trainer->finishRun(runId, RunStatus::Completed, "", ""));
        QTRY_VERIFY_WITH_TIMEOUT(train->logText().contains(QStringLiteral("showing run #%1: completed").arg(runId)),
                                 10000);
    }
};

QTEST_MAIN(TestTeamStoreDialog)
#include "tst_teamstoredialog.moc"
