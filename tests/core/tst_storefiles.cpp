// SPDX-License-Identifier: GPL-3.0-or-later
// The preference store's file on disk: bad files are refused and left untouched, old schemas
// migrate without losing a row, a child killed with SIGKILL after a burst of labels loses none, and
// a store replaced under an open connection (moved over, removed, or copied over in place) leaves
// no journal that the new file would replay and is never written into.
#include <QCoreApplication>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "support/filebytes.h"
#include "support/storerecords.h"

#include "facades/taskinfo.h"
#include "store/preferencestore.h"
#include "store/storeschema.h"

using namespace d2dpo;

namespace {

using test::openOrFail;
using test::readAll;
using test::somePairs;
using test::writeAll;

/// Child mode: label every pending pair as fast as possible, printing each committed label id.
int runClicker(const std::string& path)
{
    auto store = PreferenceStore::open(path);
    if (!store)
        return 2;
    auto pending = store.value()->pendingPairs(100000);
    for (const ShownPair& p : pending.value()) {
        auto id = store.value()->addLabel(p.id, p.id % 2 ? Choice::Left : Choice::Right, "child", 5);
        if (!id)
            return 3;
        std::cout << id.value() << std::endl; // flushed: the parent sees it only after the commit
    }
    for (;;)
        pause(); // wait to be killed
}

} // namespace

class TestStoreFiles final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string path(const char* name) const { return m_dir.filePath(name).toStdString(); }

    void expectRefusedUnchanged(const std::string& file, const char* phrase)
    {
        const std::string before = readAll(file);
        auto store = PreferenceStore::open(file);
        QVERIFY(!store.ok());
        QVERIFY2(store.error().find(phrase) != std::string::npos, store.error().c_str());
        QVERIFY2(readAll(file) == before, "the refused file was changed");
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void badFilesAreRefusedAndLeftUnchanged()
    {
        writeAll(path("text.sqlite"), "this is a text file, not a database\n");
        expectRefusedUnchanged(path("text.sqlite"), "not an SQLite database");

        // Another application's SQLite database.
        {
            SQLite::Database other(path("other.sqlite"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
            other.exec("CREATE TABLE songs (id INTEGER PRIMARY KEY, title TEXT)");
        }
        expectRefusedUnchanged(path("other.sqlite"), "another application");

        // A store from a newer schema.
        {
            auto store = openOrFail(path("newer.sqlite"));
            QVERIFY(store);
        }
        {
            SQLite::Database db(path("newer.sqlite"), SQLite::OPEN_READWRITE);
            db.exec("PRAGMA user_version = 99");
        }
        expectRefusedUnchanged(path("newer.sqlite"), "newer");

        // A corrupt store: a page in the middle overwritten.
        {
            auto store = openOrFail(path("corrupt.sqlite"));
            QVERIFY(store);
            QVERIFY(store->addPairs(somePairs(400), "generated").ok());
        }
        std::string bytes = readAll(path("corrupt.sqlite"));
        QVERIFY(bytes.size() > 5 * 4096);
        for (size_t i = 2 * 4096; i < 4 * 4096; ++i)
            bytes[i] = char(0xA5 ^ (i * 31));
        writeAll(path("corrupt.sqlite"), bytes);
        const std::string before = readAll(path("corrupt.sqlite"));
        auto corrupt = PreferenceStore::open(path("corrupt.sqlite"));
        QVERIFY(!corrupt.ok());
        QVERIFY2(corrupt.error().find("corrupt") != std::string::npos ||
                     corrupt.error().find("malformed") != std::string::npos,
                 corrupt.error().c_str());
        QVERIFY(readAll(path("corrupt.sqlite")) == before);

        // A read-only store (its mode says so, which counts even for root).
        {
            auto store = openOrFail(path("readonly.sqlite"));
            QVERIFY(store);
        }
        QCOMPARE(chmod(path("readonly.sqlite").c_str(), 0444), 0);
        expectRefusedUnchanged(path("readonly.sqlite"), "read-only");
        chmod(path("readonly.sqlite").c_str(), 0644);

        const auto folder = PreferenceStore::open(m_dir.path().toStdString());
        QVERIFY(!folder.ok());
        QVERIFY2(folder.error().find("not a regular file") != std::string::npos, folder.error().c_str());
    }

    void schemaOneStoresMigrateWithoutLosingARow()
    {
        // A store as version 1 wrote it: binary-integers sequences of two lengths, no task column.
        const std::string file = path("v1.sqlite");
        {
            SQLite::Database db(file, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
            db.exec(storeMigrations()[0]);
            db.exec("PRAGMA application_id = 1144144976"); // "D2DP"
            db.exec("PRAGMA user_version = 1");
            db.exec("INSERT INTO sequences (id, tokens, created_at) VALUES (1, '1100', 't'), (2, '1000', 't'), "
                    "(3, '111000', 't'), (4, '110000', 't')");
            db.exec("INSERT INTO pairs (id, left_id, right_id, source, created_at) VALUES (1, 1, 2, 'generated', 't'), "
                    "(2, 3, 4, 'imported', 't')");
            db.exec("INSERT INTO labels (pair_id, choice, labeler, decide_ms, created_at) VALUES (1, 'left', 'ana', 5, 't')");
            // A run its process left "running", and the model it wrote (schema 3 rebuilds runs).
            db.exec("INSERT INTO runs (id, kind, config_json, device, status, started_at) VALUES "
                    "(1, 'd2dpo', '{}', 'cpu', 'running', 't')");
            db.exec("INSERT INTO models (id, kind, name, path, spec_json, training_json, metrics_json, run_id, "
                    "created_at) VALUES ('m1', 'd2dpo', 'm1', '/m1', '{}', '{}', '{}', 1, 't')");
            db.exec("INSERT INTO run_metrics (run_id, name, step, value) VALUES (1, 'loss', 1, 0.5)");
        }
        auto store = openOrFail(file);
        QVERIFY(store);
        QCOMPARE(store->schemaVersion(), PreferenceStore::latestSchemaVersion());
        // The old run had no lock: its process is gone, so it is interrupted; its model and curve stay linked.
        QCOMPARE(store->run(1).value()->status, RunStatus::Interrupted);
        QCOMPARE(store->model("m1").value()->runId.value_or(0), int64_t(1));
        QCOMPARE(store->metricSeries(1, "loss").value().size(), size_t(1));
        {
            SQLite::Database db(file);
            QCOMPARE(db.execAndGet("SELECT count(*) FROM pragma_foreign_key_check").getInt(), 0);
        }
        QCOMPARE(store->integrityCheck().value(), std::string("ok"));
        const auto prefs = store->preferences().value();
        QCOMPARE(prefs.size(), size_t(1));
        QCOMPARE(prefs[0].task, std::string("binary-integers:4"));
        const auto pending = store->pendingPairs(10).value();
        QCOMPARE(pending.size(), size_t(1));
        QCOMPARE(pending[0].task, std::string("binary-integers:6"));
        QCOMPARE(store->pendingPairs(10, "binary-integers:4").value().size(), size_t(0));
        // The tasks table knows both, so every view can read the old sequences.
        for (const char* key : {"binary-integers:4", "binary-integers:6"}) {
            const auto task = TaskInfo::fromStore(*store, key);
            QVERIFY2(task.ok(), key);
            QCOMPARE(task->key(), std::string(key));
        }
        QVERIFY(store->taskSpec("binary-integers:4").value().has_value());
        QCOMPARE(store->counts("ana").value().labelled, int64_t(1));
    }

    void aStoreReplacedWhileOpenLeavesNoJournalForTheNewFile()
    {
        // mv another store over it, or rm it and make a new one there, while it is open and its
        // WAL holds pages: closed, it must not leave those pages for the new file to replay.
        for (const std::string how : {"mv", "rm"}) {
            const std::string file = path(("replaced-" + how + ".sqlite").c_str());
            const std::string other = path(("other-" + how + ".sqlite").c_str());
            {
                auto made = openOrFail(other);
                QVERIFY(made && made->addPairs(somePairs(1), "generated").ok());
            }
            auto open = openOrFail(file);
            QVERIFY(open);
            QVERIFY(open->addPairs(somePairs(20), "generated").ok());
            if (how == "mv") {
                QCOMPARE(::rename(other.c_str(), file.c_str()), 0);
            } else {
                QCOMPARE(::unlink(file.c_str()), 0);
                auto fresh = openOrFail(file);
                QVERIFY(fresh && fresh->addPairs(somePairs(1), "generated").ok());
            }
            QVERIFY(!open->stillAtItsPath().ok());
            open.reset();
            auto now = openOrFail(file);
            QVERIFY(now);
            QCOMPARE(now->integrityCheck().value(), std::string("ok"));
            QVERIFY2(now->counts("").value().pending == 1,
                     qPrintable(QString::fromStdString(how) + ": " + QString::number(now->counts("").value().pending) +
                                " pairs: the old store's pages were replayed into the new file"));
        }
    }

    void twoOpensOfOneNewStoreAtOnceBothSucceed()
    {
        // Each opens and makes the store the other may be making: neither may take the other's
        // half-made file (tables without the application id, read apart) for another program's.
        for (int round = 0; round < 600; ++round) {
            const std::string file = m_dir.filePath(QStringLiteral("race%1.sqlite").arg(round)).toStdString();
            std::string errors[2];
            std::atomic<int> ready = 0;
            std::thread both[2];
            for (int i = 0; i < 2; ++i)
                both[i] = std::thread([&, i] {
                    for (++ready; ready < 2;) {
                    }
                    auto store = PreferenceStore::open(file);
                    if (!store)
                        errors[i] = store.error();
                });
            for (std::thread& t : both)
                t.join();
            QVERIFY2(errors[0].empty() && errors[1].empty(),
                     qPrintable(QStringLiteral("round %1: %2 %3").arg(round).arg(errors[0].c_str(), errors[1].c_str())));
        }
    }

    void theWalIsEmptyBetweenWrites()
    {
        // What a file copied over the store finds beside it between two writes: nothing to replay.
        const std::string file = path("empty-wal.sqlite");
        auto store = openOrFail(file);
        QVERIFY(store);
        QVERIFY(store->addPairs(somePairs(20), "generated").ok());
        QCOMPARE(QFileInfo(QString::fromStdString(file + "-wal")).size(), qint64(0));
    }

    void aStoreCopiedOverWhileOpenIsNeverWrittenInto()
    {
        // `cp other.sqlite store.sqlite` keeps the inode. A reader of another connection holds the
        // checkpoint back, so the open store's WAL still holds its 20 pairs when the copy lands.
        // Whether the open store then writes again or only closes, or another connection opens the
        // copy first (and would mark it, checkpointing the old pages with its mark), the copy must
        // come out whole.
        enum class After { Writes, Closes, AnotherOpens };
        for (const After after : {After::Writes, After::Closes, After::AnotherOpens}) {
            const std::string name = std::to_string(int(after));
            const std::string file = path(("copied-" + name + ".sqlite").c_str());
            const std::string other = path(("copy-" + name + ".sqlite").c_str());
            {
                auto first = openOrFail(file);
                QVERIFY(first);
            }
            // The other store began as a copy of this one (same mark): its first open marks it anew.
            writeAll(other, readAll(file));
            {
                auto made = openOrFail(other);
                QVERIFY(made && made->addPairs(somePairs(1), "generated").ok());
            }
            auto open = openOrFail(file);
            QVERIFY(open);
            auto reader = std::make_unique<SQLite::Database>(file);
            reader->exec("BEGIN");
            QCOMPARE(reader->execAndGet("SELECT count(*) FROM pairs").getInt(), 0);
            QVERIFY(open->addPairs(somePairs(20), "generated").ok());
            QVERIFY(QFileInfo(QString::fromStdString(file + "-wal")).size() > 0);

            struct stat before {}, copied {};
            QCOMPARE(::stat(file.c_str(), &before), 0);
            writeAll(file, readAll(other)); // what cp does: truncate and write, in place
            QCOMPARE(::stat(file.c_str(), &copied), 0);
            QCOMPARE(copied.st_ino, before.st_ino);
            reader->exec("COMMIT"); // nothing holds a checkpoint back now
            reader.reset();

            if (after == After::AnotherOpens) {
                auto another = openOrFail(file);
                QVERIFY(another);
                QVERIFY(another->stillAtItsPath().ok()); // it opened the copy: for it, nothing was replaced
            }
            if (after == After::Writes) {
                const auto wrote = open->addPairs(somePairs(2), "generated");
                QVERIFY(!wrote.ok());
                QVERIFY2(wrote.error().find("another file was copied over it") != std::string::npos,
                         wrote.error().c_str());
            }
            const Status there = open->stillAtItsPath();
            QVERIFY(!there.ok());
            QVERIFY2(there.error().find("copied over") != std::string::npos, there.error().c_str());
            open.reset();

            auto now = openOrFail(file);
            QVERIFY(now);
            QCOMPARE(now->integrityCheck().value(), std::string("ok"));
            QVERIFY2(now->counts("").value().pending == 1,
                     qPrintable(QString::number(now->counts("").value().pending) +
                                " pairs: the old store's pages were written into the copy"));
        }
    }

    void killedRightAfterABurstOfLabelsLosesNothing()
    {
        const std::string file = path("crash.sqlite");
        {
            auto store = openOrFail(file);
            QVERIFY(store);
            QVERIFY(store->addPairs(somePairs(300), "generated").ok());
        }
        QProcess child;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("D2DPO_STORE_CLICKER", QString::fromStdString(file));
        child.setProcessEnvironment(env);
        child.start(QCoreApplication::applicationFilePath(), {});
        QVERIFY(child.waitForStarted());
        std::vector<int64_t> seen;
        while (seen.size() < 120 && child.waitForReadyRead(20000))
            while (child.canReadLine())
                seen.push_back(child.readLine().trimmed().toLongLong());
        QVERIFY2(seen.size() >= 120, "the child did not label fast enough");
        ::kill(pid_t(child.processId()), SIGKILL);
        QVERIFY(child.waitForFinished());
        for (const QByteArray& line : child.readAllStandardOutput().split('\n'))
            if (!line.trimmed().isEmpty())
                seen.push_back(line.trimmed().toLongLong());

        // Every label the child reported (it reports after the commit) is in the reopened store.
        auto store = openOrFail(file);
        QVERIFY(store);
        QCOMPARE(store->integrityCheck().value(), std::string("ok"));
        const auto labels = store->labels(false).value();
        std::set<int64_t> stored;
        for (const LabelRecord& l : labels) {
            QCOMPARE(l.labeler, std::string("child"));
            stored.insert(l.id);
        }
        for (int64_t id : seen)
            QVERIFY2(stored.count(id) == 1, qPrintable(QString("label %1 was lost").arg(id)));
        QVERIFY(labels.size() >= seen.size());
    }
};

int main(int argc, char** argv)
{
    if (const char* clicker = std::getenv("D2DPO_STORE_CLICKER"))
        return runClicker(clicker);
    QCoreApplication app(argc, argv);
    TestStoreFiles test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_storefiles.moc"
