// SPDX-License-Identifier: GPL-3.0-or-later
// The preference store's records: schema, models and their lineage, labels and undo, counts, runs
// and their series, evaluations, and the pairs and rule choices the views and the CLI store.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <filesystem>

#include <SQLiteCpp/SQLiteCpp.h>

#include "support/storeengines.h"
#include "support/storerecords.h"

#include "jobs/pairgenerator.h"
#include "facades/taskinfo.h"
#include "store/preferencestore.h"

using namespace d2dpo;
using test::modelRecord;
using test::openOrFail;
using test::somePairs;

class TestStore final : public QObject {
    Q_OBJECT

    test::FreshStores m_stores;
    std::string path(const char* name) { return m_stores.named(name); }

public:
    explicit TestStore(test::StoreEngine engine) : m_stores(engine) {}

private Q_SLOTS:
    void openingCreatesTheSchemaInAnExistingFolderOnly()
    {
        if (m_stores.team()) { // a server's database: made whole, at the latest schema, by the first open
            auto store = openOrFail(path("schema"));
            QVERIFY(store);
            QCOMPARE(store->schemaVersion(), PreferenceStore::latestSchemaVersion());
            QCOMPARE(store->integrityCheck().value(), std::string("ok"));
            QVERIFY(store->isTeamStore());
            QCOMPARE(store->teamIdentity(), std::string("postgres"));
            QVERIFY(store->canMaintain());
            QVERIFY2(store->displayName().rfind("postgresql://postgres@", 0) == 0, store->displayName().c_str()); // no password
            return;
        }
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

    void labelsAreCountedAndUndoTakesBackOnlyTheLabelersLatest()
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
        QCOMPARE(prefs[0].choice, Choice::Left);
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

    void aRunKeepsItsMetricSeriesAndResultModel()
    {
        auto store = openOrFail(path("runs.sqlite"));
        QVERIFY(store);
        QVERIFY(store->addModel(modelRecord("ref", "", "pretrained")).ok());
        RunRecord record;
        record.kind = RunKind::D2dpo;
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
};

int main(int argc, char** argv) { return test::runOnEveryEngine<TestStore>(argc, argv); }
#include "tst_store.moc"
