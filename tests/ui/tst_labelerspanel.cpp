// SPDX-License-Identifier: GPL-3.0-or-later
// The Labelers panel (View ▸ Labelers…) on stores with known labels: three labelers on six pairs,
// two of them always agreeing (kappa 1) and a third who differs on two pairs (kappa 5/11 with each,
// Krippendorff's alpha 1 - 17·4/198 = 0.657, worked by hand below); the panel shows those figures,
// as measureAgreement gives them, and each labeler's profile. One labeler alone: alpha undefined,
// with the reason, and no kappa. The panel measures again when asked after a new label, and the
// main window's asks when its Label view labels.
#include <QLabel>
#include <QStandardPaths>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "experts/teamagreement.h"
#include "store/preferencestore.h"
#include "ui/experts/labelerspanel.h"
#include "ui/label/labelview.h"
#include "ui/shell/mainwindow.h"
#include "ui/common/reportfigures.h"

using namespace d2dpo;
using namespace d2dpo::ui;

class TestLabelersPanel final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_stores = 0;

    /// Six pairs of binary-integers:4 sequences, the left one always first in text order (so a
    /// left pick is the category "first better" for every pair, as in the sums by hand).
    std::pair<std::unique_ptr<PreferenceStore>, std::vector<int64_t>> storeWithPairs()
    {
        auto store = std::move(
            PreferenceStore::open(m_dir.filePath(QStringLiteral("s%1.sqlite").arg(++m_stores)).toStdString()).value());
        std::vector<ShownPair> pairs;
        const char* sequences[][2] = {{"0001", "1000"}, {"0010", "0110"}, {"0011", "1001"},
                                      {"0101", "1111"}, {"0111", "1110"}, {"0100", "1100"}};
        for (const auto& [a, b] : sequences)
            pairs.push_back({0, a, b, "", "", "binary-integers:4"});
        auto ids = store->addPairs(pairs, "generated").value();
        return {std::move(store), ids};
    }

    static void label(PreferenceStore& store, const std::vector<int64_t>& ids, const std::string& labeler,
                      const std::vector<Choice>& choices)
    {
        for (size_t i = 0; i < choices.size(); ++i)
            QVERIFY(store.addLabel(ids[i], choices[i], labeler, int64_t(1000 * (i + 1))).ok());
    }

    static bool measured(LabelersPanel& panel)
    {
        QSignalSpy refreshed(&panel, &LabelersPanel::refreshed);
        panel.refresh();
        return refreshed.wait(30000) && !panel.busy();
    }

    static QString cell(QTableWidget* table, int row, int column)
    {
        return table->item(row, column) ? table->item(row, column)->text() : QString();
    }

    /// The row of the kappa table for these two labelers, or -1.
    static int kappaRow(QTableWidget* table, const QString& a, const QString& b)
    {
        for (int row = 0; row < table->rowCount(); ++row)
            if (cell(table, row, 0) == a && cell(table, row, 1) == b)
                return row;
        return -1;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
    }

    void threeLabelersShowTheKappasAndAlphaOfTheReport()
    {
        auto [store, ids] = storeWithPairs();
        QVERIFY(store->setQueueSettings({3, 0}).ok()); // each pair for three labelers
        using C = Choice;
        label(*store, ids, "ana", {C::Left, C::Left, C::Right, C::Right, C::Tie, C::Left});
        label(*store, ids, "ben", {C::Left, C::Left, C::Right, C::Right, C::Tie, C::Left});
        label(*store, ids, "cy", {C::Left, C::Right, C::Right, C::Left, C::Tie, C::Left});

        LabelersPanel panel(*store);
        panel.resize(1024, 640);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(measured(panel));

        const TeamAgreement expected =
            measureAgreement(store->judgedLabels().value(), "", LabelersPanel::kResamples, 1);
        // By hand: 18 judgements in 6 units; 4 disagreeing pairs of values (weighted 1/2 each) in
        // units 2 and 4; n_F = 9, n_S = 6, n_T = 3; alpha = 1 - 17 * 4 / (324 - 126) = 0.6566.
        QCOMPARE(figure(expected.alpha), QStringLiteral("0.657"));
        const QString alpha = panel.findChild<QLabel*>(QStringLiteral("alpha"))->text();
        QVERIFY2(alpha.contains(QStringLiteral("<b>0.657</b>")), qPrintable(alpha));
        QVERIFY2(alpha.contains(interval(expected.alphaInterval)), qPrintable(alpha));
        QCOMPARE(panel.findChild<QLabel*>(QStringLiteral("items"))->text(),
                 QStringLiteral("6 pairs judged, 6 of them by two labelers or more"));

        auto* kappas = panel.findChild<QTableWidget*>(QStringLiteral("kappas"));
        QVERIFY(kappas->isVisible());
        QCOMPARE(kappas->rowCount(), 3);
        // ana and ben agree on all six (kappa 1); cy differs from each on two: p_o = 4/6,
        // p_e = (3·3 + 2·2 + 1·1)/36, kappa = 5/11.
        const int anaBen = kappaRow(kappas, "ana", "ben"), anaCy = kappaRow(kappas, "ana", "cy"),
                  benCy = kappaRow(kappas, "ben", "cy");
        QVERIFY(anaBen >= 0 && anaCy >= 0 && benCy >= 0);
        QCOMPARE(cell(kappas, anaBen, 3), QStringLiteral("1.000"));
        QCOMPARE(cell(kappas, anaCy, 3), QStringLiteral("0.455"));
        QCOMPARE(cell(kappas, benCy, 3), QStringLiteral("0.455"));
        QCOMPARE(cell(kappas, anaCy, 2), QStringLiteral("6"));
        for (const LabelerPairAgreement& p : expected.pairs) {
            const int row = kappaRow(kappas, QString::fromStdString(p.first), QString::fromStdString(p.second));
            QCOMPARE(cell(kappas, row, 3), figure(p.kappa));
            QCOMPARE(cell(kappas, row, 4), interval(p.interval));
        }

        auto* profiles = panel.findChild<QTableWidget*>(QStringLiteral("profiles"));
        QCOMPARE(profiles->rowCount(), 3);
        QCOMPARE(cell(profiles, 0, 0), QStringLiteral("ana"));
        QCOMPARE(cell(profiles, 0, 1), QStringLiteral("6"));
        QCOMPARE(cell(profiles, 0, 4), QStringLiteral("0.600 of 5")); // three left of five sided picks
        QCOMPARE(cell(profiles, 0, 5), QStringLiteral("3.5 s"));      // the median of 1..6 s
        QCOMPARE(cell(profiles, 0, 6), QStringLiteral("–"));          // no gold pairs
        QVERIFY(!profiles->item(0, 6)->toolTip().isEmpty());
        // For cy the other two agree on every pair, and cy sides with them on 4 of the 6.
        QCOMPARE(cell(profiles, 2, 3), QString(figure(expected.labelers[2].majorityAgreement) + " of " +
                                               QString::number(expected.labelers[2].majorityItems)));
        QCOMPARE(cell(profiles, 2, 3), QStringLiteral("0.667 of 6"));
        QVERIFY(panel.findChild<QLabel*>(QStringLiteral("conventions"))->text().contains("Skips are no judgement"));

        const QString folder = qEnvironmentVariable("D2DPO_SCREENSHOTS");
        if (!folder.isEmpty())
            panel.grab().save(folder + QStringLiteral("/labelers-panel.png"));
    }

    void oneLabelerAloneLeavesAgreementUndefinedAndSaysWhy()
    {
        auto [store, ids] = storeWithPairs();
        label(*store, ids, "ana", {Choice::Left, Choice::Right, Choice::Tie});
        LabelersPanel panel(*store);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(measured(panel));
        const QString alpha = panel.findChild<QLabel*>(QStringLiteral("alpha"))->text();
        QVERIFY2(alpha.contains(QStringLiteral("<b>undefined</b>: no pair was judged by two labelers or more")),
                 qPrintable(alpha));
        QVERIFY(!panel.findChild<QTableWidget*>(QStringLiteral("kappas"))->isVisible());
        QVERIFY(panel.findChild<QLabel*>(QStringLiteral("noKappa"))->isVisible());
        auto* profiles = panel.findChild<QTableWidget*>(QStringLiteral("profiles"));
        QCOMPARE(profiles->rowCount(), 1);
        QCOMPARE(cell(profiles, 0, 3), QStringLiteral("undefined"));
        QVERIFY(profiles->item(0, 3)->toolTip().contains("no pair this labeler judged"));

        // A second labeler's labels, then a refresh (what a new label in the Label view asks for).
        QVERIFY(store->setQueueSettings({2, 0}).ok());
        label(*store, ids, "ben", {Choice::Left, Choice::Right, Choice::Tie});
        QVERIFY(measured(panel));
        QCOMPARE(panel.findChild<QTableWidget*>(QStringLiteral("kappas"))->rowCount(), 1);
        QCOMPARE(cell(panel.findChild<QTableWidget*>(QStringLiteral("kappas")), 0, 3), QStringLiteral("1.000"));
        QVERIFY(panel.findChild<QLabel*>(QStringLiteral("alpha"))->text().contains(QStringLiteral("<b>1.000</b>")));
    }

    void theMainWindowsPanelMeasuresAgainAfterEachLabel()
    {
        auto [store, ids] = storeWithPairs();
        PreferenceStore* kept = store.get();
        MainWindow window(std::move(store));
        window.labelView()->setLabeler(QStringLiteral("ana"));
        window.showView(0);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // Opened from the Label view's stats bar, as from View ▸ Labelers….
        QVERIFY(!window.labelersPanel());
        auto* button = window.labelView()->findChild<QPushButton*>(QStringLiteral("labelersButton"));
        QVERIFY(button && button->isVisible());
        button->click();
        LabelersPanel* panel = window.labelersPanel();
        QVERIFY(panel && panel->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(panel->report() && !panel->busy(), 30000);
        QVERIFY(panel->report()->labelers.empty());
        QTest::qWait(50); // the pair is painted: the press is about it
        QTest::keyClick(window.labelView(), Qt::Key_Left);
        QCOMPARE(kept->labels(false).value().size(), size_t(1));
        QTRY_VERIFY_WITH_TIMEOUT(panel->report() && panel->report()->labelers.size() == 1 && !panel->busy(), 30000);
        QCOMPARE(panel->findChild<QTableWidget*>(QStringLiteral("profiles"))->item(0, 0)->text(), QStringLiteral("ana"));
        window.closeWithoutAsking();
    }
};

QTEST_MAIN(TestLabelersPanel)
#include "tst_labelerspanel.moc"
