// SPDX-License-Identifier: GPL-3.0-or-later
// File > Import model (TorchScript)...: a model made by Python's torch is brought in through the
// dialog in the background and added to the store; a state dict offered as TorchScript and a
// missing field are refused in the dialog, with nothing written; a sequences task without data
// takes its lengths from the dialog. With D2DPO_SCREENSHOTS=DIR set,
// the dialog is saved there as it looks after each step (for people to look at).
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "store/preferencestore.h"
#include "ui/importmodeldialog.h"

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
    }

    void aModelIsImportedInTheBackgroundAndStored()
    {
        const QString storePath = path("import.sqlite");
        ImportModelDialog dialog(storePath, path("imported"));
        dialog.resize(760, dialog.sizeHint().height());
        dialog.show();
        QVERIFY(!dialog.start());
        QVERIFY2(summary(dialog).contains("Choose the TorchScript model"), qPrintable(summary(dialog)));

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
        snapshot(dialog, "import-without-data");
        QVERIFY(dialog.start());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.busy(), 120000);
        QVERIFY2(imported.count() == 2, qPrintable(dialog.lastError()));
        const auto both = store.value()->models().value();
        QCOMPARE(both.size(), size_t(2));
        const QString spec = QString::fromStdString(both[1].specJson);
        QVERIFY2(spec.contains("\"name\":\"sequences\"") && spec.contains("\"length\":12"), qPrintable(spec));
    }
};

QTEST_MAIN(TestImportModelDialog)
#include "tst_importmodeldialog.moc"
