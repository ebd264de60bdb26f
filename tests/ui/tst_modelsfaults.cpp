// SPDX-License-Identifier: GPL-3.0-or-later
// The Models and Train views' faults a new user hit at protein length, one test each: one figure
// per model with its provenance; a set number of samples drawn with progress, time left and a
// cancel; the histogram's legend covers no bar and the Created column is whole; the Train plots
// forget a run of another reference; past runs name their reference.
#include <QApplication>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QProgressDialog>
#include <QPushButton>
#include <QSemaphore>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QTreeWidget>
#include <QSplitter>
#include <QTabWidget>
#include <QtTest/QtTest>

#include <memory>

#include "base/config.h"
#include "store/preferencestore.h"
#include "support/tinycheckpoint.h"
#include "ui/models/exportdialog.h"
#include "ui/models/exportprogress.h"
#include "ui/common/longjobs.h"
#include "ui/common/metricplot.h"
#include "ui/models/modelexporter.h"
#include "ui/models/modelfigures.h"
#include "ui/models/modelsview.h"
#include "ui/common/qcustomplotinclude.h"
#include "ui/train/runhistory.h"
#include "ui/common/samplehistogram.h"
#include "ui/train/trainplots.h"
#include "ui/train/trainview.h"

using namespace d2dpo;

class ModelsFaults : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_stores = 0;
    std::unique_ptr<PreferenceStore> m_store;

    void freshStore()
    {
        m_store = std::move(
            PreferenceStore::open(m_dir.filePath(QString("s%1.sqlite").arg(++m_stores)).toStdString()).value());
    }

    ModelRecord storedTinyModel(int length = 6)
    {
        freshStore();
        test::TinyCheckpointOptions options;
        options.length = length;
        auto tiny = test::writeTinyCheckpoint(m_dir.filePath(QStringLiteral("tiny%1.d2dpo").arg(m_stores)).toStdString(),
                                              options);
        [&] { QVERIFY(tiny.ok()); }();
        ModelRecord m;
        m.id = tiny->id;
        m.kind = "pretrained";
        m.name = "tiny";
        m.path = tiny->path;
        m.specJson = toJson(tiny->spec, false);
        SampleMetrics recorded;
        recorded.samples = 2000;
        recorded.seed = 9;
        recorded.set("vsr", 0.1234, "valid share");
        m.metricsJson = recorded.toJson();
        [&] { QVERIFY(m_store->addModel(m).ok()); }();
        return m;
    }

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); } // the samples count stays out of the user's

    void theModelsViewShowsOneFigurePerModelWithItsProvenance()
    {
        const ModelRecord model = storedTinyModel();
        ui::ModelsView view(*m_store);
        view.setSampleCount(300);
        auto* tree = view.tree();
        QTreeWidgetItem* row = tree->topLevelItem(0);
        QVERIFY(row);
        // Before anything is drawn: the recorded figure, said to be so, in the tree and the details.
        QCOMPARE(row->text(3), QStringLiteral("0.1234"));
        QVERIFY2(row->toolTip(3).contains("2000 samples, seed 9"), qPrintable(row->toolTip(3)));
        QVERIFY(view.detailsText().contains("vsr 0.1234 (2000 samples, seed 9; recorded when it was made)"));
        view.resize(1000, 600);
        view.show();
        QTRY_VERIFY_WITH_TIMEOUT(view.summary(QString::fromStdString(model.id)).has_value(), 120000);
        const SampleMetrics drawn = view.summary(QString::fromStdString(model.id))->metrics;
        QCOMPARE(drawn.samples, int64_t(300));
        const QString figure = QString::number(drawn.vsr(), 'f', 4);
        // Drawn: the same figure in the tree, the details and the sample list, with how it was drawn;
        // the recorded one is nowhere any more.
        QCOMPARE(row->text(3), figure);
        QVERIFY2(row->toolTip(3).contains("300 samples"), qPrintable(row->toolTip(3)));
        QVERIFY2(view.detailsText().contains("vsr " + figure), qPrintable(view.detailsText()));
        QVERIFY(view.detailsText().contains("(300 samples"));
        QVERIFY(view.detailsText().contains("drawn here"));
        const QString list = view.findChild<QPlainTextEdit*>(QStringLiteral("samples"))->toPlainText();
        QVERIFY2(list.contains("vsr " + figure), qPrintable(list));
        for (const QString& text : {row->text(3), view.detailsText(), list})
            QVERIFY(!text.contains("0.1234") || figure == "0.1234");
    }

    void theModelsViewDrawsTheCountSetWithProgressAndACancel()
    {
        const ModelRecord model = storedTinyModel(24); // 24 passes a batch: long enough to be stopped on the way
        ui::ModelsView view(*m_store);
        QSignalSpy ready(&view, &ui::ModelsView::summaryReady);
        auto* progress = view.findChild<QProgressBar*>(QStringLiteral("samplingProgress"));
        auto* cancel = view.findChild<QPushButton*>(QStringLiteral("cancelSampling"));
        QVERIFY(progress && cancel);
        QVERIFY(view.findChild<QSpinBox*>(QStringLiteral("sampleCount")));
        view.setSampleCount(100000);
        view.show();
        QTRY_VERIFY_WITH_TIMEOUT(cancel->isEnabled() && progress->value() > 0, 30000);
        QVERIFY2(progress->text().contains("/ 100000 samples"), qPrintable(progress->text()));
        QVERIFY2(progress->format().contains("left"), qPrintable(progress->format())); // the time left
        cancel->click();
        QTRY_VERIFY_WITH_TIMEOUT(!cancel->isEnabled(), 30000);
        QVERIFY2(ready.count() == 0, qPrintable(QString::number(view.summary(QString::fromStdString(model.id))->metrics.samples)));
        QVERIFY(!view.summary(QString::fromStdString(model.id)));
        // A count set afterwards is drawn.
        view.setSampleCount(200);
        QTRY_VERIFY_WITH_TIMEOUT(view.summary(QString::fromStdString(model.id)).has_value(), 120000);
        QCOMPARE(view.summary(QString::fromStdString(model.id))->metrics.samples, int64_t(200));
    }

    void theTrainPlotsForgetARunOfAnotherReference()
    {
        const ModelRecord first = storedTinyModel();
        auto other = test::writeTinyCheckpoint(m_dir.filePath(QStringLiteral("other.d2dpo")).toStdString(),
                                               {.seed = 11});
        QVERIFY(other.ok());
        ModelRecord second = first;
        second.id = other->id;
        second.name = "other";
        second.path = other->path;
        QVERIFY(m_store->addModel(second).ok());
        RunRecord run;
        run.kind = RunKind::D2dpo;
        run.referenceModelId = first.id;
        run.status = RunStatus::Completed;
        auto runId = m_store->startRun(run);
        QVERIFY(runId.ok());
        QVERIFY(m_store->appendMetrics(runId.value(), 1, {{"loss", 0.69}}).ok());
        QVERIFY(m_store->appendMetrics(runId.value(), 2, {{"loss", 0.61}}).ok());
        ui::TrainView view(*m_store);
        QVERIFY(view.selectReference(QString::fromStdString(first.id)));
        auto* runs = view.findChild<ui::RunHistory*>()->findChild<QListWidget*>();
        QVERIFY(runs && runs->count() == 1);
        QVERIFY2(runs->item(0)->text().contains("from tiny"), qPrintable(runs->item(0)->text())); // its reference
        runs->setCurrentRow(0);
        ui::MetricPlot* loss = view.findChild<ui::TrainPlots*>()->lossPlot();
        QTRY_VERIFY(loss->pointCount(0) == 2);
        QVERIFY(view.selectReference(QString::fromStdString(second.id)));
        QCOMPARE(loss->pointCount(0), 0); // the other reference's curves are gone
        QVERIFY(view.selectReference(QString::fromStdString(first.id)));
        runs->setCurrentRow(-1);
        runs->setCurrentRow(0);
        QTRY_COMPARE(loss->pointCount(0), 2); // and its own come back when chosen
    }

    void theHistogramLegendCoversNoBarAndTheCreatedColumnIsWhole()
    {
        const ModelRecord model = storedTinyModel();
        ModelRecord tuned = model; // never drawn: older, so the reference stays selected
        tuned.id = "0123456789abcdef";
        tuned.parentId = model.id;
        tuned.kind = "d2dpo";
        tuned.name = "d2dpo run 12 best (step 250)";
        tuned.createdAt = "2000-01-01T00:00:00.000Z";
        QVERIFY(m_store->addModel(tuned).ok());
        ui::ModelsView view(*m_store);
        view.setSampleCount(200);
        view.resize(1012, 560); // the Models view inside a 1024x640 window
        view.show();
        QTRY_VERIFY_WITH_TIMEOUT(view.summary(QString::fromStdString(model.id)).has_value(), 120000);
        QCoreApplication::processEvents();
        auto* histogram = view.findChild<ui::SampleHistogram*>();
        QCustomPlot* plot = histogram->findChild<QCustomPlot*>();
        plot->replot();
        QVERIFY(plot->legend->visible());
        QVERIFY2(!plot->legend->outerRect().intersects(plot->axisRect()->rect()), "the legend sits on the bars");
        // "Created" shows its whole date (the year and the zone in its tooltip); the name column
        // gives way, a long name losing its middle, not the end that tells a run's models apart.
        QTreeWidget* tree = view.tree();
        QCOMPARE(tree->textElideMode(), Qt::ElideMiddle);
        QVERIFY(tree->topLevelItem(0)->toolTip(4).endsWith(QStringLiteral(" UTC")));
        QVERIFY(tree->topLevelItem(0)->toolTip(4).contains(tree->topLevelItem(0)->text(4)));
        QVERIFY(tree->topLevelItem(0)->toolTip(0).startsWith(QString::fromStdString(model.name)));
        const QString created = tree->topLevelItem(0)->text(4);
        const int needed = tree->fontMetrics().horizontalAdvance(created);
        QVERIFY2(tree->header()->sectionSize(4) >= needed,
                 qPrintable(QStringLiteral("%1 px for %2 px of text").arg(tree->header()->sectionSize(4)).arg(needed)));
        QVERIFY(tree->header()->sectionViewportPosition(4) + tree->header()->sectionSize(4) <= tree->viewport()->width());
        // A fine-tuned model's long name wraps at its spaces onto as many lines as it needs: read
        // whole, not "d2dpo …p 250".
        QTreeWidgetItem* child = tree->topLevelItem(0)->child(0);
        QVERIFY(child);
        QCOMPARE(child->text(0), QString::fromStdString(tuned.name));
        const QFontMetrics metrics = tree->fontMetrics();
        const int column = tree->header()->sectionSize(0) - tree->indentation();
        QVERIFY2(metrics.horizontalAdvance(child->text(0)) > column, "the test wants a name wider than its column");
        const QRect wrapped =
            metrics.boundingRect(QRect(0, 0, column - 8, 1000), Qt::TextWordWrap, child->text(0)); // 8: the margins
        QVERIFY2(tree->visualItemRect(child).height() >= wrapped.height(),
                 qPrintable(QStringLiteral("a row of %1 px for %2 px of wrapped name")
                                .arg(tree->visualItemRect(child).height())
                                .arg(wrapped.height())));
        // The figures' tabs (the per-position logos) get most of the height, the sample list a few
        // lines, with the boundary the user's to move.
        auto* figures = view.findChild<ui::ModelFigures*>();
        auto* samples = view.findChild<QPlainTextEdit*>(QStringLiteral("samples"));
        QVERIFY(figures && samples && view.findChild<QSplitter*>(QStringLiteral("figuresOverSamples")));
        qInfo("figures %d px over samples %d px", figures->height(), samples->height());
        QVERIFY2(figures->height() >= 5 * samples->height() / 2,
                 qPrintable(QStringLiteral("figures %1 px, samples %2 px").arg(figures->height()).arg(samples->height())));
        if (const QString folder = qEnvironmentVariable("D2DPO_SCREENSHOTS"); !folder.isEmpty())
            view.grab().save(folder + QStringLiteral("/models-long-names-1012x560.png"));
        // The tree's "Rule share" is named as such beside its metric in the details.
        QVERIFY2(view.detailsText().contains("rule share (odd_ratio)"), qPrintable(view.detailsText()));
    }

    void aCancelStopsTheReferenceDrawnAfterItsModel()
    {
        // A fine-tuned model is drawn, then its reference: the Cancel must reach the second draw too.
        const ModelRecord reference = storedTinyModel(24);
        test::TinyCheckpointOptions options;
        options.length = 24;
        options.parentId = reference.id;
        options.seed = 5;
        auto child = test::writeTinyCheckpoint(m_dir.filePath(QStringLiteral("child.d2dpo")).toStdString(), options);
        QVERIFY(child.ok());
        ModelRecord tuned = reference;
        tuned.id = child->id;
        tuned.parentId = reference.id;
        tuned.kind = "d2dpo";
        tuned.name = "tuned";
        tuned.path = child->path;
        tuned.createdAt = "2099-01-01T00:00:00.000Z"; // the newest: selected
        QVERIFY(m_store->addModel(tuned).ok());
        auto view = std::make_unique<ui::ModelsView>(*m_store);
        auto* cancel = view->findChild<QPushButton*>(QStringLiteral("cancelSampling"));
        view->setSampleCount(30000);
        view->show();
        QCOMPARE(view->selectedModelId(), QString::fromStdString(tuned.id));
        QTRY_VERIFY_WITH_TIMEOUT(view->summary(QString::fromStdString(tuned.id)).has_value(), 120000);
        QVERIFY(!view->summary(QString::fromStdString(reference.id))); // 30000 samples of 24: seconds
        QVERIFY2(cancel->isEnabled(), "the reference is being drawn: Cancel must stay on");
        cancel->click();
        QTRY_VERIFY_WITH_TIMEOUT(!cancel->isEnabled(), 60000);
        QVERIFY(!view->summary(QString::fromStdString(reference.id)));
        QElapsedTimer closing;
        closing.start();
        view.reset(); // nothing left running: the view goes at once
        qInfo("the view closed %lld ms after the cancel", closing.elapsed());
    }

    void anExportShowsItsProgressAndItsCancelWritesNothing()
    {
        const ModelRecord model = storedTinyModel();
        ui::ModelExporter exporter(*m_store);
        QSignalSpy finished(&exporter, &ui::ModelExporter::finished);
        const auto progressWindows = [] {
            QList<QProgressDialog*> found;
            for (QWidget* w : QApplication::topLevelWidgets())
                if (auto* dialog = qobject_cast<QProgressDialog*>(w); dialog && dialog->isVisible())
                    found << dialog;
            return found;
        };
        // Written whole: the progress window follows it and closes itself.
        const QString whole = m_dir.filePath(QStringLiteral("exported"));
        QVERIFY(exporter.start(model, whole));
        ui::showExportProgress(&exporter, nullptr, QStringLiteral("tiny"), whole);
        QCOMPARE(progressWindows().size(), 1);
        QVERIFY(finished.wait(60000));
        QVERIFY(finished.at(0).at(1).toBool());
        QVERIFY(QFile::exists(whole + QStringLiteral("/samples.txt")));
        QTRY_VERIFY(progressWindows().isEmpty());

        // Its Cancel, pressed before the draw: nothing is written, not even the folder. The long-job
        // pool is kept busy until then, so the export waits in line behind the press.
        QSemaphore release;
        const int threads = ui::longJobPool()->maxThreadCount();
        for (int i = 0; i < threads; ++i)
            ui::longJobPool()->start([&release] { release.acquire(); });
        const QString cancelled = m_dir.filePath(QStringLiteral("cancelled"));
        QVERIFY(exporter.start(model, cancelled));
        ui::showExportProgress(&exporter, nullptr, QStringLiteral("tiny"), cancelled);
        QCOMPARE(progressWindows().size(), 1);
        QPushButton* cancel = progressWindows().front()->findChild<QPushButton*>();
        QVERIFY(cancel);
        cancel->click();
        QVERIFY(progressWindows().front()->labelText().startsWith(QStringLiteral("Stopping")));
        release.release(threads);
        QVERIFY(finished.wait(60000));
        QVERIFY(!finished.at(1).at(1).toBool());
        QVERIFY(finished.at(1).at(3).toBool()); // cancelled, not failed
        QVERIFY(!QFileInfo::exists(cancelled));
        QTRY_VERIFY(progressWindows().isEmpty());
        QTRY_COMPARE(release.available(), 0); // every blocker let go
    }

    void anExportSkipsItsSamplesAndKeepsTheModelsFiles()
    {
        const ModelRecord model = storedTinyModel(40);
        ui::ModelExporter exporter(*m_store);
        QSignalSpy finished(&exporter, &ui::ModelExporter::finished);
        QSignalSpy planned(&exporter, &ui::ModelExporter::samplesPlanned);
        // Skip samples, pressed once the plan is said: the files stay, samples.txt is not written.
        const QString folder = m_dir.filePath(QStringLiteral("skipped"));
        connect(&exporter, &ui::ModelExporter::samplesPlanned, &exporter, [&exporter] { exporter.cancel(); });
        QVERIFY(exporter.start(model, folder, {100000, 0}));
        QVERIFY(finished.wait(60000));
        QCOMPARE(planned.size(), 1);
        QVERIFY(finished.at(0).at(1).toBool());
        QVERIFY(!finished.at(0).at(3).toBool());
        QCOMPARE(finished.at(0).at(4).toString(), QStringLiteral("samples skipped"));
        QVERIFY(QFile::exists(folder + QStringLiteral("/weights.pt")));
        QVERIFY(!QFile::exists(folder + QStringLiteral("/samples.txt")));
    }

    void theExportDialogSaysWhatComesAndKeepsItsSettings()
    {
        const ModelRecord model = storedTinyModel();
        {
            ui::ExportDialog dialog(model);
            auto* samples = dialog.findChild<QSpinBox*>(QStringLiteral("exportSamples"));
            auto* seconds = dialog.findChild<QSpinBox*>(QStringLiteral("exportSeconds"));
            auto* folder = dialog.findChild<QLineEdit*>(QStringLiteral("exportFolder"));
            auto* error = dialog.findChild<QLabel*>(QStringLiteral("exportError"));
            QVERIFY(samples && seconds && folder && error);
            QVERIFY(dialog.findChild<QLabel*>(QStringLiteral("exportPlan"))->text().contains(QStringLiteral("fast")));
            samples->setValue(7);
            seconds->setValue(12);
            folder->setText(QStringLiteral("relative/folder"));
            dialog.accept(); // refused beside the field, the dialog stays
            QVERIFY(!error->isHidden());
            QCOMPARE(dialog.result(), int(QDialog::Rejected));
            folder->setText(QString::fromStdString(model.path)); // the model's own file
            dialog.accept();
            QVERIFY(!error->isHidden());
            QVERIFY2(error->text().contains(QStringLiteral("export folder")), qPrintable(error->text()));
            dialog.reject(); // cancelled: what was set is kept
        }
        ui::ExportDialog again(model);
        QCOMPARE(again.samples().most, qint64(7));
        QCOMPARE(again.samples().seconds, 12.0);
        again.findChild<QLineEdit*>(QStringLiteral("exportFolder"))->setText(m_dir.filePath(QStringLiteral("new-export")));
        again.accept();
        QCOMPARE(again.result(), int(QDialog::Accepted));
    }
};

QTEST_MAIN(ModelsFaults)
#include "tst_modelsfaults.moc"
