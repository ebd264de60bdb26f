// SPDX-License-Identifier: GPL-3.0-or-later
// The desktop's measurements loop as a user walks it: a protein model pretrained by `d2dpo
// pretrain` into a store; a ProteinGym-layout file (mutant, mutated_sequence, DMS_score) imported
// in the Measurements view, its histogram and the pairs it makes; the same file again adds
// nothing, a bad file adds nothing and says its line, Undo takes an import out; the Train view
// trains on the assay's pairs (alone, and counted with labels); and the Models view scores the
// fine-tuned model and its reference on the held-out values.
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest/QtTest>

#include <random>

#include "store/preferencestore.h"
#include "support/clirun.h"
#include "ui/measurements/assayhistogram.h"
#include "ui/measurements/measurementsview.h"
#include "ui/measurements/pairspreview.h"
#include "ui/models/heldoutpanel.h"
#include "ui/models/modelfigures.h"
#include "ui/models/modelsview.h"
#include "ui/train/traindatapanel.h"
#include "ui/train/trainsettingsform.h"
#include "ui/train/trainview.h"

using namespace d2dpo;
using namespace d2dpo::ui;

namespace {

const QByteArray kWildType = "MKTAYIAKQRQI";

/// Every single mutant of the wild type to A, C, D or E at each position, valued -1 for D or E
/// and 0 otherwise, plus noise: 46 rows of ProteinGym's layout (the wild type holds A twice).
QByteArray proteinGymFile()
{
    std::mt19937_64 random(3);
    std::normal_distribution<double> noise(0.0, 0.05);
    QByteArray out = "mutant,mutated_sequence,DMS_score\n";
    for (int position = 0; position < kWildType.size(); ++position)
        for (char to : {'A', 'C', 'D', 'E'}) {
            if (kWildType[position] == to)
                continue;
            QByteArray mutated = kWildType;
            mutated[position] = to;
            const double score = (to == 'D' || to == 'E' ? -1.0 : 0.0) + noise(random);
            out += kWildType[position] + QByteArray::number(position + 1) + to + "," + mutated + "," +
                   QByteArray::number(score, 'g', 10) + "\n";
        }
    return out;
}

} // namespace

class TestMeasurementsView final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }
    QString m_db;
    QString m_model;

    void write(const QString& name, const QByteArray& bytes)
    {
        QFile f(path(name));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    }

    AssayImportSpec importOf(const QString& file) const
    {
        AssayImportSpec spec;
        spec.storePath = m_db.toStdString();
        spec.file = path(file).toStdString();
        spec.checkpoint = m_model.toStdString();
        spec.read.assay = "stability";
        spec.read.wildType = kWildType.toStdString();
        return spec;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("d2dpo-studio-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_measurementsview"));
        QVERIFY(m_dir.isValid());
        QByteArray family;
        std::mt19937_64 random(1);
        const QByteArray symbols = "ACDEKMQRTYI";
        for (int i = 0; i < 40; ++i) { // the wild type and near relatives
            QByteArray s = kWildType;
            s[int(random() % s.size())] = symbols[int(random() % symbols.size())];
            family += s + "\n";
        }
        write(QStringLiteral("family.txt"), family);
        write(QStringLiteral("dms.csv"), proteinGymFile());
        m_db = path(QStringLiteral("store.sqlite"));
        m_model = path(QStringLiteral("protein.d2dpo"));
        const auto pretrained = test::runCli({QStringLiteral("pretrain"), QStringLiteral("--data"), path(QStringLiteral("family.txt")),
                                              QStringLiteral("--vocabulary"), QStringLiteral("protein"),
                                              QStringLiteral("--d-model"), QStringLiteral("16"), QStringLiteral("--layers"),
                                              QStringLiteral("1"), QStringLiteral("--heads"), QStringLiteral("2"),
                                              QStringLiteral("--steps"), QStringLiteral("30"), QStringLiteral("--eval-samples"),
                                              QStringLiteral("20"), QStringLiteral("--threads"), QStringLiteral("1"),
                                              QStringLiteral("-o"), m_model, QStringLiteral("--db"), m_db});
        QVERIFY2(pretrained.exitCode == 0, qPrintable(pretrained.err));
    }

    void aProteinGymFileIsImportedShownPairedAndUndone()
    {
        auto store = PreferenceStore::open(m_db.toStdString(), PreferenceStore::OpenMode::MustExist);
        QVERIFY(store);
        MeasurementsView view(*store.value());
        // Every read is off the window's thread: the view fills when it lands.
        QTRY_VERIFY(view.statusText().contains(QStringLiteral("No measurements yet")));
        QCOMPARE(view.tree()->topLevelItemCount(), 0);
        QSignalSpy finished(&view, &MeasurementsView::importFinished);
        view.importFile(importOf(QStringLiteral("dms.csv")));
        QVERIFY(finished.wait(60000));
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QVERIFY2(view.statusText().contains(QStringLiteral("Imported 46 measurements of 46 sequences (proteingym)")),
                 qPrintable(view.statusText()));
        QTRY_COMPARE(view.tree()->topLevelItemCount(), 1);
        QCOMPARE(view.tree()->topLevelItem(0)->childCount(), 1);
        QTRY_VERIFY(view.histogram()->binCount() >= 5);
        // D and E lower the value by 1 against a noise of 0.05: every pair shown puts A or C first.
        QTRY_VERIFY2(view.pairsPreview()->pairCount() > 0, qPrintable(view.pairsPreview()->summary()));
        QTableWidget* pairs = view.pairsPreview()->table();
        for (int row = 0; row < pairs->rowCount(); ++row) {
            const QString better = pairs->item(row, 0)->text(), worse = pairs->item(row, 2)->text();
            const auto changed = [](const QString& s) {
                for (int i = 0; i < s.size(); ++i)
                    if (s[i] != QLatin1Char(kWildType[i]))
                        return s[i];
                return QChar();
            };
            QVERIFY2(QStringLiteral("AC").contains(changed(better)) || QStringLiteral("DE").contains(changed(worse)),
                     qPrintable(better + " over " + worse));
        }
        // The same file again: nothing added.
        view.importFile(importOf(QStringLiteral("dms.csv")));
        QVERIFY(finished.wait(60000));
        QVERIFY2(view.statusText().contains(QStringLiteral("already in the store")), qPrintable(view.statusText()));
        // A mutant that disagrees with the wild type: refused with its line, nothing stored.
        QByteArray bad = proteinGymFile();
        bad.replace("M1A,", "W1A,");
        write(QStringLiteral("bad.csv"), bad);
        view.importFile(importOf(QStringLiteral("bad.csv")));
        QVERIFY(finished.wait(60000));
        QVERIFY(!finished.last().at(0).toBool());
        QVERIFY2(view.statusText().contains(QStringLiteral("line 2")), qPrintable(view.statusText()));
        QCOMPARE(store.value()->assayImports().value().size(), size_t(1));
        // Undo takes the import out; importing again brings it back for the training below.
        QVERIFY(view.undoLastImport());
        QTRY_COMPARE(view.tree()->topLevelItemCount(), 0);
        QVERIFY(!view.undoLastImport());
        view.importFile(importOf(QStringLiteral("dms.csv")));
        QVERIFY(finished.wait(60000));
        QTRY_COMPARE(view.tree()->topLevelItemCount(), 1);
    }

    void theTrainViewTrainsOnTheAssayAndTheModelsViewScoresHeldOutValues()
    {
        auto store = PreferenceStore::open(m_db.toStdString(), PreferenceStore::OpenMode::MustExist);
        QVERIFY(store);
        TrainView view(*store.value());
        view.dataPanel()->useMeasurements(QStringLiteral("stability"));
        QVERIFY2(view.pairCount() > 0, qPrintable(view.dataPanel()->summary()));
        QVERIFY2(view.dataPanel()->summary().contains(QStringLiteral("measured pairs from")),
                 qPrintable(view.dataPanel()->summary()));
        QVERIFY2(view.dataPanel()->summary().contains(QStringLiteral("held out (random split)")),
                 qPrintable(view.dataPanel()->summary()));
        // Mixed with labels: none yet, so no pairs (a mixed run draws from both).
        view.dataPanel()->useMeasurements(QStringLiteral("stability"), true, 0.3);
        QCOMPARE(view.pairCount(), qint64(0));
        view.dataPanel()->useMeasurements(QStringLiteral("stability"), false);
        auto* form = view.settingsForm();
        const std::pair<const char*, const char*> values[] = {
            {"steps", "6"}, {"batch", "8"}, {"evalEvery", "6"}, {"evalSamples", "20"}, {"samplingSteps", "4"}};
        for (const auto& [field, text] : values)
            form->findChild<QLineEdit*>(QString::fromLatin1(field))->setText(QString::fromLatin1(text));
        form->findChild<QComboBox*>(QStringLiteral("device"))->setCurrentIndex(1); // CPU
        QSignalSpy finished(&view, &TrainView::runFinished);
        QVERIFY2(view.start(), qPrintable(view.logText()));
        QVERIFY(finished.wait(180000));
        QCOMPARE(finished.at(0).at(0).value<RunStatus>(), RunStatus::Completed);
        const auto runs = store.value()->runs().value();
        QCOMPARE(runs.size(), size_t(1));
        QVERIFY(runs[0].configJson.find("\"assay\":\"stability\"") != std::string::npos);

        ModelsView models(*store.value());
        QVERIFY(models.selectModel(QString::fromStdString(runs[0].resultModelId)));
        HeldOutPanel* heldOut = models.findChild<ModelFigures*>()->heldOut();
        QTRY_VERIFY2(heldOut->statusText().contains(QStringLiteral("Trained on 'stability' with 0.2 of it held out")),
                     qPrintable(heldOut->statusText()));
        QSignalSpy scored(heldOut, &HeldOutPanel::scored);
        heldOut->score();
        QVERIFY(scored.wait(120000));
        QVERIFY2(scored.at(0).at(0).toBool(), qPrintable(heldOut->statusText()));
        QCOMPARE(heldOut->table()->rowCount(), 3); // the bound before and after, and the reward
        QCOMPARE(heldOut->table()->item(0, 1)->text(), QStringLiteral("reference"));
        QCOMPARE(heldOut->table()->item(1, 1)->text(), QStringLiteral("fine-tuned"));
        QVERIFY(heldOut->table()->item(2, 0)->text().contains(QStringLiteral("implicit reward")));
        QVERIFY(heldOut->statusText().contains(QStringLiteral("held-out sequences")));
    }
};

QTEST_MAIN(TestMeasurementsView)
#include "tst_measurementsview.moc"
