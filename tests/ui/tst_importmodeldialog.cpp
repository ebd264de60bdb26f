// SPDX-License-Identifier: GPL-3.0-or-later
// File > Import model...: a model made by Python's torch is brought in through the
// dialog in the background and added to the store; a state dict offered as TorchScript and a
// missing field are refused in the dialog, with nothing written; a sequences task without data
// takes its lengths from the dialog. The dialog says when it measures the model, and a Cancel
// then writes and adds nothing. The vocabulary file beside a model is proposed, and the window
// keeps the dialog with what was typed across Cancel. With D2DPO_SCREENSHOTS=DIR set,
// the dialog is saved there as it looks after each step (for people to look at).
#include <QAction>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "store/preferencestore.h"
#include "ui/models/newmodel/importmodeldialog.h"
#include "ui/shell/mainwindow.h"
#include "ui/train/trainworker.h"

using namespace d2dpo;
using namespace d2dpo::ui;

class TestImportModelDialog final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }

    static void snapshot(QWidget& widget, const QString& name)
    {
        const QString folder = qEnvironmentVariable("D2DPO_SCREENSHOTS");
        if (!folder.isEmpty())
            widget.grab().save(folder + QLatin1Char('/') + name + QStringLiteral(".png"));
    }

    static QString summary(const ImportModelDialog& dialog)
    {
        return dialog.findChild<QLabel*>(QStringLiteral("summary"))->text();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        if (QProcess::execute(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QStringLiteral("import torch")}) != 0)
            QSKIP("/usr/bin/python3 with torch (Debian's python3-torch) is not installed");
        QCOMPARE(QProcess::execute(QStringLiteral("/usr/bin/python3"),
                                   {QStringLiteral(D2DPO_SOURCE_DIR "/tests/python/make_bad_inputs.py"), path("models")}),
                 0);
        // A model slow enough that its measurement takes several sampler batches of about a
        // second each (64 positions, one per pass): a Cancel comes while it draws.
        const QString slow = QStringLiteral(
            "import sys, torch, torch.nn as nn\n"
            "class Slow(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.embed = nn.Embedding(3, 64)\n"
            "        self.mix = nn.Linear(64, 64)\n"
            "        self.head = nn.Linear(64, 3)\n"
            "    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:\n"
            "        h = self.embed(tokens) + t[:, None, None]\n"
            "        for _ in range(4):\n"
            "            h = torch.tanh(self.mix(h))\n"
            "        return self.head(h)\n"
            "torch.manual_seed(0)\n"
            "torch.jit.script(Slow()).save(sys.argv[1])\n");
        QFile script(path("models/make_slow.py")); // torch.jit.script reads the class's source from its file
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write(slow.toUtf8());
        script.close();
        QCOMPARE(QProcess::execute(QStringLiteral("/usr/bin/python3"), {script.fileName(), path("models/slow.pt")}), 0);
    }

    void aModelIsImportedInTheBackgroundAndStored()
    {
        const QString storePath = path("import.sqlite");
        ImportModelDialog dialog(storePath, path("imported"));
        dialog.resize(760, dialog.sizeHint().height());
        dialog.show();
        QVERIFY(!dialog.start());
        QVERIFY2(summary(dialog).contains("Choose the model"), qPrintable(summary(dialog)));

        // A state dict is not TorchScript: refused in the dialog, nothing written.
        dialog.setTorchScriptFile(path("models/state-dict.pt"));
        dialog.setVocabularyFile(path("models/tiny.vocab.json"));
        dialog.setTask(QStringLiteral("binary-integers"));
        QVERIFY(!dialog.findChild<QLineEdit*>(QStringLiteral("dataFile"))->isEnabled());
        QSignalSpy imported(&dialog, &ImportModelDialog::modelImported);
        QVERIFY(dialog.start());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.busy(), 60000);
        QVERIFY2(dialog.lastError().contains("a torch.save file"), qPrintable(dialog.lastError()));
        QCOMPARE(imported.count(), 0);
        QVERIFY(!QFile::exists(dialog.createdCheckpoint()));
        snapshot(dialog, "import-refused");

        dialog.setTorchScriptFile(path("models/tiny.pt"));
        dialog.findChild<QLineEdit*>(QStringLiteral("rule"))->setText(QStringLiteral("odd"));
        QVERIFY(dialog.start());
        QVERIFY(imported.wait(120000));
        QVERIFY(QFile::exists(dialog.createdCheckpoint()));
        auto store = PreferenceStore::open(storePath.toStdString());
        QVERIFY(store.ok());
        const auto models = store.value()->models().value();
        QCOMPARE(models.size(), size_t(1));
        QCOMPARE(models[0].name, std::string("tiny (imported)"));
        QVERIFY(QString::fromStdString(models[0].specJson).contains("torchscript"));
        // Measured on as many samples as fit the time (Auto): its figures are said, and whether it
        // can be labelled.
        QVERIFY2(dialog.madeFigures().contains(QStringLiteral("VSR")) && dialog.madeFigures().contains(" samples"),
                 qPrintable(dialog.madeFigures()));
        QCOMPARE(dialog.madeTooWeak(), summary(dialog).contains(QStringLiteral("Too weak to label")));

        // A sequences task without a data file: its lengths come from the dialog, and only
        // well-formedness can be checked.
        dialog.setTask(QStringLiteral("sequences"));
        dialog.setDataFile(QString());
        auto* longest = dialog.findChild<QSpinBox*>(QStringLiteral("longest"));
        QVERIFY(longest->isEnabled() && dialog.findChild<QSpinBox*>(QStringLiteral("shortest"))->isEnabled());
        dialog.setDataFile(path("somewhere.fasta"));
        QVERIFY(!longest->isEnabled());
        dialog.setDataFile(QString());
        longest->setValue(12);
        dialog.findChild<QLineEdit*>(QStringLiteral("rule"))->setText(QStringLiteral("motif:1$"));
        dialog.setEvaluationSamples(0); // not measured: nothing drawn, no figures
        snapshot(dialog, "import-without-data");
        QVERIFY(dialog.start());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.busy(), 120000);
        QVERIFY2(imported.count() == 2, qPrintable(dialog.lastError()));
        const auto both = store.value()->models().value();
        QCOMPARE(both.size(), size_t(2));
        const QString spec = QString::fromStdString(both[1].specJson);
        QVERIFY2(spec.contains("\"name\":\"sequences\"") && spec.contains("\"length\":12"), qPrintable(spec));
        QVERIFY(dialog.madeFigures().isEmpty());
        QVERIFY2(!QString::fromStdString(both[1].metricsJson).contains("vsr"), both[1].metricsJson.c_str());
    }

    /// Published ESM2 weights (a folder written in transformers' layout by the Python reference):
    /// the dialog names the architecture before anything runs, needs no vocabulary file, and
    /// imports the network as data into the store; a config of another model is named as such.
    void publishedWeightsAreRecognisedAndImported()
    {
        const QString weights = path("esm2-8m");
        QCOMPARE(QProcess::execute(QStringLiteral("/usr/bin/python3"),
                                   {QStringLiteral(D2DPO_SOURCE_DIR "/python/esm_published.py"), QStringLiteral("write"),
                                    weights, QStringLiteral("--size"), QStringLiteral("8M")}),
                 0);
        const QString storePath = path("weights.sqlite");
        ImportModelDialog dialog(storePath, path("imported-weights"));
        dialog.resize(760, dialog.sizeHint().height());
        dialog.show();
        auto* recognised = dialog.findChild<QLabel*>(QStringLiteral("recognised"));
        dialog.setModelPath(weights);
        QVERIFY2(recognised->text().contains(QStringLiteral("ESM2: 6 layers of width 320, 20 heads")),
                 qPrintable(recognised->text()));
        dialog.setModelPath(path("models/tiny.pt")); // TorchScript: nothing to name
        QVERIFY(recognised->text().isEmpty());
        dialog.setModelPath(weights + QStringLiteral("/model.safetensors"));
        QVERIFY(recognised->text().contains(QStringLiteral("ESM2")));
        dialog.setModelPath(weights);
        dialog.setTask(QStringLiteral("sequences"));
        dialog.setDataFile(QString());
        dialog.findChild<QSpinBox*>(QStringLiteral("longest"))->setValue(40);
        dialog.findChild<QSpinBox*>(QStringLiteral("shortest"))->setValue(40);
        dialog.findChild<QLineEdit*>(QStringLiteral("rule"))->setText(QStringLiteral("composition:KR"));
        dialog.setEvaluationSamples(20);
        snapshot(dialog, "import-published-weights");
        QSignalSpy imported(&dialog, &ImportModelDialog::modelImported);
        QVERIFY(dialog.start());
        QVERIFY2(imported.wait(120000), qPrintable(dialog.lastError()));
        QVERIFY(QFile::exists(dialog.createdCheckpoint()));
        QVERIFY2(dialog.createdCheckpoint().contains(QStringLiteral("esm2-8m")), qPrintable(dialog.createdCheckpoint()));
        auto store = PreferenceStore::open(storePath.toStdString());
        QVERIFY(store.ok());
        const auto models = store.value()->models().value();
        QCOMPARE(models.size(), size_t(1));
        const QString spec = QString::fromStdString(models[0].specJson);
        QVERIFY2(spec.contains("\"kind\":\"esm\"") && spec.contains("\"architecture\":\"ESM2\"") &&
                     spec.contains("\"length\":40"),
                 qPrintable(spec.left(400)));
        QVERIFY2(dialog.madeFigures().contains(QStringLiteral("VSR")), qPrintable(dialog.madeFigures()));

        // Another model's config is named as not readable here, before anything runs.
        const QString bert = path("bert");
        QDir().mkpath(bert);
        QFile config(bert + QStringLiteral("/config.json"));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(R"({"model_type": "bert"})");
        config.close();
        dialog.setModelPath(bert);
        QVERIFY2(recognised->text().contains(QStringLiteral("TorchScript")), qPrintable(recognised->text()));

        // MDLM's DiT is named with its blocks and its time conditioning.
        const QString mdlm = path("mdlm");
        QCOMPARE(QProcess::execute(QStringLiteral("/usr/bin/python3"),
                                   {QStringLiteral(D2DPO_SOURCE_DIR "/python/mdlm_published.py"), QStringLiteral("write"),
                                    mdlm, QStringLiteral("--size"), QStringLiteral("tiny")}),
                 0);
        dialog.setModelPath(mdlm);
        QVERIFY2(recognised->text().contains(QStringLiteral("MDLM: 2 blocks of width 64, 4 heads")) &&
                     recognised->text().contains(QStringLiteral("time conditioning off")),
                 qPrintable(recognised->text()));
        snapshot(dialog, "import-mdlm-weights");
    }

    void theMeasurementIsSaidAndACancelThenWritesNothing()
    {
        const QString storePath = path("cancel.sqlite");
        ImportModelDialog dialog(storePath, path("cancelled"));
        dialog.setTorchScriptFile(path("models/slow.pt"));
        dialog.setVocabularyFile(path("models/tiny.vocab.json"));
        dialog.setTask(QStringLiteral("sequences"));
        dialog.setDataFile(QString());
        dialog.findChild<QSpinBox*>(QStringLiteral("longest"))->setValue(64);
        auto* runner = dialog.findChild<TrainRunner*>();
        QVERIFY(runner);
        auto* phase = dialog.findChild<QLabel*>(QStringLiteral("phase"));
        QVERIFY(phase);
        // Every text the phase label shows, as it changes; on the measurement's first word, Cancel
        // (the dialog's own slots have run by then: they were connected first).
        QStringList phases;
        bool cancelled = false;
        const auto record = [&] {
            if (phases.isEmpty() || phases.last() != phase->text())
                phases << phase->text();
            if (!cancelled && phase->text().contains(QStringLiteral("valuating"))) {
                cancelled = true;
                snapshot(dialog, "import-evaluating");
                dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Cancel)->click();
            }
        };
        connect(runner, &TrainRunner::logLine, &dialog, record);
        connect(runner, &TrainRunner::progress, &dialog, record);
        QSignalSpy imported(&dialog, &ImportModelDialog::modelImported);
        QVERIFY(dialog.start());
        record(); // the first phase, said as the job starts
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.busy(), 120000);
        const QString said = phases.join(QLatin1Char('\n'));
        QVERIFY2(cancelled, qPrintable(said));
        QVERIFY2(phases.first().contains(QStringLiteral("Checking")), qPrintable(said));
        QVERIFY2(said.contains(QStringLiteral("samples")), qPrintable(said));
        QCOMPARE(imported.count(), 0);
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        QVERIFY2(dialog.lastError().isEmpty(), qPrintable(dialog.lastError()));
        auto store = PreferenceStore::open(storePath.toStdString());
        QVERIFY(store.ok());
        QCOMPARE(store.value()->models().value().size(), size_t(0));
        QVERIFY(!dialog.createdCheckpoint().isEmpty());
        QVERIFY2(!QFile::exists(dialog.createdCheckpoint()), qPrintable(dialog.createdCheckpoint()));
    }

    void theVocabularyBesideTheModelIsProposedNeverOverWhatWasTyped()
    {
        QVERIFY(QDir().mkpath(path("beside")));
        for (const char* name : {"beside/esm.pt", "beside/esm.vocab.json", "beside/other.pt"}) {
            QFile file(path(QString::fromLatin1(name)));
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("x");
        }
        ImportModelDialog dialog(path("beside.sqlite"), path("beside-models"));
        auto* vocabulary = dialog.findChild<QLineEdit*>(QStringLiteral("vocabularyFile"));
        QVERIFY(vocabulary);
        dialog.setModelPath(path("beside/esm.pt"));
        QCOMPARE(vocabulary->text(), path("beside/esm.vocab.json"));
        dialog.setModelPath(path("beside/other.pt")); // none beside this one: the proposal goes
        QCOMPARE(vocabulary->text(), QString());
        vocabulary->setText(path("mine.json"));
        dialog.setModelPath(path("beside/esm.pt"));
        QCOMPARE(vocabulary->text(), path("mine.json")); // typed by the user: kept
    }

    void theWindowKeepsTheDialogWithWhatWasTypedAcrossCancel()
    {
        auto store = PreferenceStore::open(path("kept.sqlite").toStdString());
        QVERIFY(store.ok());
        MainWindow window(std::move(store.value()));
        QAction* import = nullptr;
        for (QAction* action : window.findChildren<QAction*>())
            if (action->text().remove(QLatin1Char('&')).startsWith(QStringLiteral("Import model")))
                import = action;
        QVERIFY(import);
        import->trigger();
        QPointer<ImportModelDialog> dialog = window.findChild<ImportModelDialog*>();
        QVERIFY(dialog);
        dialog->findChild<QLineEdit*>(QStringLiteral("rule"))->setText(QStringLiteral("motif:^M"));
        dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Cancel)->click();
        QVERIFY(!dialog->isVisible());
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        import->trigger();
        QVERIFY(dialog); // the same dialog, with what was typed
        QVERIFY(dialog->isVisible());
        QCOMPARE(dialog->findChild<QLineEdit*>(QStringLiteral("rule"))->text(), QStringLiteral("motif:^M"));
        QCOMPARE(window.findChildren<ImportModelDialog*>().size(), qsizetype(1));
        dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Cancel)->click();
    }

    void aCancelWhileTheModelIsWrittenSaysItIsKept()
    {
        const QString storePath = path("late-cancel.sqlite");
        ImportModelDialog dialog(storePath, path("late"));
        dialog.setTorchScriptFile(path("models/tiny.pt"));
        dialog.setVocabularyFile(path("models/tiny.vocab.json"));
        dialog.setTask(QStringLiteral("binary-integers"));
        auto* runner = dialog.findChild<TrainRunner*>();
        auto* phase = dialog.findChild<QLabel*>(QStringLiteral("phase"));
        QVERIFY(runner && phase);
        // Cancel as the write begins (the dialog's own slot has said "Writing" by then).
        QString said;
        const auto cancelWhileWriting = [&] {
            if (said.isEmpty() && phase->text().contains(QStringLiteral("Writing"))) {
                dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Cancel)->click();
                said = phase->text();
            }
        };
        connect(runner, &TrainRunner::logLine, &dialog, cancelWhileWriting);
        QSignalSpy imported(&dialog, &ImportModelDialog::modelImported);
        QVERIFY(dialog.start());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.busy(), 120000);
        QVERIFY2(said.contains(QStringLiteral("Too late to cancel")) && said.contains(QStringLiteral("is kept")),
                 qPrintable(said));
        QCOMPARE(imported.count(), 1); // kept, and announced as any model made
        // Closed as any import is, unless its figures call it too weak to label (random weights
        // may): then it stays open on that advice.
        QCOMPARE(dialog.result(), dialog.madeTooWeak() ? 0 : int(QDialog::Accepted));
        QVERIFY(QFile::exists(dialog.createdCheckpoint()));
    }
};

QTEST_MAIN(TestImportModelDialog)
#include "tst_importmodeldialog.moc"
