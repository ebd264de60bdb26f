// SPDX-License-Identifier: GPL-3.0-or-later
// A window on a team store closes at once when the server hangs, against a real PostgreSQL
// server whose processes for the maintainer are stopped (SIGSTOP) while the pair supply writes
// new pairs there: the supply's statement is given up (the server rolls the pairs back) rather
// than awaited for the answer limit (30 s), and the label channel gives its last send up after
// its own short wait. Before, closing waited the whole answer limit.
#include <QApplication>
#include <QElapsedTimer>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest/QtTest>

#include <memory>

#include "base/waitbreaker.h"
#include "store/preferencestore.h"
#include "support/pgbackends.h"
#include "support/pgserver.h"
#include "support/teamwindowsetup.h"
#include "support/storerecords.h"
#include "support/tinycheckpoint.h"
#include "ui/common/ownconnection.h"
#include "ui/label/labelview.h"
#include "ui/label/pairsupply.h"
#include "ui/team/teamlabelchannel.h"

using namespace d2dpo;
using namespace d2dpo::test;
using namespace d2dpo::ui;

class TestTeamClosing final : public QObject {
    Q_OBJECT

    PostgresServer* m_server = nullptr;
    QTemporaryDir m_data;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_data.isValid());
        m_server = teamWindowSetUp(m_data);
        if (!m_server)
            QSKIP(("no PostgreSQL server: " + PostgresServer::unavailableReason()).c_str());
        QVERIFY(openOrFail(m_server->superuserUrl(m_server->createDatabase("closing")))); // the roles
        std::string error;
        QVERIFY2(makeRoleIn(*m_server, "cleo", "cleo-secret", "d2dpo_maintainer", &error), error.c_str());
    }

    void aBrokenWaitEndsAStatementOnAStoppedServerAtOnce()
    {
        const std::string db = m_server->createDatabase("breaker");
        QVERIFY(openOrFail(m_server->superuserUrl(db)));
        auto breaker = std::make_shared<WaitBreaker>();
        auto opened = PreferenceStore::open(m_server->url("cleo", "cleo-secret", db),
                                            PreferenceStore::OpenMode::MustExist, breaker);
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().c_str());
        auto store = std::move(opened.value());
        QVERIFY(store->models().ok());
        StoppedBackends stopped(backendsOf(*m_server, "cleo"));
        QVERIFY(stopped.stopped());
        QElapsedTimer clock;
        clock.start();
        std::thread tripper([&breaker] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            breaker->trip();
        });
        const auto models = store->models(); // waits on the stopped server until the trip
        tripper.join();
        const qint64 waited = clock.elapsed();
        QVERIFY(!models.ok());
        QVERIFY2(QString::fromStdString(models.error()).contains("given up"), models.error().c_str());
        QVERIFY2(waited >= 250 && waited < 2000, qPrintable(QStringLiteral("%1 ms").arg(waited)));
        // Every later statement fails at once too, without connecting again.
        clock.start();
        QVERIFY(!store->models().ok());
        QVERIFY2(clock.elapsed() < 500, qPrintable(QStringLiteral("%1 ms").arg(clock.elapsed())));
        stopped.resume();
        // A breaker tripped before the open is heard from the open's first statement on.
        auto tripped = std::make_shared<WaitBreaker>();
        tripped->trip();
        const auto refused = PreferenceStore::open(m_server->url("cleo", "cleo-secret", db),
                                                   PreferenceStore::OpenMode::MustExist, tripped);
        QVERIFY(!refused.ok());
        QVERIFY2(QString::fromStdString(refused.error()).contains("given up"), refused.error().c_str());
    }

    void theLabelViewClosesWhileItsPairsAreWrittenToAServerThatHangs()
    {
        const std::string db = m_server->createDatabase("closinglabel");
        TinyCheckpointOptions tiny;
        tiny.length = 10;
        const auto written = writeTinyCheckpoint(m_data.filePath("tiny.d2dpo").toStdString(), tiny);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
        QVERIFY(openOrFail(m_server->superuserUrl(db)));
        auto store = openOrFail(m_server->url("cleo", "cleo-secret", db));
        QVERIFY(store && store->canMaintain());
        auto view = std::make_unique<LabelView>(*store);
        QVERIFY(view->teamChannel());
        view->show();
        QVERIFY(QTest::qWaitForWindowExposed(view.get()));
        // A first draw opens the supply's own connection, with the server answering.
        view->generateFrom(QString::fromStdString(written->path), 2);
        QTRY_VERIFY_WITH_TIMEOUT(!view->supply().busy(), 30000);
        auto owner = openOrFail(m_server->superuserUrl(db)); // a role whose server processes still answer
        QCOMPARE(owner->pendingPairs(100).value().size(), size_t(2));

        StoppedBackends stopped(backendsOf(*m_server, "cleo"));
        QVERIFY(stopped.stopped());
        QSignalSpy drawing(&view->supply(), &PairSupply::progress);
        view->generateFrom(QString::fromStdString(written->path), 6);
        // Its first piece (one pair, each pass said) is drawn in milliseconds; then it writes, and
        // waits: no pass is said for half a second while it is still busy.
        QTRY_VERIFY_WITH_TIMEOUT(drawing.count() > 0, 30000);
        for (qsizetype seen = -1; seen != drawing.count();) {
            seen = drawing.count();
            QTest::qWait(500);
        }
        QVERIFY2(view->supply().busy(), "the supply should be waiting on the stopped server");
        // The label channel's last send waits on the stopped server too: given up after its wait,
        // its thread ended (not left behind).
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression("did not answer within .* the last send was given up"));
        QTest::failOnWarning(QRegularExpression("still being connected"));
        QElapsedTimer clock;
        clock.start();
        view.reset();
        const qint64 closing = clock.elapsed();
        stopped.resume();
        qInfo("the window closed in %lld ms with the server stopped (answer limit 30 s)",
              static_cast<long long>(closing));
        // The supply's write is given up at once; the label channel waits its kCloseWaitMs for a
        // last send, then gives it up too.
        const qint64 bound = TeamLabelChannel::kCloseWaitMs + TeamLabelChannel::kGiveUpWaitMs + 1000;
        QVERIFY2(closing < bound, qPrintable(QStringLiteral("closing took %1 ms (bound %2 ms)").arg(closing).arg(bound)));
        // The abandoned write was rolled back: only the first two pairs are there.
        QTest::qWait(1000); // the resumed server reads the closed socket and rolls back
        QCOMPARE(owner->pendingPairs(100).value().size(), size_t(2));
    }
};

QTEST_MAIN(TestTeamClosing)
#include "tst_teamclosing.moc"
