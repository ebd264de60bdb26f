// SPDX-License-Identifier: GPL-3.0-or-later
// A blind comparison of two tiny models made through "Compare models…": the dialog ticks the
// selected model and its reference, draws in the background (Cancel throws a draw away) and
// stores the comparison; the Label view then shows its pairs without naming either model in any
// widget's text, tooltip, status tip, what's-this, accessible name or description, or title; and
// the results window, open beside it, shows the report of the labels as they come in.
#include <QAbstractButton>
#include <QLabel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "support/tinycheckpoint.h"
#include "support/tinyconfigs.h"

#include "experts/comparisonreport.h"
#include "store/preferencestore.h"
#include "ui/models/comparemodelsdialog.h"
#include "ui/models/comparisonresults.h"
#include "ui/label/labelview.h"
#include "ui/shell/mainwindow.h"
#include "ui/label/pairsupply.h"
#include "ui/common/reportfigures.h"

using namespace d2dpo;
using namespace d2dpo::ui;

class TestCompareModels final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<PreferenceStore> m_store;
    PreferenceStore* m_kept = nullptr; ///< the store, once the main window owns it
    ModelRecord m_reference;
    ModelRecord m_tuned;

    ModelRecord tinyModel(const QString& file, uint64_t seed, const std::string& name, const std::string& parentId)
    {
        test::TinyCheckpointOptions options;
        options.seed = seed;
        const auto written = test::writeTinyCheckpoint(m_dir.filePath(file).toStdString(), options);
        if (!written)
            qFatal("%s", written.error().c_str());
        ModelRecord m;
        m.id = written->id;
        m.parentId = parentId;
        m.kind = parentId.empty() ? "pretrained" : "d2dpo";
        m.name = name;
        m.path = written->path;
        m.specJson = toJson(written->spec);
        return m;
    }

    /// What on screen could name a model: every widget's texts, tips and accessible names.
    static QStringList textsOf(QWidget* root)
    {
        QList<QWidget*> widgets = root->findChildren<QWidget*>();
        widgets.prepend(root);
        QStringList texts;
        for (QWidget* w : widgets) {
            texts << w->windowTitle() << w->toolTip() << w->statusTip() << w->whatsThis() << w->accessibleName()
                  << w->accessibleDescription();
            for (const char* property : {"text", "currentText", "plainText", "title", "placeholderText"})
                if (const QVariant value = w->property(property); value.isValid())
                    texts << value.toString();
        }
        return texts;
    }

    void verifyNoModelNamed(QWidget* root)
    {
        for (const QString& text : textsOf(root))
            for (const ModelRecord* m : {&m_reference, &m_tuned})
                for (const std::string& word : {m->id, m->name})
                    QVERIFY2(!text.contains(QString::fromStdString(word)),
                             qPrintable(QStringLiteral("“%1” names a model: %2")
                                            .arg(text, QString::fromStdString(word))));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // the main window's settings stay out of the user's
        QVERIFY(m_dir.isValid());
        m_store = std::move(PreferenceStore::open(m_dir.filePath("compare.sqlite").toStdString()).value());
        m_reference = tinyModel("reference.d2dpo", 3, "Zebrafinch reference", "");
        m_tuned = tinyModel("tuned.d2dpo", 4, "Quokka tuned", m_reference.id);
        QVERIFY(m_store->addModel(m_reference).ok() && m_store->addModel(m_tuned).ok());
    }

    void theDialogDrawsInTheBackgroundAndStoresTheComparison()
    {
        CompareModelsDialog dialog(*m_store, QString::fromStdString(m_tuned.id));
        dialog.show();
        QStringList ticked = dialog.tickedModels();
        ticked.sort();
        QStringList expected{QString::fromStdString(m_reference.id), QString::fromStdString(m_tuned.id)};
        expected.sort();
        QCOMPARE(ticked, expected); // the selected model and its reference

        dialog.setTicked(QString::fromStdString(m_reference.id), false);
        QVERIFY(!dialog.start());
        QCOMPARE(dialog.lastError(), QStringLiteral("Tick two models or more."));
        dialog.setTicked(QString::fromStdString(m_reference.id), true);

        // A cancelled draw stores nothing, even when it finishes later.
        dialog.setPairsPerTwoModels(16);
        QVERIFY(dialog.start());
        QVERIFY(dialog.busy());
        dialog.cancel();
        QVERIFY(!dialog.busy());
        QTest::qWait(3000);
        QVERIFY(m_store->comparisons().value().empty());

        QSignalSpy created(&dialog, &CompareModelsDialog::comparisonCreated);
        QVERIFY(dialog.start());
        QVERIFY(created.wait(60000));
        QVERIFY2(dialog.lastError().isEmpty(), qPrintable(dialog.lastError()));
        const auto comparisons = m_store->comparisons().value();
        QCOMPARE(comparisons.size(), size_t(1));
        QCOMPARE(comparisons[0].id, dialog.createdComparison());
        QVERIFY(comparisons[0].pairs >= 10 && comparisons[0].pairs <= 16);
        const auto pending = m_store->pendingPairs(100, "", "tester").value();
        QCOMPARE(int64_t(pending.size()), comparisons[0].pairs);
        for (const ShownPair& p : pending)
            QVERIFY(p.blind && p.leftModelId.empty() && p.rightModelId.empty());
        QVERIFY(dialog.findChild<QLabel*>(QStringLiteral("state"))->text().contains("queued for every labeler"));
        if (const QString folder = qEnvironmentVariable("D2DPO_SCREENSHOTS"); !folder.isEmpty())
            dialog.grab().save(folder + QStringLiteral("/compare-models.png"));
    }

    void aDrawIsHeardAsItGoesAndAStopEndsItWithNothing()
    {
        StopToken stop;
        double heard = -1;
        int64_t total = 0;
        auto prepared = prepareComparison({m_reference.path, m_tuned.path}, "cpu", 200, 7, {}, &stop,
                                          [&](double done, int64_t all) {
                                              heard = done;
                                              total = all;
                                              stop.requestStop(); // heard before the next pass
                                          });
        QVERIFY2(prepared.ok(), prepared ? "" : prepared.error().c_str());
        QVERIFY(prepared->models.empty() && prepared->draw.pairs.empty()); // nothing to store
        QCOMPARE(total, int64_t(400));                                      // 200 of each model
        QVERIFY2(heard >= 0 && heard <= 200, qPrintable(QString::number(heard))); // the first model's draw
    }

    void theLabelViewNamesNoModelAndTheResultsFollowTheLabels()
    {
        const qint64 id = m_store->comparisons().value().at(0).id;
        m_kept = m_store.get();
        MainWindow window(std::move(m_store));
        window.labelView()->setLabeler(QStringLiteral("tester"));
        window.showView(0);
        window.resize(1024, 640);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.showComparisonResults(id);
        ComparisonResults* results = window.comparisonResults();
        QVERIFY(results && results->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(results->report() && !results->busy(), 30000);
        QCOMPARE(results->report()->games, int64_t(0));

        LabelView* view = window.labelView();
        view->activateWindow();
        view->setFocus();
        for (int i = 0; i < 6; ++i) {
            QVERIFY(view->currentPair() && view->currentPair()->blind);
            QVERIFY2(view->provenance().contains("a blind comparison of models"), qPrintable(view->provenance()));
            QTest::qWait(50); // painted: the press is about this pair
            verifyNoModelNamed(view);
            verifyNoModelNamed(window.statusBar());
            QVERIFY(!window.windowTitle().contains(QString::fromStdString(m_tuned.name)));
            QTest::keyClick(view, i % 3 == 2 ? Qt::Key_T : Qt::Key_Left);
        }
        QTest::qWait(50);
        view->supply().waitForIdle();
        QCOMPARE(m_kept->judgedLabels(id).value().size(), size_t(6));

        // The results window heard the labels and measured them again.
        QTRY_VERIFY_WITH_TIMEOUT(results->report() && results->report()->games == 6 && !results->busy(), 30000);
        const ComparisonRecord record = m_kept->comparisons().value().at(0);
        const ComparisonReport expected =
            measureComparison(record, m_kept->judgedLabels(id).value(), ComparisonResults::kResamples, 2);
        auto* standings = results->findChild<QTableWidget*>(QStringLiteral("standings"));
        QCOMPARE(standings->rowCount(), 2);
        for (int row = 0; row < 2; ++row) {
            const ModelStanding& s = expected.models[size_t(row)];
            QCOMPARE(standings->item(row, 0)->toolTip(), QString::fromStdString(s.modelId));
            QCOMPARE(standings->item(row, 1)->text(), QStringLiteral("6"));
            QCOMPARE(standings->item(row, 2)->text(), figure(s.winRate));
            QCOMPARE(standings->item(row, 3)->text(), interval(s.winRateInterval));
            QCOMPARE(standings->item(row, 4)->text(), figure(s.score));
        }
        QStringList names{standings->item(0, 0)->text(), standings->item(1, 0)->text()};
        names.sort();
        QCOMPARE(names, QStringList({"Quokka tuned", "Zebrafinch reference"})); // named here, for the maintainer
        auto* headToHead = results->findChild<QTableWidget*>(QStringLiteral("headToHead"));
        QCOMPARE(headToHead->rowCount(), 1);
        QCOMPARE(headToHead->item(0, 4)->text(), QStringLiteral("2 (0)")); // the two ties
        QVERIFY(results->findChild<QLabel*>(QStringLiteral("summary"))->text().contains("<b>6 games</b>"));

        const QString folder = qEnvironmentVariable("D2DPO_SCREENSHOTS");
        if (!folder.isEmpty()) {
            window.grab().save(folder + QStringLiteral("/label-blind-1024x640.png"));
            results->grab().save(folder + QStringLiteral("/comparison-results.png"));
        }

        // A second comparison from the main window's dialog opens its results and joins the queue.
        CompareModelsDialog* dialog = window.compareModels(QString::fromStdString(m_tuned.id));
        dialog->setPairsPerTwoModels(4);
        QSignalSpy created(dialog, &CompareModelsDialog::comparisonCreated);
        QVERIFY(dialog->start());
        QVERIFY(created.wait(60000));
        const qint64 second = created.at(0).at(0).toLongLong();
        QCOMPARE(results->shownComparison(), second);
        QTRY_VERIFY_WITH_TIMEOUT(results->report() && results->report()->comparisonId == second, 30000);
        dialog->close();
        verifyNoModelNamed(view);
        window.closeWithoutAsking();
    }
};

QTEST_MAIN(TestCompareModels)
#include "tst_comparemodels.moc"
