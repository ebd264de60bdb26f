// SPDX-License-Identifier: GPL-3.0-or-later
// The labeling session of core (labeling/): the queue and the pair on screen, labels committed as
// made, undo of this session's own steps only, generated batches stored under a known model's
// name, and the rule labeler planned then applied as one undo step. No GUI: the Label view and
// `d2dpo pairs`/`label` drive these same classes.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <algorithm>

#include "labeling/labelsession.h"
#include "labeling/rulelabeler.h"
#include "labeling/taskcatalog.h"
#include "store/preferencestore.h"

using namespace d2dpo;

namespace {

/// Pairs of 4-bit binary integers (the task is whole in its key; its rule: odd beats even).
std::vector<ShownPair> binaryPairs(const std::vector<std::pair<const char*, const char*>>& texts,
                                   const std::string& model = "")
{
    std::vector<ShownPair> pairs;
    for (const auto& [left, right] : texts)
        pairs.push_back({0, left, right, model, model, "binary-integers:4"});
    return pairs;
}

ModelRecord model(const std::string& id, const std::string& name, const std::string& metrics = "{}")
{
    ModelRecord m;
    m.id = id;
    m.kind = "d2dpo";
    m.name = name;
    m.path = "/models/" + id + ".d2dpo";
    m.metricsJson = metrics;
    return m;
}

} // namespace

class TestLabelSession final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_stores = 0;

    std::unique_ptr<PreferenceStore> freshStore(int pairs)
    {
        auto store = PreferenceStore::open(m_dir.filePath(QStringLiteral("s%1.sqlite").arg(++m_stores)).toStdString());
        if (!store)
            return nullptr;
        static const char* bits[] = {"0001", "0010", "0011", "0100", "0101", "0110", "0111", "1000",
                                     "1001", "1010", "1011", "1100", "1101", "1110", "1111", "0000"};
        std::vector<std::pair<const char*, const char*>> texts;
        for (int i = 0; i < pairs; ++i)
            texts.emplace_back(bits[i % 16], bits[(i + 8) % 16]);
        if (pairs > 0) {
            auto added = store.value()->addPairs(binaryPairs(texts), "generated");
            if (!added) {
                qWarning("%s", added.error().c_str());
                return nullptr;
            }
        }
        return std::move(store.value());
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void theOldestPendingPairComesFirstAndEachLabelMovesOn()
    {
        auto store = freshStore(3);
        QVERIFY(store);
        LabelSession session(*store, "ana");
        QVERIFY(!session.current());
        QVERIFY(session.advance().ok());
        QVERIFY(session.current());
        const int64_t first = session.current()->id;
        QCOMPARE(session.queued(), size_t(2));
        auto labelled = session.label(Choice::Left, 120);
        QVERIFY(labelled.ok());
        QCOMPARE(labelled->pairId, first);
        QVERIFY(labelled->labelId > 0);
        QVERIFY(session.current()->id != first);
        QCOMPARE(session.labelledCount(), 1);
        QCOMPARE(store->counts("ana").value().byLabeler, int64_t(1)); // committed as made
    }

    void aPairMadeGoldLeavesTheQueueAndAPairWithLabelsCannotBe()
    {
        auto store = freshStore(3);
        QVERIFY(store);
        LabelSession session(*store, "ana");
        QVERIFY(session.advance().ok());
        const int64_t first = session.current()->id;
        QVERIFY(session.markCurrentGold(Choice::Right).ok());
        QVERIFY(session.current() && session.current()->id != first); // the next pair is shown
        QCOMPARE(session.labelledCount(), 0);                         // not a label of hers
        // Gold now: no longer a training pair to mark again, nor pending as one.
        const Status again = store->markGold(first, Choice::Left);
        QVERIFY(!again.ok() && again.error().find("is a gold pair") != std::string::npos);
        for (const ShownPair& p : store->pendingPairs(10).value())
            QVERIFY(p.id != first);
        // A pair she labelled cannot become gold: a gold pair must look new to every labeler.
        const int64_t second = session.current()->id;
        QVERIFY(session.label(Choice::Left, 100).ok());
        QVERIFY(!store->markGold(second, Choice::Left).ok());
        QVERIFY(session.markCurrentGold(Choice::Tie).error().find("left or right") != std::string::npos);
    }

    void undoShowsTheLabelledPairAgainAndTheCurrentOneNext()
    {
        auto store = freshStore(3);
        QVERIFY(store);
        LabelSession session(*store, "ana");
        QVERIFY(session.advance().ok());
        const int64_t first = session.current()->id;
        QVERIFY(session.label(Choice::Right, 10).ok());
        const int64_t second = session.current()->id;
        auto undone = session.undo();
        QVERIFY(undone.ok() && undone->has_value());
        QCOMPARE(undone.value()->pairIds, std::vector<int64_t>{first});
        QCOMPARE(session.current()->id, first);
        QCOMPARE(session.labelledCount(), 0);
        QCOMPARE(store->counts("ana").value().byLabeler, int64_t(0));
        QVERIFY(session.advance().ok());
        QCOMPARE(session.current()->id, second); // the pair that was on screen comes back after it
        QVERIFY(!session.canUndo());
        QVERIFY(session.undo().ok() && !session.undo().value().has_value());
    }

    void undoNeverReachesAnotherSessionOrAnotherLabeler()
    {
        auto store = freshStore(4);
        QVERIFY(store);
        LabelSession earlier(*store, "ana");
        QVERIFY(earlier.advance().ok());
        QVERIFY(earlier.label(Choice::Left, 10).ok());
        LabelSession now(*store, "ana");
        QVERIFY(now.advance().ok());
        QVERIFY(!now.canUndo()); // the earlier session's label is not this one's to undo
        QVERIFY(now.label(Choice::Left, 10).ok());
        QVERIFY(now.canUndo());
        now.setLabeler("ben"); // a new labeler: a new session
        QVERIFY(!now.canUndo());
        QCOMPARE(now.labelledCount(), 0);
        QCOMPARE(store->counts("ana").value().byLabeler, int64_t(2));
    }

    void aPairLabelledMeanwhileElsewhereIsPassedOver()
    {
        auto store = freshStore(2);
        QVERIFY(store);
        LabelSession session(*store, "ana");
        QVERIFY(session.advance().ok());
        const int64_t shown = session.current()->id;
        QVERIFY(store->addLabel(shown, Choice::Tie, "ben", 5).ok()); // another labeler was quicker
        auto labelled = session.label(Choice::Left, 10);
        QVERIFY(labelled.ok());
        QCOMPARE(labelled->labelId, int64_t(0));
        QVERIFY(!labelled->otherwise.empty());
        QVERIFY(session.current() && session.current()->id != shown);
        QVERIFY(!session.canUndo());
    }

    void aGeneratedBatchKeepsAKnownModelsNameAndMetrics()
    {
        auto store = freshStore(0);
        QVERIFY(store);
        QVERIFY(store->addModel(model("ft1", "run 3 (step 300)", R"({"vsr":0.97})")).ok());
        LabelSession session(*store, "ana");
        auto stored = session.addGenerated(model("ft1", "step-000300.d2dpo"), binaryPairs({{"0001", "0010"}}, "ft1"),
                                            LabelSession::QueuePlace::Last);
        QVERIFY(stored.ok());
        QCOMPARE(stored->modelName, std::string("run 3 (step 300)"));
        const ModelRecord kept = *store->model("ft1").value();
        QCOMPARE(kept.name, std::string("run 3 (step 300)"));
        QCOMPARE(kept.metricsJson, std::string(R"({"vsr":0.97})"));
        QCOMPARE(session.current()->id, stored->pairs.front().id); // nothing was on screen: shown now

        auto fresh = storeGeneratedPairs(*store, model("new1", "new.d2dpo"), binaryPairs({{"0011", "0100"}}, "new1"));
        QVERIFY(fresh.ok());
        QCOMPARE(store->model("new1").value()->name, std::string("new.d2dpo")); // unknown: recorded as given
    }

    void aNewModelsPairsCanComeFirstWithThePairOnScreenBehindThem()
    {
        auto store = freshStore(2);
        QVERIFY(store);
        LabelSession session(*store, "ana");
        QVERIFY(session.advance().ok());
        const int64_t onScreen = session.current()->id;
        auto stored = session.addGenerated(model("g", "g"), binaryPairs({{"1001", "1010"}, {"1011", "1100"}}, "g"),
                                            LabelSession::QueuePlace::Next);
        QVERIFY(stored.ok());
        QCOMPARE(session.current()->id, stored->pairs[0].id);
        // A later piece of the same batch joins behind its pairs, the pair on screen staying.
        auto later = session.addGenerated(model("g", "g"), binaryPairs({{"0111", "1110"}}, "g"),
                                           LabelSession::QueuePlace::AfterNext);
        QVERIFY(later.ok());
        QCOMPARE(session.current()->id, stored->pairs[0].id);
        QVERIFY(session.label(Choice::Left, 1).ok());
        QCOMPARE(session.current()->id, stored->pairs[1].id);
        QVERIFY(session.label(Choice::Left, 1).ok());
        QCOMPARE(session.current()->id, later->pairs[0].id);
        QVERIFY(session.label(Choice::Left, 1).ok());
        QCOMPARE(session.current()->id, onScreen);
    }

    void theRuleLabelsEveryPendingPairAsOneUndoStep()
    {
        auto store = freshStore(5);
        QVERIFY(store);
        QVERIFY(store->addPairs({{0, "ab", "ba", "", "", "sequences:unknown"}}, "generated").ok());
        TaskCatalog tasks(*store);
        RuleLabeler labeler(tasks);
        const RuleLabelPlan plan = labeler.plan(store->pendingPairs(100).value());
        QCOMPARE(plan.labels.size(), size_t(5));
        QCOMPARE(plan.labelers, std::set<std::string>{"rule:odd"});
        QCOMPARE(plan.unreadable, int64_t(1)); // its task is not in the store: left for people
        const auto task = TaskInfo::fromStore(*store, "binary-integers:4");
        QVERIFY(task.ok());
        for (const RuleLabelPlan::Label& l : plan.labels) { // each pair as its task's rule labels it
            const ShownPair p = store->pair(l.pairId).value();
            QVERIFY(l.choice == task->ruleChoice(p.left, p.right).value());
        }
        QVERIFY(std::any_of(plan.labels.begin(), plan.labels.end(),
                            [](const RuleLabelPlan::Label& l) { return l.choice != Choice::Tie; }));
        LabelSession session(*store, "ana");
        const RuleLabelOutcome outcome = session.applyRulePlan(labeler, plan);
        QVERIFY(outcome.error.empty());
        QCOMPARE(outcome.labelIds.size(), size_t(5));
        QCOMPARE(session.labelledCount(), 0); // the rule's labels are not the labeler's
        QCOMPARE(store->counts("rule:odd").value().byLabeler, int64_t(5));
        auto undone = session.undo();
        QVERIFY(undone.ok() && undone->has_value());
        QVERIFY(undone.value()->wasRulePlan);
        QCOMPARE(undone.value()->pairIds.size(), size_t(5));
        QCOMPARE(store->counts("rule:odd").value().byLabeler, int64_t(0));
        QCOMPARE(store->counts("").value().pending, int64_t(6));
    }

    void aTaskTheStoreLacksIsAskedForAgainOnlyWhenTheModelsAreRead()
    {
        auto store = freshStore(0);
        QVERIFY(store);
        TaskConfig config;
        config.name = "sequences";
        config.symbols = "ACGT";
        config.padded = true;
        config.length = 6;
        config.minLength = 4;
        config.data = {"ACGTAC", "ACGT", "GGGGA"};
        const auto task = TaskInfo::fromConfig(config);
        QVERIFY(task.ok());
        TaskCatalog tasks(*store);
        QVERIFY(!tasks.find(task->key()));
        QVERIFY(tasks.lastError().find("does not know the task") != std::string::npos);
        // Another window records it: this catalog keeps its answer (no read per pair or per step)
        // until the models are read again.
        QVERIFY(task->recordIn(*store).ok());
        QVERIFY(!tasks.find(task->key()));
        tasks.forgetFailures();
        QVERIFY(tasks.find(task->key()));
        QCOMPARE(tasks.find(task->key())->key(), task->key());
    }

    void aPlanWrittenElsewhereIsUndoneAsOneStepAndAPairSetAsideAsksNothing()
    {
        // A team store's window writes a plan, and takes it back, on other connections: the session
        // only keeps the step and shows the pairs again, the last first.
        auto store = freshStore(3);
        QVERIFY(store);
        LabelSession session(*store, "ana");
        QVERIFY(session.advance());
        const int64_t first = session.current()->id;
        QVERIFY(!session.latestRulePlan());
        TaskCatalog tasks(*store);
        RuleLabeler labeler(tasks);
        RuleLabelOutcome outcome = labeler.apply(*store, labeler.plan(store->pendingPairs(100).value()));
        QCOMPARE(outcome.labelIds.size(), size_t(3));
        session.recordRulePlan(outcome);
        QVERIFY(outcome.error.empty());
        QCOMPARE(session.latestRulePlan().value(), outcome.labelIds);
        QVERIFY(!session.current()); // every pair labelled
        const auto pairs = store->undoLabels(outcome.labelIds).value();
        std::vector<ShownPair> again;
        for (int64_t id : pairs)
            again.push_back(store->pair(id).value());
        QVERIFY(session.undoneElsewhere(outcome.labelIds, again));
        QVERIFY(!session.canUndo());
        QCOMPARE(session.current()->id, again.back().id);
        QVERIFY(!session.undoneElsewhere(outcome.labelIds, {})); // no plan left to take back
        // Set aside: the next queued pair, the store not asked (the queue holds the other two).
        const int64_t shown = session.current()->id;
        QCOMPARE(session.setAsideCurrent()->id, shown);
        QVERIFY(session.current() && session.current()->id != shown);
        QCOMPARE(session.queued(), size_t(1));
        QCOMPARE(session.addClaimed({store->pair(shown).value()}), size_t(0)); // a claim brings it back: passed over
        QVERIFY(first > 0);
    }

    void aRuleOverrideAndALabelerNameAreHonoured()
    {
        auto store = freshStore(3);
        QVERIFY(store);
        TaskCatalog odd(*store, "odd");
        const RuleLabelPlan plan = RuleLabeler(odd).plan(store->pendingPairs(100).value(), "sim");
        QCOMPARE(plan.labels.size(), size_t(3));
        QCOMPARE(plan.labelers, std::set<std::string>{"sim"});
        QCOMPARE(plan.labels.front().rule, std::string("odd"));
        // The override is the task's rule: one the task does not know leaves every pair unread.
        TaskCatalog motif(*store, "motif:^1");
        const RuleLabelPlan refused = RuleLabeler(motif).plan(store->pendingPairs(100).value());
        QCOMPARE(refused.unreadable, int64_t(3));
        QVERIFY2(refused.firstUnreadable.find("unknown rule") != std::string::npos, refused.firstUnreadable.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLabelSession)
#include "tst_labelsession.moc"
