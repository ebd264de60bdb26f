// SPDX-License-Identifier: GPL-3.0-or-later
// The d2dpo binary against careless and hostile use, each case once a fault that lost data or
// hung: two imports of one file at once, a JSONL round trip, export --force over its own input,
// an empty --db, no home folder, an unknown command, the store deleted under a run, a pattern
// that makes a backtracking matcher take forever, an output folder that cannot be written (found
// before the work), a path past PATH_MAX, a stop during a million-sample evaluation, and NaN or
// infinity given to any floating option of any command.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <climits>
#include <csignal>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

#include "support/clirun.h"
#include "support/filebytes.h"
#include "store/preferencestore.h"

namespace {

using Run = d2dpo::test::CliRun;
using d2dpo::test::expectRefusal;
using d2dpo::test::kCli;
using d2dpo::test::kExitFailure;
using d2dpo::test::kExitUsage;
using d2dpo::test::runCli;

std::string fileBytes(const QString& path) { return d2dpo::test::readAll(path.toStdString()); }

/// `count` preferences between distinct 16-bit integers, each with its own time: a JSONL file.
QString writePreferences(const QString& path, int count)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    for (int i = 0; i < count; ++i) {
        const QString chosen = QString::number(2 * i + 1, 2).rightJustified(16, QLatin1Char('0'));
        const QString rejected = QString::number(2 * i + 2, 2).rightJustified(16, QLatin1Char('0'));
        file.write(QStringLiteral("{\"chosen\": \"%1\", \"rejected\": \"%2\", \"labeler\": \"ana\", "
                                  "\"labelled_at\": \"2026-01-01T00:00:%3Z\"}\n")
                       .arg(chosen, rejected)
                       .arg(i % 60, 2, 10, QLatin1Char('0'))
                       .toUtf8());
    }
    return path;
}

} // namespace

using namespace d2dpo;

class TestCliInputs final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_reference;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    int64_t labels(const QString& store)
    {
        auto opened = PreferenceStore::open(store.toStdString(), PreferenceStore::OpenMode::MustExist);
        return opened ? opened.value()->counts("").value().labelled : -1;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_reference = path("reference.d2dpo");
        const Run pretrain = runCli({"pretrain", "-N", "6", "--steps", "200", "--d-model", "32", "--layers", "1",
                                     "--heads", "2", "--eval-samples", "50", "--threads", "1", "-o", m_reference});
        QVERIFY2(pretrain.exitCode == 0, qPrintable(pretrain.err));
    }

    void everyFloatingOptionOfEveryCommandRefusesNanAndInfinity()
    {
        // Every command and subcommand from the help, every option whose type is FLOAT: NaN and
        // infinities are a wrong command line (exit 2) that names the option, never a run.
        const QRegularExpression subcommand(QStringLiteral("^  ([a-z]+) {2,}"));
        const QRegularExpression floating(QStringLiteral("(--[a-z0-9-]+) FLOAT"));
        QList<QStringList> commands;
        QList<QStringList> pending{{}};
        int tested = 0;
        while (!pending.isEmpty()) {
            const QStringList command = pending.takeFirst();
            const Run help = runCli(command + QStringList{"--help"});
            QVERIFY2(help.exitCode == 0, qPrintable(command.join(' ')));
            const QString subcommands = help.out.section(QStringLiteral("Subcommands:"), 1);
            for (const QString& line : subcommands.split('\n'))
                if (const auto match = subcommand.match(line); match.hasMatch())
                    pending.append(command + QStringList{match.captured(1)});
            for (auto it = floating.globalMatch(help.out.section(QStringLiteral("Subcommands:"), 0, 0)); it.hasNext();) {
                const QString option = it.next().captured(1);
                for (const char* value : {"nan", "-inf"}) {
                    const Run run = runCli(command + QStringList{option + "=" + QLatin1String(value)});
                    // An infinity may meet the option's range first; NaN passes every range.
                    const bool said = run.err.contains(option) &&
                                      (run.err.contains("must be a finite number") ||
                                       (value[1] != 'a' && run.err.contains("not in range")));
                    QVERIFY2(run.exitCode == kExitUsage && said,
                             qPrintable(command.join(' ') + " " + option + " " + value + ": " + run.err));
                }
                ++tested;
            }
        }
        qInfo("%d floating options refuse NaN and infinities", tested);
        QVERIFY2(tested >= 20, qPrintable(QString::number(tested)));
    }

    void twoImportsOfOneFileAtOnceStoreItOnce()
    {
        const QString jsonl = writePreferences(path("many.jsonl"), 3000);
        const QString alone = path("alone.sqlite");
        QVERIFY(runCli({"prefs", "import", "--db", alone, "-i", jsonl, "--length", "16"}).exitCode == 0);
        QCOMPARE(labels(alone), int64_t(3000));
        const QString store = path("concurrent.sqlite");
        QProcess first, second;
        for (QProcess* p : {&first, &second})
            p->start(kCli, {"prefs", "import", "--db", store, "-i", jsonl, "--length", "16"});
        const Run a = d2dpo::test::finishProcess(first), b = d2dpo::test::finishProcess(second);
        QVERIFY2(a.exitCode == 0 && b.exitCode == 0, qPrintable(a.err + b.err));
        QCOMPARE(labels(store), int64_t(3000)); // not 6000
        QVERIFY2((a.out + b.out).contains(QStringLiteral("imported 0 labels")), qPrintable(a.out + b.out));
    }

    void aJsonlRoundTripKeepsEveryLabelAndAReimportAddsNone()
    {
        // Two labels by one labeler on the same two sequences, at different times and sides.
        const QString from = path("roundtrip-from.sqlite");
        {
            auto store = PreferenceStore::open(from.toStdString());
            QVERIFY(store.ok());
            const auto ids = store.value()
                                 ->addPairs({{0, "000001", "000010", "", "", "binary-integers:6"},
                                             {0, "000010", "000001", "", "", "binary-integers:6"},
                                             {0, "000011", "000100", "", "", "binary-integers:6"}},
                                            "generated")
                                 .value();
            QVERIFY(store.value()->addLabel(ids[0], Choice::Left, "ana", 10).ok());
            QVERIFY(store.value()->addLabel(ids[1], Choice::Right, "ana", 20).ok());
            QVERIFY(store.value()->addLabel(ids[2], Choice::Left, "ana", 30).ok());
        }
        const Run exported = runCli({"prefs", "export", "--db", from, "-o", path("roundtrip.jsonl")});
        QVERIFY2(exported.exitCode == 0, qPrintable(exported.err));
        const QString to = path("roundtrip-to.sqlite");
        const Run imported = runCli({"prefs", "import", "--db", to, "-i", path("roundtrip.jsonl"), "--length", "6"});
        QVERIFY2(imported.exitCode == 0, qPrintable(imported.err));
        QCOMPARE(labels(to), int64_t(3)); // two labels are never one
        const Run again = runCli({"prefs", "import", "--db", to, "-i", path("roundtrip.jsonl"), "--length", "6"});
        QVERIFY2(again.out.contains(QStringLiteral("imported 0 labels")), qPrintable(again.out));
        QCOMPARE(labels(to), int64_t(3));
        const Run home = runCli({"prefs", "import", "--db", from, "-i", path("roundtrip.jsonl"), "--length", "6"});
        QVERIFY2(home.out.contains(QStringLiteral("imported 0 labels")), qPrintable(home.out)); // its own labels
    }

    void exportForceNeverReplacesItsOwnInputs()
    {
        QVERIFY(QDir().mkpath(path("exported")));
        const QString weights = path("exported/weights.pt");
        QVERIFY(QFile::copy(m_reference, weights));
        const std::string before = fileBytes(weights);
        expectRefusal({"export", "-c", weights, "-o", path("exported"), "--force", "-n", "5"}, "this command reads",
                      kExitFailure);
        QCOMPARE(fileBytes(weights), before);
        QVERIFY(QDir().mkpath(path("exported2")));
        const QString store = path("exported2/samples.txt");
        QVERIFY(runCli({"prefs", "import", "--db", store, "-i", writePreferences(path("few.jsonl"), 3), "--length",
                        "16"}).exitCode == 0);
        const std::string storeBytes = fileBytes(store);
        expectRefusal({"export", "-c", m_reference, "-o", path("exported2"), "--force", "--db", store, "-n", "5"},
                      "this command reads", kExitFailure);
        QCOMPARE(fileBytes(store), storeBytes);
    }

    void anEmptyStorePathIsRefused()
    {
        const QString jsonl = writePreferences(path("three.jsonl"), 3);
        expectRefusal({"prefs", "import", "--db", "", "-i", jsonl, "--length", "16"},
                      "must name a preference store", kExitUsage);
        expectRefusal({"pairs", "--db", "", "-c", m_reference, "-n", "5"},
                      "must name a preference store", kExitUsage);
        expectRefusal({"train", "--db", "", "-c", m_reference, "-o", path("never")},
                      "must name a preference store", kExitUsage);
        QVERIFY(!QFileInfo::exists(path("never")));
    }

    void withoutAHomeNothingIsCreatedInTheWorkingFolder()
    {
        QProcess list;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.remove(QStringLiteral("HOME"));
        environment.remove(QStringLiteral("XDG_DATA_HOME"));
        list.setProcessEnvironment(environment);
        QVERIFY(QDir().mkpath(path("cwd")));
        list.setWorkingDirectory(path("cwd"));
        list.start(kCli, {"prefs", "list"});
        d2dpo::test::finishProcess(list);
        QVERIFY(QDir(path("cwd")).isEmpty());
    }

    void anUnknownCommandIsNamedAndParseErrorsSayTheirCommand()
    {
        expectRefusal({"frobnicate"}, "unknown command 'frobnicate'", kExitUsage);
        expectRefusal({"eval", "-c", m_reference, "-n", "2000000000"}, "d2dpo eval: error:", kExitUsage);
        expectRefusal({"eval", "--samples", "many"}, "d2dpo eval: error:", kExitUsage);
        expectRefusal({"prefs", "import", "-c", m_reference, "--length", "12", "-i", "x"}, "d2dpo prefs import: error:",
                      kExitUsage);
    }

    void theStoreDeletedUnderARunFailsItSayingSo()
    {
        QVERIFY(QDir().mkpath(path("doomed")));
        const QString store = path("doomed/store.sqlite");
        QVERIFY(runCli({"pairs", "--db", store, "-c", m_reference, "-n", "40", "--threads", "1"}).exitCode == 0);
        QVERIFY(runCli({"label", "--db", store}).exitCode == 0);
        QProcess train;
        train.start(kCli, {"train", "-c", m_reference, "--db", store, "-o", path("doomed-run"), "--steps", "100000",
                           "--checkpoint-every", "20", "--eval-every", "0", "--batch", "8", "--threads", "1"});
        QVERIFY(train.waitForStarted());
        QString err;
        while (!err.contains(QStringLiteral("checkpoint @ step 20")) && train.state() == QProcess::Running) {
            train.waitForReadyRead(200);
            err += QString::fromUtf8(train.readAllStandardError());
        }
        QVERIFY2(err.contains(QStringLiteral("checkpoint @ step 20")), qPrintable(err));
        QVERIFY(QDir(path("doomed")).removeRecursively());
        const Run run = d2dpo::test::finishProcess(train, 120000);
        QCOMPARE(run.exitCode, 1);
        QVERIFY2((err + run.err).contains(QStringLiteral("was removed while it was open")), qPrintable(err + run.err));
        QVERIFY(QFileInfo::exists(path("doomed-run/step-000020.d2dpo"))); // what was written stays
    }

    void carelessTargetsAreRefusedAndNothingIsLost()
    {
        const QString store = path("careless.sqlite");
        QVERIFY(runCli({"prefs", "import", "--db", store, "-i", writePreferences(path("careless.jsonl"), 5), "--length",
                        "16"}).exitCode == 0);
        const std::string before = fileBytes(store);
        // An output that is (a link to) the store is never replaced by text.
        QVERIFY(QFile::link(store, path("link-to-store")));
        expectRefusal({"sample", "-c", m_reference, "-n", "5", "-o", path("link-to-store")}, "a preference store",
                      kExitFailure);
        QCOMPARE(fileBytes(store), before);
        // A command that only reads never makes a store of an empty file.
        QFile empty(path("empty.sqlite"));
        QVERIFY(empty.open(QIODevice::WriteOnly));
        empty.close();
        expectRefusal({"prefs", "list", "--db", path("empty.sqlite")}, "an empty file", kExitFailure);
        QCOMPARE(QFileInfo(path("empty.sqlite")).size(), qint64(0));
        // An import that does not exist is named as such, not "deleted 0 labels".
        expectRefusal({"prefs", "delete", "--db", store, "--import", "999"}, "there is no import 999", kExitFailure);
        // A labeler's name is one printable line.
        QVERIFY(runCli({"pairs", "--db", store, "-c", m_reference, "-n", "3", "--threads", "1"}).exitCode == 0);
        expectRefusal({"label", "--db", store, "--labeler", "ana\nbob"}, "control characters", kExitFailure);
        // A standard output that cannot be written: a failure, with no claim that anything was exported.
        QProcess full;
        full.setStandardOutputFile(QStringLiteral("/dev/full"));
        full.start(kCli, {"prefs", "export", "--db", store, "-o", "-"});
        const Run exported = d2dpo::test::finishProcess(full);
        QCOMPARE(exported.exitCode, kExitFailure);
        QVERIFY2(!exported.err.contains(QStringLiteral("exported")), qPrintable(exported.err));
    }

    void aPatternThatBacktracksForeverIsMatchedInLinearTime()
    {
        // std::regex took minutes on "(a+)+$" against 30-40 a's then a b; RE2 answers at once.
        QFile words(path("aaab.txt"));
        QVERIFY(words.open(QIODevice::WriteOnly));
        for (int n = 30; n < 40; ++n)
            words.write(QByteArray(n, 'a') + "b\n");
        words.close();
        const Run pretrain = runCli({"pretrain", "--data", path("aaab.txt"), "--rule", "motif:(a+)+$", "--steps", "3",
                                     "--d-model", "16", "--layers", "1", "--heads", "2", "--eval-samples", "20",
                                     "--threads", "1", "-o", path("aaab.d2dpo")},
                                    120000);
        QVERIFY2(pretrain.exitCode == 0, qPrintable(pretrain.err));
        const Run eval = runCli({"eval", "-c", path("aaab.d2dpo"), "-n", "200", "--threads", "1"}, 120000);
        QVERIFY2(eval.exitCode == 0, qPrintable(eval.err));
    }

    void anOutputThatCannotBeWrittenIsRefusedBeforeAnyWork()
    {
        // 10^8 steps would run for hours: the refusal has to come before the first one. /proc takes
        // no new files even from root; a folder without write permission refuses other accounts.
        const Run proc = runCli({"pretrain", "--steps", "100000000", "-o", "/proc/d2dpo-cannot-write.d2dpo"}, 120000);
        QCOMPARE(proc.exitCode, kExitFailure);
        QVERIFY2(proc.err.contains("cannot be written"), qPrintable(proc.err));
        if (::geteuid() != 0) {
            QVERIFY(QDir().mkpath(path("locked")));
            QVERIFY(QFile::setPermissions(path("locked"), QFileDevice::ReadOwner | QFileDevice::ExeOwner));
            const Run locked = runCli({"pretrain", "--steps", "100000000", "-o", path("locked/x.d2dpo")}, 120000);
            QVERIFY2(locked.exitCode == kExitFailure && locked.err.contains("Permission denied"), qPrintable(locked.err));
        }
    }

    void aPathLongerThanTheSystemAllowsIsNamedSoNotMissing()
    {
        // A folder that exists, 22 levels of 200 characters deep (past PATH_MAX), made and removed
        // one level at a time since no call takes its whole path.
        const QByteArray home = QDir::currentPath().toLocal8Bit();
        const std::string part(200, 'd');
        std::string deep = m_dir.path().toStdString();
        QVERIFY(::chdir(m_dir.path().toLocal8Bit().constData()) == 0);
        for (int level = 0; level < 22; ++level) {
            QVERIFY(::mkdir(part.c_str(), 0755) == 0 && ::chdir(part.c_str()) == 0);
            deep += "/" + part;
        }
        QVERIFY(::chdir(home.constData()) == 0);
        QVERIFY(deep.size() > PATH_MAX);
        const Run sample = runCli({"sample", "-c", m_reference, "-n", "2", "-o", QString::fromStdString(deep + "/x.txt")});
        QCOMPARE(sample.exitCode, kExitFailure);
        QVERIFY2(sample.err.contains("File name too long") && !sample.err.contains("does not exist"),
                 qPrintable(sample.err.right(200)));
        QVERIFY(::chdir(m_dir.path().toLocal8Bit().constData()) == 0);
        for (int level = 0; level < 21; ++level)
            QVERIFY(::chdir(part.c_str()) == 0);
        for (int level = 0; level < 22; ++level) {
            QVERIFY(::rmdir(part.c_str()) == 0);
            if (level < 21)
                QVERIFY(::chdir("..") == 0);
        }
        QVERIFY(::chdir(home.constData()) == 0);
    }

    void wrongCommandLinesExitTwoBeforeAnyStoreIsTouched()
    {
        const QString store = path("untouched.sqlite");
        const Run oneModel = runCli({"compare", "-c", m_reference, "--db", store});
        QCOMPARE(oneModel.exitCode, kExitUsage);
        QVERIFY2(oneModel.err.contains("name two models or more"), qPrintable(oneModel.err));
        QVERIFY(!QFile::exists(store));
        const QList<QStringList> wrong = {
            {"prefs", "gold", "--db", store, "--mark", "1", "--answer", "sideways"},
            {"prefs", "gold", "--db", store, "--mark", "99999999999999999999", "--answer", "left"},
            {"prefs", "gold", "--db", store, "--mark", "3"},
            {"prefs", "gold", "--db", store},
            {"reproduce", "--reference", m_reference, "--noise", "uniform", "-o", path("never")},
            {"reproduce", "--reference", m_reference, "--d-model", "128", "-o", path("never")},
        };
        for (const QStringList& arguments : wrong) {
            const Run run = runCli(arguments);
            QVERIFY2(run.exitCode == kExitUsage, qPrintable(arguments.join(' ') + ": " + run.err));
            QVERIFY(!QFile::exists(store) && !QFile::exists(path("never")));
        }
        QVERIFY(runCli(wrong[1]).err.contains("from 1 to 9223372036854775807"));
        QVERIFY(runCli(wrong[4]).err.contains("brings its own model and noise"));
    }

    void aStorePathTooLongForSqliteSaysSo()
    {
        // Three folders of 200 characters: the path is legal, SQLite's limit (about 504) is not.
        QString folder = m_dir.path();
        for (int level = 0; level < 3; ++level) {
            folder += QLatin1Char('/') + QString(200, QLatin1Char('f'));
            QVERIFY(QDir().mkpath(folder));
        }
        const Run list = runCli({"prefs", "import", "--db", folder + "/store.sqlite", "-i",
                                 writePreferences(path("long.jsonl"), 2), "--length", "16"});
        QCOMPARE(list.exitCode, kExitFailure);
        QVERIFY2(list.err.contains("SQLite opens stores of at most 504") && !list.err.contains("unable to open"),
                 qPrintable(list.err));
        QVERIFY(!QFile::exists(folder + "/store.sqlite"));
    }

    void aStopDuringTheFinalEvaluationEndsItAndKeepsEveryStep()
    {
        // A million samples take many minutes here; the first SIGINT ends them within a batch.
        QProcess pretrain;
        pretrain.start(kCli, {"pretrain", "--steps", "20", "--eval-samples", "1000000", "--sampling-batch", "200",
                              "--threads", "1", "-o", path("stopped-eval.d2dpo")});
        QVERIFY(pretrain.waitForStarted());
        pretrain.setReadChannel(QProcess::StandardError); // the progress lines
        QByteArray err;
        while (!err.contains("20/20") && pretrain.waitForReadyRead(60000))
            err += pretrain.readAllStandardError();
        QVERIFY2(err.contains("20/20"), err.constData()); // training done: the evaluation runs now
        ::kill(pid_t(pretrain.processId()), SIGINT);
        const Run stopped = d2dpo::test::finishProcess(pretrain, 120000);
        QCOMPARE(stopped.exitCode, 130);
        QVERIFY2(stopped.out.contains("stopped after 20 of 20 steps") && stopped.out.contains("not evaluated"),
                 qPrintable(stopped.out));
        const Run eval = runCli({"eval", "-c", path("stopped-eval.d2dpo"), "-n", "2500", "--sampling-batch", "1000"});
        QVERIFY2(eval.exitCode == 0, qPrintable(eval.err));
        // The stopped checkpoint is whole: all 2500 samples measured. (Not its progress bar: a draw
        // shows one only once it lasts over a second, which a fast machine never reaches here.)
        QVERIFY2(eval.out.contains("(2500 samples"), qPrintable(eval.out));
    }
};

QTEST_GUILESS_MAIN(TestCliInputs)
#include "tst_cliinputs.moc"
