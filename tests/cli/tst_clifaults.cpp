// SPDX-License-Identifier: GPL-3.0-or-later
// The d2dpo binary under a hostile user's faults: outputs aimed at its inputs or devices, a second run
// into a used folder, Ctrl-C and kill -9 mid-training (then --resume), NaN weights, full disks and a
// full standard output; after each, nothing committed is lost and the store passes integrity_check.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <csignal>
#include <filesystem>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "support/clirun.h"
#include "support/testsupport.h"

#include "io/checkpoint.h"
#include "model/denoiser.h"
#include "store/preferencestore.h"

namespace {

using Run = d2dpo::test::CliRun;
using d2dpo::test::expectRefusal;
using d2dpo::test::kCli;
using d2dpo::test::kExitFailure;
using d2dpo::test::runCli;
using d2dpo::test::waitForOutput;

Run finish(QProcess& process, int timeoutMs = 300000) { return d2dpo::test::finishProcess(process, timeoutMs); }

/// Runs the CLI under bash with a file-size limit of `kib` KiB: a disk that fills up.
Run runWithDiskLimit(int kib, const QStringList& arguments)
{
    QStringList quoted;
    for (const QString& a : arguments)
        quoted << QLatin1Char('\'') + a + QLatin1Char('\'');
    QProcess process;
    process.start(QStringLiteral("bash"),
                  {QStringLiteral("-c"), QStringLiteral("trap '' XFSZ; ulimit -f %1; exec '%2' %3")
                                             .arg(kib)
                                             .arg(kCli, quoted.join(QLatin1Char(' ')))});
    return finish(process);
}

QByteArray fileBytes(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

using namespace d2dpo;

class TestCliFaults final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_reference;
    QString m_store;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    std::unique_ptr<PreferenceStore> openStore()
    {
        auto store = PreferenceStore::open(m_store.toStdString());
        return store ? std::move(store.value()) : nullptr;
    }

    void checkIntegrity()
    {
        auto store = openStore();
        QVERIFY(store);
        QCOMPARE(store->integrityCheck().value(), std::string("ok"));
    }

    /// Starts `d2dpo train` on the store's labels and waits until it has written `checkpoints`.
    void startTraining(QProcess& process, const QString& folder, int steps, int checkpoints)
    {
        process.start(kCli, {"train", "-c", m_reference, "--db", m_store, "-o", folder, "--steps",
                             QString::number(steps), "--checkpoint-every", "20", "--eval-every", "0",
                             "--eval-samples", "50", "--batch", "16", "--threads", "1"});
        QVERIFY(process.waitForStarted());
        QString err;
        waitForOutput(process, QStringLiteral("checkpoint @ step %1").arg(20 * checkpoints), err);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_reference = path("reference.d2dpo");
        m_store = path("store.sqlite");
        const Run pretrain = runCli({"pretrain", "-N", "6", "--steps", "300", "--d-model", "32", "--layers", "1",
                                     "--heads", "2", "--eval-samples", "100", "--threads", "1", "-o", m_reference,
                                     "--db", m_store});
        QVERIFY2(pretrain.exitCode == 0, qPrintable(pretrain.err));
        const Run pairs = runCli({"pairs", "--db", m_store, "-c", m_reference, "-n", "60", "--threads", "1"});
        QVERIFY2(pairs.exitCode == 0, qPrintable(pairs.err));
        const Run label = runCli({"label", "--db", m_store});
        QVERIFY2(label.exitCode == 0, qPrintable(label.err));
    }

    void pairsFromAStoredModelKeepItsNameAndMetrics()
    {
        // A model the store knows (named by the user, measured by its run) stays as it is when
        // `pairs` draws from its file: the same policy as the Label view's (labeling/generatedpairs.h).
        const std::string id = openStore()->models().value().front().id;
        QVERIFY(openStore()->renameModel(id, "the user's name").ok());
        const std::string metrics = openStore()->model(id).value()->metricsJson;
        const Run pairs = runCli({"pairs", "--db", m_store, "-c", m_reference, "-n", "5", "--threads", "1"});
        QVERIFY2(pairs.exitCode == 0, qPrintable(pairs.err));
        const ModelRecord kept = *openStore()->model(id).value();
        QCOMPARE(kept.name, std::string("the user's name"));
        QCOMPARE(kept.metricsJson, metrics);
    }

    void outputsNeverReplaceTheirInputsOrDevices()
    {
        const QByteArray reference = fileBytes(m_reference);
        const QByteArray store = fileBytes(m_store);
        expectRefusal({"sample", "-c", m_reference, "-o", m_reference}, "this command reads that file",
                      kExitFailure);
        expectRefusal({"prefs", "export", "--db", m_store, "-o", m_store}, "this command reads that file", kExitFailure);
        expectRefusal({"pretrain", "-N", "6", "--steps", "5", "-o", m_store, "--db", m_store},
                      "this command reads that file", kExitFailure);
        QFile words(path("words.txt"));
        QVERIFY(words.open(QIODevice::WriteOnly));
        words.write("cat\ndog\nemu\n");
        words.close();
        expectRefusal({"pretrain", "--data", path("words.txt"), "--steps", "5", "-o", path("words.txt")},
                      "this command reads that file", kExitFailure);
        expectRefusal({"pretrain", "-N", "6", "--steps", "5", "-o", m_reference, "--db", m_store},
                      "the store records it as the model", kExitFailure);
        QCOMPARE(fileBytes(m_reference), reference);
        QCOMPARE(fileBytes(m_store), store);
        QCOMPARE(fileBytes(path("words.txt")), QByteArray("cat\ndog\nemu\n"));

        // A copy of /dev/null (mknod needs root) and a FIFO stay what they are.
        const std::string device = path("null-copy").toStdString();
        const bool haveDevice = ::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
        const std::string fifo = path("fifo").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        if (haveDevice) {
            expectRefusal({"prefs", "export", "--db", m_store, "-o", QString::fromStdString(device)},
                          "a character device", kExitFailure);
            QVERIFY(std::filesystem::is_character_file(device));
        }
        expectRefusal({"sample", "-c", m_reference, "-o", QString::fromStdString(fifo)}, "a FIFO", kExitFailure);
        QVERIFY(std::filesystem::is_fifo(fifo));

        // "-" is standard output; a standard output that cannot be written is a failure.
        const Run toStdout = runCli({"prefs", "export", "--db", m_store, "-o", "-"});
        QCOMPARE(toStdout.exitCode, 0);
        QVERIFY(toStdout.out.contains(QStringLiteral("\"chosen\"")));
        QProcess full;
        full.setStandardOutputFile(QStringLiteral("/dev/full"));
        full.start(kCli, {"eval", "-c", m_reference, "-n", "20", "--threads", "1"});
        const Run eval = finish(full);
        QCOMPARE(eval.exitCode, 1);
        QVERIFY2(eval.err.contains(QStringLiteral("cannot write to standard output")), qPrintable(eval.err));
    }

    void aSecondRunNeverTouchesTheFirstRunsFiles()
    {
        const QString folder = path("runs/first");
        const Run first = runCli({"train", "-c", m_reference, "-o", folder, "--steps", "5", "--pairs", "200",
                                  "--eval-every", "0", "--eval-samples", "50", "--threads", "1"});
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        const QByteArray checkpoint = fileBytes(folder + "/step-000005.d2dpo");
        QVERIFY(!checkpoint.isEmpty());
        expectRefusal({"train", "-c", m_reference, "-o", folder, "--steps", "5", "--pairs", "200"}, "is not empty",
                      kExitFailure);
        QCOMPARE(fileBytes(folder + "/step-000005.d2dpo"), checkpoint);
    }

    void ctrlCStopsWithACheckpointAndExitCode130()
    {
        QProcess train;
        startTraining(train, path("runs/interrupted-by-ctrl-c"), 100000, 1);
        ::kill(pid_t(train.processId()), SIGINT);
        const Run run = finish(train);
        QCOMPARE(run.exitCode, 130);
        QVERIFY2(run.out.contains(QStringLiteral("stopped; last checkpoint: ")), qPrintable(run.out + run.err));
        const QString checkpoint = run.out.section(QStringLiteral("last checkpoint: "), 1).section('\n', 0, 0);
        const Run eval = runCli({"eval", "-c", checkpoint, "-n", "20", "--threads", "1"});
        QVERIFY2(eval.exitCode == 0, qPrintable(eval.err)); // loadable
        auto store = openStore();
        const auto runs = store->runs().value();
        QCOMPARE(runs.back().status, RunStatus::Stopped);
        QCOMPARE(store->model(runs.back().resultModelId).value()->path, checkpoint.toStdString());
        QCOMPARE(store->integrityCheck().value(), std::string("ok"));
    }

    void killNineLeavesAnInterruptedRunThatResumes()
    {
        // The killed run plans far more steps than it can train before the kill lands, so the kill
        // always meets it running. (It planned 120 steps once: those finish 0.4 s after the step-40
        // checkpoint, and a test slowed by a busy machine found the run completed, not killed.)
        QProcess train;
        startTraining(train, path("runs/killed"), 100000, 2);
        train.kill(); // SIGKILL
        train.waitForFinished();
        QCOMPARE(train.exitStatus(), QProcess::CrashExit);
        const int64_t runId = [&] {
            auto store = openStore(); // any process that opens the store sees the run is dead
            const RunRecord run = store->runs().value().back();
            return run.status == RunStatus::Interrupted ? run.id : -1;
        }();
        QVERIFY(runId > 0);
        {
            auto store = openStore();
            int64_t models = 0;
            for (const ModelRecord& m : store->models().value())
                models += m.runId.value_or(0) == runId ? 1 : 0;
            QVERIFY2(models >= 2, "the checkpoints written before the kill are models of the run");
        }
        checkIntegrity();

        // Resumed, it goes on from its newest checkpoint; stopped two checkpoints later, its curve
        // runs from step 1 to the step it stopped at, one point a step, across the kill.
        QProcess resumed;
        resumed.start(kCli, {"train", "--resume", QString::number(runId), "--db", m_store, "--threads", "1"});
        QVERIFY(resumed.waitForStarted());
        QString log;
        waitForOutput(resumed, QStringLiteral("resuming run"), log);
        const QRegularExpression from(QStringLiteral("resuming run \\d+ at step (\\d+)"));
        const auto match = from.match(log);
        QVERIFY2(match.hasMatch(), qPrintable(log));
        const int64_t resumedAt = match.captured(1).toLongLong();
        QVERIFY(resumedAt >= 40);
        waitForOutput(resumed, QStringLiteral("checkpoint @ step %1").arg(resumedAt + 40), log);
        ::kill(pid_t(resumed.processId()), SIGINT);
        const Run stopped = finish(resumed);
        QCOMPARE(stopped.exitCode, 130);
        const QString checkpoint = stopped.out.section(QStringLiteral("last checkpoint: "), 1).section('\n', 0, 0);
        auto store = openStore();
        const RunRecord run = *store->run(runId).value();
        QCOMPARE(run.status, RunStatus::Stopped);
        QCOMPARE(store->model(run.resultModelId).value()->path, checkpoint.toStdString());
        const auto loss = store->metricSeries(runId, "loss").value();
        QVERIFY(loss.back().first >= resumedAt + 40);
        QCOMPARE(loss.size(), size_t(loss.back().first)); // one point a step, no gap, none twice
        QCOMPARE(loss.front().first, int64_t(1));
        QCOMPARE(store->integrityCheck().value(), std::string("ok"));
    }

    void aCompletedRunCannotBeResumed()
    {
        const Run done = runCli({"train", "-c", m_reference, "--db", m_store, "-o", path("runs/completed"), "--steps",
                                 "5", "--eval-every", "0", "--eval-samples", "50", "--batch", "16", "--threads", "1"});
        QVERIFY2(done.exitCode == 0, qPrintable(done.err));
        const RunRecord run = openStore()->runs().value().back();
        QCOMPARE(run.status, RunStatus::Completed);
        QCOMPARE(openStore()->metricSeries(run.id, "loss").value().size(), size_t(5));
        expectRefusal({"train", "--resume", QString::number(run.id), "--db", m_store}, "is completed", kExitFailure);
    }

    void aCheckpointWithNaNWeightsIsRefused()
    {
        auto loaded = loadCheckpoint(m_reference.toStdString(), torch::kCPU);
        QVERIFY(loaded.ok());
        {
            torch::NoGradGuard noGrad;
            loaded->model->parameters().front().view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
        }
        QVERIFY(saveCheckpoint(path("nan.d2dpo").toStdString(), loaded->model, loaded->info).ok());
        for (const char* command : {"eval", "sample"})
            expectRefusal({command, "-c", path("nan.d2dpo")}, "NaN or infinite", kExitFailure);
        expectRefusal({"export", "-c", path("nan.d2dpo"), "-o", path("nan-export")}, "NaN or infinite", kExitFailure);
    }

    void aFullDiskLosesNoCommittedLabelOrCheckpoint()
    {
        // Labelling: the store fills the disk part way; every label it reported stays, and the
        // rest can be labelled once there is room.
        const Run more = runCli({"pairs", "--db", m_store, "-c", m_reference, "-n", "400", "--threads", "1"});
        QVERIFY2(more.exitCode == 0, qPrintable(more.err));
        const qint64 size = QFileInfo(m_store).size() + QFileInfo(m_store + "-wal").size();
        const int64_t before = openStore()->counts("").value().labelled;
        const Run label = runWithDiskLimit(int(size / 1024) + 8, {"label", "--db", m_store});
        QCOMPARE(label.exitCode, 1);
        const QRegularExpression committed(QStringLiteral("the (\\d+) labels before it are committed"));
        const auto match = committed.match(label.err);
        QVERIFY2(match.hasMatch(), qPrintable(label.err));
        QVERIFY2(match.captured(1).toLongLong() > 0, "the disk filled up before the first label");
        QCOMPARE(openStore()->counts("").value().labelled, before + match.captured(1).toLongLong());
        checkIntegrity();
        const Run rest = runCli({"label", "--db", m_store});
        QVERIFY2(rest.exitCode == 0, qPrintable(rest.err));
        QCOMPARE(openStore()->counts("").value().pending, int64_t(0));

        // Training: no room for the first checkpoint; it fails with a message, leaves no partial
        // checkpoint, and the run is recorded as failed.
        const QString folder = path("runs/full-disk");
        const Run train = runWithDiskLimit(64, {"train", "-c", m_reference, "--db", m_store, "-o", folder, "--steps",
                                                "30", "--checkpoint-every", "10", "--eval-every", "0",
                                                "--eval-samples", "50", "--threads", "1"});
        QCOMPARE(train.exitCode, 1);
        QVERIFY2(train.err.contains(QStringLiteral("File too large")) || train.err.contains(QStringLiteral("full")),
                 qPrintable(train.err));
        for (const QString& name : QDir(folder).entryList(QDir::Files)) {
            QVERIFY2(!name.contains(QStringLiteral(".tmp")), qPrintable(name));
            if (name.endsWith(QStringLiteral(".d2dpo")))
                QVERIFY2(loadCheckpoint((folder + "/" + name).toStdString(), torch::kCPU).ok(), qPrintable(name));
        }
        checkIntegrity();
    }

    void aStoreThatCannotRecordTheRunFailsTheCommand()
    {
        // The store on a tmpfs that fills up mid-run, the checkpoints on another disk: the run's
        // metrics and checkpoints cannot be recorded, so the command fails and says why, and the
        // run's record (room made again before it ends) says so too. Needs root, as above.
        const QString disk = path("store-disk");
        QVERIFY(QDir().mkpath(disk));
        const QString size = QStringLiteral("size=%1k").arg(QFileInfo(m_store).size() / 1024 + 32 * 1024);
        if (QProcess::execute(QStringLiteral("mount"), {"-t", "tmpfs", "-o", size, "tmpfs", disk}) != 0)
            QSKIP("cannot mount a tmpfs here (not root)");
        struct Unmount {
            QString at;
            ~Unmount() { QProcess::execute(QStringLiteral("umount"), {at}); }
        } unmount{disk};
        const QString store = disk + "/store.sqlite";
        QVERIFY(QFile::copy(m_store, store));
        QProcess train;
        train.start(kCli, {"train", "-c", m_reference, "--db", store, "-o", path("runs/store-fills"), "--steps",
                           "3000", "--checkpoint-every", "20", "--eval-every", "0", "--eval-samples", "50", "--batch",
                           "16", "--threads", "1"});
        QVERIFY(train.waitForStarted());
        QString err;
        waitForOutput(train, QStringLiteral("checkpoint @ step 20"), err);
        const QString filler = disk + "/filler";
        {
            QFile file(filler);
            QVERIFY(file.open(QIODevice::WriteOnly));
            const QByteArray chunk(64 * 1024, 'x');
            while (file.write(chunk) == chunk.size() && file.flush()) {
            }
        }
        waitForOutput(train, QStringLiteral("warning: "), err);
        QVERIFY(QFile::remove(filler));
        QVERIFY(train.waitForFinished(300000));
        err += QString::fromUtf8(train.readAllStandardError());
        QCOMPARE(train.exitCode(), 1);
        QVERIFY2(err.contains(QStringLiteral("but the store could not record it")), qPrintable(err));
        auto opened = PreferenceStore::open(store.toStdString());
        QVERIFY2(opened, opened ? "" : opened.error().c_str());
        const RunRecord run = opened.value()->runs().value().back();
        QCOMPARE(run.status, RunStatus::Failed);
        QVERIFY2(run.error.find("could not record") != std::string::npos, run.error.c_str());
        QCOMPARE(opened.value()->integrityCheck().value(), std::string("ok"));
    }

    void aFailedRunLeavesNoEmptyFolder()
    {
        // A run that fails before its first checkpoint (a store without labels of the model's
        // task) leaves no folder it made; one the user made stays.
        const QString empty = path("no-labels.sqlite");
        const Run init = runCli({"store", "init", empty});
        QVERIFY2(init.exitCode == 0, qPrintable(init.err));
        const QString folder = path("runs/never-used");
        const Run train = runCli({"train", "-c", m_reference, "--db", empty, "-o", folder, "--steps", "5",
                                  "--eval-samples", "10", "--threads", "1"});
        QCOMPARE(train.exitCode, 1);
        QVERIFY2(!QFileInfo::exists(folder), qPrintable(train.err));
        QVERIFY(QDir().mkpath(path("runs/made-by-hand")));
        const Run again = runCli({"train", "-c", m_reference, "--db", empty, "-o", path("runs/made-by-hand"),
                                  "--steps", "5", "--eval-samples", "10", "--threads", "1"});
        QCOMPARE(again.exitCode, 1);
        QVERIFY(QFileInfo(path("runs/made-by-hand")).isDir());
    }

    void aRealFullDiskLosesNoCompletedCheckpointOrLabel()
    {
        // A small tmpfs (needs root: skipped elsewhere; the file-size limit above runs everywhere).
        const QString disk = path("small-disk");
        QVERIFY(QDir().mkpath(disk));
        if (QProcess::execute(QStringLiteral("mount"), {"-t", "tmpfs", "-o", "size=320k", "tmpfs", disk}) != 0)
            QSKIP("cannot mount a tmpfs here (not root)");
        struct Unmount {
            QString at;
            ~Unmount() { QProcess::execute(QStringLiteral("umount"), {at}); }
        } unmount{disk};

        // Training: the first checkpoint and its Adam state fit, a later one does not. The run
        // fails saying so, the completed checkpoint stays whole and listed, no partial file is left.
        const QString folder = disk + "/run";
        const Run train = runCli({"train", "-c", m_reference, "--db", m_store, "-o", folder, "--steps", "200",
                                  "--checkpoint-every", "10", "--eval-every", "0", "--eval-samples", "50",
                                  "--threads", "1"});
        QCOMPARE(train.exitCode, 1);
        QVERIFY2(train.err.contains(QStringLiteral("No space left on device")), qPrintable(train.err));
        QVERIFY2(train.err.contains(QStringLiteral("last good checkpoint")), qPrintable(train.err));
        int whole = 0;
        for (const QString& name : QDir(folder).entryList(QDir::Files)) {
            QVERIFY2(!name.contains(QStringLiteral(".tmp")), qPrintable(name));
            if (name.endsWith(QStringLiteral(".d2dpo"))) {
                QVERIFY2(loadCheckpoint((folder + "/" + name).toStdString(), torch::kCPU).ok(), qPrintable(name));
                ++whole;
            }
        }
        QVERIFY(whole >= 1);
        auto store = openStore();
        const RunRecord run = store->runs().value().back();
        QCOMPARE(run.status, RunStatus::Failed);
        int64_t models = 0;
        for (const ModelRecord& m : store->models().value())
            models += m.runId.value_or(0) == run.id ? 1 : 0;
        QCOMPARE(models, int64_t(whole));
        QCOMPARE(store->integrityCheck().value(), std::string("ok"));
        store.reset();
        QProcess::execute(QStringLiteral("rm"), {"-rf", folder});

        // Labelling into a store on the full disk: every label reported as committed is there once
        // room is made (a filler file is removed), and the store is whole.
        const qint64 storeBytes = QFileInfo(m_store).size() + QFileInfo(m_store + "-wal").size();
        const QString size = QStringLiteral("size=%1k").arg((storeBytes + 48 * 1024 + 96 * 1024) / 1024);
        QCOMPARE(QProcess::execute(QStringLiteral("mount"), {"-o", "remount," + size, disk}), 0);
        const QString filler = disk + "/filler";
        {
            QFile file(filler);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QByteArray(48 * 1024, 'x'));
        }
        const QString small = disk + "/store.sqlite";
        QVERIFY(QFile::copy(m_store, small));
        const int64_t before = [&] {
            auto copy = PreferenceStore::open(small.toStdString());
            return copy ? copy.value()->counts("").value().labelled : -1;
        }();
        const Run more = runCli({"pairs", "--db", small, "-c", m_reference, "-n", "3000", "--threads", "1"});
        const Run label = runCli({"label", "--db", small});
        QVERIFY(QFile::remove(filler));
        auto full = PreferenceStore::open(small.toStdString());
        QVERIFY2(full.ok(), full.ok() ? "" : full.error().c_str());
        QCOMPARE(full.value()->integrityCheck().value(), std::string("ok"));
        const auto match = QRegularExpression(QStringLiteral("the (\\d+) labels before it are committed"))
                               .match(label.err);
        if (label.exitCode != 0 && match.hasMatch())
            QCOMPARE(full.value()->counts("").value().labelled, before + match.captured(1).toLongLong());
        QVERIFY2(!label.err.contains(QStringLiteral("frame #")), qPrintable(label.err));
        QVERIFY2(more.exitCode != 0 || label.exitCode != 0, "the disk never filled up; make it smaller");
        qInfo("full disk: pairs said %s; label said %s", qPrintable(more.err.trimmed().section('\n', -1)),
              qPrintable(label.err.trimmed().section('\n', -1)));
        QVERIFY2(more.exitCode != 0 || label.exitCode != 0, "the disk never filled up; make it smaller");
    }
};

QTEST_GUILESS_MAIN(TestCliFaults)
#include "tst_clifaults.moc"
