// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view driven like an expert drives it: every key stores the right row, undo, the
// counters, hints on and off, double presses, clicks, the odd-rule auto-labeler, and labeling
// while pairs are generated in the background (whose longest GUI stall is printed, not asserted).
#include <QCheckBox>
#include <QFile>
#include <QElapsedTimer>
#include <QDialogButtonBox>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QTemporaryDir>
#include <QSignalSpy>
#include <QTimer>

#include <set>

#include "testsupport.h"

#include "facades/taskinfo.h"
#include "ui/sequencestrip.h"
#include "io/checkpoint.h"
#include "model/denoiser.h"
#include "ui/keysdialog.h"
#include "ui/labelview.h"
#include "ui/mainwindow.h"
#include "ui/pairsupply.h"
#include "store/preferencestore.h"

using namespace d2dpo;
using namespace d2dpo::ui;
using d2dpo::ui::LabelView;

namespace {

std::vector<ShownPair> binaryPairs(int n)
{
    std::vector<ShownPair> pairs;
    for (int i = 0; i < n; ++i) {
        const int a = i % 11, b = (i * 7 + 3) % 11;
        std::string left(10, '0'), right(10, '0');
        for (int k = 0; k < a; ++k)
            left[size_t(k)] = '1';
        for (int k = 0; k < b; ++k)
            right[size_t(k)] = '1';
        if (left == right)
            right[9] = right[9] == '1' ? '0' : '1'; // make it differ (invalid)
        pairs.push_back({0, left, right, "", "", "binary-integers:10"});
    }
    return pairs;
}

} // namespace

class TestLabelView final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_stores = 0;
    std::unique_ptr<PreferenceStore> m_store;
    std::unique_ptr<LabelView> m_view;

    void freshView(int pairs)
    {
        m_view.reset();
        m_store = std::move(PreferenceStore::open(m_dir.filePath(QString("s%1.sqlite").arg(++m_stores)).toStdString()).value());
        QVERIFY(m_store->addPairs(binaryPairs(pairs), "generated").ok());
        showView();
    }

    /// A Label view on m_store, shown, labelling as "tester" with no minimum decision time.
    void showView()
    {
        m_view = std::make_unique<LabelView>(*m_store);
        m_view->setLabeler("tester");
        m_view->resize(1000, 400);
        m_view->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_view.get()));
    }

    /// A deliberate press: the key, then the time for the next pair to be painted (as a person
    /// needs far longer than that to see it).
    void press(Qt::Key key, Qt::KeyboardModifiers modifiers = Qt::NoModifier)
    {
        QTest::keyClick(m_view.get(), key, modifiers);
        QTest::qWait(20);
    }

    LabelRecord lastLabel()
    {
        const auto labels = m_store->labels(true).value();
        return labels.empty() ? LabelRecord{} : labels.back();
    }

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

    void proteinPairsAreDrawnInTheirAlphabetAndKeysLabelThem()
    {
        m_view.reset();
        m_store = std::move(PreferenceStore::open(m_dir.filePath("protein.sqlite").toStdString()).value());
        const QString fasta = m_dir.filePath("p.fasta");
        QFile file(fasta);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(">a\nMKVLAG\n>b\nMKW\n>c\nGAVLIKDE\n");
        file.close();
        SequenceFileOptions options;
        options.vocabulary = "protein";
        options.rule = "motif:^M";
        const TaskInfo task = TaskInfo::fromConfig(readDataFile(fasta.toStdString(), options).value().task).value();
        QVERIFY(task.recordIn(*m_store).ok());
        QCOMPARE(task.alphabet(), std::string("protein"));
        QVERIFY(m_store->addPairs({{0, "MKVLAG", "GAVLIKDE", "", "", task.key()}, {0, "MKW", "M.K", "", "", task.key()}},
                                  "generated")
                    .ok());
        showView();
        auto* left = m_view->findChild<ui::SequenceStrip*>("leftStrip");
        QVERIFY(left);
        QCOMPARE(left->alphabet(), QString("protein"));
        QCOMPARE(left->tokens(), QString("MKVLAG"));
        QVERIFY(ui::SequenceStrip::colourOf('K', "protein") != ui::SequenceStrip::colourOf('D', "protein")); // + against -
        const QString hint = m_view->findChild<QLabel*>("leftHint")->text();
        QVERIFY2(hint.contains("length 6") && hint.contains("matches ^M"), qPrintable(hint));
        const QString invalid = m_view->findChild<QLabel*>("rightHint")->text();
        QVERIFY2(invalid.contains("length 8"), qPrintable(invalid));
        press(Qt::Key_Left);
        QCOMPARE(lastLabel().choice, Choice::Left);
        QCOMPARE(m_view->currentPair()->left, std::string("MKW"));
        QVERIFY2(m_view->findChild<QLabel*>("rightHint")->text().contains("invalid"),
                 qPrintable(m_view->findChild<QLabel*>("rightHint")->text())); // "M.K": a pad inside
        press(Qt::Key_Right);
        QCOMPARE(lastLabel().choice, Choice::Right);
        QCOMPARE(m_store->counts("tester").value().byLabeler, int64_t(2));
    }

    void undoShowsThePairAgainAndKeepsHistory()
    {
        freshView(5);
        const auto first = m_view->currentPair();
        press(Qt::Key_Left);
        const auto second = m_view->currentPair();
        press(Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(m_view->currentPair()->id, first->id);
        QCOMPARE(m_view->sessionCount(), 0);
        QVERIFY(lastLabel().undone);
        QCOMPARE(m_store->counts("tester").value().labelled, int64_t(0));
        // Relabel it; the pair that was next comes next again.
        press(Qt::Key_Right);
        QCOMPARE(m_view->currentPair()->id, second->id);
        QCOMPARE(m_store->labels(true).value().size(), size_t(2));
        QCOMPARE(lastLabel().choice, Choice::Right);
    }

    void undoAtTheFirstPairDoesNothing()
    {
        freshView(3);
        QSignalSpy messages(m_view.get(), &LabelView::statusMessage);
        const auto shown = m_view->currentPair();
        press(Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(m_view->currentPair()->id, shown->id);
        QVERIFY(m_store->labels(true).value().empty());
        QVERIFY(!messages.isEmpty());
        QVERIFY(messages.last().first().toString().contains("Nothing to undo"));
    }

    void countersFollowTheLabels()
    {
        freshView(6);
        for (Qt::Key key : {Qt::Key_Left, Qt::Key_Right, Qt::Key_T})
            press(key);
        QCOMPARE(m_view->sessionCount(), 3);
        auto* counters = m_view->findChild<QLabel*>("counters");
        QVERIFY(counters->text().contains("This session: <b>3</b>"));
        QVERIFY(counters->text().contains("pending: 3"));
        QVERIFY(counters->text().contains("usable for training: 2"));
        auto* statistics = m_view->findChild<QLabel*>("statistics");
        QVERIFY(statistics->text().contains("Agreement with the task's rule"));
    }

    void hintsToggle()
    {
        freshView(2);
        auto* leftHint = m_view->findChild<QLabel*>("leftHint");
        auto* box = m_view->findChild<QCheckBox*>("hintsCheckBox");
        QVERIFY(leftHint->isVisible());
        QVERIFY(leftHint->text().contains("i = ") || leftHint->text().contains("invalid"));
        QTest::mouseClick(box, Qt::LeftButton);
        QVERIFY(!leftHint->isVisible());
        QVERIFY(!m_view->hintsVisible());
        m_view->setHintsVisible(true);
        QVERIFY(leftHint->isVisible());
        QVERIFY(box->isChecked());
    }

    void buttonsWork()
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
        // Keys after the last pair: no crash, nothing stored.
        for (int i = 0; i < 5; ++i)
            press(Qt::Key_Right);
        QCOMPARE(m_store->counts("tester").value().pending, int64_t(0));
        QCOMPARE(m_store->labels(false).value().size(), size_t(4));
        QVERIFY(!m_view->currentPair().has_value());
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

    void undoNeverReachesAnotherSessionsLabels()
    {
        m_view.reset();
        m_store = std::move(PreferenceStore::open(m_dir.filePath(QString("s%1.sqlite").arg(++m_stores)).toStdString()).value());
        const auto ids = m_store->addPairs(binaryPairs(4), "generated").value();
        QVERIFY(m_store->addLabel(ids[0], Choice::Left, "tester", 900).ok()); // yesterday's session
        showView();
        QSignalSpy messages(m_view.get(), &LabelView::statusMessage);
        press(Qt::Key_Z, Qt::ControlModifier);
        QVERIFY(messages.last().first().toString().contains("Nothing to undo in this session"));
        QCOMPARE(m_store->counts("tester").value().labelled, int64_t(1));
    }

    void autoLabelAsksFirstAndUndoesAsOneBatch()
    {
        freshView(12);
        press(Qt::Key_T); // one by the expert first
        int asked = -1;
        m_view->setAutoLabelConfirmation([&](int count) {
            asked = count;
            return false;
        });
        QTest::mouseClick(m_view->findChild<QPushButton*>("autoLabelButton"), Qt::LeftButton);
        QCOMPARE(asked, 11); // told how many, and declined: nothing stored
        QCOMPARE(m_store->counts("x").value().pending, int64_t(11));
        m_view->setAutoLabelConfirmation([](int) { return true; });
        QTest::mouseClick(m_view->findChild<QPushButton*>("autoLabelButton"), Qt::LeftButton);
        TaskConfig binary;
        binary.length = 10;
        const TaskInfo oddRule = TaskInfo::fromConfig(binary).value();
        QCOMPARE(m_store->counts("x").value().pending, int64_t(0));
        for (const auto& [pair, label] : m_store->labelledPairs("rule:odd").value())
            QCOMPARE(label.choice, oddRule.ruleChoice(pair.left, pair.right).value());
        QCOMPARE(m_store->labelledPairs("rule:odd").value().size(), size_t(11));
        // One Ctrl+Z takes the whole batch back; the expert's tie stays.
        press(Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(m_store->labelledPairs("rule:odd").value().size(), size_t(0));
        QCOMPARE(m_store->counts("tester").value().byLabeler, int64_t(1));
        QCOMPARE(m_store->counts("x").value().pending, int64_t(11));
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

    void thePairNamesTheModelThatMadeIt()
    {
        m_view.reset();
        m_store = std::move(PreferenceStore::open(m_dir.filePath(QString("s%1.sqlite").arg(++m_stores)).toStdString()).value());
        ModelRecord parent, child;
        parent.id = "p1";
        parent.kind = "pretrained";
        parent.name = "the reference";
        parent.path = "/p1";
        child.id = "c1";
        child.parentId = "p1";
        child.kind = "d2dpo";
        child.name = "d2dpo run 4 step 300";
        child.path = "/c1";
        QVERIFY(m_store->addModel(parent).ok() && m_store->addModel(child).ok());
        auto pairs = binaryPairs(2);
        for (ShownPair& p : pairs)
            p.leftModelId = p.rightModelId = "c1";
        QVERIFY(m_store->addPairs(pairs, "generated").ok());
        showView();
        const QString origin = m_view->findChild<QLabel*>("provenance")->text();
        QVERIFY2(origin.contains("d2dpo run 4 step 300") && origin.contains("fine-tuned from “the reference”"),
                 qPrintable(origin));
    }

    void labelingWhilePairsAreGenerated()
    {
        // A real (tiny, untrained) model: generation runs in a worker thread.
        torch::manual_seed(3);
        const ModelSpec spec = test::tinySpec(10);
        Denoiser model = makeDenoiser(spec, 2, torch::kCPU);
        const std::string checkpoint = m_dir.filePath("tiny.d2dpo").toStdString();
        CheckpointInfo info;
        info.id = newCheckpointId();
        info.kind = "pretrained";
        info.spec = spec;
        info.createdAt = utcNow();
        QVERIFY(saveCheckpoint(checkpoint, model, info).ok());

        freshView(0);
        QVERIFY(!m_view->currentPair().has_value());
        // The longest gap between ticks of a 5 ms timer in the GUI thread while generating.
        QElapsedTimer clock;
        clock.start();
        qint64 last = 0, longest = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, [&] {
            longest = std::max(longest, clock.elapsed() - last);
            last = clock.elapsed();
        });
        ticker.start(5);
        m_view->generateFrom(QString::fromStdString(checkpoint), 40);
        QVERIFY(m_view->supply().busy());
        for (Qt::Key key : {Qt::Key_Left, Qt::Key_Right, Qt::Key_T, Qt::Key_Space})
            QTest::keyClick(m_view.get(), key); // nothing to label yet: ignored, no crash
        QVERIFY(m_store->labels(true).value().empty());
        QTRY_VERIFY_WITH_TIMEOUT(m_view->currentPair().has_value(), 60000);
        ticker.stop();
        qInfo("pairs generated in the background; longest GUI-thread stall: %lld ms", longest);

        const auto shown = m_view->currentPair();
        QVERIFY(shown->left != shown->right);
        QCOMPARE(shown->left.size(), size_t(10));
        QCOMPARE(shown->leftModelId, info.id);
        press(Qt::Key_Left);
        QCOMPARE(lastLabel().pairId, shown->id);
        QVERIFY(m_store->model(info.id).value().has_value()); // the model was recorded
        m_view->supply().waitForIdle(); // a refill may have started
    }
};

QTEST_MAIN(TestLabelView)
#include "tst_labelview.moc"
