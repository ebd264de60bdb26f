// SPDX-License-Identifier: GPL-3.0-or-later
// Reading a lab's file of measured values (assays/assayfile.h): tables with quoting and CRLF, TSV,
// ProteinGym's DMS layout with mutants against a wild type, FASTA with values, and every bad line
// or file refused whole, with the line and the reason.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fcntl.h>
#include <unistd.h>

#include "assays/assayfile.h"

using namespace d2dpo;

namespace {

AssayFileOptions options(const std::string& symbols = "ACDEFGHIKLMNPQRSTVWY")
{
    AssayFileOptions o;
    o.assay = "stability";
    o.symbols = symbols;
    o.minLength = 3;
    o.maxLength = 8;
    return o;
}

} // namespace

class TestAssayFile final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aTableWithQuotesCrlfAndExtraColumns()
    {
        AssayFileOptions o = options();
        o.sdColumn = "sd";
        o.replicatesColumn = "n";
        const auto read = parseAssayText("id,\"sequence\",value,sd,n\r\n\"x, y\",ACDE,1.5,0.25,3\r\nz,ACDF,-2e-3,,1\r\n"
                                         "\"q\"\"\",ACDE,2.5,0,2\r\n",
                                         o);
        QVERIFY2(read, read ? "" : read.error().c_str());
        QCOMPARE(read->format, AssayFileFormat::Table);
        QCOMPARE(read->measurements.size(), size_t(3));
        const Measurement& first = read->measurements[0];
        QCOMPARE(first.sequence, std::string("ACDE"));
        QCOMPARE(first.value, 1.5);
        QCOMPARE(*first.sd, 0.25);
        QCOMPARE(first.replicates, 3);
        QCOMPARE(first.line, int64_t(2));
        QCOMPARE(first.assay, std::string("stability"));
        QVERIFY(!read->measurements[1].sd);
        QCOMPARE(read->measurements[1].value, -0.002);
        QCOMPARE(read->measurements[2].line, int64_t(4)); // duplicates kept
    }

    void aTsvTable()
    {
        const auto read = parseAssayText("sequence\tvalue\nACDE\t1\nGGGG\t2\n", options());
        QVERIFY(read);
        QCOMPARE(read->measurements.size(), size_t(2));
        QCOMPARE(read->measurements[1].value, 2.0);
    }

    void proteinGymAsPublished()
    {
        AssayFileOptions o = options();
        o.wildType = "ACDEFG";
        const auto read = parseAssayText("mutant,mutated_sequence,DMS_score,DMS_score_bin\n"
                                         "A1C,CCDEFG,0.5,1\nA1G:F5W,GCDEWG,-1.25,0\n_wt,ACDEFG,0,0\n",
                                         o);
        QVERIFY2(read, read ? "" : read.error().c_str());
        QCOMPARE(read->format, AssayFileFormat::ProteinGym);
        QCOMPARE(read->measurements.size(), size_t(3));
        QCOMPARE(read->measurements[1].sequence, std::string("GCDEWG"));
        QCOMPARE(read->measurements[1].value, -1.25);
        // Without mutated_sequence, the sequence is the wild type with the mutant applied.
        const auto built = parseAssayText("mutant,DMS_score\nD3K,2\n", o);
        QVERIFY(built);
        QCOMPARE(built->measurements[0].sequence, std::string("ACKEFG"));
    }

    void fastaWithValues()
    {
        const auto read = parseAssayText(">a value=1.5\nACD\nEF\n>b value:-2\nGGG\n>c|extra|3.25\nHHH\n", options(),
                                         "x.fasta");
        QVERIFY2(read, read ? "" : read.error().c_str());
        QCOMPARE(read->format, AssayFileFormat::Fasta);
        QCOMPARE(read->measurements.size(), size_t(3));
        QCOMPARE(read->measurements[0].sequence, std::string("ACDEF"));
        QCOMPARE(read->measurements[0].line, int64_t(1));
        QCOMPARE(read->measurements[2].value, 3.25);
        QCOMPARE(read->measurements[1].value, -2.0);
    }

    void aBadLineRefusesTheFile_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("wildType");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("not a number") << QByteArray("sequence,value\nACDE,1\nACDE,x1\n") << "" << "line 3: the value 'x1' is not a number";
        QTest::newRow("NaN") << QByteArray("sequence,value\nACDE,nan\n") << "" << "line 2: the value is nan";
        QTest::newRow("infinite") << QByteArray("sequence,value\nACDE,1\nACDE,-inf\n") << "" << "line 3: the value is -inf";
        QTest::newRow("a symbol outside") << QByteArray("sequence,value\nACBE,1\n") << "" << "line 2: the symbol 'B' at position 3";
        QTest::newRow("too short") << QByteArray("sequence,value\nAC,1\n") << "" << "line 2: the sequence is 2 long; the model takes 3 to 8";
        QTest::newRow("too long") << QByteArray("sequence,value\nACDEACDEA,1\n") << "" << "line 2: the sequence is 9 long";
        QTest::newRow("empty sequence") << QByteArray("sequence,value\n,1\n") << "" << "line 2: the sequence is empty";
        QTest::newRow("row width") << QByteArray("sequence,value\nACDE,1,2\n") << "" << "line 2: 3 fields where the header has 2";
        QTest::newRow("no column") << QByteArray("seq,value\nACDE,1\n") << "" << "no column 'sequence' (its columns: seq, value)";
        QTest::newRow("header only") << QByteArray("sequence,value\n") << "" << "only a header";
        QTest::newRow("unclosed quote") << QByteArray("sequence,value\n\"ACDE,1\n") << "" << "never closed";
        QTest::newRow("NUL") << QByteArray("sequence,value\nACDE,1\n\0", 23) << "" << "NUL byte at offset 22";
        QTest::newRow("mutant disagrees") << QByteArray("mutant,DMS_score\nC1A,1\n") << "ACDEFG" << "line 2: the mutant C1A says position 1 is C where the wild type has A";
        QTest::newRow("mutant outside") << QByteArray("mutant,DMS_score\nA9C,1\n") << "ACDEFG" << "names position 9 of a wild type 6 long";
        QTest::newRow("malformed mutant") << QByteArray("mutant,DMS_score\nA1,1\n") << "ACDEFG" << "is not written as A23G";
        QTest::newRow("sequence disagrees") << QByteArray("mutant,mutated_sequence,DMS_score\nA1C,GCDEFG,1\n") << "ACDEFG" << "is not the wild type with A1C";
        QTest::newRow("no wild type") << QByteArray("mutant,DMS_score\nA1C,1\n") << "" << "--wild-type";
        QTest::newRow("FASTA without value") << QByteArray(">a\nACDE\n") << "" << "line 1: the header gives no value";
        QTest::newRow("many bad lines") << QByteArray("sequence,value\n" + QByteArray("ACDE,x\n").repeated(12)) << "" << "12 bad lines: line 2:";
        QTest::newRow("and more") << QByteArray("sequence,value\n" + QByteArray("ACDE,x\n").repeated(12)) << "" << "; and 2 more";
        QTest::newRow("negative sd") << QByteArray("sequence,value,sd\nACDE,1,-1\n") << "" << "line 2: the standard deviation is negative";
    }

    void aBadLineRefusesTheFile()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, wildType);
        QFETCH(QString, phrase);
        AssayFileOptions o = options();
        o.wildType = wildType.toStdString();
        if (QTest::currentDataTag() == QByteArray("negative sd"))
            o.sdColumn = "sd";
        const std::string path = text.startsWith('>') ? "x.fasta" : "x.csv";
        const auto read = parseAssayText(std::string_view(text.constData(), size_t(text.size())), o, path);
        QVERIFY(!read);
        QVERIFY2(read.error().find(phrase.toStdString()) != std::string::npos, read.error().c_str());
    }

    void badFilesAreRefusedUnread()
    {
        QVERIFY(!parseAssayText("", options()));
        QVERIFY(!readAssayFile("/no/such/file.csv", options()));
        QVERIFY(!readAssayFile("/dev/zero", options()));
        QTemporaryDir dir;
        QVERIFY(!readAssayFile(dir.path().toStdString(), options()));
        // A 1 GB file (sparse: nothing is written) is refused by its size before it is read.
        const std::string big = dir.filePath("big.csv").toStdString();
        const int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0600);
        QVERIFY(fd >= 0);
        QCOMPARE(::ftruncate(fd, off_t(1) << 30), 0);
        ::close(fd);
        const auto refused = readAssayFile(big, options());
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("MiB") != std::string::npos || refused.error().find("large") != std::string::npos ||
                     refused.error().find("bytes") != std::string::npos,
                 refused.error().c_str());
    }
};

QTEST_GUILESS_MAIN(TestAssayFile)
#include "tst_assayfile.moc"
