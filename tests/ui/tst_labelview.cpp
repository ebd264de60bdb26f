// SPDX-License-Identifier: GPL-3.0-or-later
// What the Label view shows: pairs in their task's alphabet with hints (which can be hidden), the
// counters, the model that made a pair, and pairs generated in the background (GUI stall printed).
#include <QCheckBox>
#include <QComboBox>

#include <limits>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QTimer>

#include "support/labelviewfixture.h"
#include "support/tinycheckpoint.h"

#include "base/datafile.h"
#include "facades/taskinfo.h"
#include "ui/label/pairgrid/pairgrid.h"
#include "ui/label/pairsupply.h"
#include "ui/common/symbolcolours.h"

using namespace d2dpo;
using namespace d2dpo::ui;
using d2dpo::test::binaryPairs;

class TestLabelView final : public test::LabelViewFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

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
        auto* grid = m_view->findChild<ui::PairGrid*>("pairGrid"); // both sequences, one grid
        QVERIFY(grid);
        QCOMPARE(grid->alphabet(), QString("protein"));
        QCOMPARE(QString(grid->columns().left).remove('-').trimmed(), QString("MKVLAG")); // gaps if aligned
        QCOMPARE(QString(grid->columns().right).remove('-').trimmed(), QString("GAVLIKDE"));
        QVERIFY(ui::symbolColour('K', "protein") != ui::symbolColour('D', "protein")); // + against -
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

    void aTaskWithoutARuleIsNotOfferedAgreement()
    {
        freshStore();
        SequenceFileOptions options;
        options.vocabulary = "protein";
        const QString fasta = m_dir.filePath("norule.fasta");
        QFile file(fasta);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(">a\nMKVLAG\n>b\nGAVLIK\n");
        file.close();
        const TaskInfo task = TaskInfo::fromConfig(readDataFile(fasta.toStdString(), options).value().task).value();
        QVERIFY(task.recordIn(*m_store).ok());
        QVERIFY(m_store->addPairs({{0, "MKVLAG", "GAVLIK", "", "", task.key()}, {0, "GAVLIK", "MKVLAG", "", "", task.key()}},
                                  "generated")
                    .ok());
        showView();
        auto* statistics = m_view->findChild<QLabel*>("statistics");
        QVERIFY2(!statistics->text().startsWith(QStringLiteral("Agreement")), qPrintable(statistics->text()));
        press(Qt::Key_Left);
        QVERIFY2(statistics->text().startsWith(QStringLiteral("No rule to agree with")) &&
                     statistics->text().contains(QStringLiteral("left picks: <b>100%</b> of 1")),
                 qPrintable(statistics->text()));
    }

    void hidingHintsHidesTheDecodedIntegerAndValidity()
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

    void thePairNamesTheModelThatMadeIt()
    {
        freshStore();
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

    void pairsGeneratedInTheBackgroundAppearAndCanBeLabelled()
    {
        // A real (tiny, untrained) model: generation runs in a worker thread.
        test::TinyCheckpointOptions tiny;
        tiny.length = 10;
        const auto written = test::writeTinyCheckpoint(m_dir.filePath("tiny.d2dpo").toStdString(), tiny);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
        const std::string checkpoint = written->path;
        const test::TinyCheckpoint& info = written.value();

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
        QStringList said;
        connect(m_view.get(), &LabelView::statusMessage, this, [&said](const QString& message) { said << message; });
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
        // The status line counts the pieces as they arrive (the first is one pair), not only the request.
        QTRY_VERIFY(!said.filter(QStringLiteral(" of 40 pairs ready")).isEmpty());
        QVERIFY2(said.contains(QStringLiteral("1 of 40 pairs ready; drawing the rest in the background…")),
                 qPrintable(said.join(QLatin1Char('|'))));
    }

    void theViewFitsA1024PixelWideWindow()
    {
        // The top bar (model, generation, new pairs, hints) sets the view's narrowest width; a long
        // model name shrinks the model box rather than widening the window past 1024 px.
        test::TinyCheckpointOptions tiny;
        tiny.length = 10;
        const auto written = test::writeTinyCheckpoint(m_dir.filePath("long-name.d2dpo").toStdString(), tiny);
        QVERIFY(written);
        freshStore(); // the model is in the store before the view is first shown, as in the application
        QVERIFY(m_store->addPairs(test::binaryPairs(3), "generated").ok());
        ModelRecord model{written->id, "", "pretrained", "a model with a name far longer than any box " +
                                                           std::string(60, 'x'), written->path, toJson(written->spec)};
        QVERIFY(m_store->addModel(model).ok());
        showView();
        QVERIFY2(m_view->minimumSizeHint().width() <= 1024 - 20,
                 qPrintable(QString::number(m_view->minimumSizeHint().width())));
    }

    void pairsPickedByMarginRecordTheMarginsTheyWerePickedBy()
    {
        // A fine-tuned model and its reference: the reference is found through the store's lineage.
        test::TinyCheckpointOptions tiny;
        tiny.length = 10;
        const auto reference = test::writeTinyCheckpoint(m_dir.filePath("ref.d2dpo").toStdString(), tiny);
        QVERIFY(reference);
        tiny.seed = 9; // other weights: a model with opinions of its own
        tiny.parentId = reference->id;
        const auto tuned = test::writeTinyCheckpoint(m_dir.filePath("tuned.d2dpo").toStdString(), tiny);
        QVERIFY(reference && tuned);
        freshView(0);
        ModelRecord parent{reference->id, "", "pretrained", "reference", reference->path, toJson(reference->spec)};
        ModelRecord child{tuned->id, reference->id, "d2dpo", "tuned", tuned->path, toJson(tuned->spec)};
        QVERIFY(m_store->addModel(parent).ok() && m_store->addModel(child).ok());
        auto* box = m_view->findChild<QComboBox*>(QStringLiteral("newPairsOrder"));
        QVERIFY(box && box->currentIndex() == 0 && !m_view->newPairPick());
        box->setCurrentIndex(box->findText(QStringLiteral("Least sure first")));
        QCOMPARE(m_view->newPairPick(), std::optional(PairPick::LeastSure));
        m_view->generateFrom(QString::fromStdString(tuned->path), 12);
        QTRY_VERIFY_WITH_TIMEOUT(m_view->currentPair().has_value() && !m_view->supply().busy(), 60000);
        m_view->supply().waitForIdle();
        const auto pending = m_store->pendingPairs(100).value();
        QVERIFY(pending.size() >= 12);
        double previous = 0;
        for (size_t i = 0; i < 12; ++i) { // stored least sure first, each with its margin and scorer
            const auto margin = m_store->pairMargin(pending[i].id).value();
            QVERIFY(margin.has_value());
            QCOMPARE(margin->second, tuned->id);
            QVERIFY(std::abs(margin->first) >= previous);
            previous = std::abs(margin->first);
        }
        QVERIFY(previous > 0); // scored against the reference, not against itself
        // Surest first: the kept pairs in the opposite order, largest |margin| first.
        box->setCurrentIndex(box->findText(QStringLiteral("Surest first")));
        const size_t leastSureCount = m_store->pendingPairs(1000).value().size();
        m_view->generateFrom(QString::fromStdString(tuned->path), 6);
        QTRY_VERIFY_WITH_TIMEOUT(!m_view->supply().busy() &&
                                     m_store->pendingPairs(1000).value().size() > leastSureCount, 60000);
        m_view->supply().waitForIdle();
        const auto withSurest = m_store->pendingPairs(1000).value();
        double last = std::numeric_limits<double>::infinity();
        for (size_t i = leastSureCount; i < withSurest.size(); ++i) {
            const double margin = std::abs(m_store->pairMargin(withSurest[i].id).value()->first);
            QVERIFY(margin <= last);
            last = margin;
        }
        // As drawn again: no margins.
        box->setCurrentIndex(0);
        const size_t before = withSurest.size(); // stored ones: busy() ends before the result is stored
        m_view->generateFrom(QString::fromStdString(reference->path), 5);
        QTRY_VERIFY_WITH_TIMEOUT(!m_view->supply().busy() && m_store->pendingPairs(100).value().size() > before, 60000);
        m_view->supply().waitForIdle();
        const auto after = m_store->pendingPairs(1000).value();
        QVERIFY(!m_store->pairMargin(after.back().id).value().has_value());
    }
};

QTEST_MAIN(TestLabelView)
#include "tst_labelview.moc"
