// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo study` end to end on a tiny grid (references, runs in parallel processes, the table, the
// CSV files and the figures; a second call finds everything done), and `reproduce --reference`
// with `--keep-best`, through the real binary.
#include <cmath>

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <optional>

#include "support/clirun.h"

namespace {

using Run = d2dpo::test::CliRun;
using d2dpo::test::runCli;

QString readAll(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

} // namespace

class TestStudy final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::optional<Run> m_firstStudy;
    QString path(const QString& name) const { return m_dir.filePath(name); }

    QStringList tinyStudy() const
    {
        return {"study", "-o", path("study"), "--groups", "noise,estimator", "--seeds", "2", "--length", "4",
                "--pretrain-steps", "30", "--steps", "4", "--eval-every", "2", "--eval-samples", "40",
                "--gradient-draws", "3", "-j", "2"};
    }

    /// The first call of the tiny study (its references are what reproduce starts from): made once
    /// per executable, by whichever case needs it first, so that any case can run alone.
    const Run& firstStudy()
    {
        if (!m_firstStudy)
            m_firstStudy = runCli(tinyStudy());
        return *m_firstStudy;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void aTinyStudyWritesItsTablesAndRerunsOnlyWhatIsUnfinished()
    {
        const Run& run = firstStudy();
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY(run.out.contains("6 settings x 2 seeds") && run.out.contains("4 references to pretrain"));
        // The table: one row per setting, the paper's first.
        const QString table = readAll(path("study/table.md"));
        QVERIFY2(table.contains("| setting | steps to odd_ratio >= 0.9"), qPrintable(table));
        for (const char* setting : {"| paper |", "| stratified-t |", "| t-samples-4 |", "| vrpo-4 |",
                                    "| complementary |", "| uniform |"})
            QVERIFY2(table.contains(setting), setting);
        QVERIFY(run.out.contains(table.trimmed()));
        QVERIFY(table.indexOf("| paper |") < table.indexOf("| uniform |"));
        // Every point of every run, both seeds, the loss at every step and the metrics at each evaluation.
        const QString csv = readAll(path("study/study.csv"));
        QVERIFY(csv.startsWith("setting,seed,step,metric,value\n"));
        QVERIFY(csv.contains("\ncomplementary,1,4,loss,") && csv.contains("\nuniform,0,2,vsr,"));
        QCOMPARE(readAll(path("study/summary.csv")).count('\n'), 7); // header + 6 settings
        // The gradient's spread was measured in every run.
        QJsonObject report = QJsonDocument::fromJson(readAll(path("study/runs/vrpo-4-seed1/report.json")).toUtf8()).object();
        // The gradient's spread was measured: a finite spread around a non-zero mean gradient, and
        // the table prints its ratio for every setting.
        const QJsonObject gradient = report["gradient"].toObject();
        QVERIFY(std::isfinite(gradient["std"].toDouble()) && gradient["std"].toDouble() > 0);
        QVERIFY(std::isfinite(gradient["mean_norm"].toDouble()) && gradient["mean_norm"].toDouble() > 0);
        for (const QString& line : table.split('\n'))
            if (line.startsWith("| ") && !line.startsWith("| setting")) {
                bool number = false;
                line.section('|', -2, -2).trimmed().toDouble(&number);
                QVERIFY2(number, qPrintable(line));
            }
        QCOMPARE(report["config"].toObject()["d2dpo"].toObject()["vrpo_samples"].toInt(), 4);
        report = QJsonDocument::fromJson(readAll(path("study/runs/uniform-seed0/report.json")).toUtf8()).object();
        QCOMPARE(report["config"].toObject()["model"].toObject()["noise"].toObject()["process"].toString(),
                 QStringLiteral("uniform"));
        // A figure per metric where the desktop build draws them.
        if (run.out.contains("figure:"))
            for (const char* figure : {"loss.png", "odd_ratio.png", "vsr.png", "entropy.png"})
                QVERIFY2(QFile(path("study/") + figure).size() > 1000, figure);
        else
            QVERIFY(run.out.contains("no figures"));

        // Again: everything is there, nothing runs.
        const Run again = runCli(tinyStudy());
        QVERIFY2(again.exitCode == 0, qPrintable(again.err));
        QVERIFY(again.out.contains("0 references to pretrain") && !again.out.contains("started"));

        // A run that did not complete (stopped: its report says so) runs again; nothing else does.
        const QString stoppedReport = path("study/runs/complementary-seed1/report.json");
        QString text = readAll(stoppedReport);
        QVERIFY(text.contains("\"d2dpo_status\": \"completed\""));
        text.replace("\"d2dpo_status\": \"completed\"", "\"d2dpo_status\": \"stopped\"");
        {
            QFile file(stoppedReport);
            QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
            file.write(text.toUtf8());
        }
        const Run resumed = runCli(tinyStudy());
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
        QVERIFY2(resumed.out.contains("started  complementary seed1") && resumed.out.count("started") == 1,
                 qPrintable(resumed.out));

        // Other settings in the same folder are refused, and so is a folder that holds something else.
        QStringList other = tinyStudy();
        other[other.indexOf("--steps") + 1] = "5";
        const Run mixed = runCli(other);
        QVERIFY(mixed.exitCode != 0 && mixed.err.contains("holds a study with other settings"));
        QVERIFY(QDir().mkpath(path("elsewhere/something")));
        const Run elsewhere = runCli({"study", "-o", path("elsewhere")});
        QVERIFY(elsewhere.exitCode != 0 && elsewhere.err.contains("is not empty and holds no study"));
    }

    void reproduceFromAReferenceKeepsTheBest()
    {
        const Run& study = firstStudy();
        const QString reference = path("study/references/masking-seed0.d2dpo");
        QVERIFY2(QFile::exists(reference), qPrintable(study.out + study.err));
        const QString out = path("best");
        const Run run = runCli({"reproduce", "--reference", reference, "--steps", "6", "--eval-every", "2",
                                "--eval-samples", "40", "--keep-best", "rule", "--keep-best-vsr-slack", "1",
                                "--loss", "ipo", "--t-sampling", "stratified", "-o", out});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(run.out.contains("loss ipo") && run.out.contains("stratified t"));
        QVERIFY2(run.out.contains("best checkpoint (rule): step "), qPrintable(run.out));
        QVERIFY(QFile::exists(out + "/checkpoints/best.d2dpo"));
        QVERIFY(!QFile::exists(out + "/pretrain.csv") || readAll(out + "/pretrain.csv") == "step,loss\n");
        // The best checkpoint is a model like any other.
        const Run eval = runCli({"eval", "-c", out + "/checkpoints/best.d2dpo", "-n", "20"});
        QVERIFY2(eval.exitCode == 0, qPrintable(eval.err));
    }

    void badGroupsAreRefused()
    {
        const Run run = runCli({"study", "-o", path("bad"), "--groups", "estimator,lossy"});
        QVERIFY(run.exitCode != 0);
        QVERIFY2(run.err.contains("unknown study group 'lossy'"), qPrintable(run.err));
    }
};

QTEST_GUILESS_MAIN(TestStudy)
#include "tst_study.moc"
