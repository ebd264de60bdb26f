// SPDX-License-Identifier: GPL-3.0-or-later
// The preference store: schema and migrations, constraints, labels and undo, counts, runs, JSONL
// import/export with every rejection, refusal of bad database files (which stay untouched), and
// crash safety: a child process killed with SIGKILL right after a burst of labels loses none.
#include <QCoreApplication>
#include <QProcess>
#include <QTemporaryDir>

#include <csignal>
#include <fstream>
#include <iostream>
#include <set>
#include <sys/stat.h>

#include "testsupport.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "tasks/binaryintegerstask.h"
#include "facades/taskinfo.h"
#include "jobs/pairgenerator.h"
#include "store/preferencejsonl.h"
#include "store/preferencestore.h"
#include "store/storeschema.h"

using namespace d2dpo;

namespace {

using test::readAll;
using test::writeAll;

std::unique_ptr<PreferenceStore> openOrFail(const std::string& path)
{
    auto store = PreferenceStore::open(path);
    if (!store) {
        qWarning("%s", store.error().c_str());
        return nullptr;
    }
    return std::move(store.value());
}

ModelRecord modelRecord(const std::string& id, const std::string& parent, const std::string& kind,
                        std::optional<int64_t> runId = std::nullopt)
{
    ModelRecord m;
    m.id = id;
    m.parentId = parent;
    m.kind = kind;
    m.name = id;
    m.path = "/models/" + id + ".d2dpo";
    m.runId = runId;
    return m;
}

/// An import of binary-integers sequences of `length`.
JsonlRules binaryRules(int length)
{
    TaskConfig binary;
    binary.length = length;
    const TaskInfo task = TaskInfo::fromConfig(binary).value();
    return {task.key(), [task](const std::string& text) { return task.check(text); }};
}

std::vector<ShownPair> somePairs(int n)
{
    std::vector<ShownPair> pairs;
    for (int i = 0; i < n; ++i) {
        std::string a(8, '0'), b(8, '0');
        for (int k = 0; k < i % 8; ++k)
            a[size_t(k)] = '1';
        for (int k = 0; k <= i % 7; ++k)
            b[size_t(k)] = '1';
        if (a == b)
            b[7] = '1';
        pairs.push_back({0, a, b, "", "", "binary-integers:8"});
    }
    return pairs;
}

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

class TestStore final : public QObject {
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

    void createsTheSchema()
    {
        // A mistyped folder is an error, not a new tree of folders.
        auto refused = PreferenceStore::open(path("new/folder/store.sqlite"));
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().find("does not exist") != std::string::npos, refused.error().c_str());
        QVERIFY(!std::filesystem::exists(path("new")));
        std::filesystem::create_directories(path("new/folder"));
        auto store = openOrFail(path("new/folder/store.sqlite"));
        QVERIFY(store);
        QCOMPARE(store->schemaVersion(), PreferenceStore::latestSchemaVersion());
        QCOMPARE(store->integrityCheck().value(), std::string("ok"));
        SQLite::Database db(path("new/folder/store.sqlite"));
        QCOMPARE(db.execAndGet("PRAGMA journal_mode").getString(), std::string("wal"));
        for (const char* table : {"models", "sequences", "pairs", "labels", "runs", "run_metrics"})
            QVERIFY2(db.tableExists(table), table);
    }

    void reopeningKeepsEverything()
    {
        const std::string file = path("reopen.sqlite");
        {
            auto store = openOrFail(file);
            QVERIFY(store);
            QVERIFY(store->addModel(modelRecord("m1", "", "pretrained")).ok());
            QVERIFY(store->addPairs(somePairs(3), "generated").ok());
        }
        auto store = openOrFail(file);
        QVERIFY(store);
        QCOMPARE(store->models().value().size(), size_t(1));
        QCOMPARE(store->pendingPairs(10).value().size(), size_t(3));
    }

    void labelsUndoAndCounts()
    {
        auto store = openOrFail(path("labels.sqlite"));
        QVERIFY(store);
        QVERIFY(store->addModel(modelRecord("m1", "", "pretrained")).ok());
        auto pairs = somePairs(4);
        for (auto& p : pairs)
            p.leftModelId = p.rightModelId = "m1";
        const auto ids = store->addPairs(pairs, "generated").value();
        QCOMPARE(ids.size(), size_t(4));

        // Undo with nothing labelled: nothing happens.
        QVERIFY(!store->undoLastLabel("ana").value().has_value());

        QVERIFY(store->addLabel(ids[0], Choice::Left, "ana", 900).ok());
        QVERIFY(store->addLabel(ids[1], Choice::Tie, "ana", 1200).ok());
        // A second label on the same pair (a double key press) is refused.
        const auto twice = store->addLabel(ids[1], Choice::Right, "ana", 10);
        QVERIFY(!twice.ok());
        QVERIFY2(twice.error().find("already has a label") != std::string::npos, twice.error().c_str());
        QVERIFY(!store->addLabel(9999, Choice::Left, "ana", 1).ok());
        QVERIFY(!store->addLabel(ids[2], Choice::Left, "", 1).ok());
        QVERIFY(store->addLabel(ids[2], Choice::Right, "bo", 300).ok());

        LabelCounts c = store->counts("ana").value();
        QCOMPARE(c.labelled, int64_t(3));
        QCOMPARE(c.byLabeler, int64_t(2));
        QCOMPARE(c.pending, int64_t(1));
        QCOMPARE(c.decisive, int64_t(2));

        // Undo takes back ana's latest label only, keeps it as history, and the pair is pending again.
        QCOMPARE(store->undoLastLabel("ana").value().value(), ids[1]);
        c = store->counts("ana").value();
        QCOMPARE(c.byLabeler, int64_t(1));
        QCOMPARE(c.pending, int64_t(2));
        QCOMPARE(store->pendingPairs(1).value().front().id, ids[1]);
        QCOMPARE(store->labels(true).value().size(), size_t(3));
        QCOMPARE(store->labels(false).value().size(), size_t(2));
        QVERIFY(store->addLabel(ids[1], Choice::Right, "ana", 700).ok()); // relabel after undo

        const auto prefs = store->preferences().value();
        QCOMPARE(prefs.size(), size_t(3));
        QCOMPARE(prefs[0].chosen, pairs[0].left);
        QCOMPARE(prefs[0].chosenSide, std::string("left"));
        QCOMPARE(prefs[1].chosen, pairs[2].right);
        QCOMPARE(prefs[1].rejected, pairs[2].left);
        QCOMPARE(prefs[1].chosenModelId, std::string("m1"));
    }

    void identicalPairsAreRefused()
    {
        auto store = openOrFail(path("identical.sqlite"));
        QVERIFY(store);
        const auto result = store->addPairs({{0, "0110", "0110", "", "", "binary-integers:4"}}, "generated");
        QVERIFY(!result.ok());
        QCOMPARE(store->counts("x").value().pending, int64_t(0));
    }

    void runsAndMetricSeries()
    {
        auto store = openOrFail(path("runs.sqlite"));
        QVERIFY(store);
        QVERIFY(store->addModel(modelRecord("ref", "", "pretrained")).ok());
        RunRecord record;
        record.kind = "d2dpo";
        record.referenceModelId = "ref";
        record.configJson = R"({"beta":0.1})";
        record.device = "cpu";
        const int64_t run = store->startRun(record).value();
        QVERIFY(store->appendMetrics(run, 1, {{"loss", 0.69}, {"rewards/margins", 0.0}}).ok());
        QVERIFY(store->appendMetrics(run, 2, {{"loss", 0.5}}).ok());
        QVERIFY(store->addModel(modelRecord("ft", "ref", "d2dpo", run)).ok());
        QVERIFY(store->finishRun(run, RunStatus::Completed, "", "ft").ok());
        const auto runs = store->runs().value();
        QCOMPARE(runs.size(), size_t(1));
        QCOMPARE(runs[0].status, RunStatus::Completed);
        QCOMPARE(runs[0].resultModelId, std::string("ft"));
        const auto loss = store->metricSeries(run, "loss").value();
        QCOMPARE(loss.size(), size_t(2));
        QCOMPARE(loss[1].first, int64_t(2));
        QCOMPARE(loss[1].second, 0.5);
        QCOMPARE(store->model("ft").value()->parentId, std::string("ref"));
        QVERIFY(!store->finishRun(run, static_cast<RunStatus>(99), "", "").ok()); // CHECK constraint on status
    }

    void evaluationsAreMeasuredOncePerKey()
    {
        auto store = openOrFail(path("evaluations.sqlite"));
        QVERIFY(store);
        QVERIFY(store->addModel(modelRecord("ref", "", "pretrained")).ok());
        QVERIFY(!store->evaluation("ref", "exact", 2000, 1).value().has_value());
        QVERIFY(store->saveEvaluation("ref", "exact", 2000, 1, R"({"vsr":0.97})").ok());
        QCOMPARE(store->evaluation("ref", "exact", 2000, 1).value().value(), std::string(R"({"vsr":0.97})"));
        // Another seed, sample count or sampler is another evaluation.
        QVERIFY(!store->evaluation("ref", "exact", 2000, 2).value().has_value());
        QVERIFY(!store->evaluation("ref", "exact", 1000, 1).value().has_value());
        QVERIFY(!store->evaluation("ref", "Euler, 64 steps", 2000, 1).value().has_value());
        QVERIFY(!store->saveEvaluation("nobody", "exact", 2000, 1, "{}").ok()); // the model must be there
        QVERIFY(store->deleteModel("ref").ok());
        QVERIFY(store->addModel(modelRecord("ref", "", "pretrained")).ok());
        QVERIFY(!store->evaluation("ref", "exact", 2000, 1).value().has_value()); // gone with its model
    }

    void refusesBadFilesAndChangesNothing()
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

    void jsonlRoundTrip()
    {
        auto store = openOrFail(path("export.sqlite"));
        QVERIFY(store);
        const auto ids = store->addPairs(somePairs(5), "generated").value();
        QVERIFY(store->addLabel(ids[0], Choice::Left, "ana", 800).ok());
        QVERIFY(store->addLabel(ids[1], Choice::Right, "ana", 900).ok());
        QVERIFY(store->addLabel(ids[2], Choice::Tie, "ana", 900).ok());  // not exported: no winner
        QVERIFY(store->addLabel(ids[3], Choice::Skip, "ana", 900).ok()); // not exported
        QCOMPARE(exportPreferencesJsonl(*store, path("prefs.jsonl")).value(), int64_t(2));

        auto target = openOrFail(path("import.sqlite"));
        QVERIFY(target);
        QCOMPARE(importPreferencesJsonl(*target, path("prefs.jsonl"), binaryRules(8)).value().imported, int64_t(2));
        // Importing the same file again changes nothing: each line is already there.
        const ImportOutcome again = importPreferencesJsonl(*target, path("prefs.jsonl"), binaryRules(8)).value();
        QCOMPARE(again.imported, int64_t(0));
        QCOMPARE(again.duplicates, int64_t(2));
        QCOMPARE(target->counts("").value().labelled, int64_t(2));
        QCOMPARE(target->imports().value().size(), size_t(1));

        // Ties and skips on request, in a shape DPO readers skip; an import leaves them out, counted.
        QVERIFY(store->addLabel(ids[4], Choice::BothBad, "ana", 700).ok());
        QCOMPARE(exportPreferencesJsonl(*store, path("all.jsonl"), true).value(), int64_t(5));
        const std::string all = readAll(path("all.jsonl"));
        QVERIFY2(all.find("\"choice\":\"tie\"") != std::string::npos, all.c_str());
        QVERIFY(all.find("\"choice\":\"both-bad\"") != std::string::npos);
        auto third = openOrFail(path("import3.sqlite"));
        const ImportOutcome mixed = importPreferencesJsonl(*third, path("all.jsonl"), binaryRules(8)).value();
        QCOMPARE(mixed.imported, int64_t(2));
        QCOMPARE(mixed.undecided, int64_t(3));
        const auto a = store->preferences().value();
        const auto b = target->preferences().value();
        QCOMPARE(b.size(), a.size());
        for (size_t i = 0; i < a.size(); ++i) {
            QCOMPARE(b[i].chosen, a[i].chosen);
            QCOMPARE(b[i].rejected, a[i].rejected);
            QCOMPARE(b[i].chosenSide, a[i].chosenSide);
            QCOMPARE(b[i].labeler, a[i].labeler);
            QCOMPARE(b[i].decideMs, a[i].decideMs);
            QCOMPARE(b[i].labelledAt, a[i].labelledAt);
        }
    }

    void jsonlRejections_data()
    {
        QTest::addColumn<QString>("badLine");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("not json") << "{chosen: 1}" << "not valid JSON";
        QTest::newRow("not an object") << "[1, 2]" << "expected a JSON object";
        QTest::newRow("no chosen") << R"({"rejected": "1000"})" << "'chosen' is missing";
        QTest::newRow("no rejected") << R"({"chosen": "1000"})" << "'rejected' is missing";
        QTest::newRow("chosen not a string") << R"({"chosen": 1000, "rejected": "1100"})" << "must be a string";
        QTest::newRow("empty") << R"({"chosen": "", "rejected": "1100"})" << "is empty";
        QTest::newRow("bad token") << R"({"chosen": "1020", "rejected": "1100"})" << "'2' at position 3";
        QTest::newRow("wrong length") << R"({"chosen": "10000", "rejected": "11000"})" << "sequences have 4";
        QTest::newRow("lengths differ") << R"({"chosen": "1000", "rejected": "110"})" << "has 3 symbols";
        QTest::newRow("another task") << R"({"chosen": "1000", "rejected": "1100", "task": "binary-integers:9"})"
                                      << "a preference of the task binary-integers:9";
        QTest::newRow("same") << R"({"chosen": "1000", "rejected": "1000"})" << "same sequence";
        QTest::newRow("bad side") << R"({"chosen": "1000", "rejected": "1100", "chosen_side": "up"})"
                                  << "chosen_side";
        QTest::newRow("bad labeler") << R"({"chosen": "1000", "rejected": "1100", "labeler": 7})" << "labeler";
        QTest::newRow("negative time") << R"({"chosen": "1000", "rejected": "1100", "decide_ms": -5})"
                                       << "decide_ms";
    }
    void jsonlRejections()
    {
        QFETCH(QString, badLine);
        QFETCH(QString, phrase);
        const std::string file = path("bad.jsonl");
        // A good line, a blank line (allowed), the bad one on line 3, then another good one.
        writeAll(file, std::string(R"({"chosen": "1000", "rejected": "1100"})") + "\n\n" + badLine.toStdString() +
                           "\n" + R"({"chosen": "1110", "rejected": "0000"})" + "\n");
        auto store = openOrFail(path("rejections.sqlite"));
        QVERIFY(store);
        const int64_t before = store->counts("x").value().labelled;
        const auto result = importPreferencesJsonl(*store, file, binaryRules(4));
        QVERIFY(!result.ok());
        QVERIFY2(result.error().find("line 3") != std::string::npos, result.error().c_str());
        QVERIFY2(result.error().find(phrase.toStdString()) != std::string::npos, result.error().c_str());
        QVERIFY2(result.error().find("nothing was imported") != std::string::npos, result.error().c_str());
        QCOMPARE(store->counts("x").value().labelled, before); // all or nothing
    }

    void oddRuleOnTextAgreesWithTheTask()
    {
        // The simulated expert the views and the CLI use (text in, a choice out) is the task's rule.
        TaskConfig binary;
        binary.length = 5;
        const TaskInfo task = TaskInfo::fromConfig(binary).value();
        QCOMPARE(task.simulatedExpertName(), std::string("rule:odd"));
        QCOMPARE(task.ruleChoice("10000", "11000").value(), Choice::Left);  // 1 (odd) over 2 (even)
        QCOMPARE(task.ruleChoice("11000", "01000").value(), Choice::Left);  // even over invalid
        QCOMPARE(task.ruleChoice("11000", "11110").value(), Choice::Tie);   // both even
        QCOMPARE(task.ruleChoice("01000", "11100").value(), Choice::Right); // invalid vs odd
        QCOMPARE(task.hint("11100").value, std::string("i = 3"));
        QCOMPARE(task.hint("11100").rule, std::string("odd"));
        QVERIFY(!task.hint("01000").valid);
        QVERIFY(!task.ruleChoice("1100", "11000").ok()); // not a sequence of this task
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

    void modelsAreRenamedAndDeletedWithoutBreakingLineageOrLabels()
    {
        auto store = openOrFail(path("rename.sqlite"));
        QVERIFY(store);
        ModelRecord parent, child;
        parent.id = "p";
        parent.kind = "pretrained";
        parent.name = "reference";
        parent.path = "/p";
        child = parent;
        child.id = "c";
        child.parentId = "p";
        child.kind = "d2dpo";
        child.name = "fine-tuned";
        QVERIFY(store->addModel(parent).ok() && store->addModel(child).ok());
        QVERIFY(store->renameModel("c", "my best model").ok());
        QCOMPARE(store->model("c").value()->name, std::string("my best model"));
        QVERIFY(!store->renameModel("c", "").ok());
        QVERIFY(!store->renameModel("nope", "x").ok());
        // A model others descend from is refused; its child can go, and its pairs' labels stay.
        auto pairs = somePairs(2);
        for (ShownPair& p : pairs)
            p.leftModelId = p.rightModelId = "c";
        const auto ids = store->addPairs(pairs, "generated").value();
        QVERIFY(store->addLabel(ids[0], Choice::Left, "ana", 5).ok());
        const Status refused = store->deleteModel("p");
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().find("1 models were fine-tuned from it") != std::string::npos, refused.error().c_str());
        QVERIFY(store->deleteModel("c").ok());
        QVERIFY(!store->model("c").value().has_value());
        QCOMPARE(store->preferences().value().size(), size_t(1));
        QVERIFY(store->preferences().value()[0].chosenModelId.empty());
        QVERIFY(store->deleteModel("p").ok());
        QCOMPARE(store->integrityCheck().value(), std::string("ok"));
    }

    void formPairsShowsDistinctSequencesOnBothSides()
    {
        std::vector<std::string> candidates;
        for (int i = 0; i < 200; ++i)
            candidates.push_back(i % 3 == 0 ? "1100" : (i % 3 == 1 ? "1000" : "1110"));
        const auto pairs = formPairs(candidates, "m", 80, 7);
        QCOMPARE(pairs.size(), size_t(80));
        int leftIs1000 = 0;
        for (const ShownPair& p : pairs) {
            QVERIFY(p.left != p.right);
            leftIs1000 += p.left == "1000";
        }
        QVERIFY(leftIs1000 > 10 && leftIs1000 < 45); // random sides, not a fixed order
        QCOMPARE(formPairs(std::vector<std::string>(10, "1111"), "m", 5, 1).size(), size_t(0));
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
    TestStore test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_store.moc"
