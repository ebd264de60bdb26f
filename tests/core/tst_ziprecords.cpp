// SPDX-License-Identifier: GPL-3.0-or-later
// A zip's records as its central directory states them (stored, deflated, zip64, behind a
// comment), damaged directories refused with a sentence, and the budget that finds a zip bomb
// before anything is inflated. The archives are written by Python's zipfile, as other tools do.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "support/filebytes.h"

#include "base/ziprecords.h"

using namespace d2dpo;

namespace {

/// Runs a Python snippet with `out` as sys.argv[1]; returns the bytes it wrote there.
std::string pythonZip(const QTemporaryDir& dir, const char* name, const char* code)
{
    const QString out = dir.filePath(QLatin1String(name));
    QProcess python;
    python.start(QStringLiteral("/usr/bin/python3"),
                 {QStringLiteral("-c"),
                  QStringLiteral("import sys, zipfile\nout = sys.argv[1]\n") + QLatin1String(code), out});
    if (!python.waitForFinished(60000) || python.exitCode() != 0)
        qFatal("python failed: %s", python.readAllStandardError().constData());
    return test::readAll(out.toStdString());
}

} // namespace

class TestZipRecords final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void recordsAreReadAsTheDirectoryStatesThem()
    {
        const std::string zip =
            pythonZip(m_dir, "plain.zip",
                      "with zipfile.ZipFile(out, \"w\") as z:\n"
                      "    z.writestr(\"m/data/0\", b\"x\" * 1000, zipfile.ZIP_STORED)\n"
                      "    z.writestr(\"m/code/__torch__.py\", b\"def f(): pass\\n\" * 100, zipfile.ZIP_DEFLATED)\n"
                      "    z.comment = b\"a comment behind the directory\"\n");
        const auto records = readZipRecords(zip);
        QVERIFY2(records.ok(), records.ok() ? "" : records.error().c_str());
        QCOMPARE(records->size(), size_t(2));
        QCOMPARE(records->at(0).name, std::string("m/data/0"));
        QCOMPARE(records->at(0).inflatedBytes, uint64_t(1000));
        QCOMPARE(records->at(0).storedBytes, uint64_t(1000));
        QVERIFY(!records->at(0).compressed);
        QCOMPARE(records->at(1).inflatedBytes, uint64_t(1400));
        QVERIFY(records->at(1).compressed);
        QVERIFY(records->at(1).storedBytes < 1400);
        QVERIFY(checkZipBudget(zip).ok());
    }

    void zip64RecordsAreRead()
    {
        const std::string zip =
            pythonZip(m_dir, "zip64.zip",
                      "with zipfile.ZipFile(out, \"w\", allowZip64=True) as z:\n"
                      "    with z.open(zipfile.ZipInfo(\"m/data/0\"), \"w\", force_zip64=True) as f:\n"
                      "        f.write(b\"y\" * 5000)\n");
        const auto records = readZipRecords(zip);
        QVERIFY2(records.ok(), records.ok() ? "" : records.error().c_str());
        QCOMPARE(records->size(), size_t(1));
        QCOMPARE(records->at(0).inflatedBytes, uint64_t(5000));
    }

    void aZipBombIsFoundFromWhatItStates()
    {
        // 200 MiB of one byte deflates to about 200 KiB: as code it is far beyond any code record,
        // as tensors far beyond what weights compress to.
        const std::string code =
            pythonZip(m_dir, "code-bomb.zip",
                      "with zipfile.ZipFile(out, \"w\") as z:\n"
                      "    z.writestr(\"m/code/__torch__.py\", b\"#\" * (200 << 20), zipfile.ZIP_DEFLATED)\n");
        const Status codeBomb = checkZipBudget(code);
        QVERIFY(!codeBomb);
        QVERIFY2(codeBomb.error().find("'m/code/__torch__.py' says it inflates to 0.20 GiB") != std::string::npos,
                 codeBomb.error().c_str());
        const std::string data = pythonZip(m_dir, "data-bomb.zip",
                                           "with zipfile.ZipFile(out, \"w\") as z:\n"
                                           "    z.writestr(\"m/data/0\", bytes(200 << 20), zipfile.ZIP_DEFLATED)\n");
        const Status dataBomb = checkZipBudget(data);
        QVERIFY(!dataBomb);
        QVERIFY2(dataBomb.error().find("far beyond what weights compress to") != std::string::npos,
                 dataBomb.error().c_str());
        // The same tensors stored as they are pass: the budget follows the file's size.
        QVERIFY(checkZipBudget(pythonZip(m_dir, "big.zip",
                                         "with zipfile.ZipFile(out, \"w\") as z:\n"
                                         "    z.writestr(\"m/data/0\", bytes(200 << 20), zipfile.ZIP_STORED)\n"))
                    .ok());
    }

    void aDamagedDirectoryIsRefusedWithASentence()
    {
        const std::string zip = pythonZip(m_dir, "small.zip",
                                          "with zipfile.ZipFile(out, \"w\") as z:\n"
                                          "    z.writestr(\"m/data/0\", b\"z\" * 100)\n");
        const size_t directory = zip.rfind(std::string("PK\x01\x02", 4));
        QVERIFY(directory != std::string::npos);
        std::string farRecord = zip;
        farRecord[directory + 45] = char(0x7f); // the record's offset, high byte: 2 GiB into a small file
        for (const auto& [bytes, phrase] : std::vector<std::pair<std::string, const char*>>{
                 {"", "too short"},
                 {std::string(100, 'a'), "no end of its central directory"},
                 {zip.substr(60), "central directory lies outside the file"},
                 {farRecord, "record 'm/data/0' lies outside the file"}}) {
            const auto records = readZipRecords(bytes);
            QVERIFY(!records.ok());
            QVERIFY2(records.error().find(phrase) != std::string::npos, records.error().c_str());
        }
        // A stored record that states another size than it takes.
        std::string lying = zip;
        lying[directory + 24] = char(0x7f); // inflated size, low byte
        QVERIFY(!checkZipBudget(lying));
    }
};

QTEST_GUILESS_MAIN(TestZipRecords)
#include "tst_ziprecords.moc"
