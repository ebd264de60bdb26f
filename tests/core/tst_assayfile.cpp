// SPDX-License-Identifier: GPL-3.0-or-later
// Reading a lab's file of measured values (assays/assayfile.h): tables with RFC 4180 quoting and
// CRLF, TSV, ProteinGym's DMS layout with mutants against a wild type, FASTA with values, and every
// bad line or file refused whole, with the line and the reason.
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

std::string_view viewOf(const QByteArray& bytes) { return {bytes.constData(), size_t(bytes.size())}; }

/// The error of a read that must fail, for QVERIFY2's message when it did not.
std::string errorOf(const Result<AssayFileReport>& read) { return read ? "it was read" : read.error(); }

} // namespace

class TestAssayFile final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aTableWithQuotesCrlfAndExtraColumns()
    {
        AssayFileOptions o = options();
        o.sdColumn = "sd";
        o.replicatesColumn = "n";
        // A byte-order mark, quoted names, a quoted comma, a doubled quote, a line break inside
        // quotes (so the next row starts on line 5), CRLF line ends and empty sd and n cells.
        const auto read = parseAssayText("\xEF\xBB\xBFid,\"sequence\",value,sd,n\r\n\"x, y\",ACDE,1.5,0.25,3\r\n"
                                         "\"two\r\nlines\",ACDF,-2e-3,,\r\n\"q\"\"\",ACDE,+2.5,0,2\r\n",
                                         o);
        QVERIFY2(read, read ? "" : read.error().c_str());
        QCOMPARE(read->format, AssayFileFormat::Table);
        QCOMPARE(read->lines, size_t(5));
        QCOMPARE(read->measurements.size(), size_t(3));
        const Measurement& first = read->measurements[0];
        QCOMPARE(first.sequence, std::string("ACDE"));
        QCOMPARE(first.value, 1.5);
        QCOMPARE(*first.sd, 0.25);
        QCOMPARE(first.replicates, 3);
        QCOMPARE(first.line, int64_t(2));
        QCOMPARE(first.assay, std::string("stability"));
        QVERIFY(!read->measurements[1].sd);
        QCOMPARE(read->measurements[1].replicates, 1);
        QCOMPARE(read->measurements[1].value, -0.002);
        QCOMPARE(read->measurements[2].line, int64_t(5));
        QCOMPARE(read->measurements[2].value, 2.5);
    }

    void aTsvTable()
    {
        const auto read = parseAssayText("name\tsequence\tvalue\nA, B\tACDE\t1\n\"c\td\"\tGGGG\t2\n", options());
        QVERIFY2(read, read ? "" : read.error().c_str());
        QCOMPARE(read->measurements.size(), size_t(2));
        QCOMPARE(read->measurements[1].sequence, std::string("GGGG"));
        QCOMPARE(read->measurements[1].value, 2.0);
    }

    void duplicateRowsAreKept()
    {
        const auto read = parseAssayText("sequence,value\nACDE,1\nACDE,1\nACDE,3\n", options());
        QVERIFY(read);
        QCOMPARE(read->measurements.size(), size_t(3));
        QCOMPARE(read->measurements[2].value, 3.0);
    }

    void proteinGymAsPublished()
    {
        AssayFileOptions o = options();
        o.wildType = "ACDEFG";
        const QByteArray file = "mutant,mutated_sequence,DMS_score,DMS_score_bin\n"
                                "A1C,CCDEFG,0.5,1\nA1G:F5W,GCDEWG,-1.25,0\n_wt,ACDEFG,0,0\nWT,ACDEFG,0.1,0\n,ACDEFG,0.2,0\n";
        const auto read = parseAssayText(viewOf(file), o);
        QVERIFY2(read, read ? "" : read.error().c_str());
        QCOMPARE(read->format, AssayFileFormat::ProteinGym);
        QCOMPARE(read->measurements.size(), size_t(5));
        QCOMPARE(read->measurements[1].sequence, std::string("GCDEWG"));
        QCOMPARE(read->measurements[1].value, -1.25);
        QCOMPARE(read->measurements[4].sequence, std::string("ACDEFG"));
        // Without a wild type, each mutant is checked against its mutated_sequence.
        o.wildType.clear();
        const auto unchecked = parseAssayText(viewOf(file), o);
        QVERIFY2(unchecked, unchecked ? "" : unchecked.error().c_str());
        QCOMPARE(unchecked->measurements.size(), size_t(5));
        // Without mutated_sequence, the sequence is the wild type with the mutant applied.
        o.wildType = "ACDEFG";
        const auto built = parseAssayText("mutant,DMS_score\nD3K,2\nA1C:D3K,3\nWT,1\n", o);
        QVERIFY2(built, built ? "" : built.error().c_str());
        QCOMPARE(built->measurements[0].sequence, std::string("ACKEFG"));
        QCOMPARE(built->measurements[1].sequence, std::string("CCKEFG"));
        QCOMPARE(built->measurements[2].sequence, std::string("ACDEFG"));
    }

    void fastaWithValues()
    {
        const auto read = parseAssayText(">a value=1.5\r\nACD\r\nEF\r\n\n>b value:-2\nGGG\n>c|extra|3.25\nHHH\n"
                                         ">d myvalue=9 value=4\nKKK\n",
                                         options(), "x.FASTA");
        QVERIFY2(read, read ? "" : read.error().c_str());
        QCOMPARE(read->format, AssayFileFormat::Fasta);
        QCOMPARE(read->measurements.size(), size_t(4));
        QCOMPARE(read->measurements[0].sequence, std::string("ACDEF"));
        QCOMPARE(read->measurements[0].line, int64_t(1));
        QCOMPARE(read->measurements[1].value, -2.0);
        QCOMPARE(read->measurements[1].line, int64_t(5));
        QCOMPARE(read->measurements[2].value, 3.25);
        QCOMPARE(read->measurements[3].value, 4.0); // "myvalue=" is not "value="
    }

    void theLayoutIsFoundByExtensionAndHeader_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("path");
        QTest::addColumn<int>("format");
        QTest::newRow(".fa") << QByteArray(">a value=1\nACDE\n") << "x.fa" << int(AssayFileFormat::Fasta);
        QTest::newRow("leading >") << QByteArray(">a value=1\nACDE\n") << "x.txt" << int(AssayFileFormat::Fasta);
        QTest::newRow("ProteinGym") << QByteArray("mutant,mutated_sequence,DMS_score\nA1C,CCDE,1\n") << "x.csv"
                                    << int(AssayFileFormat::ProteinGym);
        QTest::newRow("a table naming neither column") << QByteArray("mutant_count,sequence,value,DMS_score_x\n1,ACDE,1,2\n")
                                                       << "x.csv" << int(AssayFileFormat::Table);
    }

    void theLayoutIsFoundByExtensionAndHeader()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, path);
        QFETCH(int, format);
        const auto read = parseAssayText(viewOf(text), options(), path.toStdString());
        QVERIFY2(read, read ? "" : read.error().c_str());
        QCOMPARE(int(read->format), format);
    }

    void aBadLineRefusesTheFile_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("wildType");
        QTest::addColumn<QString>("phrase");
        const QString none;
        // Values, sds and replicate counts (the sd column is "sd", the replicates' "n").
        QTest::newRow("value not a number") << QByteArray("sequence,value\nACDE,1\nACDE,x1\n") << none << "1 bad line: line 3: the value 'x1' is not a number";
        QTest::newRow("value empty") << QByteArray("sequence,value\nACDE,\n") << none << "line 2: the value '' is not a number";
        QTest::newRow("decimal comma") << QByteArray("sequence\tvalue\nACDE\t1,5\n") << none << "line 2: the value '1,5' is not a number";
        QTest::newRow("NaN") << QByteArray("sequence,value\nACDE,nan\n") << none << "line 2: the value is nan, not a finite number";
        QTest::newRow("infinite") << QByteArray("sequence,value\nACDE,1\nACDE,-inf\n") << none << "line 3: the value is -inf, not a finite";
        QTest::newRow("overflow") << QByteArray("sequence,value\nACDE,1e999\n") << none << "line 2: the value '1e999' is out of range";
        QTest::newRow("sd negative") << QByteArray("sequence,value,sd\nACDE,1,-1\n") << none << "line 2: the standard deviation -1 is negative";
        QTest::newRow("sd NaN") << QByteArray("sequence,value,sd\nACDE,1,NaN\n") << none << "line 2: the standard deviation is NaN, not a finite";
        QTest::newRow("sd infinite") << QByteArray("sequence,value,sd\nACDE,1,inf\n") << none << "line 2: the standard deviation is inf, not a finite";
        QTest::newRow("sd a word") << QByteArray("sequence,value,sd\nACDE,1,high\n") << none << "line 2: the standard deviation 'high' is not a number";
        QTest::newRow("replicates 0") << QByteArray("sequence,value,n\nACDE,1,0\n") << none << "line 2: the replicate count 0 is not a whole number of at least 1";
        QTest::newRow("replicates negative") << QByteArray("sequence,value,n\nACDE,1,-2\n") << none << "line 2: the replicate count -2 is not";
        QTest::newRow("replicates fractional") << QByteArray("sequence,value,n\nACDE,1,2.5\n") << none << "line 2: the replicate count 2.5 is not";
        // Sequences.
        QTest::newRow("empty sequence") << QByteArray("sequence,value\n,1\n") << none << "line 2: the sequence is empty";
        QTest::newRow("a symbol outside") << QByteArray("sequence,value\nACDE,1\nACBE,1\n") << none << "line 3: the symbol 'B' at position 3 is not one of the model's";
        QTest::newRow("a control symbol") << QByteArray("sequence,value\n\"AC\x01" "E\",1\n") << none << "line 2: the symbol 0x01 at position 3";
        QTest::newRow("too short") << QByteArray("sequence,value\nAC,1\n") << none << "line 2: the sequence is 2 long; the model takes 3 to 8";
        QTest::newRow("too long") << QByteArray("sequence,value\nACDEACDEA,1\n") << none << "line 2: the sequence is 9 long; the model takes 3 to 8";
        QTest::newRow("too many fields") << QByteArray("sequence,value\nACDE,1,2\n") << none << "line 2: 3 fields where the header has 2";
        QTest::newRow("too few fields") << QByteArray("sequence,value\nACDE,1\nACDE\n") << none << "line 3: 1 field where the header has 2";
        // ProteinGym's mutants.
        QTest::newRow("mutant disagrees") << QByteArray("mutant,DMS_score\nC1A,1\n") << "ACDEFG" << "line 2: the mutant C1A says position 1 is 'C' where the wild type has 'A'";
        QTest::newRow("second mutant disagrees") << QByteArray("mutant,DMS_score\nA1C:D2K,1\n") << "ACDEFG" << "line 2: the mutant D2K says position 2 is 'D' where the wild type has 'C'";
        QTest::newRow("mutant outside") << QByteArray("mutant,DMS_score\nD3K,1\nA9C,1\n") << "ACDEFG" << "line 3: the mutant A9C names position 9 of a wild type 6 long";
        QTest::newRow("position 0") << QByteArray("mutant,DMS_score\nA0C,1\n") << "ACDEFG" << "line 2: the mutant A0C names position 0";
        QTest::newRow("malformed mutant") << QByteArray("mutant,DMS_score\nA1,1\n") << "ACDEFG" << "line 2: the mutant 'A1' is not written as A23G";
        QTest::newRow("negative position") << QByteArray("mutant,DMS_score\nA-1C,1\n") << "ACDEFG" << "line 2: the mutant 'A-1C' is not written as A23G";
        QTest::newRow("trailing colon") << QByteArray("mutant,DMS_score\nA1C:,1\n") << "ACDEFG" << "line 2: the mutant '' is not written as A23G (in 'A1C:')";
        QTest::newRow("malformed without wild type") << QByteArray("mutant,mutated_sequence,DMS_score\n1AC,CCDEFG,1\n") << none << "line 2: the mutant '1AC' is not written as A23G";
        QTest::newRow("sequence disagrees") << QByteArray("mutant,mutated_sequence,DMS_score\nA1C,GCDEFG,1\n") << "ACDEFG" << "line 2: the mutated_sequence is not the wild type with A1C";
        QTest::newRow("wild type row disagrees") << QByteArray("mutant,mutated_sequence,DMS_score\nWT,GCDEFG,1\n") << "ACDEFG" << "line 2: the mutated_sequence is not the wild type with no mutation";
        QTest::newRow("sequence disagrees, no wild type") << QByteArray("mutant,mutated_sequence,DMS_score\nA1C,GCDEFG,1\n") << none << "line 2: the mutant A1C puts 'C' at position 1 where the mutated_sequence has 'G'";
        QTest::newRow("outside, no wild type") << QByteArray("mutant,mutated_sequence,DMS_score\nA7C,GCDEFG,1\n") << none << "line 2: the mutant A7C names position 7 of a mutated_sequence 6 long";
        QTest::newRow("DMS_score NaN") << QByteArray("mutant,mutated_sequence,DMS_score\nA1C,CCDEFG,nan\n") << "ACDEFG" << "line 2: the DMS_score is nan, not a finite number";
        // FASTA.
        QTest::newRow("FASTA without value") << QByteArray(">a value=1\nACDE\n>b\nACDE\n") << none << "line 3: the header gives no value";
        QTest::newRow("FASTA value a word") << QByteArray(">a value=high\nACDE\n") << none << "line 1: the value 'high' is not a number";
        QTest::newRow("FASTA sequence first") << QByteArray("ACDE\n>a value=1\nACDE\n") << none << "line 1: a sequence line before any '>' header";
        QTest::newRow("FASTA empty record") << QByteArray(">a value=1\n>b value=2\nACDE\n") << none << "line 1: the sequence is empty";
        // Many bad lines: the first ten named, the rest counted.
        const QByteArray many = "sequence,value\n" + QByteArray("ACDE,x\n").repeated(12);
        QTest::newRow("many bad lines") << many << none << "12 bad lines: line 2: the value 'x' is not a number; line 3:";
        QTest::newRow("the tenth named") << many << none << "; line 11: the value 'x' is not a number; and 2 more";
    }

    void aBadLineRefusesTheFile()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, wildType);
        QFETCH(QString, phrase);
        AssayFileOptions o = options();
        o.wildType = wildType.toStdString();
        if (text.startsWith("sequence,value,sd"))
            o.sdColumn = "sd";
        if (text.startsWith("sequence,value,n"))
            o.replicatesColumn = "n";
        const std::string path = text.contains('>') ? "x.fasta" : "x.csv";
        const auto read = parseAssayText(viewOf(text), o, path);
        QVERIFY2(!read, "it was read");
        QVERIFY2(read.error().find(phrase.toStdString()) != std::string::npos, read.error().c_str());
        QVERIFY2(read.error().find("line 12:") == std::string::npos, read.error().c_str());
    }

    void aBadFileIsRefused_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("phrase");
        const QString csv = QStringLiteral("x.csv");
        QTest::newRow("empty") << QByteArray() << csv << "it is empty";
        QTest::newRow("a byte-order mark alone") << QByteArray("\xEF\xBB\xBF") << csv << "it is empty";
        QTest::newRow("blank lines") << QByteArray("\n\r\n\n") << csv << "only blank lines";
        QTest::newRow("header only") << QByteArray("sequence,value\r\n") << csv << "it holds a header and no rows";
        QTest::newRow("ProteinGym header only") << QByteArray("mutant,mutated_sequence,DMS_score,DMS_score_bin\n") << csv << "a header and no rows";
        QTest::newRow("FASTA without records") << QByteArray("\n\n") << "x.fasta" << "it holds no FASTA record";
        QTest::newRow("NUL") << QByteArray("sequence,value\nACDE,1\n\0", 23) << csv << "NUL byte at offset 22: it is not text";
        QTest::newRow("unclosed quote") << QByteArray("sequence,value\nACDE,1\n\"ACDE,1\nACDE,2\n") << csv << "line 3: a quoted field is never closed";
        QTest::newRow("no sequence column") << QByteArray("seq,value\nACDE,1\n") << csv << "it has no column 'sequence' (its columns: seq, value)";
        QTest::newRow("no value column") << QByteArray("sequence,score\nACDE,1\n") << csv << "it has no column 'value' (its columns: score, sequence)";
        QTest::newRow("a column twice") << QByteArray("sequence,value,value\nACDE,1,2\n") << csv << "names the column 'value' twice";
        QTest::newRow("no wild type") << QByteArray("mutant,DMS_score\nA1C,1\n") << csv << "no mutated_sequence column";
        QTest::newRow("over maxBytes") << QByteArray("sequence,value\n" + QByteArray("ACDE,1\n").repeated(200)) << csv << "more than the 1000 allowed";
    }

    void aBadFileIsRefused()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, path);
        QFETCH(QString, phrase);
        AssayFileOptions o = options();
        o.maxBytes = 1000;
        const auto read = parseAssayText(viewOf(text), o, path.toStdString());
        QVERIFY2(!read, "it was read");
        QVERIFY2(read.error().find(phrase.toStdString()) != std::string::npos, read.error().c_str());
    }

    void anAssayMustBeNamed()
    {
        AssayFileOptions o = options();
        o.assay.clear();
        const auto read = parseAssayText("sequence,value\nACDE,1\n", o);
        QVERIFY2(!read && read.error().find("no assay was named") != std::string::npos, errorOf(read).c_str());
    }

    void filesOnDisk()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString fasta = dir.filePath(QStringLiteral("values.fa"));
        QFile f(fasta);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(">a value=1\nACDE\n>b value=2\nGGGG\n");
        f.close();
        const auto read = readAssayFile(fasta.toStdString(), options());
        QVERIFY2(read, read ? "" : read.error().c_str());
        QCOMPARE(read->format, AssayFileFormat::Fasta);
        QCOMPARE(read->measurements.size(), size_t(2));

        const auto missing = readAssayFile(dir.filePath(QStringLiteral("none.csv")).toStdString(), options());
        QVERIFY2(!missing && missing.error().find("does not exist") != std::string::npos, errorOf(missing).c_str());
        const auto folder = readAssayFile(dir.path().toStdString(), options());
        QVERIFY2(!folder && folder.error().find("not a regular file") != std::string::npos, errorOf(folder).c_str());
        const auto device = readAssayFile("/dev/zero", options());
        QVERIFY2(!device && device.error().find("not a regular file") != std::string::npos, errorOf(device).c_str());
        const QString empty = dir.filePath(QStringLiteral("empty.csv"));
        QVERIFY(QFile(empty).open(QIODevice::WriteOnly));
        const auto nothing = readAssayFile(empty.toStdString(), options());
        QVERIFY2(!nothing && nothing.error().find("it is empty") != std::string::npos, errorOf(nothing).c_str());
    }

    void aGigabyteFileIsRefusedUnread()
    {
        // A 1 GiB file, sparse (nothing written, no disk used): refused by its size (the default
        // 256 MiB limit), checked before anything is read.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string big = dir.filePath(QStringLiteral("big.csv")).toStdString();
        const int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0600);
        QVERIFY(fd >= 0);
        QCOMPARE(::ftruncate(fd, off_t(1) << 30), 0);
        ::close(fd);
        const auto refused = readAssayFile(big, options());
        QVERIFY2(!refused && refused.error().find("larger than 262144 KiB") != std::string::npos,
                 errorOf(refused).c_str());
    }
};

QTEST_GUILESS_MAIN(TestAssayFile)
#include "tst_assayfile.moc"
