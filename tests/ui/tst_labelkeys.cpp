// SPDX-License-Identifier: GPL-3.0-or-later
// Labelling by keys and buttons as an expert does: every key stores the right row, presses before the
// pair is on screen are ignored, a fast pace loses none, keys work after a menu and can be rebound.
#include <QApplication>
#include <QDialogButtonBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>

#include <set>

#include "support/labelviewfixture.h"

#include "ui/label/keysdialog.h"
#include "ui/label/labelviewparts.h"
#include "ui/shell/mainwindow.h"

using namespace d2dpo;
using namespace d2dpo::ui;
using d2dpo::test::binaryPairs;

class TestLabelKeys final : public test::LabelViewFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void eachKeyStoresTheRightRow_data()
    {
        QTest::addColumn<int>("key");
        QTest::addColumn<int>("choice");
        QTest::newRow("Left") << int(Qt::Key_Left) << int(Choice::Left);
        QTest::newRow("1") << int(Qt::Key_1) << int(Choice::Left);
        QTest::newRow("A") << int(Qt::Key_A) << int(Choice::Left);
        QTest::newRow("Right") << int(Qt::Key_Right) << int(Choice::Right);
        QTest::newRow("2") << int(Qt::Key_2) << int(Choice::Right);
        QTest::newRow("L") << int(Qt::Key_L) << int(Choice::Right);
        QTest::newRow("T") << int(Qt::Key_T) << int(Choice::Tie);
        QTest::newRow("B") << int(Qt::Key_B) << int(Choice::BothBad);
        QTest::newRow("S") << int(Qt::Key_S) << int(Choice::Skip);
        QTest::newRow("Space") << int(Qt::Key_Space) << int(Choice::Skip);
    }

    void eachKeyStoresTheRightRow()
    {
        QFETCH(int, key);
        QFETCH(int, choice);
        freshView(5);
        const auto shown = m_view->currentPair();
        QVERIFY(shown.has_value());
        press(Qt::Key(key));
        const LabelRecord label = lastLabel();
        QCOMPARE(label.pairId, shown->id);
        QCOMPARE(int(label.choice), choice);
        QCOMPARE(label.labeler, std::string("tester"));
        QVERIFY(label.decideMs >= 0);
        QVERIFY(m_view->currentPair()->id != shown->id); // the next pair appeared at once
        QCOMPARE(m_view->sessionCount(), 1);
    }

    void clickingAButtonStoresItsChoiceForTheShownPair()
    {
        freshView(3);
        const auto shown = m_view->currentPair();
        QTest::mouseClick(m_view->findChild<QPushButton*>("rightButton"), Qt::LeftButton);
        QCOMPARE(lastLabel().pairId, shown->id);
        QCOMPARE(lastLabel().choice, Choice::Right);
    }

    void aPressBeforeThePairIsOnScreenIsIgnoredAndShown()
    {
        freshView(4);
        QTest::keyClick(m_view.get(), Qt::Key_Left);
        // The next pair was not painted yet: this press is a bounce or meant for the pair before.
        QTest::keyClick(m_view.get(), Qt::Key_Left);
        QCOMPARE(m_store->labels(false).value().size(), size_t(1));
        QCOMPARE(m_view->ignoredPresses(), 1);
        QVERIFY(m_view->findChild<QLabel*>("ignoredPress")->isVisible());
        QTest::qWait(20); // painted now: the same key counts
        QTest::keyClick(m_view.get(), Qt::Key_Left);
        QCOMPARE(m_store->labels(false).value().size(), size_t(2));
        const auto labels = m_store->labels(false).value();
        std::set<int64_t> pairs;
        for (const LabelRecord& l : labels)
            pairs.insert(l.pairId);
        QCOMPARE(pairs.size(), labels.size()); // no pair labelled twice
        // Auto-repeat (a held key) labels nothing.
        QKeyEvent repeat(QEvent::KeyPress, Qt::Key_Left, Qt::NoModifier, QString(), true);
        QApplication::sendEvent(m_view.get(), &repeat);
        QCOMPARE(m_store->labels(false).value().size(), labels.size());
        // Keys after the last pair: no crash, nothing stored, and each says so beside the pair
        // (never in a status bar a framed window may hide).
        const int ignoredBefore = m_view->ignoredPresses();
        for (int i = 0; i < 5; ++i)
            press(Qt::Key_Right);
        QCOMPARE(m_store->counts("tester").value().pending, int64_t(0));
        QCOMPARE(m_store->labels(false).value().size(), size_t(4));
        QVERIFY(!m_view->currentPair().has_value());
        QCOMPARE(m_view->ignoredPresses(), ignoredBefore + 3); // two label the last pairs, three find none
        auto* notice = m_view->findChild<QLabel*>("ignoredPress");
        QVERIFY(notice->isVisible());
        QVERIFY2(notice->text().startsWith(QStringLiteral("Not stored:")), qPrintable(notice->text()));
    }

    void theGenerateButtonStaysPutWhileDrawingStartsAndEnds()
    {
        freshView(3);
        m_view->resize(1000, 600);
        m_view->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_view.get()));
        auto* generate = m_view->findChild<QPushButton*>("generateButton");
        auto* bar = m_view->findChild<QProgressBar*>("generationProgress");
        QVERIFY(generate && bar);
        const QRect before = generate->geometry();
        // As drawing shows it: the bar and the button's other text; and as it ends.
        bar->show();
        generate->setText(stopDrawingButtonText());
        QApplication::processEvents();
        QCOMPARE(generate->geometry(), before);
        generate->setText(stoppingButtonText());
        QApplication::processEvents();
        QCOMPARE(generate->geometry(), before);
        bar->hide();
        generate->setText(generateButtonText(50)); // the view's pairs a request
        QApplication::processEvents();
        QCOMPARE(generate->geometry(), before);
        m_view->hide();
    }

    void twentyPressesEightyMillisecondsApartGiveTwentyLabels()
    {
        freshView(25);
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < 20; ++i) {
            QTest::keyClick(m_view.get(), i % 2 ? Qt::Key_Right : Qt::Key_Left);
            QTest::qWait(80);
        }
        QCOMPARE(m_store->labels(false).value().size(), size_t(20));
        QCOMPARE(m_view->ignoredPresses(), 0);
        qInfo("20 labels in %lld ms: %.0f pairs per minute at this pace", clock.elapsed(),
              20 * 60000.0 / double(clock.elapsed()));
    }

    void keysWorkAfterTheFileMenuIsClosedWithEsc()
    {
        m_view.reset();
        auto store = PreferenceStore::open(m_dir.filePath(QString("s%1.sqlite").arg(++m_stores)).toStdString());
        QVERIFY(store.ok());
        PreferenceStore* kept = store.value().get();
        QVERIFY(kept->addPairs(binaryPairs(5), "generated").ok());
        d2dpo::ui::MainWindow window(std::move(store.value()));
        window.showView(0);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();
        QMenu* file = window.menuBar()->actions().at(0)->menu();
        QVERIFY(file);
        file->popup(window.mapToGlobal(QPoint(10, 10)));
        QTRY_VERIFY(file->isVisible());
        QTest::keyClick(file, Qt::Key_Escape);
        QTRY_VERIFY(!file->isVisible());
        QTRY_COMPARE(QApplication::focusWidget(), static_cast<QWidget*>(window.labelView()));
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Left);
        QCOMPARE(kept->labels(false).value().size(), size_t(1));
    }

    void keysCanBeRebound()
    {
        freshView(5);
        KeysDialog dialog(m_view->keyBindings());
        auto* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
        dialog.setKeysText(LabelAction::Skip, QStringLiteral("T"));
        QVERIFY(!ok->isEnabled()); // T is the tie's key already
        QVERIFY(dialog.findChild<QLabel*>("problem")->text().contains("already the key for"));
        dialog.setKeysText(LabelAction::Skip, QString());
        QVERIFY(!ok->isEnabled()); // skip needs a key
        dialog.setKeysText(LabelAction::Skip, QStringLiteral("S; Space"));
        dialog.setKeysText(LabelAction::Left, QStringLiteral("J; Left"));
        dialog.setKeysText(LabelAction::Right, QStringLiteral("K; Right"));
        QVERIFY(ok->isEnabled());
        m_view->setKeyBindings(dialog.bindings()); // as Settings ▸ Label keys… does (without saving here)
        QVERIFY(m_view->findChild<QPushButton*>("leftButton")->text().contains("J · ←"));
        press(Qt::Key_A); // no longer a key
        QVERIFY(m_store->labels(false).value().empty());
        press(Qt::Key_J);
        QCOMPARE(lastLabel().choice, Choice::Left);
        press(Qt::Key_K);
        QCOMPARE(lastLabel().choice, Choice::Right);
        QTest::keyClick(m_view.get(), Qt::Key_1, Qt::KeypadModifier); // unbound now: nothing
        QCOMPARE(m_store->labels(false).value().size(), size_t(2));
        m_view->setKeyBindings(KeyBindings::defaults());
        QTest::qWait(20);
        QTest::keyClick(m_view.get(), Qt::Key_1, Qt::KeypadModifier); // the keypad's 1 is the 1 key
        QCOMPARE(m_store->labels(false).value().size(), size_t(3));
    }
};

QTEST_MAIN(TestLabelKeys)
#include "tst_labelkeys.moc"
