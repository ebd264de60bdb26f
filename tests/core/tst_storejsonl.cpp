// SPDX-License-Identifier: GPL-3.0-or-later
// Preferences as JSONL: exported and imported back whole and only once, and every kind of bad line
// refused with its line number while nothing is imported.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "support/filebytes.h"
#include "support/storeengines.h"
#include "support/storerecords.h"

#include "experts/teamagreement.h"
#include "facades/taskinfo.h"
#include "store/preferencejsonl.h"
#include "store/preferencestore.h"

using namespace d2dpo;

namespace {

using test::openOrFail;
using test::readAll;
using test::somePairs;
using test::writeAll;

/// An import of binary-integers sequences of `length`.
JsonlRules binaryRules(int length)
{
    TaskConfig binary;
    binary.length = length;
    const TaskInfo task = TaskInfo::fromConfig(binary).value();
    return {task.key(), [task](const std::string& text) { return task.check(text); }};
}

} // namespace

class TestStoreJsonl final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    test::FreshStores m_stores;
    std::string path(const char* name) const { return m_dir.filePath(name).toStdString(); }

public:
    explicit TestStoreJsonl(test::StoreEngine engine) : m_stores(engine) {}

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void exportedPreferencesImportBackWholeAndOnlyOnce()
    {
        auto store = openOrFail(m_stores.named("export.sqlite"));
        QVERIFY(store);
        const auto ids = store->addPairs(somePairs(5), "generated").value();
        QVERIFY(store->addLabel(ids[0], Choice::Left, "ana", 800).ok());
        QVERIFY(store->addLabel(ids[1], Choice::Right, "ana", 900).ok());
        QVERIFY(store->addLabel(ids[2], Choice::Tie, "ana", 900).ok());  // not exported: no winner
        QVERIFY(store->addLabel(ids[3], Choice::Skip, "ana", 900).ok()); // not exported
        QCOMPARE(exportPreferencesJsonl(*store, path("prefs.jsonl")).value(), int64_t(2));

        auto target = openOrFail(m_stores.named("import.sqlite"));
        QVERIFY(target);
        QCOMPARE(importPreferencesJsonl(*target, path("prefs.jsonl"), binaryRules(8)).value().imported, int64_t(2));
        // Importing the same file again changes nothing: each line is already there.
        const ImportOutcome again = importPreferencesJsonl(*target, path("prefs.jsonl"), binaryRules(8)).value();
        QCOMPARE(again.imported, int64_t(0));
        QCOMPARE(again.duplicates, int64_t(2));
        QCOMPARE(target->counts("").value().labelled, int64_t(2));
        QCOMPARE(target->imports().value().size(), size_t(1));

        // Ties and skips on request, in a shape DPO readers skip; an import keeps them, counted.
        QVERIFY(store->addLabel(ids[4], Choice::BothBad, "ana", 700).ok());
        QCOMPARE(exportPreferencesJsonl(*store, path("all.jsonl"), true).value(), int64_t(5));
        const std::string all = readAll(path("all.jsonl"));
        QVERIFY2(all.find("\"choice\":\"tie\"") != std::string::npos, all.c_str());
        QVERIFY(all.find("\"choice\":\"both-bad\"") != std::string::npos);
        auto third = openOrFail(m_stores.named("import3.sqlite"));
        const ImportOutcome mixed = importPreferencesJsonl(*third, path("all.jsonl"), binaryRules(8)).value();
        QCOMPARE(mixed.imported, int64_t(5));
        QCOMPARE(mixed.undecided, int64_t(3));
        QCOMPARE(third->counts("").value().labelled, int64_t(5));
        QCOMPARE(third->preferences().value().size(), size_t(2)); // training still reads the decisive ones
        const auto a = store->preferences().value();
        const auto b = target->preferences().value();
        QCOMPARE(b.size(), a.size());
        for (size_t i = 0; i < a.size(); ++i) {
            QCOMPARE(b[i].chosen, a[i].chosen);
            QCOMPARE(b[i].rejected, a[i].rejected);
            QCOMPARE(b[i].choice, a[i].choice);
            QCOMPARE(b[i].labeler, a[i].labeler);
            QCOMPARE(b[i].decideMs, a[i].decideMs);
            QCOMPARE(b[i].labelledAt, a[i].labelledAt);
        }
    }

    void aRoundTripKeepsEveryLabelAndTheLabelersAgreement()
    {
        // Two labelers on the same six pairs, ties and both-bad among their labels.
        auto store = openOrFail(m_stores.named("agree.sqlite"));
        QVERIFY(store);
        QueueSettings two;
        two.overlap = 2;
        QVERIFY(store->setQueueSettings(two).ok());
        const auto ids = store->addPairs(somePairs(6), "generated").value();
        const Choice ana[] = {Choice::Left, Choice::Right, Choice::Tie, Choice::Left, Choice::BothBad, Choice::Right};
        const Choice ben[] = {Choice::Left, Choice::Left, Choice::Tie, Choice::Right, Choice::BothBad, Choice::Right};
        for (size_t i = 0; i < ids.size(); ++i) {
            QVERIFY(store->addLabel(ids[i], ana[i], "ana", 500).ok());
            QVERIFY(store->addLabel(ids[i], ben[i], "ben", 600).ok());
        }
        QCOMPARE(exportPreferencesJsonl(*store, path("agree.jsonl"), true).value(), int64_t(12));
        auto target = openOrFail(m_stores.named("agree-import.sqlite"));
        QVERIFY(target);
        const ImportOutcome imported = importPreferencesJsonl(*target, path("agree.jsonl"), binaryRules(8)).value();
        QCOMPARE(imported.imported, int64_t(12));
        QCOMPARE(imported.undecided, int64_t(4));
        // Every label, on as many pairs as there were, and the same agreement read from both stores.
        QCOMPARE(target->counts("").value().labelled, store->counts("").value().labelled);
        QCOMPARE(target->counts("").value().decisive, store->counts("").value().decisive);
        const TeamAgreement before = measureAgreement(store->judgedLabels().value(), "", 100);
        const TeamAgreement after = measureAgreement(target->judgedLabels().value(), "", 100);
        QCOMPARE(after.items, before.items);
        QCOMPARE(after.sharedItems, before.sharedItems);
        QCOMPARE(after.pairs.size(), size_t(1));
        QCOMPARE(after.pairs.front().shared, before.pairs.front().shared);
        QCOMPARE(after.pairs.front().kappa, before.pairs.front().kappa);
        // A file that joins other sequences under one pair is refused whole.
        writeAll(path("joined.jsonl"), std::string(R"({"chosen": "10000000", "rejected": "11000000", "pair": 7})") +
                                           "\n" + R"({"chosen": "10100000", "rejected": "11000000", "pair": 7})" + "\n");
        auto joined = importPreferencesJsonl(*target, path("joined.jsonl"), binaryRules(8));
        QVERIFY(!joined.ok());
        QVERIFY2(joined.error().find("two lines of pair '7' show different sequences") != std::string::npos,
                 joined.error().c_str());
        // One labeler's two different labels of one pair: refused with both lines, before any store.
        writeAll(path("twice.jsonl"),
                 std::string(R"({"chosen": "10000000", "rejected": "11000000", "pair": 9, "labeler": "ana"})") + "\n" +
                     R"({"chosen": "11000000", "rejected": "10000000", "pair": 9, "labeler": "ana", "chosen_side": "right"})" +
                     "\n");
        auto twice = readPreferencesJsonl(path("twice.jsonl"), binaryRules(8));
        QVERIFY(!twice.ok());
        QVERIFY2(twice.error().find("lines 1 and 2: labeler 'ana' labels pair '9' twice") != std::string::npos,
                 twice.error().c_str());
        QVERIFY(!importPreferencesJsonl(*target, path("twice.jsonl"), binaryRules(8)).ok());
    }

    void modelIdsFromElsewhereComeBackOnExport()
    {
        // Lines naming models this store does not have: the ids are kept and written back.
        const std::string decided = R"({"chosen": "10000000", "rejected": "11000000",)"
                                    R"( "chosen_model_id": "esm2-8m.v1", "rejected_model_id": "dplm:150M"})";
        const std::string tie = R"({"sequence_a": "10100000", "sequence_b": "11100000", "choice": "tie",)"
                                R"( "sequence_a_model_id": "a1b2c3d4e5f60718", "sequence_b_model_id": "esm2-8m.v1"})";
        writeAll(path("foreign.jsonl"), decided + "\n" + tie + "\n");
        auto store = openOrFail(m_stores.named("foreign.sqlite"));
        QVERIFY(store);
        const ImportOutcome imported = importPreferencesJsonl(*store, path("foreign.jsonl"), binaryRules(8)).value();
        QCOMPARE(imported.imported, int64_t(2));
        QCOMPARE(exportPreferencesJsonl(*store, path("foreign-back.jsonl"), true).value(), int64_t(2));
        const std::string back = readAll(path("foreign-back.jsonl"));
        for (const char* kept : {"\"chosen_model_id\":\"esm2-8m.v1\"", "\"rejected_model_id\":\"dplm:150M\"",
                                 "\"sequence_a_model_id\":\"a1b2c3d4e5f60718\"", "\"sequence_b_model_id\":\"esm2-8m.v1\""})
            QVERIFY2(back.find(kept) != std::string::npos, (std::string(kept) + " in " + back).c_str());
        // They name no model of this store: nothing links to one, and the Label view shows none.
        QVERIFY(store->models().value().empty());
        for (const ShownPair& pair : store->pendingPairs(10).value())
            QVERIFY(pair.leftModelId.empty());
    }

    void aBadLineIsRefusedWithItsNumberAndNothingIsImported_data()
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
        QTest::newRow("an undecided choice") << R"({"sequence_a": "1000", "sequence_b": "1100", "choice": "maybe"})"
                                             << "'choice' must be";
        QTest::newRow("a key twice") << R"({"chosen": "1000", "rejected": "1100", "chosen": "0110"})"
                                     << "the key \"chosen\" appears twice";
        QTest::newRow("not a time") << R"({"chosen": "1000", "rejected": "1100", "labelled_at": "yesterday"})"
                                    << "'labelled_at' is not a time";
        QTest::newRow("month 13") << R"({"chosen": "1000", "rejected": "1100", "labelled_at": "2026-13-01T00:00:00Z"})"
                                  << "'labelled_at' is not a time";
        QTest::newRow("February 30") << R"({"chosen": "1000", "rejected": "1100", "labelled_at": "2026-02-30T00:00:00Z"})"
                                     << "'labelled_at' is not a time";
        QTest::newRow("February 29 of a year that is not leap")
            << R"({"chosen": "1000", "rejected": "1100", "labelled_at": "2100-02-29T00:00:00Z"})"
            << "'labelled_at' is not a time";
        QTest::newRow("April 31") << R"({"chosen": "1000", "rejected": "1100", "labelled_at": "2026-04-31T00:00:00Z"})"
                                  << "'labelled_at' is not a time";
        QTest::newRow("a model id that is not an id")
            << R"({"chosen": "1000", "rejected": "1100", "chosen_model_id": "m; rm -rf ~"})" << "a model id must be";
        QTest::newRow("nested deep") << R"({"chosen": "1000", "rejected": "1100", "x": [[[[[[1]]]]]]})"
                                     << "nested more than 4";
    }

    void aBadLineIsRefusedWithItsNumberAndNothingIsImported()
    {
        QFETCH(QString, badLine);
        QFETCH(QString, phrase);
        const std::string file = path("bad.jsonl");
        // A good line, a blank line (allowed), the bad one on line 3, then another good one.
        writeAll(file, std::string(R"({"chosen": "1000", "rejected": "1100"})") + "\n\n" + badLine.toStdString() +
                           "\n" + R"({"chosen": "1110", "rejected": "0000"})" + "\n");
        auto store = openOrFail(m_stores.named("rejections.sqlite"));
        QVERIFY(store);
        const int64_t before = store->counts("x").value().labelled;
        const auto result = importPreferencesJsonl(*store, file, binaryRules(4));
        QVERIFY(!result.ok());
        QVERIFY2(result.error().find("line 3") != std::string::npos, result.error().c_str());
        QVERIFY2(result.error().find(phrase.toStdString()) != std::string::npos, result.error().c_str());
        QVERIFY2(result.error().find("nothing was imported") != std::string::npos, result.error().c_str());
        QCOMPARE(store->counts("x").value().labelled, before); // all or nothing
    }
};

int main(int argc, char** argv) { return test::runOnEveryEngine<TestStoreJsonl>(argc, argv); }
#include "tst_storejsonl.moc"
