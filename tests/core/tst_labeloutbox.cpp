// SPDX-License-Identifier: GPL-3.0-or-later
// The label outbox's journal on its own (no server): what is kept is on disk when the call
// returns and comes back in a new sitting, in order; an undo drops an unsent label or follows a
// sent one with the label's id; a line torn by a crash is passed over, any other unreadable line
// refuses the file and leaves it as it was; one process holds a journal at a time; kill -9 in the
// middle of a run of writes loses none that were confirmed. And a session with an outbox never
// writes to the store itself.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <csignal>
#include <fstream>
#include <iterator>
#include <sys/wait.h>
#include <unistd.h>

#include "labeling/labeloutbox.h"
#include "labeling/labelsession.h"

using namespace d2dpo;

namespace {

ShownPair pair(int64_t id)
{
    return {id, "0101", "1010", "m1", "m1", "binary-integers:4", false};
}

std::string readAll(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

} // namespace

class TestLabelOutbox final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)).toStdString(); }

private Q_SLOTS:
    void keptChoicesComeBackInOrderInTheNextSitting()
    {
        const std::string file = path("order.jsonl");
        {
            auto outbox = LabelOutbox::open(file);
            QVERIFY2(outbox, outbox ? "" : outbox.error().c_str());
            LabelOutbox& o = *outbox.value();
            QCOMPARE(o.addLabel(pair(7), Choice::Left, 900).value(), int64_t(1));
            QCOMPARE(o.addLabel(pair(8), Choice::BothBad, 800).value(), int64_t(2));
            QCOMPARE(o.addLabel(pair(9), Choice::Right, 700).value(), int64_t(3));
            QCOMPARE(o.undo(2).value(), int64_t(0)); // never sent: dropped, no undo entry
            auto first = o.take();
            QVERIFY(first && first->seq == 1);
            QVERIFY(!o.take()); // one in flight at a time
            QVERIFY(o.done(1, 41));
            QCOMPARE(o.labelIdOf(1), int64_t(41));
        }
        auto outbox = LabelOutbox::open(file);
        QVERIFY(outbox);
        LabelOutbox& o = *outbox.value();
        QCOMPARE(o.inheritedCount(), size_t(1));
        QCOMPARE(o.pendingPairIds(), std::set<int64_t>{9});
        auto next = o.take();
        QVERIFY(next);
        QCOMPARE(next->seq, int64_t(3));
        QCOMPARE(next->choice, Choice::Right);
        QCOMPARE(next->decideMs, int64_t(700));
        QCOMPARE(next->pair.left, std::string("0101"));
        QCOMPARE(next->pair.leftModelId, std::string("m1"));
        QCOMPARE(next->pair.task, std::string("binary-integers:4"));
        o.putBack(3); // not sent: pending again, first
        QCOMPARE(o.take()->seq, int64_t(3));
        QVERIFY(o.done(3, 42));
        QCOMPARE(o.addLabel(pair(10), Choice::Tie, 1).value(), int64_t(4)); // seqs go on
        auto undone = o.undo(3); // sent already: an undo entry, carrying the label's id
        QCOMPARE(undone.value(), int64_t(5));
        QVERIFY(o.take()->seq == 4 && o.done(4, 43));
        auto undo = o.take();
        QVERIFY(undo && undo->kind == OutboxEntry::Kind::Undo);
        QCOMPARE(undo->undoes, int64_t(3));
        QCOMPARE(undo->labelId, int64_t(42));
        QVERIFY(o.done(5, 0));
        QCOMPARE(o.pendingCount(), size_t(0));
        QCOMPARE(readAll(file), std::string()); // nothing left to send: the journal starts over
    }

    void anUndoKeptForALaterSittingKnowsItsLabel()
    {
        const std::string file = path("undo.jsonl");
        {
            auto o = LabelOutbox::open(file).value();
            QVERIFY(o->addLabel(pair(1), Choice::Left, 1));
            QVERIFY(o->take() && o->done(1, 99)); // the journal empties here
            QVERIFY(o->undo(1)); // the server away: kept
        }
        auto o = LabelOutbox::open(file).value();
        auto undo = o->take();
        QVERIFY(undo && undo->kind == OutboxEntry::Kind::Undo);
        QCOMPARE(undo->labelId, int64_t(99));
    }

    void aTornLastLineIsPassedOverAndAnyOtherRefused()
    {
        const std::string file = path("torn.jsonl");
        {
            auto o = LabelOutbox::open(file).value();
            QVERIFY(o->addLabel(pair(1), Choice::Left, 1));
        }
        std::ofstream(file, std::ios::app) << "{\"op\":\"label\",\"seq\":2,\"pa"; // a crash mid-line
        {
            auto o = LabelOutbox::open(file);
            QVERIFY2(o, o ? "" : o.error().c_str());
            QCOMPARE(o.value()->pendingCount(), size_t(1));
            QVERIFY(o.value()->addLabel(pair(3), Choice::Right, 3)); // on a line of its own
        }
        auto again = LabelOutbox::open(file);
        QVERIFY2(again, again ? "" : again.error().c_str());
        QCOMPARE(again.value()->pendingPairIds(), (std::set<int64_t>{1, 3}));
        again.value().reset();
        // A whole last entry whose newline was cut off counts, and the next one starts a line.
        const std::string whole = path("whole.jsonl");
        {
            auto o = LabelOutbox::open(whole).value();
            QVERIFY(o->addLabel(pair(5), Choice::Left, 1));
        }
        std::string kept = readAll(whole);
        kept.pop_back();
        std::ofstream(whole, std::ios::trunc) << kept;
        {
            auto o = LabelOutbox::open(whole);
            QVERIFY(o && o.value()->pendingCount() == 1);
            QVERIFY(o.value()->addLabel(pair(6), Choice::Left, 2));
        }
        QCOMPARE(LabelOutbox::open(whole).value()->pendingPairIds(), (std::set<int64_t>{5, 6}));
        // A damaged line in the middle: refused, the file left as it is.
        const std::string bad = path("bad.jsonl");
        const std::string text = "{\"op\":\"label\",\"seq\":1}\n{\"op\":\"dropped\",\"seq\":1}\n";
        std::ofstream(bad) << text;
        auto refused = LabelOutbox::open(bad);
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("line 1") != std::string::npos, refused.error().c_str());
        QCOMPARE(readAll(bad), text);
    }

    void oneProcessHoldsAJournal()
    {
        const std::string file = path("held.jsonl");
        auto first = LabelOutbox::open(file);
        QVERIFY(first);
        auto second = LabelOutbox::open(file);
        QVERIFY(!second);
        QVERIFY2(second.error().find("in use") != std::string::npos, second.error().c_str());
        first.value().reset();
        QVERIFY(LabelOutbox::open(file));
        auto device = LabelOutbox::open("/dev/null");
        QVERIFY(!device);
        QVERIFY2(device.error().find("not a regular file") != std::string::npos, device.error().c_str());
        QVERIFY(!LabelOutbox::open("/proc/no-such-folder/outbox.jsonl"));
    }

    void killedMidRunLosesNoConfirmedChoice()
    {
        const std::string file = path("killed.jsonl");
        int confirmed[2];
        QVERIFY(::pipe(confirmed) == 0);
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            ::close(confirmed[0]);
            auto o = LabelOutbox::open(file);
            for (int64_t i = 1; o && i <= 100000; ++i)
                if (auto seq = o.value()->addLabel(pair(i), Choice::Left, i))
                    (void)!::write(confirmed[1], &i, sizeof i); // said only once it is on disk
            ::_exit(0);
        }
        ::close(confirmed[1]);
        int64_t last = 0;
        int64_t n = 0;
        while (n < 300 && ::read(confirmed[0], &last, sizeof last) == sizeof last)
            ++n;
        ::kill(child, SIGKILL);
        while (::read(confirmed[0], &last, sizeof last) == sizeof last)
            ++n;
        ::close(confirmed[0]);
        int status = 0;
        ::waitpid(child, &status, 0);
        auto o = LabelOutbox::open(file);
        QVERIFY2(o, o ? "" : o.error().c_str());
        const size_t kept = o.value()->pendingCount();
        qInfo("killed after %lld confirmed choices; %zu kept in the journal", static_cast<long long>(n), kept);
        QVERIFY(kept >= size_t(n) && kept <= size_t(n) + 1); // every confirmed one, and at most the one in flight
        QCOMPARE(*o.value()->pendingPairIds().rbegin(), int64_t(kept));
    }

    void aSessionWithAnOutboxNeverWritesTheStore()
    {
        auto store = PreferenceStore::open(path("store.sqlite"));
        QVERIFY(store);
        PreferenceStore& s = *store.value();
        ShownPair imported = pair(0);
        imported.leftModelId = imported.rightModelId = ""; // no model of this store
        QVERIFY(s.addPairs({imported, imported}, "generated"));
        auto outbox = LabelOutbox::open(path("session.jsonl"));
        QVERIFY(outbox);
        LabelSession session(s, "ana");
        session.useOutbox(outbox.value().get());
        QVERIFY(session.advance());
        QVERIFY(!session.current()); // pairs come from claims only
        QCOMPARE(session.addClaimed(s.pendingPairs(10).value()), size_t(2));
        QCOMPARE(session.addClaimed(s.pendingPairs(10).value()), size_t(0)); // held already
        QCOMPARE(session.held(), size_t(2));
        const int64_t first = session.current()->id;
        const auto labelled = session.label(Choice::Left, 500);
        QVERIFY(labelled && labelled->outboxSeq == 1 && labelled->labelId == 0);
        QCOMPARE(session.held(), size_t(2)); // one on screen, one chosen and unsent
        QCOMPARE(session.labelledCount(), 1);
        QCOMPARE(s.labels(true).value().size(), size_t(0));
        QCOMPARE(session.addClaimed(s.pendingPairs(10).value()), size_t(0)); // its pair is not shown again
        QVERIFY(session.undo().value().has_value());
        QCOMPARE(session.current()->id, first);
        QCOMPARE(session.labelledCount(), 0);
        QCOMPARE(outbox.value()->pendingCount(), size_t(0));
        // Labelled and sent while a claim was on its way: the claim's answer (this labeler's lease
        // on it, read before the label reached the store) does not bring it back.
        const auto seq = session.label(Choice::Right, 600).value().outboxSeq;
        auto sending = outbox.value()->take();
        QVERIFY(sending && sending->seq == seq && outbox.value()->done(seq, 7));
        QCOMPARE(session.addClaimed(s.pendingPairs(10).value()), size_t(0));
        QCOMPARE(session.held(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestLabelOutbox)
#include "tst_labeloutbox.moc"
