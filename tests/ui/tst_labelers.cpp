// SPDX-License-Identifier: GPL-3.0-or-later
// Whose labels train: the Train view lists the labelers of the reference's task with their
// decisive-label counts, simulated experts (rule:*) unticked by default, and the pair count (and
// the run) follow the ticks.
#include <QLabel>
#include <QListWidget>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "support/tinyconfigs.h"

#include "store/preferencestore.h"
#include "ui/train/traindatapanel.h"

using namespace d2dpo;
using namespace d2dpo::ui;

class TestLabelers final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_stores = 0;

    /// A store with a binary-integers model (N = 4) and labels: 2 decisive by ana, 3 by rule:odd,
    /// 1 tie by ana.
    std::unique_ptr<PreferenceStore> labelledStore()
    {
        auto store = PreferenceStore::open(m_dir.filePath(QStringLiteral("labels%1.sqlite").arg(++m_stores)).toStdString()).value();
        ModelRecord model;
        model.id = "m";
        model.kind = "pretrained";
        model.name = "reference";
        model.path = "/m";
        model.specJson = toJson(test::tinySpec(4));
        if (!store->addModel(model).ok())
            return nullptr;
        std::vector<ShownPair> pairs;
        const char* sequences[][2] = {{"1000", "1100"}, {"1010", "0110"}, {"0001", "0010"},
                                      {"1110", "0111"}, {"0101", "1111"}, {"0011", "1001"}};
        for (const auto& [a, b] : sequences)
            pairs.push_back({0, a, b, "m", "m", "binary-integers:4"});
        const auto ids = store->addPairs(pairs, "generated").value();
        const std::pair<const char*, Choice> labels[] = {{"ana", Choice::Left},      {"ana", Choice::Right},
                                                         {"rule:odd", Choice::Left}, {"rule:odd", Choice::Right},
                                                         {"rule:odd", Choice::Left}, {"ana", Choice::Tie}};
        for (size_t i = 0; i < ids.size(); ++i)
            if (!store->addLabel(ids[i], labels[i].second, labels[i].first, 10).ok())
                return nullptr;
        return store;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void labelersAreCountedPeopleFirst()
    {
        auto store = labelledStore();
        QVERIFY(store);
        const auto labelers = store->labelersOf("binary-integers:4").value();
        QCOMPARE(labelers.size(), size_t(2));
        QCOMPARE(labelers[0].labeler, std::string("ana"));
        QCOMPARE(labelers[0].decisive, int64_t(2));
        QVERIFY(!labelers[0].simulated);
        QCOMPARE(labelers[1].labeler, std::string("rule:odd"));
        QVERIFY(labelers[1].simulated);
        const UsablePairs onlyAna = store->usablePairs("binary-integers:4", {"ana"}).value();
        QCOMPARE(onlyAna.usable, int64_t(2));
        QCOMPARE(onlyAna.otherLabelers, int64_t(3));
        QCOMPARE(store->usablePairs("binary-integers:4", {}).value().usable, int64_t(5)); // everyone
        QCOMPARE(store->preferences("binary-integers:4", {"ana"}).value().size(), size_t(2)); // what a run reads
    }

    void theTrainViewLeavesSimulatedLabelersOutUntilTicked()
    {
        auto store = labelledStore();
        QVERIFY(store);
        TrainDataPanel panel(*store);
        panel.reload();
        auto* list = panel.findChild<QListWidget*>(QStringLiteral("labelers"));
        QVERIFY(list);
        QCOMPARE(list->count(), 2);
        QVERIFY2(list->item(0)->text().contains(QStringLiteral("ana · 2 decisive labels")), qPrintable(list->item(0)->text()));
        QCOMPARE(list->item(0)->checkState(), Qt::Checked);
        QVERIFY(list->item(1)->text().contains(QStringLiteral("simulated")));
        QCOMPARE(list->item(1)->checkState(), Qt::Unchecked);
        QCOMPARE(panel.pairCount(), qint64(2));
        QVERIFY(panel.summary().contains(QStringLiteral("3 by unticked labelers are left out")));
        QCOMPARE(panel.chosenLabelers(), std::vector<std::string>{"ana"});

        QVERIFY(panel.setLabelerChosen(QStringLiteral("rule:odd"), true));
        QCOMPARE(panel.pairCount(), qint64(5));
        panel.reload(); // the ticks survive a reload
        QCOMPARE(panel.pairCount(), qint64(5));
        QVERIFY(panel.setLabelerChosen(QStringLiteral("ana"), false));
        QVERIFY(panel.setLabelerChosen(QStringLiteral("rule:odd"), false));
        QCOMPARE(panel.pairCount(), qint64(0));
        QVERIFY(panel.summary().contains(QStringLiteral("tick one")));
    }
};

QTEST_MAIN(TestLabelers)
#include "tst_labelers.moc"
