// SPDX-License-Identifier: GPL-3.0-or-later
// Measurements in the store (store/assaybook.h), on both engines: an import is all or nothing and
// is recorded once per file, a sequence measured twice keeps both values, an assay keeps its
// direction and task, an import is taken out whole, and a team store's labeler reads none of it.
#include <QtTest/QtTest>

#include "support/storeengines.h"
#include "support/storerecords.h"

#include "store/preferencestore.h"

using namespace d2dpo;
using test::openOrFail;

namespace {

std::vector<StoredMeasurement> someValues()
{
    std::vector<StoredMeasurement> out;
    out.push_back({"ACDE", 1.5, 0.25, 3, 2, 0});
    out.push_back({"ACDF", -0.125, std::nullopt, 1, 3, 0});
    out.push_back({"ACDE", 2.5, std::nullopt, 1, 4, 0}); // measured twice: both values kept
    return out;
}

AssayRecord stability() { return {"stability", "higher", "sequences:abc", 0, 0, 0}; }

} // namespace

class TestAssayBook final : public QObject {
    Q_OBJECT

    test::FreshStores m_stores;

public:
    explicit TestAssayBook(test::StoreEngine engine) : m_stores(engine) {}

private Q_SLOTS:
    void anImportIsStoredOnceAndReadBackExactly()
    {
        auto store = openOrFail(m_stores.fresh());
        const auto first = store->importMeasurements(stability(), "dms.csv", "digest-1", someValues());
        QVERIFY2(first, first ? "" : first.error().c_str());
        QCOMPARE(first->added, int64_t(3));
        QVERIFY(!first->alreadyImported);
        const auto again = store->importMeasurements(stability(), "copy-of-dms.csv", "digest-1", someValues());
        QVERIFY(again);
        QVERIFY(again->alreadyImported);
        QCOMPARE(again->importId, first->importId);
        QCOMPARE(again->added, int64_t(0));

        const auto values = store->measurementsOf("stability");
        QVERIFY(values);
        QCOMPARE(values->size(), size_t(3));
        QCOMPARE(values->at(0).tokens, std::string("ACDE"));
        QCOMPARE(values->at(0).value, 1.5);
        QCOMPARE(*values->at(0).sd, 0.25);
        QCOMPARE(values->at(0).replicates, int64_t(3));
        QCOMPARE(values->at(0).line, int64_t(2));
        QVERIFY(!values->at(1).sd.has_value());
        QCOMPARE(values->at(1).value, -0.125);
        QCOMPARE(values->at(2).value, 2.5);

        const auto assays = store->assays().value();
        QCOMPARE(assays.size(), size_t(1));
        QCOMPARE(assays[0].measurements, int64_t(3));
        QCOMPARE(assays[0].sequences, int64_t(2));
        QCOMPARE(assays[0].imports, int64_t(1));
        QCOMPARE(assays[0].direction, std::string("higher"));
    }

    void anAssayKeepsItsDirectionAndTask()
    {
        auto store = openOrFail(m_stores.fresh());
        QVERIFY(store->importMeasurements(stability(), "a.csv", "d1", someValues()));
        AssayRecord lower = stability();
        lower.direction = "lower";
        const auto refused = store->importMeasurements(lower, "b.csv", "d2", someValues());
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("import it under another assay name") != std::string::npos, refused.error().c_str());
        AssayRecord otherTask = stability();
        otherTask.task = "sequences:xyz";
        QVERIFY(!store->importMeasurements(otherTask, "b.csv", "d2", someValues()));
        QCOMPARE(store->assayImports().value().size(), size_t(1)); // nothing of the refused ones
        QVERIFY(!store->importMeasurements(stability(), "empty.csv", "d3", {}));
        QVERIFY(!store->measurementsOf("no such assay"));
    }

    void anImportIsTakenOutWhole()
    {
        auto store = openOrFail(m_stores.fresh());
        const int64_t a = store->importMeasurements(stability(), "a.csv", "d1", someValues())->importId;
        const int64_t b = store->importMeasurements(stability(), "b.csv", "d2", {{"GGGG", 7, std::nullopt, 1, 2, 0}})->importId;
        QCOMPARE(store->deleteAssayImport(a, true).value(), int64_t(3)); // a dry run counts
        QCOMPARE(store->measurementsOf("stability")->size(), size_t(4));
        QCOMPARE(store->deleteAssayImport(a, false).value(), int64_t(3));
        QCOMPARE(store->measurementsOf("stability")->size(), size_t(1));
        QVERIFY(!store->deleteAssayImport(a, false)); // gone
        QCOMPARE(store->deleteAssayImport(b, false).value(), int64_t(1));
        QVERIFY(store->assays()->empty()); // an assay with no import left goes too
        // The same file imports again once it was taken out.
        QVERIFY(!store->importMeasurements(stability(), "a.csv", "d1", someValues())->alreadyImported);
    }

    void theSchemaRefusesValuesNoFileCouldHold()
    {
        auto store = openOrFail(m_stores.fresh());
        std::vector<StoredMeasurement> bad = someValues();
        bad[2].replicates = 0;
        QVERIFY(!store->importMeasurements(stability(), "a.csv", "d1", bad));
        bad = someValues();
        bad[1].sd = -1.0;
        QVERIFY(!store->importMeasurements(stability(), "a.csv", "d1", bad));
        QVERIFY(store->assays()->empty()); // all or nothing: not even the assay
    }
};

int main(int argc, char** argv) { return test::runOnEveryEngine<TestAssayBook>(argc, argv); }
#include "tst_assaybook.moc"
