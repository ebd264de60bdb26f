// SPDX-License-Identifier: GPL-3.0-or-later
// A team labeler's outbox against a real PostgreSQL server: a choice is kept on disk and sent by
// the writer's own connection; while the server is out of reach everything stays kept, in order,
// and is written when it is back, never twice (a first commit whose answer was lost counts as
// written); a choice on a pair that got its labels meanwhile is refused with the reason; an undo
// of a label the server has goes the same way; and what one sitting could not send, the next one
// sends.
#include <QtTest/QtTest>

#include "labeling/labeloutbox.h"
#include "labeling/labelsession.h"
#include "labeling/outboxsender.h"
#include "support/teamstorefixture.h"

using namespace d2dpo;
using namespace d2dpo::test;

class TestTeamOutbox final : public TeamStoreFixture {
    Q_OBJECT

    std::unique_ptr<LabelOutbox> openOutbox(const QString& name)
    {
        auto outbox = LabelOutbox::open(m_dir.filePath(name).toStdString());
        if (!outbox)
            qWarning("%s", outbox.error().c_str());
        return outbox ? std::move(outbox.value()) : nullptr;
    }
    void cutOff(const std::string& role, const std::string& db)
    {
        std::string error;
        QVERIFY2(m_server->exec("postgres", "ALTER ROLE " + role + " NOLOGIN", &error), error.c_str());
        QVERIFY2(m_server->exec(db,
                                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + role + "'",
                                &error),
                 error.c_str());
    }
    void letIn(const std::string& role)
    {
        std::string error;
        QVERIFY2(m_server->exec("postgres", "ALTER ROLE " + role + " LOGIN", &error), error.c_str());
    }
    static int64_t labelsOn(PreferenceStore& store, int64_t pairId, bool includeUndone)
    {
        int64_t n = 0;
        for (const LabelRecord& label : store.labels(includeUndone).value())
            n += label.pairId == pairId;
        return n;
    }

private Q_SLOTS:
    void initTestCase() { startTeam(); }

    void aChoiceMadeOfflineIsKeptAndWrittenOnce()
    {
        const std::string db = teamStore(4, 1);
        auto window = openOrFail(as("ana", db)); // the window's connection: never used to label
        auto writer = openOrFail(as("ana", db));
        auto max = openOrFail(as("max", db));
        auto outbox = openOutbox("offline.jsonl");
        QVERIFY(window && writer && max && outbox);
        LabelSession session(*window, "someone typed");
        QCOMPARE(session.labeler(), std::string("ana")); // the role, never a typed name
        session.useOutbox(outbox.get());
        QCOMPARE(session.addClaimed(writer->claimPairs("ana", 4).value()), size_t(4));
        QVERIFY(session.label(Choice::Left, 900).value().outboxSeq > 0);
        QCOMPARE(outbox->pendingCount(), size_t(1));
        OutboxReport sent = sendOutbox(*outbox, *writer, "ana");
        QCOMPARE(sent.written.size(), size_t(1));
        QCOMPARE(sent.pending, size_t(0));
        // The network goes: the server ends ana's connections and lets her in no more.
        cutOff("ana", db);
        const int64_t offline = session.current()->id;
        QVERIFY(session.label(Choice::Right, 800).value().outboxSeq > 0);
        QVERIFY(session.current() && session.current()->id != offline); // the next leased pair, from the queue
        const OutboxReport out = sendOutbox(*outbox, *writer, "ana");
        QVERIFY(out.unreachable);
        qInfo("while the store is out of reach: %s", out.error.c_str());
        QCOMPARE(out.pending, size_t(1));
        QCOMPARE(outbox->pendingPairIds(), std::set<int64_t>{offline});
        // The network is back; the first attempt's commit had gone through, only its answer was lost.
        letIn("ana");
        QVERIFY(openOrFail(as("ana", db))->addLabel(offline, Choice::Right, "ana", 800));
        const OutboxReport back = sendOutbox(*outbox, *writer, "ana");
        QVERIFY2(!back.unreachable, back.error.c_str());
        QCOMPARE(back.written.size(), size_t(1));
        QVERIFY(back.refused.empty());
        QCOMPARE(labelsOn(*max, offline, true), int64_t(1)); // never labelled twice by the retry
        QVERIFY(session.canUndo());
        // A kept choice on a pair that got its labels meanwhile is refused with the reason.
        cutOff("ana", db);
        const int64_t taken = session.current()->id;
        const int64_t seq = session.label(Choice::Left, 700).value().outboxSeq;
        QVERIFY(max->addLabel(taken, Choice::Right, "max", 10));
        letIn("ana");
        const int before = session.labelledCount();
        const OutboxReport refused = sendOutbox(*outbox, *writer, "ana");
        QCOMPARE(refused.written.size(), size_t(0));
        QCOMPARE(refused.refused.size(), size_t(1));
        QCOMPARE(refused.refused.front().first, seq);
        qInfo("a kept choice refused: %s", refused.refused.front().second.c_str());
        session.forgetRefused(seq);
        QCOMPARE(session.labelledCount(), before - 1);
        QCOMPARE(labelsOn(*max, taken, false), int64_t(1)); // max's, and only his
    }

    void anUndoGoesTheSameWayInOrder()
    {
        const std::string db = teamStore(3, 1);
        auto window = openOrFail(as("ben", db));
        auto writer = openOrFail(as("ben", db));
        auto outbox = openOutbox("undo.jsonl");
        QVERIFY(window && writer && outbox);
        LabelSession session(*window, "");
        session.useOutbox(outbox.get());
        session.addClaimed(writer->claimPairs("ben", 3).value());
        // Undone before it was sent: dropped here, the store never hears of it.
        const int64_t first = session.current()->id;
        QVERIFY(session.label(Choice::Left, 100));
        QVERIFY(session.undo().value().has_value());
        QCOMPARE(session.current()->id, first);
        QCOMPARE(outbox->pendingCount(), size_t(0));
        // Sent, then undone while the server is away: the undo waits in the outbox, after it.
        QVERIFY(session.label(Choice::Right, 200));
        QCOMPARE(sendOutbox(*outbox, *writer, "ben").written.size(), size_t(1));
        QCOMPARE(labelsOn(*writer, first, false), int64_t(1));
        cutOff("ben", db);
        QVERIFY(session.undo().value().has_value());
        QCOMPARE(session.current()->id, first); // shown again at once, from memory
        QCOMPARE(outbox->pendingCount(), size_t(1));
        QVERIFY(sendOutbox(*outbox, *writer, "ben").unreachable);
        letIn("ben");
        // Labelled again, then both go in order: the undo, then the new label.
        QVERIFY(session.label(Choice::Tie, 300));
        const OutboxReport sent = sendOutbox(*outbox, *writer, "ben");
        QVERIFY2(!sent.unreachable, sent.error.c_str());
        QCOMPARE(sent.undone, 1);
        QCOMPARE(sent.written.size(), size_t(1));
        QCOMPARE(labelsOn(*writer, first, true), int64_t(2)); // the undone one kept as history
        const auto active = writer->labelledPairs("ben").value();
        QCOMPARE(active.size(), size_t(1));
        QCOMPARE(active.front().second.choice, Choice::Tie);
    }

    void aPassingFailureKeepsTheChoice()
    {
        const std::string db = teamStore(3, 1);
        auto writer = openOrFail(as("ben", db));
        auto outbox = openOutbox("passing.jsonl");
        QVERIFY(writer && outbox);
        const auto pairs = writer->claimPairs("ben", 3).value();
        QVERIFY(outbox->addLabel(pairs[0], Choice::Left, 10));
        QVERIFY(outbox->addLabel(pairs[1], Choice::Right, 20));
        // Another session holds the pairs ben labelled and ben's label waits for them 2 s at most:
        // a lock timeout, as a deadlock or a cancelled statement would be, is no reason to give up.
        std::string error;
        QVERIFY2(m_server->exec("postgres", "ALTER ROLE ben SET lock_timeout = '200ms'", &error), error.c_str());
        writer = openOrFail(as("ben", db)); // the setting holds from the next connection
        PGconn* holder = PQconnectdb(m_server->superuserUrl(db).c_str());
        // The pairs' rows, which a label locks (a labeler's waits 2 s at most, postgresaccess.cpp).
        const std::string lock = "BEGIN; SELECT 1 FROM pairs WHERE id IN (" + std::to_string(pairs[0].id) + ", " +
                                 std::to_string(pairs[1].id) + ") FOR UPDATE";
        PGresult* locked = PQexec(holder, lock.c_str());
        QVERIFY2(PQresultStatus(locked) == PGRES_TUPLES_OK, PQerrorMessage(holder));
        PQclear(locked);
        const OutboxReport held = sendOutbox(*outbox, *writer, "ben");
        qInfo("while another holds the write lock: %s", held.error.c_str());
        QVERIFY(held.unreachable);
        QVERIFY(held.refused.empty());
        QCOMPARE(held.pending, size_t(2));
        PQfinish(holder); // the lock goes with its session
        QVERIFY2(m_server->exec("postgres", "ALTER ROLE ben RESET lock_timeout", &error), error.c_str());
        const OutboxReport sent = sendOutbox(*outbox, *writer, "ben");
        QVERIFY2(!sent.unreachable, sent.error.c_str());
        QCOMPARE(sent.written.size(), size_t(2));
        QCOMPARE(writer->labels(false).value().size(), size_t(2));
    }

    void anotherWindowsLabelIsNotTakenForOurs()
    {
        const std::string db = teamStore(2, 1);
        auto writer = openOrFail(as("ana", db));
        auto outbox = openOutbox("two-windows.jsonl");
        QVERIFY(writer && outbox);
        const auto pairs = writer->claimPairs("ana", 2).value();
        // Two windows of ana show the same leased pair; the other one's choice reaches the store first.
        QVERIFY(openOrFail(as("ana", db))->addLabel(pairs[0].id, Choice::Right, "ana", 4321));
        const int64_t seq = outbox->addLabel(pairs[0], Choice::Left, 1234).value();
        const OutboxReport sent = sendOutbox(*outbox, *writer, "ana");
        QCOMPARE(sent.written.size(), size_t(0));
        QCOMPARE(sent.refused.size(), size_t(1));
        QCOMPARE(sent.refused.front().first, seq);
        qInfo("the same role from another window: %s", sent.refused.front().second.c_str());
        const auto active = writer->labelledPairs("ana").value();
        QCOMPARE(active.size(), size_t(1));
        QCOMPARE(active.front().second.choice, Choice::Right); // the other window's, untouched
    }

    void aKeptChoiceForAPairNoLongerThereIsRefused()
    {
        const std::string db = teamStore(2, 1);
        auto writer = openOrFail(as("ben", db));
        QVERIFY(writer);
        const auto pairs = writer->claimPairs("ben", 2).value();
        {
            auto outbox = openOutbox("made-again.jsonl");
            ShownPair elsewhere = pairs[0]; // the same id, in a store made again since: another pair
            std::swap(elsewhere.left, elsewhere.right);
            QVERIFY(outbox->addLabel(elsewhere, Choice::Left, 1));
            QVERIFY(outbox->addLabel(pairs[1], Choice::Left, 2));
        }
        auto outbox = openOutbox("made-again.jsonl");
        const OutboxReport sent = sendOutbox(*outbox, *writer, "ben");
        QCOMPARE(sent.refused.size(), size_t(1));
        QVERIFY2(sent.refused.front().second.find("not the pair that was labelled") != std::string::npos,
                 sent.refused.front().second.c_str());
        QCOMPARE(sent.written.size(), size_t(1));
        QCOMPARE(writer->labelledPairs("ben").value().front().first.id, pairs[1].id);
    }

    void whatOneSittingKeptTheNextOneSends()
    {
        const std::string db = teamStore(3, 1);
        auto writer = openOrFail(as("ana", db));
        QVERIFY(writer);
        const auto pairs = writer->claimPairs("ana", 3).value();
        QCOMPARE(pairs.size(), size_t(3));
        {
            auto outbox = openOutbox("sittings.jsonl");
            QVERIFY(outbox);
            QVERIFY(outbox->addLabel(pairs[0], Choice::Left, 10));
            QVERIFY(outbox->addLabel(pairs[1], Choice::Right, 20));
            // The window closes with the server away: nothing sent.
        }
        auto outbox = openOutbox("sittings.jsonl");
        QVERIFY(outbox);
        QCOMPARE(outbox->inheritedCount(), size_t(2));
        LabelSession session(*writer, "");
        session.useOutbox(outbox.get());
        // Their pairs are still leased to ana and come back in a claim, but are not shown again.
        QCOMPARE(session.addClaimed(writer->claimPairs("ana", 8).value()), size_t(1));
        QCOMPARE(session.current()->id, pairs[2].id);
        const OutboxReport sent = sendOutbox(*outbox, *writer, "ana");
        QCOMPARE(sent.written.size(), size_t(2));
        QCOMPARE(writer->labels(false).value().size(), size_t(2));
        QVERIFY(!session.canUndo()); // an earlier sitting's labels are not this one's to undo
    }
};

QTEST_GUILESS_MAIN(TestTeamOutbox)
#include "tst_teamoutbox.moc"
