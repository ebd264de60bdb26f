// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo profile` through the real binary, on the shipped reference model (binary integers,
// length 10): the three CSVs of the per-position panel for the model and its reference, with
// rows that add up (frequencies to 1, every sample's identity in [0, 1]); a used folder refused.
#include <QDir>
#include <QFile>
#include <QtEndian>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>

#include "support/clirun.h"

using d2dpo::test::runCli;

namespace {

const QString kModel = QStringLiteral(D2DPO_SOURCE_DIR "/resources/models/reference-n10.d2dpo");

QStringList lines(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace

class TestProfile final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void writesTheCsvs()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("profile"));
        const auto run = runCli({"profile", "-c", kModel, "-r", kModel, "-n", "60", "--threads", "1", "-o", out});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains(QStringLiteral("model: 60 samples, 10 positions")), qPrintable(run.out));
        QVERIFY(run.out.contains(QStringLiteral("reference: 60 samples")));

        const QStringList positions = lines(out + QStringLiteral("/positions.csv"));
        QCOMPARE(positions.front(), QStringLiteral("set,position,sequences,ended,0,1,entropy_bits,information_bits"));
        QCOMPARE(positions.size(), 1 + 3 * 10); // training, reference, model
        for (const QString& line : positions.mid(1)) {
            const QStringList cells = line.split(QLatin1Char(','));
            QCOMPARE(cells.size(), 8);
            const double zeros = cells[4].toDouble();
            const double ones = cells[5].toDouble();
            QVERIFY(std::abs(zeros + ones - 1.0) < 2e-6);
            const double entropy = cells[6].toDouble();
            const auto term = [](double f) { return f > 0 ? -f * std::log2(f) : 0.0; };
            const double expected = term(zeros) + term(ones);
            QVERIFY(std::abs(entropy - expected) < 1e-5);
            QVERIFY(cells[7].toDouble() >= 0 && cells[7].toDouble() <= 1.0);
        }
        // The same model sampled with the same seed: the reference's rows are the model's.
        QCOMPARE(positions[11].section(QLatin1Char(','), 1), positions[21].section(QLatin1Char(','), 1));

        const QStringList composition = lines(out + QStringLiteral("/composition.csv"));
        QCOMPARE(composition.front(), QStringLiteral("symbol,training,reference,model"));
        QCOMPARE(composition.size(), 3);

        // The logos as the desktop's per-position Export… draws them (a build without the desktop says so).
        if (!run.out.contains(QStringLiteral("draws no logos"))) {
            QFile png(out + QStringLiteral("/logos.png"));
            QVERIFY(png.open(QIODevice::ReadOnly));
            const QByteArray head = png.read(24); // the signature, then IHDR's width and height
            QVERIFY(head.startsWith("\x89PNG\r\n\x1a\n"));
            const auto bigEndian = [&](int at) { return qFromBigEndian<quint32>(head.constData() + at); };
            QVERIFY(bigEndian(16) > 100 && bigEndian(20) > 200); // two logos, one above the other
            QVERIFY(lines(out + QStringLiteral("/logos.svg")).join(QLatin1Char('\n')).contains(QStringLiteral("<svg")));
        }

        const QStringList nearest = lines(out + QStringLiteral("/nearest.csv"));
        QCOMPARE(nearest.size(), 1 + 60 + 60);
        for (const QString& line : nearest.mid(1)) {
            const double identity = line.section(QLatin1Char(','), 3, 3).toDouble();
            QVERIFY(identity >= 0 && identity <= 1);
        }
    }

    void refusesAUsedFolder()
    {
        QTemporaryDir dir;
        QFile taken(dir.filePath(QStringLiteral("notes.txt")));
        QVERIFY(taken.open(QIODevice::WriteOnly));
        taken.close();
        d2dpo::test::expectRefusal({"profile", "-c", kModel, "-n", "5", "-o", dir.path()}, QStringLiteral("empty"),
                                   d2dpo::test::kExitFailure);
    }
};

QTEST_GUILESS_MAIN(TestProfile)
#include "tst_profile.moc"
