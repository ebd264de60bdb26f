// SPDX-License-Identifier: GPL-3.0-or-later
// Nothing is lost or clobbered: outputs never replace a device, FIFO, folder or input, failed writes
// leave targets alone; run locks tell live runs from dead; labels are deleted by import, labeler or
// model; endless lines and NaN weights are refused; users never see a stack trace.
#include <QTemporaryDir>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testsupport.h"
#include "support/tinycheckpoint.h"

#include "base/failurereport.h"
#include "base/memoryestimate.h"
#include "base/runlock.h"
#include "base/safeoutput.h"
#include "io/checkpoint.h"
#include "model/denoiser.h"
#include "store/preferencejsonl.h"
#include "store/preferencestore.h"

using namespace d2dpo;
using test::readAll;
using test::writeAll;
namespace fs = std::filesystem;

class TestSafety final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string path(const char* name) const { return m_dir.filePath(name).toStdString(); }

    std::unique_ptr<PreferenceStore> store(const char* name)
    {
        auto opened = PreferenceStore::open(path(name));
        if (!opened) {
            qWarning("%s", opened.error().c_str());
            return nullptr;
        }
        return std::move(opened.value());
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void aDeviceOrFifoStaysWhatItIs()
    {
        // A copy of /dev/null made with mknod (root only), and a FIFO (anyone): never replaced.
        const std::string device = path("null-copy");
        const bool haveDevice = ::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
        const std::string fifo = path("fifo");
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        for (const std::string& target : {device, fifo}) {
            if (target == device && !haveDevice)
                continue;
            const Status written = AtomicFile::write(target, "data");
            QVERIFY(!written.ok());
            QVERIFY2(written.error().find("nothing was written") != std::string::npos, written.error().c_str());
            QVERIFY(!fs::is_regular_file(target));
        }
        if (haveDevice)
            QVERIFY(fs::is_character_file(device));
        QVERIFY(fs::is_fifo(fifo));
        QVERIFY(!AtomicFile::write(m_dir.path().toStdString(), "data").ok()); // a folder
        // No temporary file is left behind by a refusal.
        for (const auto& entry : fs::directory_iterator(m_dir.path().toStdString()))
            QVERIFY2(entry.path().filename().string().find(".tmp-") == std::string::npos, entry.path().c_str());
    }

    void anInputOfTheCommandIsNeverAnOutput()
    {
        const std::string input = path("input.bin");
        writeAll(input, "precious");
        const std::string link = path("link-to-input");
        fs::create_symlink(input, link);
        for (const std::string& target : {input, link, path("./input.bin")}) {
            const Status s = AtomicFile::write(target, "clobbered", {input});
            QVERIFY2(!s.ok(), target.c_str());
            QVERIFY2(s.error().find("this command reads that file") != std::string::npos, s.error().c_str());
        }
        QCOMPARE(readAll(input), std::string("precious"));
        // The store's WAL belongs to the store.
        const auto files = storeFiles(path("s.sqlite"));
        QCOMPARE(files.size(), size_t(4));
        QCOMPARE(files[1], path("s.sqlite") + "-wal");
    }

    void aLinkIsFollowedAndKept()
    {
        const std::string target = path("real.txt");
        writeAll(target, "old");
        const std::string link = path("alias.txt");
        fs::create_symlink(target, link);
        QVERIFY(AtomicFile::write(link, "new").ok());
        QVERIFY(fs::is_symlink(link));
        QCOMPARE(readAll(target), std::string("new"));
    }

    void aFailedWriteLeavesTheTargetAsItWas()
    {
        // A full disk, simulated in a child with a file-size limit (EFBIG like ENOSPC): the
        // earlier contents stay, and no temporary file is left.
        const std::string target = path("kept.txt");
        writeAll(target, "earlier contents");
        const pid_t child = fork();
        if (child == 0) {
            std::signal(SIGXFSZ, SIG_IGN);
            rlimit limit{4096, 4096};
            setrlimit(RLIMIT_FSIZE, &limit);
            const Status s = AtomicFile::write(target, std::string(1 << 20, 'x'));
            _exit(s.ok() ? 1 : (s.error().find("left as it was") != std::string::npos ? 0 : 2));
        }
        int status = 0;
        QCOMPARE(waitpid(child, &status, 0), child);
        QVERIFY(WIFEXITED(status));
        QCOMPARE(WEXITSTATUS(status), 0);
        QCOMPARE(readAll(target), std::string("earlier contents"));
        for (const auto& entry : fs::directory_iterator(m_dir.path().toStdString()))
            QVERIFY2(entry.path().filename().string().find("kept.txt.tmp") == std::string::npos, entry.path().c_str());
    }

    void theMemoryCheckHonoursTheAddressSpaceLimit()
    {
        // `ulimit -v` caps what the process may map, whatever the machine has free: in a child
        // limited to 256 MiB more than it maps now, at most those 256 MiB are available.
        const pid_t child = fork();
        if (child == 0) {
            const int64_t before = availableHostMemoryBytes();
            std::ifstream status("/proc/self/status");
            std::string line;
            int64_t mapped = -1;
            while (std::getline(status, line))
                if (line.rfind("VmSize:", 0) == 0)
                    mapped = std::stoll(line.substr(7)) * 1024;
            const rlim_t cap = rlim_t(mapped + (int64_t(256) << 20));
            rlimit limit{cap, cap};
            setrlimit(RLIMIT_AS, &limit);
            const int64_t after = availableHostMemoryBytes();
            const bool ok = before > (int64_t(1) << 30) && after > 0 && after <= (int64_t(256) << 20) &&
                            after > (int64_t(200) << 20);
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        QCOMPARE(waitpid(child, &status, 0), child);
        QVERIFY(WIFEXITED(status));
        QCOMPARE(WEXITSTATUS(status), 0);
    }

    void anOutputFolderMustBeNewOrEmpty()
    {
        QVERIFY(checkOutputFolder(path("fresh"), {}, "f").ok());
        fs::create_directories(path("used"));
        writeAll(path("used/step-000100.d2dpo"), "x");
        const Status s = checkOutputFolder(path("used"), {}, "the checkpoint folder");
        QVERIFY(!s.ok());
        QVERIFY2(s.error().find("step-000100.d2dpo") != std::string::npos, s.error().c_str());
        QVERIFY(!checkOutputFolder(path("used/step-000100.d2dpo"), {}, "f").ok());
    }

    void theRunLockTellsLiveFromDead()
    {
        const std::string file = path("run.lock");
        QVERIFY(!runLockHeld(file));
        {
            auto lock = RunLock::acquire(file);
            QVERIFY(lock.ok());
            QVERIFY(runLockHeld(file));
            QVERIFY(!RunLock::acquire(file).ok()); // even from the same process
        }
        QVERIFY(!runLockHeld(file));
        QVERIFY(!fs::exists(file)); // released: removed

        // Held by another process, and freed by the kernel when it is killed.
        int ready[2];
        QCOMPARE(pipe(ready), 0);
        const pid_t child = fork();
        if (child == 0) {
            auto lock = RunLock::acquire(file);
            const char ok = lock.ok() ? 1 : 0;
            (void)!write(ready[1], &ok, 1);
            for (;;)
                pause();
        }
        char ok = 0;
        QCOMPARE(read(ready[0], &ok, 1), ssize_t(1));
        QCOMPARE(ok, char(1));
        QVERIFY(runLockHeld(file));
        kill(child, SIGKILL);
        waitpid(child, nullptr, 0);
        QVERIFY(!runLockHeld(file)); // the file is still there, its lock is not
        QVERIFY(fs::exists(file));
    }

    void openingTheStoreMarksOnlyDeadRunsInterrupted()
    {
        auto s = store("runs.sqlite");
        QVERIFY(s);
        auto live = RunLock::acquire(path("live.lock"));
        QVERIFY(live.ok());
        RunRecord run;
        run.kind = RunKind::D2dpo;
        run.device = "cpu";
        run.lockPath = live->path();
        const int64_t liveId = s->startRun(run).value();
        run.lockPath = path("dead.lock"); // nobody holds it
        const int64_t deadId = s->startRun(run).value();
        s.reset();
        s = store("runs.sqlite");
        QCOMPARE(s->run(liveId).value()->status, RunStatus::Running);
        QCOMPARE(s->run(deadId).value()->status, RunStatus::Interrupted);
        QVERIFY(s->run(deadId).value()->error.find("ended without stopping") != std::string::npos);
        live->release();
        QCOMPARE(s->markDeadRunsInterrupted().value(), int64_t(1));
        QCOMPARE(s->run(liveId).value()->status, RunStatus::Interrupted);
        // Only a stopped or interrupted run can run again.
        // The dead attempt's points after the resumed step go; the reference's baselines stay.
        for (int64_t step = 1; step <= 5; ++step)
            QVERIFY(s->appendMetrics(liveId, step, {{"loss", 0.5}}).ok());
        QVERIFY(s->appendMetrics(liveId, 0, {{"reference/vsr", 0.9}}).ok());
        QVERIFY(s->reopenRun(liveId, path("again.lock"), 3).ok());
        QCOMPARE(s->metricSeries(liveId, "loss").value().size(), size_t(3));
        QCOMPARE(s->metricSeries(liveId, "reference/vsr").value().size(), size_t(1));
        QVERIFY(!s->reopenRun(liveId, path("again.lock"), 3).ok());
        QCOMPARE(s->integrityCheck().value(), std::string("ok"));
    }

    void labelsAreDeletedByImportLabelerOrModel()
    {
        auto s = store("delete.sqlite");
        QVERIFY(s);
        ModelRecord model;
        model.id = "m1";
        model.kind = "pretrained";
        model.name = "m1";
        model.path = "/m1";
        QVERIFY(s->addModel(model).ok());
        // Two generated pairs from m1, labelled by ana and by a rule; one imported file of two lines.
        const auto ids = s->addPairs({{0, "1100", "1000", "m1", "m1", "binary-integers:4"},
                                      {0, "1110", "0000", "m1", "m1", "binary-integers:4"}},
                                     "generated")
                             .value();
        QVERIFY(s->addLabel(ids[0], Choice::Left, "ana", 5).ok());
        QVERIFY(s->addLabel(ids[1], Choice::Right, "rule:odd", 0).ok());
        writeAll(path("two.jsonl"), "{\"chosen\": \"1011\", \"rejected\": \"0110\"}\n"
                                    "{\"chosen\": \"0111\", \"rejected\": \"0010\", \"labeler\": \"bo\"}\n");
        JsonlRules rules{"binary-integers:4", nullptr};
        const ImportOutcome imported = importPreferencesJsonl(*s, path("two.jsonl"), rules).value();
        QCOMPARE(imported.imported, int64_t(2));
        QCOMPARE(s->imports().value().at(0).pairs, int64_t(2));

        LabelSelection byImport;
        byImport.importId = imported.importId;
        const DeletedLabels counted = s->deleteLabels(byImport, /*dryRun=*/true).value();
        QCOMPARE(counted.labels, int64_t(2));
        QCOMPARE(counted.pairs, int64_t(2));
        QCOMPARE(counted.sequences, int64_t(4));
        QCOMPARE(s->preferences().value().size(), size_t(4)); // a dry run changes nothing
        QCOMPARE(s->deleteLabels(byImport, false).value().pairs, int64_t(2));
        QCOMPARE(s->preferences().value().size(), size_t(2));
        QVERIFY(s->imports().value().empty());

        LabelSelection byLabeler;
        byLabeler.labeler = "rule:odd";
        QCOMPARE(s->deleteLabels(byLabeler, false).value().labels, int64_t(1));
        QCOMPARE(s->pendingPairs(10).value().size(), size_t(1)); // the pair stays, pending again
        LabelSelection byModel;
        byModel.modelId = "m1";
        const DeletedLabels fromModel = s->deleteLabels(byModel, false).value();
        QCOMPARE(fromModel.labels, int64_t(1));
        QCOMPARE(fromModel.pairs, int64_t(2));
        QCOMPARE(s->preferences().value().size(), size_t(0));
        QCOMPARE(s->pendingPairs(10).value().size(), size_t(0));
        QVERIFY(!s->deleteLabels(LabelSelection{}, false).ok());
        LabelSelection mixed;
        mixed.modelId = "m1";
        mixed.labeler = "ana"; // a model's pairs go with every label on them: not with one labeler's
        QVERIFY(!s->deleteLabels(mixed, true).ok());
        QCOMPARE(s->integrityCheck().value(), std::string("ok"));
    }

    void anEndlessLineIsRefusedWithItsNumber()
    {
        auto s = store("lines.sqlite");
        QVERIFY(s);
        writeAll(path("zeros.jsonl"), "{\"chosen\": \"1011\", \"rejected\": \"0110\"}\n" + std::string(3 << 20, '\0'));
        JsonlRules rules{"binary-integers:4", nullptr};
        const auto result = importPreferencesJsonl(*s, path("zeros.jsonl"), rules);
        QVERIFY(!result.ok());
        QVERIFY2(result.error().find("line 2: longer than 1 MB") != std::string::npos, result.error().c_str());
        QVERIFY(!importPreferencesJsonl(*s, "/dev/zero", rules).ok()); // not a regular file: never read
        QCOMPARE(s->preferences().value().size(), size_t(0));
    }

    void nonFiniteWeightsAreRefusedAtLoad()
    {
        test::TinyCheckpointOptions poisoned; // binary integers of length 6: the symbols 0 and 1
        poisoned.weights = test::TinyCheckpointOptions::Weights::FirstNaN;
        QVERIFY(test::writeTinyCheckpoint(path("nan.d2dpo"), poisoned).ok()); // its checksum is valid
        const auto loaded = loadCheckpoint(path("nan.d2dpo"), torch::kCPU);
        QVERIFY(!loaded.ok());
        QVERIFY2(loaded.error().find("NaN or infinite") != std::string::npos, loaded.error().c_str());
    }

    void usersNeverSeeAStackTrace()
    {
        qputenv("XDG_STATE_HOME", m_dir.filePath("state").toUtf8());
        const std::string what = "CUDA out of memory. Tried to allocate 2.00 GiB\nException raised from malloc at "
                                 "c10/cuda/CUDACachingAllocator.cpp:1 (most recent call first):\nframe #0: "
                                 "c10::Error::Error() + 0x1\nframe #1: at::empty() + 0x2\n";
        const std::string message = userMessage(what);
        QVERIFY2(message.find("frame #") == std::string::npos, message.c_str());
        QVERIFY2(message.rfind("CUDA out of memory. Tried to allocate 2.00 GiB", 0) == 0, message.c_str());
        QVERIFY2(message.find(failureLogPath()) != std::string::npos, message.c_str());
        QVERIFY(readAll(failureLogPath()).find("frame #1: at::empty()") != std::string::npos);
        QCOMPARE(userMessage(std::string("plain message")), std::string("plain message"));
    }
};

QTEST_GUILESS_MAIN(TestSafety)
#include "tst_safety.moc"
