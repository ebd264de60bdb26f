// SPDX-License-Identifier: GPL-3.0-or-later
// The export folder: loadable weights, a model card and samples, the model's files first. Samples
// sized to a time take the fast sampler where the exact one would not fit; a stop during their
// draw keeps the model's files, one before them writes nothing.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <cmath>
#include <filesystem>

#include "support/testsupport.h"
#include "support/tinyconfigs.h"

#include "base/samplebudget.h"
#include "base/timeutil.h"
#include "io/checkpoint.h"
#include "jobs/exporter.h"
#include "model/transformerdenoiser.h"

#include <torch/serialize.h>

using namespace d2dpo;

namespace {

using test::readAll;

QJsonObject cardOf(const std::string& folder)
{
    return QJsonDocument::fromJson(QByteArray::fromStdString(readAll(folder + "/model_card.json"))).object();
}

int sampleLines(const std::string& folder)
{
    return int(QString::fromStdString(readAll(folder + "/samples.txt")).split('\n', Qt::SkipEmptyParts).size()) - 1;
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    Denoiser m_model{nullptr};
    CheckpointInfo m_info;
    std::optional<LoadedCheckpoint> m_loaded;

    std::string path(const char* name) const { return m_dir.filePath(name).toStdString(); }

    /// The tiny model's exports: 12 samples of 8 Euler steps.
    static ExportOptions twelveSamples()
    {
        ExportOptions options;
        options.sampleCount = 12;
        options.sampling.steps = 8;
        return options;
    }

    /// The tiny model as a masking process without remasking at `length`: its exact sampler exists.
    LoadedCheckpoint exactAt(int length) const
    {
        ModelSpec spec = test::tinySpec(length, false);
        spec.noise.eta = 0;
        return {CheckpointInfo{newCheckpointId(), "", "d2dpo", spec, "{}", "{}", 0, utcNow()},
                makeDenoiser(spec, 2, torch::kCPU)};
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        torch::manual_seed(1);
        m_model = makeDenoiser(test::tinySpec(6, false), 2, torch::kCPU);
        m_info = {newCheckpointId(), "0123456789abcdef", "d2dpo", test::tinySpec(6, false),
                  R"({"beta":0.1})", R"({"vsr":0.5})", 42, utcNow()};
        m_info.spec.noise.eta = 0.25;
        QVERIFY(saveCheckpoint(path("model.d2dpo"), m_model, m_info).ok());
        auto loaded = loadCheckpoint(path("model.d2dpo"), torch::kCPU);
        QVERIFY(loaded.ok());
        m_loaded = std::move(loaded.value());
    }

    void exportWritesALoadableFolder()
    {
        const std::string folder = path("export");
        const auto report = exportCheckpoint(*m_loaded, folder, twelveSamples());
        QVERIFY2(report.ok(), report.ok() ? "" : report.error().c_str());
        QCOMPARE(report->id, m_info.id);
        QCOMPARE(report->samples, int64_t(12));
        QVERIFY(!report->samplesStopped);

        // weights.pt is a pickled name -> tensor dict (what Python's torch.load reads).
        const std::string bytes = readAll(folder + "/weights.pt");
        QVERIFY(bytes.substr(0, 2) == "PK");
        const c10::IValue value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
        QVERIFY(value.isGenericDict());
        const auto dict = value.toGenericDict();
        for (const auto& item : m_model->named_parameters())
            QVERIFY2(torch::equal(dict.at(item.key()).toTensor(), item.value()), item.key().c_str());

        const QJsonObject json = cardOf(folder);
        QCOMPARE(json.value("id").toString().toStdString(), m_info.id);
        QCOMPARE(json.value("lineage").toObject().value("parent_id").toString().toStdString(), m_info.parentId);
        QCOMPARE(json.value("config").toObject().value("noise").toObject().value("eta").toDouble(), 0.25);
        QVERIFY(json.value("weights").toObject().value("parameter_count").toInt() > 0);
        const QJsonObject samples = json.value("export_samples").toObject();
        QCOMPARE(samples.value("count").toInt(), 12);
        QCOMPARE(samples.value("file").toString(), QStringLiteral("samples.txt"));
        QVERIFY(samples.value("metrics").toObject().contains("vsr"));
        QCOMPARE(sampleLines(folder), 12);

        // A second export into the same folder is refused: nothing is overwritten.
        const auto again = exportCheckpoint(*m_loaded, folder, twelveSamples());
        QVERIFY(!again.ok());
        QVERIFY(again.error().find("not empty") != std::string::npos);
    }

    void noSamplesWritesTheModelAloneAndForceRemovesOldOnes()
    {
        const std::string folder = path("export"); // the folder above, with 12 samples
        ExportOptions options = twelveSamples();
        options.sampleCount = 0;
        options.overwrite = true;
        options.samplesPlanned = [](const std::string&) { QFAIL("no samples were asked for"); };
        const auto report = exportCheckpoint(*m_loaded, folder, options);
        QVERIFY2(report.ok(), report.ok() ? "" : report.error().c_str());
        QCOMPARE(report->samples, int64_t(0));
        QVERIFY(std::filesystem::exists(folder + "/weights.pt"));
        QVERIFY(!std::filesystem::exists(folder + "/samples.txt")); // the last export's: not this one's
        QCOMPARE(cardOf(folder).value("export_samples").toObject().value("count").toInt(), 0);
        QCOMPARE(cardOf(folder).value("export_samples").toObject().value("why").toString(),
                 QStringLiteral("none asked for"));
    }

    void aStopWhileDrawingSamplesKeepsTheModelsFiles()
    {
        ExportOptions options = twelveSamples();
        options.sampling.batch = 4;
        StopToken stop;
        options.stop = &stop;
        std::string plan;
        options.samplesPlanned = [&](const std::string& said) {
            QVERIFY(std::filesystem::exists(path("stopped-export") + "/weights.pt")); // the files come first
            plan = said;
        };
        double heard = 0;
        options.progress = [&](double done, int64_t total) {
            QCOMPARE(total, int64_t(12));
            heard = done;
            if (done >= 4) // after the first batch: the draw is under way
                stop.requestStop();
        };
        const std::string folder = path("stopped-export");
        const auto report = exportCheckpoint(*m_loaded, folder, options);
        QVERIFY2(report.ok(), report.ok() ? "" : report.error().c_str());
        QVERIFY(report->samplesStopped);
        QCOMPARE(report->samples, int64_t(0));
        QCOMPARE(heard, 4.0);
        QVERIFY2(plan.find("12 samples") == 0, plan.c_str());
        QVERIFY(std::filesystem::exists(folder + "/weights.pt"));
        QVERIFY(!std::filesystem::exists(folder + "/samples.txt"));
        const QJsonObject samples = cardOf(folder).value("export_samples").toObject();
        QCOMPARE(samples.value("count").toInt(), 0);
        QCOMPARE(samples.value("why").toString(), QStringLiteral("the draw was stopped"));
    }

    void aStopBeforeTheModelsFilesWritesNothing()
    {
        StopToken stop;
        stop.requestStop();
        ExportOptions options = twelveSamples();
        options.stop = &stop;
        const std::string folder = path("never-export");
        const auto report = exportCheckpoint(*m_loaded, folder, options);
        QVERIFY(!report.ok());
        QCOMPARE(report.error(), std::string(kExportStopped));
        QVERIFY(!std::filesystem::exists(folder));
    }

    void samplesWithinATimeTakeTheFastSamplerWhereTheExactOneWouldNotFit()
    {
        // Length 40 with no time at all to spare: the confident sampler at its fewest passes, and
        // the fewest samples that say something.
        const LoadedCheckpoint forty = exactAt(40);
        ExportOptions options;
        options.sampleCount = 100;
        options.sampleSeconds = 1e-9;
        std::string plan;
        options.samplesPlanned = [&](const std::string& said) { plan = said; };
        const auto tight = exportCheckpoint(forty, path("tight-export"), options);
        QVERIFY2(tight.ok(), tight.ok() ? "" : tight.error().c_str());
        QCOMPARE(tight->samples, kFewestFittedSamples);
        QVERIFY2(plan.find("confident sampler, " + std::to_string(kFewestConfidentPasses) + " passes") != std::string::npos,
                 plan.c_str());
        QCOMPARE(tight->samplePlan, plan);
        const QJsonObject card = cardOf(path("tight-export")).value("export_samples").toObject();
        QCOMPARE(card.value("sampling").toObject().value("sampler").toString(), QStringLiteral("confident"));
        QCOMPARE(card.value("count").toInt(), int(kFewestFittedSamples));
        QCOMPARE(sampleLines(path("tight-export")), int(kFewestFittedSamples));

        // An hour for 30 samples of the tiny model: all of them, exactly.
        options.sampleCount = 30;
        options.sampleSeconds = 3600;
        const auto roomy = exportCheckpoint(forty, path("roomy-export"), options);
        QVERIFY2(roomy.ok(), roomy.ok() ? "" : roomy.error().c_str());
        QCOMPARE(roomy->samples, int64_t(30));
        QVERIFY2(plan.find("30 samples (about") == 0 && plan.find("exact sampler") != std::string::npos, plan.c_str());

        // A sampler asked for by name is kept; only the count fits the time.
        options.sampleSeconds = 1e-9;
        options.sampling.sampler = "euler";
        options.sampling.steps = 5;
        const auto euler = exportCheckpoint(forty, path("euler-export"), options);
        QVERIFY2(euler.ok(), euler.ok() ? "" : euler.error().c_str());
        QCOMPARE(euler->samples, kFewestFittedSamples);
        QVERIFY2(plan.find("Euler, 5 steps") != std::string::npos, plan.c_str());

        // No exact sampler (eta 0.25): "exact" is Euler at 8 steps a position, 48 here; with no
        // time to spare, Euler at the steps set (8), never the fine step's 48.
        ExportOptions remasking = twelveSamples();
        remasking.sampling.sampler = "exact";
        remasking.sampleSeconds = 1e-9;
        remasking.samplesPlanned = [&](const std::string& said) { plan = said; };
        const auto fitted = exportCheckpoint(*m_loaded, path("remasking-export"), remasking);
        QVERIFY2(fitted.ok(), fitted.ok() ? "" : fitted.error().c_str());
        QVERIFY2(plan.find("Euler, 8 steps") != std::string::npos && plan.find("fine step") == std::string::npos,
                 plan.c_str());
        remasking.sampleSeconds = 3600; // an hour: the fine step fits
        const auto fine = exportCheckpoint(*m_loaded, path("remasking-fine-export"), remasking);
        QVERIFY2(fine.ok(), fine.ok() ? "" : fine.error().c_str());
        QVERIFY2(plan.find("48 steps (exact mode's fine step)") != std::string::npos, plan.c_str());
    }

    void aNegativeCountOrANanTimeIsHandled()
    {
        ExportOptions options = twelveSamples();
        options.sampleCount = -1;
        const auto negative = exportCheckpoint(*m_loaded, path("negative-export"), options);
        QVERIFY(!negative.ok());
        QVERIFY(!std::filesystem::exists(path("negative-export")));
        options.sampleCount = 12;
        options.sampleSeconds = std::nan("");
        const auto nan = exportCheckpoint(*m_loaded, path("nan-export"), options);
        QVERIFY2(nan.ok(), nan.ok() ? "" : nan.error().c_str());
        QCOMPARE(nan->samples, int64_t(12)); // the count as set
    }
};

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
