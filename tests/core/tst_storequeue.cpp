// SPDX-License-Identifier: GPL-3.0-or-later
// How the store hands out pairs (store/storequeue.cpp, storecomparisons.cpp): an overlap of k
// different labelers per pair (never one twice, never past k, across connections), gold pairs
// mixed into a named labeler's queue and kept out of training, and blind comparison pairs whose
// models no queue reveals while the reports can still name them.
#include <cmath>

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "labeling/labelsession.h"
#include "store/preferencestore.h"
#include "support/storeengines.h"
#include "support/storerecords.h"

using namespace d2dpo;
using namespace d2dpo::test;

class TestStoreQueue final : public QObject {
    Q_OBJECT

    FreshStores m_stores;

    std::string freshPath() { return m_stores.fresh(); }

public:
    explicit TestStoreQueue(StoreEngine engine) : m_stores(engine) {}

private Q_SLOTS:

    void overlapOneIsOneLabelPerPair()
    {
        auto store = openOrFail(freshPath());
        QVERIFY(store);
        const auto ids = store->addPairs(somePairs(2), "generated").value();
        QVERIFY(store->addLabel(ids[0], Choice::Left, "ana", 10));
        const auto second = store->addLabel(ids[0], Choice::Right, "ben", 10);
        QVERIFY(!second);
        QCOMPARE(second.errorCode(), ErrorCode::AlreadyLabelled);
        QCOMPARE(second.error(), std::string("pair ") + std::to_string(ids[0]) + " already has a label");
        QCOMPARE(store->pendingPairs(10, "", "ben").value().size(), size_t(1));
        QCOMPARE(store->queueSettings().value().overlap, 1);
    }

    void overlapKTakesKDifferentLabelersAcrossConnections()
    {
        const std::string path = freshPath();
        auto one = openOrFail(path);
        auto two = openOrFail(path); // a second labeler's process
        QVERIFY(one && two);
        QVERIFY(one->setQueueSettings({2, 0}));
        QVERIFY(!one->setQueueSettings({0, 0}));
        QVERIFY(!one->setQueueSettings({2, 0.9}));
        const auto ids = one->addPairs(somePairs(3), "generated").value();
        QVERIFY(one->addLabel(ids[0], Choice::Left, "ana", 10));
        const auto again = one->addLabel(ids[0], Choice::Left, "ana", 10);
        QCOMPARE(again.errorCode(), ErrorCode::AlreadyLabelled); // never twice by one labeler
        QCOMPARE(one->pendingPairs(10, "", "ana").value().size(), size_t(2));
        QCOMPARE(two->pendingPairs(10, "", "ben").value().size(), size_t(3)); // ana's pair still needs one more
        QVERIFY(two->addLabel(ids[0], Choice::Right, "ben", 10));
        const auto third = two->addLabel(ids[0], Choice::Left, "cy", 10);
        QCOMPARE(third.errorCode(), ErrorCode::AlreadyLabelled); // never past the overlap
        QCOMPARE(two->pendingPairs(10, "", "cy").value().size(), size_t(2));
        QCOMPARE(one->counts("cy").value().pending, int64_t(2));
        // Undo hands the pair back to the queue of everyone who has not labelled it.
        QVERIFY(one->undoLastLabel("ana").value());
        QCOMPARE(two->pendingPairs(10, "", "cy").value().size(), size_t(3));
        QVERIFY(two->addLabel(ids[0], Choice::Left, "cy", 10));
        // Both labels of a pair train: training reads every decisive label.
        QCOMPARE(one->preferences().value().size(), size_t(2));
    }

    void goldPairsMeasureAndNeverTrain()
    {
        auto store = openOrFail(freshPath());
        QVERIFY(store);
        QVERIFY(store->setQueueSettings({1, 0.5}));
        store->addPairs(somePairs(20), "generated").value();
        std::vector<GoldPair> gold;
        for (const ShownPair& p : somePairs(10))
            gold.push_back({{0, p.left + "", p.right, "", "", p.task}, Choice::Right});
        QVERIFY(!store->addGoldPairs({{somePairs(1)[0], Choice::Tie}}, "gold")); // an answer is a side
        const auto goldIds = store->addGoldPairs(gold, "gold").value();
        // A named labeler's queue mixes gold in, never more gold than other pairs; an unnamed
        // reader (a rule labeling for whoever) gets none.
        const auto queue = store->pendingPairs(100, "", "ana").value();
        int golden = 0;
        for (const ShownPair& p : queue)
            golden += std::find(goldIds.begin(), goldIds.end(), p.id) != goldIds.end();
        QVERIFY2(golden >= 3 && golden <= 10, qPrintable(QString::number(golden)));
        QCOMPARE(queue.size(), size_t(20 + golden));
        QCOMPARE(store->pendingPairs(100).value().size(), size_t(20));
        QCOMPARE(store->pendingPairs(100, "", "ana").value().front().id, queue.front().id); // read again: the same
        // Gold pairs take a label from everyone, even with overlap 1, and train nothing.
        QVERIFY(store->addLabel(goldIds[0], Choice::Right, "ana", 5));
        QVERIFY(store->addLabel(goldIds[0], Choice::Left, "ben", 5));
        QCOMPARE(store->addLabel(goldIds[0], Choice::Left, "ben", 5).errorCode(), ErrorCode::AlreadyLabelled);
        QCOMPARE(store->preferences().value().size(), size_t(0));
        QCOMPARE(store->usablePairs("binary-integers:8", {}).value().usable, int64_t(0));
        QCOMPARE(store->counts("").value().decisive, int64_t(0));
        const auto judged = store->judgedLabels().value();
        QCOMPARE(judged.size(), size_t(2));
        QVERIFY(judged[0].purpose == PairPurpose::Gold && judged[0].goldAnswer == Choice::Right);
        // A maintainer marks a fresh training pair gold; a labelled one cannot be.
        const int64_t fresh = store->pendingPairs(1).value().front().id;
        const auto leased = [&] {
            for (const LabelerProgress& p : store->teamProgress().value())
                if (p.labeler == "cy")
                    return p.leased;
            return int64_t(0);
        };
        QVERIFY(!store->claimPairs("cy", 2).value().empty()); // held by cy, who then marks one gold
        const int64_t before = leased();
        QVERIFY(before >= 1);
        QVERIFY(store->markGold(fresh, Choice::Left));
        QCOMPARE(leased(), before - 1); // the gold pair is no longer cy's
        QVERIFY(store->addLabel(fresh + 1, Choice::Left, "ana", 5));
        const Status labelled = store->markGold(fresh + 1, Choice::Left);
        QVERIFY(!labelled && labelled.error().find("has labels already") != std::string::npos);
        QVERIFY(!store->markGold(goldIds[0], Choice::Left));
    }

    void theMarginOrdersHandOutTheSmallestOrTheLargestMarginFirst()
    {
        const std::string path = freshPath();
        auto store = openOrFail(path);
        QVERIFY(store);
        const auto ids = store->addPairs(somePairs(4), "generated").value();
        QCOMPARE(store->queueSettings().value().order, QueueOrder::Oldest);
        // Pair 4 unscored; the others at |margin| 0.5, 0.01 and 0.2 (the sign does not matter).
        QVERIFY(store->setPairMargins({{ids[0], 0.5}, {ids[1], -0.01}, {ids[2], 0.2}}, "m"));
        const auto idsOf = [&](PreferenceStore& s) {
            std::vector<int64_t> out;
            for (const ShownPair& p : s.pendingPairs(10, "", "ana").value())
                out.push_back(p.id);
            return out;
        };
        QCOMPARE(idsOf(*store), ids); // oldest first until the order is changed
        QVERIFY(store->setQueueSettings({1, 0, QueueOrder::LeastSure}));
        const std::vector<int64_t> leastSure{ids[1], ids[2], ids[0], ids[3]}; // unscored last
        QCOMPARE(idsOf(*store), leastSure);
        auto reopened = openOrFail(path); // the order is the store's, for every labeler's process
        QCOMPARE(reopened->queueSettings().value().order, QueueOrder::LeastSure);
        QCOMPARE(idsOf(*reopened), leastSure);
        const auto margin = store->pairMargin(ids[1]).value();
        QVERIFY(margin && margin->first == -0.01 && margin->second == "m");
        QVERIFY(!store->pairMargin(ids[3]).value());
        QVERIFY(store->setQueueSettings({1, 0, QueueOrder::Surest}));
        const std::vector<int64_t> surest{ids[0], ids[2], ids[1], ids[3]}; // unscored last here too
        QCOMPARE(idsOf(*store), surest);
        QVERIFY(store->setQueueSettings({1, 0, QueueOrder::LeastSure}));
        // A later model's scores replace the earlier ones.
        QVERIFY(store->setPairMargins({{ids[0], 0.0}}, "m2"));
        QCOMPARE(idsOf(*store).front(), ids[0]);
    }

    // The queue dialog's count: the whole queue in one read (it once read 5000 pairs, then each
    // pair's margin), by pendingPairs' rule: gold pairs and pairs labelled to the overlap are out.
    void pendingMarginsCountTheWholeQueueInOneRead()
    {
        auto store = openOrFail(freshPath());
        QVERIFY(store);
        QCOMPARE(store->pendingMargins().value().pending, int64_t(0));
        const auto ids = store->addPairs(somePairs(6000), "generated").value();
        std::vector<PairMargin> margins;
        for (size_t i = 0; i < ids.size(); i += 3)
            margins.push_back({ids[i], 0.1 * double(i % 7) - 0.3});
        QVERIFY(store->setPairMargins(margins, "m"));
        QVERIFY(store->addGoldPairs({{somePairs(1)[0], Choice::Left}}, "gold"));
        QVERIFY(store->addLabel(ids[0], Choice::Left, "ana", 10)); // scored, and now labelled
        QVERIFY(store->addLabel(ids[1], Choice::Right, "ana", 10)); // unscored, and now labelled
        const PendingMargins counted = store->pendingMargins().value();
        QCOMPARE(counted.pending, int64_t(5998));
        QCOMPARE(counted.withMargin, int64_t(margins.size() - 1));
        QCOMPARE(counted.pending, int64_t(store->pendingPairs(10000).value().size())); // the same rule
    }

    void aComparisonIsNeverHeldBackByScoredPairs()
    {
        auto store = openOrFail(freshPath());
        QVERIFY(store);
        QVERIFY(store->addModel(modelRecord("ref", "", "pretrained")));
        QVERIFY(store->addModel(modelRecord("tuned", "ref", "d2dpo")));
        const auto ids = store->addPairs(somePairs(3), "generated").value();
        QVERIFY(store->setPairMargins({{ids[0], 0.3}, {ids[1], 0.1}, {ids[2], 2.0}}, "tuned"));
        std::vector<ShownPair> blind = somePairs(5);
        blind.erase(blind.begin(), blind.begin() + 3); // two pairs the training ones do not hold
        for (ShownPair& p : blind) {
            p.leftModelId = "ref";
            p.rightModelId = "tuned";
        }
        QVERIFY(store->addComparison("binary-integers:8", {"ref", "tuned"}, blind));
        for (QueueOrder order : {QueueOrder::LeastSure, QueueOrder::Surest}) {
            QVERIFY(store->setQueueSettings({1, 0, order}));
            const auto queue = store->pendingPairs(10, "", "ana").value();
            QCOMPARE(queue.size(), size_t(5));
            QVERIFY(queue[0].blind && queue[1].blind); // never unscored, never last
            QCOMPARE(queue[2].id, order == QueueOrder::LeastSure ? ids[1] : ids[2]);
        }
    }

    void badMarginsAreRefusedWholly()
    {
        auto store = openOrFail(freshPath());
        QVERIFY(store);
        const auto ids = store->addPairs(somePairs(2), "generated").value();
        const auto unknown = store->setPairMargins({{ids[0], 0.3}, {ids[1] + 100, 0.1}}, "m");
        QVERIFY(!unknown);
        QCOMPARE(unknown.errorCode(), ErrorCode::NotFound);
        QVERIFY(!store->pairMargin(ids[0]).value()); // nothing of the batch was written
        QVERIFY(!store->setPairMargins({{ids[0], std::nan("")}}, "m"));
        QVERIFY(!store->pairMargin(ids[0]).value());
        QCOMPARE(queueOrderFromString("least-sure"), std::optional<QueueOrder>(QueueOrder::LeastSure));
        QCOMPARE(queueOrderFromString("surest"), std::optional<QueueOrder>(QueueOrder::Surest));
        QCOMPARE(std::string(toString(QueueOrder::Surest)), std::string("surest"));
        QVERIFY(!queueOrderFromString("newest"));
    }

    void aComparisonHidesItsModelsFromEveryQueue()
    {
        auto store = openOrFail(freshPath());
        QVERIFY(store);
        QVERIFY(store->addModel(modelRecord("ref", "", "pretrained")));
        QVERIFY(store->addModel(modelRecord("tuned", "ref", "d2dpo")));
        std::vector<ShownPair> pairs = somePairs(4);
        for (size_t i = 0; i < pairs.size(); ++i) {
            pairs[i].leftModelId = i % 2 ? "ref" : "tuned";
            pairs[i].rightModelId = i % 2 ? "tuned" : "ref";
        }
        QVERIFY(!store->addComparison("binary-integers:8", {"ref", "ghost"}, pairs)); // unknown model
        QVERIFY(!store->addComparison("binary-integers:8", {"ref"}, pairs));
        const int64_t id = store->addComparison("binary-integers:8", {"ref", "tuned"}, pairs).value();
        for (const ShownPair& p : store->pendingPairs(10, "", "ana").value()) {
            QVERIFY(p.blind);
            QVERIFY(p.leftModelId.empty() && p.rightModelId.empty());
            QVERIFY(store->pair(p.id).value().leftModelId.empty());
        }
        LabelSession session(*store, "ana");
        QVERIFY(session.advance());
        QVERIFY(session.current() && session.current()->blind && session.current()->leftModelId.empty());
        QVERIFY(session.label(Choice::Right, 10));
        for (const auto& [pair, label] : store->labelledPairs("ana").value())
            QVERIFY(pair.leftModelId.empty());
        // The report reads the models; training reads nothing.
        const auto judged = store->judgedLabels(id).value();
        QCOMPARE(judged.size(), size_t(1));
        QCOMPARE(judged[0].leftModelId, std::string("tuned"));
        QCOMPARE(store->preferences().value().size(), size_t(0));
        const auto comparisons = store->comparisons().value();
        QCOMPARE(comparisons.size(), size_t(1));
        QCOMPARE(comparisons[0].pairs, int64_t(4));
        QCOMPARE(comparisons[0].labels, int64_t(1));
        QCOMPARE(comparisons[0].modelIds, (std::vector<std::string>{"ref", "tuned"}));
    }
};

int main(int argc, char** argv) { return runOnEveryEngine<TestStoreQueue>(argc, argv); }
#include "tst_storequeue.moc"
