// SPDX-License-Identifier: GPL-3.0-or-later
// Settings ▸ Labeling queue…: the dialog shows the store's queue settings and writes the edited
// ones (a second open of the file reads them back); its fields hold no value the store refuses
// and ignore the wheel unless focused; with least sure first chosen in the main window's dialog,
// the Label view hands out the pairs after the one on screen by smallest |margin|, unscored last.
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QWheelEvent>
#include <QtTest/QtTest>

#include "store/preferencestore.h"
#include "ui/label/labelview.h"
#include "ui/shell/mainwindow.h"
#include "ui/label/queuesettingsdialog.h"

using namespace d2dpo;
using namespace d2dpo::ui;

class TestQueueSettingsDialog final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_stores = 0;

    /// A new store file with five pending binary-integers:4 pairs; their ids, oldest first.
    std::pair<std::unique_ptr<PreferenceStore>, std::vector<int64_t>> storeWithPairs()
    {
        auto store = std::move(
            PreferenceStore::open(m_dir.filePath(QStringLiteral("q%1.sqlite").arg(++m_stores)).toStdString()).value());
        std::vector<ShownPair> pairs;
        const char* sequences[][2] = {{"0001", "1000"}, {"0010", "0110"}, {"0011", "1001"}, {"0101", "1111"},
                                      {"0111", "1110"}};
        for (const auto& [a, b] : sequences)
            pairs.push_back({0, a, b, "", "", "binary-integers:4"});
        auto ids = store->addPairs(pairs, "generated").value();
        return {std::move(store), ids};
    }

    template <typename Field>
    static Field* field(QWidget& dialog, const char* name)
    {
        return dialog.findChild<Field*>(QString::fromLatin1(name));
    }

    static void clickOk(QDialog& dialog)
    {
        dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
    }

    /// A wheel notch up over `target`, as the mouse sends it.
    static void wheelUp(QWidget* target)
    {
        const QPointF at(target->width() / 2.0, target->height() / 2.0);
        QWheelEvent wheel(at, target->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(target, &wheel);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
    }

    void showsTheStoresSettingsAndWritesTheEditedOnes()
    {
        auto [store, ids] = storeWithPairs();
        QVERIFY(store->setQueueSettings({3, 0.2, QueueOrder::LeastSure, 90}).ok());
        QVERIFY(store->setPairMargins({{ids[1], 0.4}, {ids[3], -1.5}}, "m").ok());
        QueueSettingsDialog dialog(*store);
        QCOMPARE(field<QSpinBox>(dialog, "overlap")->value(), 3);
        QCOMPARE(field<QSpinBox>(dialog, "leaseSeconds")->value(), 90);
        QCOMPARE(field<QDoubleSpinBox>(dialog, "goldPercent")->value(), 20.0);
        QCOMPARE(field<QComboBox>(dialog, "order")->currentText(), QStringLiteral("Least sure first"));
        const QString margins = field<QLabel>(dialog, "margins")->text();
        QVERIFY2(margins.contains(QStringLiteral("2 of the 5 pending pairs have a margin")), qPrintable(margins));
        QVERIFY2(margins.contains(QStringLiteral("d2dpo prefs score")), qPrintable(margins));

        QSignalSpy changed(&dialog, &QueueSettingsDialog::queueChanged);
        field<QSpinBox>(dialog, "overlap")->setValue(2);
        field<QDoubleSpinBox>(dialog, "goldPercent")->setValue(5);
        field<QComboBox>(dialog, "order")->setCurrentIndex(0);
        field<QSpinBox>(dialog, "leaseSeconds")->setValue(1800);
        clickOk(dialog);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(changed.count(), 1);

        auto again = PreferenceStore::open(store->path(), PreferenceStore::OpenMode::MustExist);
        QVERIFY(again);
        const QueueSettings read = again.value()->queueSettings().value();
        QCOMPARE(read.overlap, 2);
        QVERIFY2(qFuzzyCompare(read.goldRate, 0.05), qPrintable(QString::number(read.goldRate)));
        QCOMPARE(read.order, QueueOrder::Oldest);
        QCOMPARE(read.leaseSeconds, 1800);
    }

    void anUneditedDialogChangesNothing()
    {
        auto [store, ids] = storeWithPairs();
        QVERIFY(store->setQueueSettings({2, 0.1234, QueueOrder::Oldest, 45}).ok()); // finer than the field shows
        QueueSettingsDialog dialog(*store);
        QSignalSpy changed(&dialog, &QueueSettingsDialog::queueChanged);
        clickOk(dialog);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(changed.count(), 0);
        QCOMPARE(store->queueSettings().value().goldRate, 0.1234);
        QCOMPARE(store->queueSettings().value().leaseSeconds, 45);
    }

    void anOutOfRangeValueCannotBeEntered()
    {
        auto [store, ids] = storeWithPairs();
        QueueSettingsDialog dialog(*store);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        auto* overlap = field<QSpinBox>(dialog, "overlap");
        auto* gold = field<QDoubleSpinBox>(dialog, "goldPercent");
        QCOMPARE(overlap->maximum(), 100);
        QCOMPARE(overlap->minimum(), 1);
        QCOMPARE(gold->maximum(), 50.0);
        QCOMPARE(gold->minimum(), 0.0);

        // Typed: the keys that would leave the range are refused.
        overlap->setFocus();
        overlap->selectAll();
        QTest::keyClicks(overlap, QStringLiteral("250"));
        QCOMPARE(overlap->value(), 25);
        overlap->selectAll();
        QTest::keyClicks(overlap, QStringLiteral("0"));
        QTest::keyClick(overlap, Qt::Key_Tab);
        QVERIFY(overlap->value() >= 1);
        gold->setFocus();
        gold->selectAll();
        QTest::keyClicks(gold, QStringLiteral("80"));
        QVERIFY2(gold->value() <= 50, qPrintable(QString::number(gold->value())));
        // Set in code: clamped to the range.
        overlap->setValue(1000);
        QCOMPARE(overlap->value(), 100);
        gold->setValue(75);
        QCOMPARE(gold->value(), 50.0);

        clickOk(dialog);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        const QueueSettings read = store->queueSettings().value();
        QCOMPARE(read.overlap, 100);
        QCOMPARE(read.goldRate, 0.5);
    }

    void theWheelChangesAFieldOnlyWhenItIsFocused()
    {
        auto [store, ids] = storeWithPairs();
        QueueSettingsDialog dialog(*store);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowActive(&dialog));
        auto* overlap = field<QSpinBox>(dialog, "overlap");
        auto* gold = field<QDoubleSpinBox>(dialog, "goldPercent");
        auto* order = field<QComboBox>(dialog, "order");
        auto* cancel = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Cancel);
        cancel->setFocus();
        QTRY_VERIFY(cancel->hasFocus());
        wheelUp(overlap);
        wheelUp(gold);
        wheelUp(order);
        order->setCurrentIndex(1);
        wheelUp(order); // up from the second item would go back to the first
        QCOMPARE(overlap->value(), 1);
        QCOMPARE(gold->value(), 0.0);
        QCOMPARE(order->currentIndex(), 1);

        // Focused, the wheel works as usual (so the checks above can fail).
        overlap->setFocus();
        QTRY_VERIFY(overlap->hasFocus());
        wheelUp(overlap);
        QCOMPARE(overlap->value(), 2);
        order->setFocus();
        QTRY_VERIFY(order->hasFocus());
        wheelUp(order);
        QCOMPARE(order->currentIndex(), 0);
        dialog.reject();
        QCOMPARE(store->queueSettings().value().overlap, 1); // cancelled: nothing written
    }

    void leastSureFirstReordersTheLabelViewsQueue()
    {
        auto [store, ids] = storeWithPairs();
        // |margin|: ids[3] 0.1 < ids[4] 0.5 < ids[1] 2.0; ids[0] and ids[2] have none.
        QVERIFY(store->setPairMargins({{ids[1], -2.0}, {ids[3], 0.1}, {ids[4], 0.5}}, "m").ok());
        PreferenceStore* kept = store.get();
        MainWindow window(std::move(store));
        window.labelView()->setLabeler(QStringLiteral("ana"));
        window.showView(0);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCOMPARE(window.labelView()->currentPair()->id, ids[0]); // oldest first

        QueueSettingsDialog* dialog = window.editQueueSettings();
        QVERIFY(dialog && dialog->isVisible());
        QPointer<QueueSettingsDialog> open(dialog);
        field<QComboBox>(*dialog, "order")->setCurrentIndex(1);
        clickOk(*dialog);
        QTRY_VERIFY(!open); // closed and deleted
        QCOMPARE(kept->queueSettings().value().order, QueueOrder::LeastSure);

        // The pair on screen stays; those after it come least sure first, unscored last.
        QCOMPARE(window.labelView()->currentPair()->id, ids[0]);
        std::vector<int64_t> shown;
        for (int i = 0; i < 4; ++i) {
            QTest::qWait(50); // the pair is painted: the skip is about it
            window.labelView()->skip();
            QVERIFY(window.labelView()->currentPair());
            shown.push_back(window.labelView()->currentPair()->id);
        }
        const std::vector<int64_t> expected{ids[3], ids[4], ids[1], ids[2]};
        QCOMPARE(shown, expected);
        QCOMPARE(kept->labels(false).value().size(), size_t(4)); // each skip was recorded
        window.closeWithoutAsking();
    }
};

QTEST_MAIN(TestQueueSettingsDialog)
#include "tst_queuesettingsdialog.moc"
