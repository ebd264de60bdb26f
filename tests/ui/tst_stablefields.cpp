// SPDX-License-Identifier: GPL-3.0-or-later
// Fields stay under the pointer (issue 27): no input field of "New model from a data file…" moves
// when the file's summary (or its error) appears, and none of the Train view moves when a labeler
// is ticked; the pretraining dialog says when it evaluates, and a Cancel then ends the job with
// nothing added to the store.
#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMap>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "support/referencestore.h"
#include "support/testsupport.h"
#include "support/tinycheckpoint.h"

#include "store/preferencestore.h"
#include "ui/models/newmodel/datamodeldialog.h"
#include "ui/train/traindatapanel.h"
#include "ui/train/trainview.h"
#include "ui/train/trainworker.h"

using namespace d2dpo;
using namespace d2dpo::ui;

namespace {

/// Where each visible input field of `top` is, in `top`'s coordinates, by a name that tells them apart.
QMap<QString, QRect> fieldPlaces(QWidget* top)
{
    QMap<QString, QRect> places;
    int unnamed = 0;
    for (QWidget* w : top->findChildren<QWidget*>()) {
        const bool input = qobject_cast<QLineEdit*>(w) || qobject_cast<QComboBox*>(w) ||
                           qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QAbstractButton*>(w) ||
                           qobject_cast<QListWidget*>(w);
        if (!input || !w->isVisibleTo(top) || qobject_cast<QLineEdit*>(w->parentWidget()) ||
            qobject_cast<QAbstractSpinBox*>(w->parentWidget()) || qobject_cast<QComboBox*>(w->parentWidget()))
            continue; // a spin box's or combo box's own line edit moves with it
        QString name = w->objectName();
        if (auto* button = qobject_cast<QAbstractButton*>(w); button && name.isEmpty())
            name = button->text();
        if (name.isEmpty())
            name = QStringLiteral("%1#%2").arg(QString::fromLatin1(w->metaObject()->className())).arg(++unnamed);
        places.insert(name, QRect(w->mapTo(top, QPoint(0, 0)), w->size()));
    }
    return places;
}

/// Lets posted layout requests run, as the event loop does before the next paint.
void settle()
{
    for (int i = 0; i < 3; ++i) {
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
    }
}

/// Long sequences (like the globins, 150 residues) from a fixed pattern: `count` of them.
void writeProteins(const QString& path, int count, int length)
{
    static const char residues[] = "ACDEFGHIKLMNPQRSTVWY";
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    for (int i = 0; i < count; ++i) {
        QByteArray sequence;
        for (int j = 0; j < length - (i % 3); ++j)
            sequence += residues[(i * 7 + j * 3 + (j * j) % 5) % 20];
        file.write(">seq" + QByteArray::number(i) + " a made-up protein\n" + sequence + "\n");
    }
}

} // namespace

class TestStableFields final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    test::TinyCheckpoint m_reference; ///< a tiny untrained binary-integers model (N = 10)

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings go to a test location
        QCoreApplication::setOrganizationName(QStringLiteral("d2dpo-studio-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_stablefields"));
        QVERIFY(m_dir.isValid());
        test::TinyCheckpointOptions tiny;
        tiny.length = 10;
        auto written = test::writeTinyCheckpoint(m_dir.filePath(QStringLiteral("tiny.d2dpo")).toStdString(), tiny);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
        m_reference = written.value();
    }

    void readingADataFileMovesNoField()
    {
        const QString proteins = m_dir.filePath(QStringLiteral("proteins.fa"));
        writeProteins(proteins, 45, 150);
        const QString broken = m_dir.filePath(QStringLiteral("broken.fa"));
        {
            QFile file(broken);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(">a\nACDE\n>b\n\n>c\nAC!!DE\n");
        }
        DataModelDialog dialog(m_dir.filePath(QStringLiteral("fields.sqlite")),
                               m_dir.filePath(QStringLiteral("fields")));
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        settle();
        const QMap<QString, QRect> before = fieldPlaces(&dialog);
        QVERIFY(before.contains(QStringLiteral("dataFile")) && before.contains(QStringLiteral("createButton")));
        auto* summary = dialog.findChild<QLabel*>(QStringLiteral("summary"));
        const QString first = summary->text();
        for (const QString& file : {proteins, broken, proteins}) {
            dialog.setDataFile(file);
            settle();
            QVERIFY2(summary->text() != first, qPrintable(summary->text())); // something was said
            const QMap<QString, QRect> after = fieldPlaces(&dialog);
            QCOMPARE(after.keys(), before.keys());
            for (auto it = before.begin(); it != before.end(); ++it)
                QVERIFY2(after.value(it.key()) == it.value(),
                         qPrintable(QStringLiteral("%1 moved from %2,%3 %4x%5 to %6,%7 %8x%9 (summary: %10)")
                                        .arg(it.key())
                                        .arg(it.value().x()).arg(it.value().y())
                                        .arg(it.value().width()).arg(it.value().height())
                                        .arg(after.value(it.key()).x()).arg(after.value(it.key()).y())
                                        .arg(after.value(it.key()).width()).arg(after.value(it.key()).height())
                                        .arg(summary->text())));
        }
    }

    void tickingALabelerMovesNoField()
    {
        auto store =
            test::storeWithReference(m_dir.filePath(QStringLiteral("labels.sqlite")).toStdString(), m_reference);
        QVERIFY(store);
        const std::string id = m_reference.id;
        auto ids = store->addPairs({{0, "1110000000", "1100000000", id, id, "binary-integers:10"},
                                    {0, "1000000000", "1111000000", id, id, "binary-integers:10"},
                                    {0, "1111100000", "1111110000", id, id, "binary-integers:10"}},
                                   "generated");
        QVERIFY(ids.ok());
        QVERIFY(store->addLabel(ids.value()[0], Choice::Left, "expert", 900).ok());
        QVERIFY(store->addLabel(ids.value()[1], Choice::Right, "second opinion", 900).ok());
        QVERIFY(store->addLabel(ids.value()[2], Choice::Left, "rule:odd", 900).ok());
        for (const QSize size : {QSize(1024, 640), QSize(1280, 800)}) {
            TrainView view(*store);
            view.resize(size);
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            settle();
            auto* panel = view.findChild<TrainDataPanel*>();
            QVERIFY(panel);
            const QMap<QString, QRect> before = fieldPlaces(&view);
            QVERIFY(before.contains(QStringLiteral("labelers")) && before.contains(QStringLiteral("start")));
            // Each tick changes what the summary says (its length too, down to "no decisive labels"
            // with none ticked): none may move a field.
            const std::pair<const char*, bool> ticks[] = {{"rule:odd", true},
                                                          {"expert", false},
                                                          {"second opinion", false},
                                                          {"rule:odd", false},
                                                          {"expert", true}};
            QStringList said;
            for (const auto& [labeler, chosen] : ticks) {
                QVERIFY(panel->setLabelerChosen(QString::fromLatin1(labeler), chosen));
                settle();
                said << panel->summary();
                const QMap<QString, QRect> after = fieldPlaces(&view);
                QCOMPARE(after.keys(), before.keys());
                for (auto it = before.begin(); it != before.end(); ++it)
                    QVERIFY2(after.value(it.key()) == it.value(),
                             qPrintable(QStringLiteral("%1 moved at %2x%3 (summary: %4)")
                                            .arg(it.key()).arg(size.width()).arg(size.height())
                                            .arg(panel->summary())));
            }
            said.removeDuplicates();
            QVERIFY2(said.size() >= 3, qPrintable(said.join(QLatin1Char('\n')))); // the summary did change
        }
    }

    void theEvaluationIsSaidAndACancelThenAddsNothing()
    {
        const QString proteins = m_dir.filePath(QStringLiteral("short-proteins.fa"));
        writeProteins(proteins, 12, 48);
        const QString storePath = m_dir.filePath(QStringLiteral("cancel.sqlite"));
        DataModelDialog dialog(storePath, m_dir.filePath(QStringLiteral("cancel-models")));
        dialog.setDataFile(proteins);
        dialog.findChild<QSpinBox*>()->setValue(10);
        auto* runner = dialog.findChild<TrainRunner*>();
        QVERIFY(runner);
        auto* phase = dialog.findChild<QLabel*>(QStringLiteral("phase"));
        QVERIFY(phase);
        // Every text the phase label shows, as it changes; on the evaluation's first word, Cancel
        // (the dialog's own slot has run by then: it was connected first).
        QStringList phases;
        bool cancelled = false;
        const auto record = [&] {
            if (phases.isEmpty() || phases.last() != phase->text())
                phases << phase->text();
            if (!cancelled && phase->text().contains(QStringLiteral("valuating"))) {
                cancelled = true;
                dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Cancel)->click();
            }
        };
        connect(runner, &TrainRunner::logLine, &dialog, record);
        connect(runner, &TrainRunner::progress, &dialog, record);
        QSignalSpy created(&dialog, &DataModelDialog::modelCreated);
        QVERIFY(dialog.start());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.busy(), 120000);
        const QString said = phases.join(QLatin1Char('\n'));
        QVERIFY2(cancelled, qPrintable(said));
        QVERIFY2(phases.first().contains(QStringLiteral("Pretraining")), qPrintable(said));
        QVERIFY2(said.contains(QStringLiteral("samples")), qPrintable(said));
        QCOMPARE(created.size(), 0);
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        auto store = PreferenceStore::open(storePath.toStdString());
        QVERIFY(store.ok());
        QCOMPARE(store.value()->models().value().size(), size_t(0));
        QVERIFY(!QFile::exists(dialog.createdCheckpoint()));
    }

    void aModelTooWeakToLabelIsSaidAndItsFieldsAreKept()
    {
        // Ten pretraining steps on 12 proteins, a valid sample being one of them: nothing it writes is.
        const QString proteins = m_dir.filePath(QStringLiteral("weak-proteins.fa"));
        writeProteins(proteins, 12, 48);
        const QString storePath = m_dir.filePath(QStringLiteral("weak.sqlite"));
        {
            DataModelDialog dialog(storePath, m_dir.filePath(QStringLiteral("weak-models")));
            dialog.setDataFile(proteins);
            dialog.findChild<QSpinBox*>()->setValue(10);
            dialog.findChild<QLineEdit*>(QStringLiteral("rule"))->setText(QStringLiteral("motif:^M"));
            dialog.findChildren<QComboBox*>().at(1)->setCurrentIndex(1); // the validity: in-data
            QSignalSpy created(&dialog, &DataModelDialog::modelCreated);
            dialog.show();
            QVERIFY(dialog.start());
            QTRY_VERIFY_WITH_TIMEOUT(!dialog.busy(), 120000);
            QCOMPARE(created.count(), 1); // it is made and stored all the same
            const QString summary = dialog.findChild<QLabel*>(QStringLiteral("summary"))->text();
            QVERIFY2(dialog.madeTooWeak(), qPrintable(summary));
            QVERIFY2(summary.contains(QStringLiteral("Too weak to label")) && summary.contains(QStringLiteral("VSR")) &&
                         summary.contains(QStringLiteral("more steps")),
                     qPrintable(summary));
            // The dialog stays open on the advice: Create is off, Cancel reads Close.
            QVERIFY(dialog.isVisible());
            QCOMPARE(dialog.result(), 0);
            auto* buttons = dialog.findChild<QDialogButtonBox*>();
            QCOMPARE(buttons->button(QDialogButtonBox::Cancel)->text(), QStringLiteral("Close"));
            QVERIFY(!dialog.findChild<QPushButton*>(QStringLiteral("createButton"))->isEnabled());
            buttons->button(QDialogButtonBox::Cancel)->click();
            QVERIFY(!dialog.isVisible());
        }
        // A new dialog starts from the fields the last one used.
        DataModelDialog again(storePath, m_dir.filePath(QStringLiteral("weak-models")));
        QCOMPARE(again.findChild<QLineEdit*>(QStringLiteral("dataFile"))->text(), proteins);
        QCOMPARE(again.findChild<QLineEdit*>(QStringLiteral("rule"))->text(), QStringLiteral("motif:^M"));
        QCOMPARE(again.findChild<QSpinBox*>()->value(), 10);
        QCOMPARE(again.findChildren<QComboBox*>().at(1)->currentData().toString(), QStringLiteral("in-data"));
        QVERIFY2(again.findChild<QLabel*>(QStringLiteral("summary"))->text().contains(QStringLiteral("12 sequences")),
                 qPrintable(again.findChild<QLabel*>(QStringLiteral("summary"))->text()));
    }
};

QTEST_MAIN(TestStableFields)
#include "tst_stablefields.moc"
