// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo measurements` and `train --source` as a user runs them: the paper's task as measurements
// (each 6-bit integer's parity plus noise as its value) imported, listed, paired three ways and
// trained on, alone and mixed with labels; a second import of the file adds nothing; and every bad
// file is refused with its line and stores nothing.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <random>

#include "support/clirun.h"
#include "support/tinycheckpoint.h"

using namespace d2dpo;
using test::kCli;
using test::runCli;

namespace {

/// The paper's task as measurements: each integer i of 0..6 in its encoding (i ones, then zeros),
/// measured 10 times, valued by its parity plus Gaussian noise (sd 0.1).
QByteArray parityTable()
{
    std::mt19937_64 random(7);
    std::normal_distribution<double> noise(0.0, 0.1);
    QByteArray out = "sequence,value\n";
    for (int replicate = 0; replicate < 10; ++replicate)
        for (int i = 0; i <= 6; ++i)
            out += QByteArray(i, '1') + QByteArray(6 - i, '0') + "," + QByteArray::number((i % 2) + noise(random), 'g', 17) + "\n";
    return out;
}

} // namespace

class TestMeasurements final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }
    QString m_checkpoint;

    void write(const QString& name, const QByteArray& bytes)
    {
        QFile f(path(name));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    }

    test::CliRun run(const QStringList& arguments)
    {
        const test::CliRun r = runCli(arguments);
        return r;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_checkpoint = path(QStringLiteral("tiny.d2dpo"));
        QVERIFY(test::writeTinyCheckpoint(m_checkpoint.toStdString()));
        write(QStringLiteral("parity.csv"), parityTable());
    }

    void importListAndImportAgain()
    {
        const QString db = path(QStringLiteral("store.sqlite"));
        const QStringList import = {QStringLiteral("measurements"), QStringLiteral("import"), path(QStringLiteral("parity.csv")),
                                    QStringLiteral("--assay"), QStringLiteral("parity"), QStringLiteral("--checkpoint"),
                                    m_checkpoint, QStringLiteral("--db"), db};
        const auto first = runCli(import);
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        QVERIFY2(first.out.contains(QStringLiteral("imported 70 measurements of 7 sequences (table)")), qPrintable(first.out));
        const auto again = runCli(import);
        QVERIFY2(again.exitCode == 0, qPrintable(again.err));
        QVERIFY2(again.out.contains(QStringLiteral("nothing was added")), qPrintable(again.out));
        const auto list = runCli({QStringLiteral("measurements"), QStringLiteral("list"), QStringLiteral("--db"), db});
        QVERIFY2(list.out.contains(QRegularExpression(QStringLiteral("parity +higher +70 +7 +1 "))), qPrintable(list.out));
    }

    void eachStrategyMakesPairsTheRuleAgreesWith_data()
    {
        QTest::addColumn<QString>("strategy");
        QTest::newRow("margin") << "margin";
        QTest::newRow("clusters") << "clusters";
        QTest::newRow("best") << "best";
    }

    void eachStrategyMakesPairsTheRuleAgreesWith()
    {
        QFETCH(QString, strategy);
        const QString db = path(QStringLiteral("store.sqlite"));
        const auto pairs = runCli({QStringLiteral("measurements"), QStringLiteral("pairs"), QStringLiteral("--db"), db,
                                   QStringLiteral("--assay"), QStringLiteral("parity"), QStringLiteral("--strategy"),
                                   strategy, QStringLiteral("--margin"), QStringLiteral("0.5"), QStringLiteral("--show"),
                                   QStringLiteral("1000")});
        QVERIFY2(pairs.exitCode == 0, qPrintable(pairs.err));
        // Every pair shown: an odd integer (value about 1) over an even one (about 0), since the
        // noise (sd 0.1, means of ten) does not bridge a margin of 0.5 between two of one parity.
        const QRegularExpression line(QStringLiteral("^  ([01]{6}) \\(.*\\)  over  ([01]{6}) "), QRegularExpression::MultilineOption);
        int shown = 0;
        for (auto it = line.globalMatch(pairs.out); it.hasNext(); ++shown) {
            const auto m = it.next();
            QVERIFY2(m.captured(1).count(QLatin1Char('1')) % 2 == 1 && m.captured(2).count(QLatin1Char('1')) % 2 == 0,
                     qPrintable(m.captured(0)));
        }
        QVERIFY2(shown > 0, qPrintable(pairs.out));
    }

    void trainOnMeasurementsAloneAndMixed()
    {
        const QString db = path(QStringLiteral("store.sqlite"));
        const auto alone = runCli({QStringLiteral("train"), QStringLiteral("--checkpoint"), m_checkpoint, QStringLiteral("--db"), db,
                                   QStringLiteral("--source"), QStringLiteral("measurements"), QStringLiteral("--assay"),
                                   QStringLiteral("parity"), QStringLiteral("--steps"), QStringLiteral("3"),
                                   QStringLiteral("--eval-samples"), QStringLiteral("20"), QStringLiteral("-o"), path(QStringLiteral("run1"))});
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.err + alone.out));
        QVERIFY2((alone.out + alone.err).contains(QStringLiteral("measured pairs from the assay 'parity'")), qPrintable(alone.err));
        QFile jsonl(path(QStringLiteral("labels.jsonl")));
        QVERIFY(jsonl.open(QIODevice::WriteOnly));
        jsonl.write("{\"chosen\": \"111000\", \"rejected\": \"110000\", \"labeler\": \"ana\"}\n");
        jsonl.close();
        const auto labels = runCli({QStringLiteral("prefs"), QStringLiteral("import"), QStringLiteral("-i"), jsonl.fileName(),
                                    QStringLiteral("--checkpoint"), m_checkpoint, QStringLiteral("--db"), db});
        QVERIFY2(labels.exitCode == 0, qPrintable(labels.err));
        const auto mixed = runCli({QStringLiteral("train"), QStringLiteral("--checkpoint"), m_checkpoint, QStringLiteral("--db"), db,
                                   QStringLiteral("--source"), QStringLiteral("labels,measurements"), QStringLiteral("--assay"),
                                   QStringLiteral("parity"), QStringLiteral("--labels-weight"), QStringLiteral("0.25"),
                                   QStringLiteral("--steps"), QStringLiteral("3"), QStringLiteral("--eval-samples"),
                                   QStringLiteral("20"), QStringLiteral("-o"), path(QStringLiteral("run2"))});
        QVERIFY2(mixed.exitCode == 0, qPrintable(mixed.err + mixed.out));
        const QString said = mixed.out + mixed.err;
        QVERIFY2(said.contains(QStringLiteral("1 labelled pairs from the store")), qPrintable(said));
        QVERIFY2(said.contains(QStringLiteral("each batch draws labels and measurements at 0.25")), qPrintable(said));
        // The source needs the store and the assay.
        test::expectRefusal({QStringLiteral("train"), QStringLiteral("--checkpoint"), m_checkpoint, QStringLiteral("--source"),
                             QStringLiteral("measurements"), QStringLiteral("-o"), path(QStringLiteral("run3"))},
                            QStringLiteral("reads the store: name it with --db STORE"));
        test::expectRefusal({QStringLiteral("train"), QStringLiteral("--checkpoint"), m_checkpoint, QStringLiteral("--db"), db,
                             QStringLiteral("--source"), QStringLiteral("measurements"), QStringLiteral("-o"), path(QStringLiteral("run4"))},
                            QStringLiteral("needs the assay: --assay NAME"));
    }

    /// g-DPO's grouped scoring: a run on measured pairs within groups trains one pass per group;
    /// with labels it is refused before anything is recorded.
    void groupedScoringTrainsOnMeasurementsAlone()
    {
        const QString db = path(QStringLiteral("store.sqlite"));
        const QStringList base = {QStringLiteral("train"), QStringLiteral("--checkpoint"), m_checkpoint, QStringLiteral("--db"), db,
                                  QStringLiteral("--assay"), QStringLiteral("parity"), QStringLiteral("--strategy"),
                                  QStringLiteral("clusters"), QStringLiteral("--grouped"), QStringLiteral("--steps"),
                                  QStringLiteral("3"), QStringLiteral("--eval-samples"), QStringLiteral("20")};
        const auto grouped = runCli(base + QStringList{QStringLiteral("--source"), QStringLiteral("measurements"),
                                                       QStringLiteral("-o"), path(QStringLiteral("grouped"))});
        QVERIFY2(grouped.exitCode == 0, qPrintable(grouped.err + grouped.out));
        QVERIFY2((grouped.out + grouped.err).contains(QRegularExpression(QStringLiteral("grouped scoring: \\d+ groups? of \\d+ sequences"))),
                 qPrintable(grouped.out + grouped.err));
        test::expectRefusal(base + QStringList{QStringLiteral("--source"), QStringLiteral("labels,measurements"),
                                               QStringLiteral("-o"), path(QStringLiteral("grouped-mixed"))},
                            QStringLiteral("grouped scoring scores measured pairs inside their groups"));
    }

    /// The held-out split a run trains without, and the figures on it: a pretrained model ranks
    /// nothing (its implicit reward against itself is 0), a fine-tuned one gets a Spearman and a
    /// pair accuracy.
    void heldOutMeasurementsAreEvaluated()
    {
        const QString db = path(QStringLiteral("store.sqlite"));
        const auto trained = runCli({QStringLiteral("train"), QStringLiteral("--checkpoint"), m_checkpoint, QStringLiteral("--db"), db,
                                     QStringLiteral("--source"), QStringLiteral("measurements"), QStringLiteral("--assay"),
                                     QStringLiteral("parity"), QStringLiteral("--held-out"), QStringLiteral("0.3"),
                                     QStringLiteral("--steps"), QStringLiteral("3"), QStringLiteral("--eval-samples"),
                                     QStringLiteral("20"), QStringLiteral("-o"), path(QStringLiteral("held"))});
        QVERIFY2(trained.exitCode == 0, qPrintable(trained.err));
        QVERIFY2((trained.out + trained.err).contains(QStringLiteral("3 sequences held out")), qPrintable(trained.err));
        const QStringList eval = {QStringLiteral("measurements"), QStringLiteral("eval"), QStringLiteral("--db"), db,
                                  QStringLiteral("--assay"), QStringLiteral("parity"), QStringLiteral("--held-out"),
                                  QStringLiteral("0.3"), QStringLiteral("-c")};
        const auto reference = runCli(eval + QStringList{m_checkpoint});
        QVERIFY2(reference.exitCode == 0, qPrintable(reference.err));
        QVERIFY2(reference.out.contains(QStringLiteral("held out: 3 sequences")), qPrintable(reference.out));
        QVERIFY2(reference.out.contains(QStringLiteral("its own reference")), qPrintable(reference.out));
        const QString figure = QStringLiteral(" +-?[01]\\.\\d{4} +[01]\\.\\d{4}\n");
        QVERIFY2(reference.out.contains(QRegularExpression(QStringLiteral("ELBO \\(the likelihood bound\\) +pretrained") + figure)),
                 qPrintable(reference.out));
        // The fine-tuned model: its split read from its run (no --held-out given), and three rows.
        const auto tuned = runCli({QStringLiteral("measurements"), QStringLiteral("eval"), QStringLiteral("--db"), db,
                                   QStringLiteral("-c"), path(QStringLiteral("held/step-000003.d2dpo"))});
        QVERIFY2(tuned.exitCode == 0, qPrintable(tuned.err));
        QVERIFY2(tuned.out.contains(QStringLiteral("(random split, share 0.3, split seed 1, as its run trained)")),
                 qPrintable(tuned.out));
        for (const QString& row : {QStringLiteral("ELBO \\(the likelihood bound\\) +reference"),
                                   QStringLiteral("ELBO \\(the likelihood bound\\) +fine-tuned"),
                                   QStringLiteral("implicit reward against the reference +fine-tuned")})
            QVERIFY2(tuned.out.contains(QRegularExpression(row + figure)), qPrintable(row + "\n" + tuned.out));
    }

    void aBadFileIsRefusedWithItsLineAndStoresNothing_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("not a number") << QByteArray("sequence,value\n000001,1\n000011,abc\n") << "line 3";
        QTest::newRow("NaN") << QByteArray("sequence,value\n000001,nan\n") << "line 2";
        QTest::newRow("infinite") << QByteArray("sequence,value\n000001,1\n000011,-inf\n") << "line 3";
        QTest::newRow("a symbol the model lacks") << QByteArray("sequence,value\n000001,1\n000021,1\n") << "line 3";
        QTest::newRow("a length the model cannot take") << QByteArray("sequence,value\n0000001,1\n") << "line 2";
        QTest::newRow("no value column") << QByteArray("sequence,score\n000001,1\n") << "value";
        QTest::newRow("empty") << QByteArray() << "empty";
    }

    void aBadFileIsRefusedWithItsLineAndStoresNothing()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, phrase);
        write(QStringLiteral("bad.csv"), bytes);
        const QString db = path(QStringLiteral("never.sqlite"));
        test::expectRefusal({QStringLiteral("measurements"), QStringLiteral("import"), path(QStringLiteral("bad.csv")),
                             QStringLiteral("--assay"), QStringLiteral("a"), QStringLiteral("--checkpoint"), m_checkpoint,
                             QStringLiteral("--db"), db},
                            phrase);
        QVERIFY(!QFile::exists(db)); // nothing stored: not even the store file
    }

    void devicesAndFoldersAreRefused()
    {
        for (const QString& file : {QStringLiteral("/dev/zero"), m_dir.path()})
            test::expectRefusal({QStringLiteral("measurements"), QStringLiteral("import"), file, QStringLiteral("--assay"),
                                 QStringLiteral("a"), QStringLiteral("--checkpoint"), m_checkpoint, QStringLiteral("--db"),
                                 path(QStringLiteral("never.sqlite"))},
                                QStringLiteral("measurement file"));
    }

    void anImportIsDeletedWhole()
    {
        const QString db = path(QStringLiteral("store.sqlite"));
        const auto dry = runCli({QStringLiteral("measurements"), QStringLiteral("delete"), QStringLiteral("--import"),
                                 QStringLiteral("1"), QStringLiteral("--dry-run"), QStringLiteral("--db"), db});
        QVERIFY2(dry.out.contains(QStringLiteral("would delete 70 measurements")), qPrintable(dry.out + dry.err));
        const auto gone = runCli({QStringLiteral("measurements"), QStringLiteral("delete"), QStringLiteral("--import"),
                                  QStringLiteral("1"), QStringLiteral("--db"), db});
        QVERIFY2(gone.out.contains(QStringLiteral("deleted 70 measurements")), qPrintable(gone.out + gone.err));
        const auto list = runCli({QStringLiteral("measurements"), QStringLiteral("list"), QStringLiteral("--db"), db});
        QVERIFY2(list.out.contains(QStringLiteral("no measurements")), qPrintable(list.out));
    }
};

QTEST_GUILESS_MAIN(TestMeasurements)
#include "tst_measurements.moc"
