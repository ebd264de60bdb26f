// SPDX-License-Identifier: GPL-3.0-or-later
// The training dashboard: the worker adapter (progress out, a stop honoured within one step, a
// throwing or NaN trainer reported, not crashed), the plots receiving every series at a bounded
// replot rate, the settings form refusing absurd values in words, a whole run from the Train
// view recorded in the store and shown again, and the Models view's lineage, histograms and
// export folder (whose weights Python loads, when python3-torch is installed).
#include <QComboBox>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeWidget>

#include <cmath>

#include "testsupport.h"

#include "io/checkpoint.h"
#include "model/denoiser.h"
#include "jobs/dpojob.h"
#include "ui/datamodeldialog.h"
#include "ui/labelview.h"
#include "ui/pairsupply.h"
#include "ui/metricplot.h"
#include "ui/modelsview.h"
#include "store/preferencestore.h"
#include "ui/trainsettingsform.h"
#include "ui/trainview.h"
#include "ui/trainworker.h"

using namespace d2dpo;
using namespace d2dpo::ui;

namespace {

/// A tiny untrained binary-integers model (N = 10) saved as a checkpoint.
std::string tinyCheckpoint(const QTemporaryDir& dir, const QString& name, bool poisoned = false)
{
    torch::manual_seed(5);
    const ModelSpec spec = test::tinySpec(10);
    Denoiser model = makeDenoiser(spec, 2, torch::kCPU);
    if (poisoned) {
        torch::NoGradGuard noGrad;
        for (auto& p : model->parameters())
            p.fill_(std::nan(""));
    }
    CheckpointInfo info;
    info.id = newCheckpointId();
    info.kind = "pretrained";
    info.spec = spec;
    info.createdAt = utcNow();
    const std::string path = dir.filePath(name).toStdString();
    if (!saveCheckpoint(path, model, info).ok())
        return {};
    return path;
}

DpoJobSpec quickJob(const std::string& reference, const QTemporaryDir& dir, int steps)
{
    DpoJobSpec job;
    job.referencePath = reference;
    job.source = PreferenceSource::RulePairs;
    job.rulePairs = 200;
    job.dpo.steps = steps;
    job.dpo.batch = 8;
    job.schedule.evalEvery = 10;
    job.schedule.evalSamples = 40;
    job.sampling.steps = 8;
    job.device = "cpu";
    job.outputFolder = dir.filePath(QStringLiteral("runs/%1").arg(QString::number(qint64(std::rand())))).toStdString();
    return job;
}

TrainJob asTrainJob(DpoJobSpec spec)
{
    return [spec](TrainListener& listener, const StopToken& stop) { return runDpoJob(spec, listener, stop).finished; };
}

bool pythonTorchAvailable()
{
    if (!QFile::exists(QStringLiteral("/usr/bin/python3")))
        return false;
    return QProcess::execute(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QStringLiteral("import torch")}) == 0;
}

} // namespace

/// The binary task's metrics with the given VSR and odd ratio (the rest made up).
SampleMetrics binaryMetrics(double vsr, double odd)
{
    SampleMetrics m;
    m.samples = 2000;
    m.ruleMetric = "odd_ratio";
    m.set("vsr", vsr, "valid-sample ratio", true);
    m.set("odd_ratio", odd, "odd ratio", true);
    m.set("odd_share_valid", odd / vsr, "odd among valid");
    return m;
}

class TestTrainView final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string m_reference;
    int m_stores = 0;

    std::unique_ptr<PreferenceStore> freshStore()
    {
        const auto path = m_dir.filePath(QStringLiteral("s%1.sqlite").arg(++m_stores)).toStdString();
        return PreferenceStore::open(path).value();
    }

    /// A store holding the tiny reference model, as the Label view leaves it after generating.
    std::unique_ptr<PreferenceStore> storeWithReference(std::string& modelId)
    {
        auto store = freshStore();
        auto loaded = loadCheckpoint(m_reference, torch::kCPU);
        ModelRecord record;
        record.id = loaded->info.id;
        record.kind = "pretrained";
        record.name = "tiny reference";
        record.path = m_reference;
        record.specJson = toJson(loaded->info.spec);
        modelId = record.id;
        if (!store->addModel(record).ok())
            return nullptr;
        return store;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings go to a test location
        QCoreApplication::setOrganizationName(QStringLiteral("d2dpo-studio-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_trainview"));
        QVERIFY(m_dir.isValid());
        m_reference = tinyCheckpoint(m_dir, QStringLiteral("tiny.d2dpo"));
        QVERIFY(!m_reference.empty());
    }

    void runnerReportsProgressEvaluationsAndTheResult()
    {
        TrainRunner runner;
        QSignalSpy progress(&runner, &TrainRunner::progress);
        QSignalSpy evaluated(&runner, &TrainRunner::evaluated);
        QSignalSpy logged(&runner, &TrainRunner::logLine);
        QSignalSpy finished(&runner, &TrainRunner::finished);
        QVERIFY(runner.start(asTrainJob(quickJob(m_reference, m_dir, 30))));
        QVERIFY(runner.running());
        QVERIFY(!runner.start(asTrainJob(quickJob(m_reference, m_dir, 30)))); // one job at a time
        QVERIFY(finished.wait(60000));
        QVERIFY(!runner.running());
        const auto done = finished.at(0).at(0).value<FinishedEvent>();
        QCOMPARE(done.status, RunStatus::Completed);
        QCOMPARE(done.stepsDone, int64_t(30));
        QVERIFY(QFile::exists(QString::fromStdString(done.lastCheckpointPath)));
        // Every step, in order, delivered before `finished`.
        QCOMPARE(progress.size(), 30);
        for (int i = 0; i < progress.size(); ++i) {
            const auto e = progress.at(i).at(0).value<ProgressEvent>();
            QCOMPARE(e.step, int64_t(i + 1));
            QCOMPARE(e.totalSteps, int64_t(30));
            QVERIFY(std::isfinite(e.loss));
            QVERIFY(e.rewards.has_value());
        }
        // The reference first (the baselines), then steps 10, 20 and the end.
        QCOMPARE(evaluated.size(), 4);
        QVERIFY(evaluated.at(0).at(0).value<EvaluationEvent>().ofReference);
        QCOMPARE(evaluated.at(3).at(0).value<EvaluationEvent>().step, int64_t(30));
        QVERIFY(!logged.isEmpty());
    }

    void stopIsHonouredWithinOneStep()
    {
        TrainRunner runner;
        QSignalSpy finished(&runner, &TrainRunner::finished);
        QSignalSpy progress(&runner, &TrainRunner::progress);
        auto job = quickJob(m_reference, m_dir, 1'000'000);
        job.schedule.evalEvery = 0;
        job.evaluateReference = false;
        QVERIFY(runner.start(asTrainJob(job)));
        QVERIFY(progress.wait(30000));
        runner.requestStop();
        // Read after the request: the step in flight then is at most one more than this.
        const int64_t reported = runner.lastReportedStep();
        QVERIFY(finished.wait(30000));
        const auto done = finished.at(0).at(0).value<FinishedEvent>();
        QCOMPARE(done.status, RunStatus::Stopped);
        QVERIFY2(done.stepsDone <= reported + 1,
                 qPrintable(QStringLiteral("stopped after %1, stop requested at %2").arg(done.stepsDone).arg(reported)));
        QVERIFY(!done.lastCheckpointPath.empty()); // a stopped run keeps its weights
    }

    void aThrowingTrainerIsReportedAndTheRunnerStaysUsable()
    {
        TrainRunner runner;
        QSignalSpy finished(&runner, &TrainRunner::finished);
        QVERIFY(runner.start([](TrainListener& listener, const StopToken&) -> FinishedEvent {
            listener.onProgress({1, 10, 0.69, std::nullopt, 1, 1});
            throw std::runtime_error("device vanished");
        }));
        QVERIFY(finished.wait(10000));
        const auto done = finished.at(0).at(0).value<FinishedEvent>();
        QCOMPARE(done.status, RunStatus::Failed);
        QVERIFY2(QString::fromStdString(done.error).contains(QStringLiteral("device vanished")), done.error.c_str());
        QVERIFY(runner.start([](TrainListener&, const StopToken&) { return FinishedEvent{}; }));
        QVERIFY(finished.wait(10000));
        QCOMPARE(finished.at(1).at(0).value<FinishedEvent>().status, RunStatus::Completed);
    }

    void aCheckpointWithNonFiniteWeightsIsRefused()
    {
        const std::string poisoned = tinyCheckpoint(m_dir, QStringLiteral("nan.d2dpo"), true);
        TrainRunner runner;
        QSignalSpy finished(&runner, &TrainRunner::finished);
        auto job = quickJob(poisoned, m_dir, 20);
        job.evaluateReference = false;
        QVERIFY(runner.start(asTrainJob(job)));
        QVERIFY(finished.wait(30000));
        const auto done = finished.at(0).at(0).value<FinishedEvent>();
        QCOMPARE(done.status, RunStatus::Failed);
        // A valid checksum over NaN weights: refused at load, before any step.
        QVERIFY2(QString::fromStdString(done.error).contains(QStringLiteral("NaN or infinite")), done.error.c_str());
        QCOMPARE(done.stepsDone, int64_t(0));
        QVERIFY(done.lastCheckpointPath.empty()); // non-finite weights are never written
    }

    void destroyingTheRunnerStopsAndJoinsTheJob()
    {
        auto runner = std::make_unique<TrainRunner>();
        QSignalSpy progress(runner.get(), &TrainRunner::progress);
        auto job = quickJob(m_reference, m_dir, 1'000'000);
        job.evaluateReference = false;
        job.schedule.evalEvery = 0;
        QVERIFY(runner->start(asTrainJob(job)));
        QVERIFY(progress.wait(30000));
        QElapsedTimer clock;
        clock.start();
        runner.reset();
        QVERIFY(clock.elapsed() < 20000);
    }

    void plotsReceiveEverySeriesAndReplotAtABoundedRate()
    {
        std::string modelId;
        auto store = storeWithReference(modelId);
        TrainView view(*store);
        view.resize(1200, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.onEvaluation({0, binaryMetrics(0.96, 0.47), true});
        const int before = view.lossPlot()->replotCount();
        QElapsedTimer clock;
        clock.start();
        for (int step = 1; step <= 2000; ++step)
            view.onProgress({step, 2000, 0.69 - step * 1e-4, RewardStats{0.1, -0.1, 0.2, 0.75}, 100, step / 100.0});
        view.onEvaluation({2000, binaryMetrics(0.98, 0.93), false});
        QTest::qWait(150);
        const qint64 elapsed = clock.elapsed();
        QCOMPARE(view.lossPlot()->pointCount(0), 2000);
        QCOMPARE(view.lossPlot()->pointCount(1), 2000); // the moving average
        QCOMPARE(view.accuracyPlot()->pointCount(0), 2000);
        QCOMPARE(view.accuracyPlot()->pointCount(1), 2000);
        QCOMPARE(view.rewardPlot()->pointCount(0), 2000);
        QCOMPARE(view.rewardPlot()->pointCount(1), 2000);
        QCOMPARE(view.samplePlot()->pointCount(0), 1);
        QCOMPARE(view.samplePlot()->lastValue(0), 0.93);
        QCOMPARE(view.samplePlot()->lastValue(1), 0.98);
        QCOMPARE(view.rewardPlot()->lastValue(1), -0.1);
        // 2000 steps arrived; the plot was drawn at most ~30 times a second, not 2000 times.
        const int replots = view.lossPlot()->replotCount() - before;
        QVERIFY2(replots >= 1 && replots <= 2 + int(elapsed / 30),
                 qPrintable(QStringLiteral("%1 replots in %2 ms").arg(replots).arg(elapsed)));
        const QString png = m_dir.filePath(QStringLiteral("loss.png"));
        const QString pdf = m_dir.filePath(QStringLiteral("loss.pdf"));
        QVERIFY(view.lossPlot()->savePng(png));
        QVERIFY(view.samplePlot()->savePdf(pdf));
        QVERIFY(QFileInfo(png).size() > 1000);
        QVERIFY(QFileInfo(pdf).size() > 1000);
    }

    void aSequenceFileTaskPlotsItsOwnMetrics()
    {
        std::string modelId;
        auto store = storeWithReference(modelId);
        TrainView view(*store);
        SampleMetrics reference;
        reference.samples = 1000;
        reference.ruleMetric = "rule_share";
        for (const char* name : {"vsr", "rule_share", "in_data_share", "novel_share", "unique_share"})
            reference.set(name, 0.5, std::string("what ") + name + " is", true);
        view.onEvaluation({0, reference, true});
        SampleMetrics later = reference;
        later.set("rule_share", 0.85, "", true);
        view.onEvaluation({50, later, false});
        QCOMPARE(view.samplePlot()->seriesCount(), 5);
        QCOMPARE(view.samplePlot()->lastValue(0), 0.85); // the rule's share comes first
        QVERIFY(view.samplePlot()->toolTip().contains("what novel_share is"));
        QVERIFY(view.logText().contains("rule_share 0.8500"));
        // A binary run afterwards goes back to its own two series.
        view.onEvaluation({0, binaryMetrics(0.96, 0.47), true});
        QCOMPARE(view.samplePlot()->seriesCount(), 2);
    }

    void aNewModelFromADataFileIsPretrainedAndStored()
    {
        const QString words = m_dir.filePath(QStringLiteral("dialog-words.txt"));
        QFile file(words);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("cat\ndog\nemu\nowl\nant\nyak\neel\npig\n");
        file.close();
        const QString storePath = m_dir.filePath(QStringLiteral("dialog.sqlite"));
        DataModelDialog dialog(storePath, m_dir.filePath(QStringLiteral("dialog-models")));
        // A bad rule is named before anything is trained.
        dialog.findChild<QLineEdit*>(QStringLiteral("rule"))->setText(QStringLiteral("motif:("));
        dialog.setDataFile(words);
        QVERIFY(!dialog.start());
        QVERIFY2(dialog.findChild<QLabel*>(QStringLiteral("summary"))->text().contains("regular expression"),
                 qPrintable(dialog.findChild<QLabel*>(QStringLiteral("summary"))->text()));
        dialog.findChild<QLineEdit*>(QStringLiteral("rule"))->setText(QStringLiteral("motif:^[aeiou]"));
        dialog.setDataFile(words);
        QVERIFY(dialog.findChild<QLabel*>(QStringLiteral("summary"))->text().contains("8 sequences"));
        dialog.findChild<QSpinBox*>()->setValue(20);
        QSignalSpy created(&dialog, &DataModelDialog::modelCreated);
        QVERIFY(dialog.start());
        QVERIFY(created.wait(120000));
        QVERIFY(QFile::exists(dialog.createdCheckpoint()));
        auto store = PreferenceStore::open(storePath.toStdString());
        QVERIFY(store.ok());
        const auto models = store.value()->models().value();
        QCOMPARE(models.size(), size_t(1));
        QCOMPARE(models[0].name, std::string("dialog-words (pretrained)"));
        QVERIFY(QString::fromStdString(models[0].specJson).contains("sequences"));
    }

    void theFormRefusesAbsurdValuesInWords_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("beta zero") << "beta" << "0" << "Beta must be greater than 0";
        QTest::newRow("beta negative") << "beta" << "-0.5" << "Beta must be greater than 0";
        QTest::newRow("lr zero") << "learningRate" << "0" << "Learning rate must be greater than 0";
        QTest::newRow("lr negative") << "learningRate" << "-1e-4" << "Learning rate must be greater than 0";
        QTest::newRow("lr huge") << "learningRate" << "5" << "at most 1";
        QTest::newRow("steps zero") << "steps" << "0" << "Steps must be between 1";
        QTest::newRow("batch zero") << "batch" << "0" << "Batch must be between 1";
        QTest::newRow("not a number") << "beta" << "abc" << "is not a number";
        QTest::newRow("eta negative") << "eta" << "-1" << "Eta must be between 0 and 100";
        QTest::newRow("t-samples") << "tSamples" << "0" << "t-samples per pair must be between 1";
        QTest::newRow("fraction of a step") << "steps" << "2.5" << "is not a whole number";
    }

    void theFormRefusesAbsurdValuesInWords()
    {
        QFETCH(QString, field);
        QFETCH(QString, text);
        QFETCH(QString, message);
        TrainSettingsForm form;
        QVERIFY(form.settings().has_value());
        QVERIFY(form.problems().isEmpty());
        QSignalSpy validity(&form, &TrainSettingsForm::validityChanged);
        auto* edit = form.findChild<QLineEdit*>(field);
        QVERIFY(edit);
        edit->setText(text);
        QVERIFY(!form.settings().has_value());
        QVERIFY2(form.problems().join(' ').contains(message), qPrintable(form.problems().join(" | ")));
        QCOMPARE(validity.size(), 1);
        QCOMPARE(validity.at(0).at(0).toBool(), false);
        QVERIFY(form.findChild<QLabel*>(QStringLiteral("problems"))->text().contains(message));
        form.restoreDefaults();
        QVERIFY(form.settings().has_value());
    }

    void theFormRefusesABatchLargerThanMemoryAllows()
    {
        TrainSettingsForm form;
        ModelSpec large;
        large.task.length = 64;
        large.model.dModel = 256;
        large.model.layers = 4;
        form.setModelSpec(large);
        form.setAvailableMemoryOverride(int64_t(8) << 30); // 8 GiB
        form.findChild<QLineEdit*>(QStringLiteral("batch"))->setText(QStringLiteral("256"));
        QVERIFY2(form.settings().has_value(), qPrintable(form.problems().join(" | "))); // the large benchmark fits
        form.findChild<QLineEdit*>(QStringLiteral("batch"))->setText(QStringLiteral("1000000"));
        QVERIFY(!form.settings().has_value());
        QVERIFY2(form.problems().join(' ').contains(QStringLiteral("of memory is available")),
                 qPrintable(form.problems().join(" | ")));
    }

    void settingsPersist()
    {
        {
            TrainSettingsForm form;
            form.findChild<QLineEdit*>(QStringLiteral("beta"))->setText(QStringLiteral("0.25"));
            form.findChild<QLineEdit*>(QStringLiteral("steps"))->setText(QStringLiteral("123"));
            form.saveSettings();
        }
        TrainSettingsForm again;
        again.loadSettings();
        QVERIFY(again.settings().has_value());
        QCOMPARE(again.settings()->dpo.beta, 0.25);
        QCOMPARE(again.settings()->dpo.steps, 123);
        again.restoreDefaults();
        again.saveSettings();
    }

    void thePairCountFollowsTheSource()
    {
        std::string modelId;
        auto store = storeWithReference(modelId);
        // Three labelled pairs: left, right, tie (the tie is left out).
        auto ids = store->addPairs({{0, "1110000000", "1100000000", modelId, modelId, "binary-integers:10"},
                                    {0, "1000000000", "1111000000", modelId, modelId, "binary-integers:10"},
                                    {0, "1111100000", "1111110000", modelId, modelId, "binary-integers:10"}},
                                   "generated");
        QVERIFY(ids.ok());
        QVERIFY(store->addLabel(ids.value()[0], Choice::Left, "expert", 900).ok());
        QVERIFY(store->addLabel(ids.value()[1], Choice::Right, "expert", 900).ok());
        QVERIFY(store->addLabel(ids.value()[2], Choice::Tie, "expert", 900).ok());
        TrainView view(*store);
        QCOMPARE(view.pairCount(), qint64(2));
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("pairSummary"))->text().contains(QStringLiteral("2 labelled pairs")));
        QVERIFY(view.findChild<QPushButton*>(QStringLiteral("start"))->isEnabled());
        view.useRulePairs(true, 5000);
        QCOMPARE(view.pairCount(), qint64(5000));
        view.useRulePairs(false);
        view.settingsForm()->findChild<QLineEdit*>(QStringLiteral("beta"))->setText(QStringLiteral("0"));
        QVERIFY(!view.findChild<QPushButton*>(QStringLiteral("start"))->isEnabled());
        QVERIFY(!view.start());
        QVERIFY(view.logText().contains(QStringLiteral("Beta must be greater than 0")));
        view.settingsForm()->restoreDefaults();
    }

    void aRunFromTheTrainViewIsRecordedShownAgainAndExported()
    {
        std::string modelId;
        auto store = storeWithReference(modelId);
        TrainView view(*store);
        view.useRulePairs(true, 500);
        auto* form = view.settingsForm();
        const std::pair<const char*, const char*> values[] = {
            {"steps", "25"}, {"batch", "8"}, {"evalEvery", "10"}, {"evalSamples", "50"}, {"samplingSteps", "8"}};
        for (const auto& [field, text] : values)
            form->findChild<QLineEdit*>(QString::fromLatin1(field))->setText(QString::fromLatin1(text));
        form->findChild<QComboBox*>(QStringLiteral("device"))->setCurrentIndex(1); // CPU
        QSignalSpy finished(&view, &TrainView::runFinished);
        QVERIFY2(view.start(), qPrintable(view.logText()));
        QVERIFY(view.training());
        QVERIFY(!view.findChild<QPushButton*>(QStringLiteral("start"))->isEnabled());
        QVERIFY(view.findChild<QPushButton*>(QStringLiteral("stop"))->isEnabled());
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.at(0).at(0).value<RunStatus>(), RunStatus::Completed);
        QCOMPARE(view.lossPlot()->pointCount(0), 25);
        QCOMPARE(view.samplePlot()->pointCount(0), 3); // steps 10, 20, 25
        QVERIFY2(view.logText().contains(QStringLiteral("reference: vsr")) &&
                     view.logText().contains(QStringLiteral("odd_ratio")),
                 qPrintable(view.logText()));

        // The store has the run, its series and the fine-tuned model with its lineage.
        const auto runs = store->runs().value();
        QCOMPARE(runs.size(), size_t(1));
        QCOMPARE(runs[0].status, RunStatus::Completed);
        QCOMPARE(runs[0].referenceModelId, modelId);
        QCOMPARE(store->metricSeries(runs[0].id, "loss").value().size(), size_t(25));
        QCOMPARE(store->metricSeries(runs[0].id, "reference/vsr").value().size(), size_t(1));
        QVERIFY(!runs[0].resultModelId.empty());
        const auto result = store->model(runs[0].resultModelId).value();
        QVERIFY(result.has_value());
        QCOMPARE(result->parentId, modelId);
        QCOMPARE(result->runId.value_or(0), runs[0].id);

        // Reopened: the curves come back from the store.
        auto* list = view.findChild<QListWidget*>(QStringLiteral("runs"));
        QCOMPARE(list->count(), 1);
        view.lossPlot()->clear();
        view.showRun(runs[0].id);
        QCOMPARE(view.lossPlot()->pointCount(0), 25);
        QCOMPARE(view.samplePlot()->pointCount(1), 3);
        QCOMPARE(view.rewardPlot()->pointCount(0), 25);

        // The Models view: lineage, histograms side by side, export, label from it.
        ModelsView models(*store);
        models.show(); // samples are drawn once the view is on screen
        auto* tree = models.tree();
        QCOMPARE(tree->topLevelItemCount(), 1);
        // Every checkpoint of the run is a model of it, recorded when written (a killed run keeps them).
        int checkpoints = 0;
        for (const ModelRecord& m : store->models().value())
            checkpoints += m.runId.value_or(0) == runs[0].id ? 1 : 0;
        QVERIFY(checkpoints >= 1);
        QCOMPARE(tree->topLevelItem(0)->childCount(), checkpoints);
        QVERIFY(models.selectModel(QString::fromStdString(result->id)));
        QVERIFY(models.detailsText().contains(QStringLiteral("Run #%1").arg(runs[0].id)));
        QVERIFY(models.detailsText().contains(QStringLiteral("rule-made pairs")));
        QSignalSpy summaries(&models, &ModelsView::summaryReady);
        QTRY_VERIFY_WITH_TIMEOUT(models.summary(QString::fromStdString(result->id)).has_value() &&
                                     models.summary(QString::fromStdString(modelId)).has_value(),
                                 60000);
        QCOMPARE(models.summary(QString::fromStdString(modelId))->metrics.samples, int64_t(ModelsView::kSummarySamples));

        const QString folder = m_dir.filePath(QStringLiteral("export"));
        const Status exported = models.exportSelected(folder);
        QVERIFY2(exported.ok(), exported.ok() ? "" : exported.error().c_str());
        for (const char* file : {"weights.pt", "model_card.json", "samples.txt"})
            QVERIFY2(QFile::exists(folder + QLatin1Char('/') + QLatin1String(file)), file);
        QFile cardFile(folder + QStringLiteral("/model_card.json"));
        QVERIFY(cardFile.open(QIODevice::ReadOnly));
        const QJsonObject card = QJsonDocument::fromJson(cardFile.readAll()).object();
        QCOMPARE(card.value("id").toString(), QString::fromStdString(result->id));
        QCOMPARE(card.value("lineage").toObject().value("parent_id").toString(), QString::fromStdString(modelId));
        QCOMPARE(card.value("lineage").toObject().value("run").toObject().value("run_id").toInteger(), runs[0].id);
        QCOMPARE(card.value("preference_counts").toObject().value("pairs").toInteger(), qint64(500));
        QVERIFY(!models.exportSelected(folder).ok()); // never overwrites a non-empty folder
        // The exported weights load back into a model of the card's shape.
        auto loadedBack = loadCheckpoint(result->path, torch::kCPU);
        QVERIFY(loadedBack.ok());

        QSignalSpy labelFrom(&models, &ModelsView::labelPairsFrom);
        for (QPushButton* button : models.findChildren<QPushButton*>())
            if (button->text().startsWith(QStringLiteral("Label pairs")))
                button->click();
        QCOMPARE(labelFrom.size(), 1);
        QCOMPARE(labelFrom.at(0).at(0).toString(), QString::fromStdString(result->path));
        // The Label view shows the fine-tuned model's pairs next, ahead of older pending pairs,
        // and the store keeps the model's name, lineage and run.
        QVERIFY(store->addPairs({{0, "1000000000", "1100000000", modelId, modelId, "binary-integers:10"}}, "generated").ok());
        LabelView labels(*store);
        QCOMPARE(QString::fromStdString(labels.currentPair()->leftModelId), QString::fromStdString(modelId));
        labels.labelFrom(QString::fromStdString(result->path), 10);
        QTRY_VERIFY_WITH_TIMEOUT(labels.currentPair() && labels.currentPair()->leftModelId == result->id, 60000);
        const auto kept = store->model(result->id).value();
        QCOMPARE(kept->name, result->name);
        QCOMPARE(kept->runId.value_or(0), runs[0].id);
        labels.supply().waitForIdle();

        if (!pythonTorchAvailable())
            QSKIP("python3-torch is not installed: the Python load check is skipped");
        QProcess python;
        python.start(QStringLiteral("/usr/bin/python3"),
                     {QStringLiteral("-c"),
                      QStringLiteral("import json, sys, torch\n"
                                     "w = torch.load(sys.argv[1] + '/weights.pt', weights_only=True)\n"
                                     "card = json.load(open(sys.argv[1] + '/model_card.json'))\n"
                                     "shapes = card['weights']['shapes']\n"
                                     "assert set(w) == set(shapes), (sorted(w), sorted(shapes))\n"
                                     "assert all(list(w[k].shape) == shapes[k] for k in w)\n"
                                     "assert all(torch.isfinite(t).all() for t in w.values())\n"
                                     "print(len(w), 'tensors')\n"),
                      folder});
        QVERIFY(python.waitForFinished(120000));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
        qInfo("python: %s", python.readAllStandardOutput().trimmed().constData());
    }
};

QTEST_MAIN(TestTrainView)
#include "tst_trainview.moc"
