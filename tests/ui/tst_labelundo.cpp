// SPDX-License-Identifier: GPL-3.0-or-later
// Undo in the Label view: the pair comes back and the history stays, nothing before the first pair or
// from another session is undone, and the odd-rule auto-labeler asks first and undoes as one batch.
#include <QPushButton>
#include <QSignalSpy>

#include "support/labelviewfixture.h"

#include "facades/taskinfo.h"

using namespace d2dpo;
using namespace d2dpo::ui;
using d2dpo::test::binaryPairs;

class TestLabelUndo final : public test::LabelViewFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

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

    void undoNeverReachesAnotherSessionsLabels()
    {
        freshStore();
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
};

QTEST_MAIN(TestLabelUndo)
#include "tst_labelundo.moc"
