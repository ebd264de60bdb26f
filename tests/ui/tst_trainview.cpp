// SPDX-License-Identifier: GPL-3.0-or-later
// The training dashboard: plots get every series at a bounded replot rate, a run from the Train view
// is recorded, shown again and exported from the Models view (Python loads it where it can).
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

#include "support/referencestore.h"
#include "support/testsupport.h"
#include "support/tinycheckpoint.h"

#include "io/checkpoint.h"
#include "ui/models/newmodel/datamodeldialog.h"
#include "ui/label/labelview.h"
#include "ui/label/pairsupply.h"
#include "ui/common/metricplot.h"
#include "ui/models/modelsview.h"
#include "store/preferencestore.h"
#include "ui/train/trainsettingsform.h"
#include "ui/train/trainview.h"

using namespace d2dpo;
using namespace d2dpo::ui;

namespace {

bool pythonTorchAvailable()
{
    if (!QFile::exists(QStringLiteral("/usr/bin/python3")))
        return false;
    return QProcess::execute(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QStringLiteral("import torch")}) == 0;
}

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

} // namespace

class TestTrainView final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    test::TinyCheckpoint m_reference; ///< a tiny untrained binary-integers model (N = 10)
    int m_stores = 0;

    /// A new store holding the tiny reference model, as the Label view leaves it after generating.
    std::unique_ptr<PreferenceStore> storeWithReference()
    {
        const auto file = m_dir.filePath(QStringLiteral("s%1.sqlite").arg(++m_stores)).toStdString();
        return test::storeWithReference(file, m_reference);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings go to a test location
        QCoreApplication::setOrganizationName(QStringLiteral("d2dpo-studio-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_trainview"));
        QVERIFY(m_dir.isValid());
        test::TinyCheckpointOptions tiny;
        tiny.length = 10;
        tiny.seed = 5;
        auto written = test::writeTinyCheckpoint(m_dir.filePath(QStringLiteral("tiny.d2dpo")).toStdString(), tiny);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
        m_reference = written.value();
    }

    void plotsReceiveEverySeriesAndReplotAtABoundedRate()
    {
        auto store = storeWithReference();
        QVERIFY(store);
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
        auto store = storeWithReference();
        QVERIFY(store);
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
        // The size presets say what each costs, at the data's length.
        auto* sizeNote = dialog.findChild<QLabel*>(QStringLiteral("sizeNote"));
        QVERIFY2(sizeNote->text().contains("parameters") && sizeNote->text().contains("at length 3"),
                 qPrintable(sizeNote->text()));
        const QString smallNote = sizeNote->text();
        dialog.findChild<QComboBox*>(QStringLiteral("modelSize"))->setCurrentIndex(1);
        QVERIFY(sizeNote->text() != smallNote);
        dialog.findChild<QComboBox*>(QStringLiteral("modelSize"))->setCurrentIndex(0);
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

    void thePairCountFollowsTheSource()
    {
        const std::string modelId = m_reference.id;
        auto store = storeWithReference();
        QVERIFY(store);
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
        const std::string modelId = m_reference.id;
        auto store = storeWithReference();
        QVERIFY(store);
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
        view.showRun(runs[0].id); // read in the background
        QTRY_COMPARE(view.lossPlot()->pointCount(0), 25);
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
        // Auto: a count fitted to the time, the same for the model and its reference (the same draws).
        const int64_t drawn = models.summary(QString::fromStdString(modelId))->metrics.samples;
        QCOMPARE(models.summary(QString::fromStdString(result->id))->metrics.samples, drawn);
        QVERIFY(drawn >= kFewestFittedSamples && drawn <= models.sampleBudget().most);

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
