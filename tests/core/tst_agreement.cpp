// SPDX-License-Identifier: GPL-3.0-or-later
// What the experts think (experts/): Cohen's kappa and Krippendorff's alpha against published
// worked examples and hand-worked cases, their edge cases, the bootstrap interval, Bradley-Terry
// against hand-solvable cases and its interval's coverage in a simulation with a known strength,
// and the team report recovering the noise rates of simulated labelers.
#include <QtTest/QtTest>

#include <cmath>
#include <random>

#include "experts/agreementmath.h"
#include "experts/bradleyterry.h"
#include "experts/comparisonreport.h"
#include "experts/teamagreement.h"

using namespace d2dpo;

namespace {

/// `count` copies of (a, b) appended to two raters' judgements.
void repeat(std::vector<int>& a, std::vector<int>& b, int count, int x, int y)
{
    for (int i = 0; i < count; ++i) {
        a.push_back(x);
        b.push_back(y);
    }
}

/// A label of the 8-bit pair (left, right) on the binary-integers task.
JudgedLabel label(const std::string& labeler, const std::string& left, const std::string& right, Choice choice,
                  PairPurpose purpose = PairPurpose::Train)
{
    JudgedLabel l;
    l.labeler = labeler;
    l.left = left;
    l.right = right;
    l.task = "binary-integers:8";
    l.choice = choice;
    l.purpose = purpose;
    return l;
}

std::string bits(int value)
{
    std::string text(8, '0');
    for (int k = 0; k < 8; ++k)
        text[size_t(7 - k)] = char('0' + ((value >> k) & 1));
    return text;
}

} // namespace

class TestAgreement final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Wikipedia's "Cohen's kappa" worked example: 50 grant proposals, both yes 20, both no 15,
    // A yes and B no 5, A no and B yes 10: p_o = 0.7, p_e = 0.5, kappa = 0.4.
    void kappaMatchesThePublishedExample()
    {
        std::vector<int> a, b;
        repeat(a, b, 20, 1, 1);
        repeat(a, b, 5, 1, 0);
        repeat(a, b, 10, 0, 1);
        repeat(a, b, 15, 0, 0);
        QVERIFY(std::abs(cohensKappa(a, b) - 0.4) < 1e-12);
    }

    void kappaEdgeCases()
    {
        QCOMPARE(cohensKappa({0, 1, 2, 1}, {0, 1, 2, 1}), 1.0);               // full agreement
        QVERIFY(std::isnan(cohensKappa({}, {})));                            // nothing shared
        QVERIFY(std::isnan(cohensKappa({2, 2, 2}, {2, 2, 2})));              // one category: p_e = 1
        // By hand: a = 0011, b = 0101: p_o = 0.5, p_e = 0.5*0.5 + 0.5*0.5 = 0.5, kappa = 0.
        QCOMPARE(cohensKappa({0, 0, 1, 1}, {0, 1, 0, 1}), 0.0);
        // Always disagreeing on two balanced categories: p_o = 0, p_e = 0.5, kappa = -1.
        QCOMPARE(cohensKappa({0, 1, 0, 1}, {1, 0, 1, 0}), -1.0);
    }

    // Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers,
    // twelve units, values 1..5 with missing data; nominal alpha = 0.743.
    void alphaMatchesThePublishedExample()
    {
        const std::vector<std::vector<int>> units = {
            {1, 1, 1}, {2, 2, 3, 2}, {3, 3, 3, 3}, {3, 3, 3, 3}, {2, 2, 2, 2}, {1, 2, 3, 4},
            {4, 4, 4, 4}, {1, 1, 2, 1}, {2, 2, 2, 2}, {5, 5, 5}, {1, 1}, {3}};
        QVERIFY2(std::abs(krippendorffAlpha(units) - 0.743) < 0.0005, qPrintable(QString::number(krippendorffAlpha(units))));
    }

    void alphaEdgeCases()
    {
        QCOMPARE(krippendorffAlpha({{0, 0}, {1, 1, 1}, {2, 2}}), 1.0); // full agreement
        QVERIFY(std::isnan(krippendorffAlpha({{0}, {1}, {2}})));        // one labeler: nothing pairable
        QVERIFY(std::isnan(krippendorffAlpha({{1, 1}, {1, 1}})));       // a single category
        QVERIFY(std::isnan(krippendorffAlpha({})));
        // By hand: units (0,0) and (0,1): o_00 = 2, o_01 = o_10 = 1, n_0 = 3, n_1 = 1, n = 4;
        // alpha = 1 - (n - 1) * 2 / (2 * n_0 * n_1) = 1 - 3 * 2 / 6 = 0.
        QCOMPARE(krippendorffAlpha({{0, 0}, {0, 1}}), 0.0);
        // Two raters on many units: alpha = 1 - (2N - 1)/(2N) * (1 - kappa_Scott); here with the
        // kappa example's table, Scott's pi = (0.7 - 0.505) / (1 - 0.505).
        std::vector<int> a, b;
        repeat(a, b, 20, 1, 1);
        repeat(a, b, 5, 1, 0);
        repeat(a, b, 10, 0, 1);
        repeat(a, b, 15, 0, 0);
        std::vector<std::vector<int>> units;
        for (size_t i = 0; i < a.size(); ++i)
            units.push_back({a[i], b[i]});
        const double pi = (0.7 - 0.505) / (1 - 0.505);
        QVERIFY(std::abs(krippendorffAlpha(units) - (1 - (99.0 / 100.0) * (1 - pi))) < 1e-12);
    }

    void bootstrapIntervalHoldsTheEstimateAndIsSeeded()
    {
        std::vector<double> values;
        std::mt19937_64 random(7);
        std::normal_distribution<double> normal(3, 1);
        for (int i = 0; i < 400; ++i)
            values.push_back(normal(random));
        auto mean = [&](const std::vector<int64_t>& pick) {
            double sum = 0;
            for (int64_t i : pick)
                sum += values[size_t(i)];
            return sum / double(pick.size());
        };
        const Interval i = bootstrapInterval(400, mean, 1000, 5);
        // The mean's standard error is 1/sqrt(400) = 0.05: the interval is about 3 +- 0.1.
        QVERIFY2(i.low < 3.0 && i.high > 3.0 && i.high - i.low > 0.15 && i.high - i.low < 0.25,
                 qPrintable(QStringLiteral("%1 %2").arg(i.low).arg(i.high)));
        const Interval again = bootstrapInterval(400, mean, 1000, 5);
        QCOMPARE(again.low, i.low);
        QVERIFY(std::isnan(bootstrapInterval(0, mean).low));
        QCOMPARE(median({3, 1, 2}), 2.0);
        QCOMPARE(median({4, 1, 2, 3}), 2.5);
    }

    // Two models, A won 30 and B 10: the maximum-likelihood P(A beats B) is 30/40.
    void bradleyTerryTwoModelsByHand()
    {
        std::vector<Game> games;
        for (int i = 0; i < 30; ++i)
            games.push_back({0, 1, 1});
        for (int i = 0; i < 10; ++i)
            games.push_back({1, 0, 1});
        const std::vector<double> fit = fitBradleyTerry(2, games);
        QVERIFY(std::abs(winProbability(fit[0], fit[1]) - 0.75) < 1e-3);
        QVERIFY(std::abs(fit[0] + fit[1]) < 1e-9); // centred
        // Ties are half a win each: 10 wins, 10 losses, 20 ties is even.
        games.clear();
        for (int i = 0; i < 10; ++i) {
            games.push_back({0, 1, 1});
            games.push_back({0, 1, 0});
            games.push_back({0, 1, 0.5});
            games.push_back({1, 0, 0.5});
        }
        const std::vector<double> even = fitBradleyTerry(2, games);
        QVERIFY(std::abs(winProbability(even[0], even[1]) - 0.5) < 1e-9);
    }

    // Three models whose records fit strengths 4 : 2 : 1 exactly (A-B 20:10, B-C 20:10, A-C 40:10).
    void bradleyTerryThreeModelsByHand()
    {
        std::vector<Game> games;
        auto add = [&](int a, int b, int aWins, int bWins) {
            for (int i = 0; i < aWins; ++i)
                games.push_back({a, b, 1});
            for (int i = 0; i < bWins; ++i)
                games.push_back({a, b, 0});
        };
        add(0, 1, 20, 10);
        add(1, 2, 20, 10);
        add(0, 2, 40, 10);
        const std::vector<double> fit = fitBradleyTerry(3, games);
        QVERIFY(std::abs(fit[0] - fit[1] - std::log(2.0)) < 2e-3);
        QVERIFY(std::abs(fit[1] - fit[2] - std::log(2.0)) < 2e-3);
        QVERIFY(std::abs(winProbability(fit[0], fit[2]) - 0.8) < 1e-3);
        // A model that won everything stays finite.
        const std::vector<double> sweep = fitBradleyTerry(2, {{0, 1, 1}, {0, 1, 1}});
        QVERIFY(std::isfinite(sweep[0]) && sweep[0] > sweep[1]);
    }

    // 200 simulated comparisons of 150 games with P(A beats B) = 2/3: the 95% interval of the
    // fitted probability covers 2/3 in about 95% of them (seeded: the same figure every run).
    void bradleyTerryIntervalCoversTheTruth()
    {
        std::mt19937_64 random(2026);
        std::bernoulli_distribution aWins(2.0 / 3.0);
        int covered = 0;
        const int simulations = 200;
        for (int s = 0; s < simulations; ++s) {
            ComparisonRecord comparison{1, "binary-integers:8", {"A", "B"}, "", 150, 150};
            std::vector<JudgedLabel> labels;
            for (int g = 0; g < 150; ++g) {
                JudgedLabel l = label("x", bits(g), bits(g + 1), aWins(random) ? Choice::Left : Choice::Right,
                                      PairPurpose::Compare);
                l.comparisonId = 1;
                l.leftModelId = "A";
                l.rightModelId = "B";
                labels.push_back(l);
            }
            const ComparisonReport report = measureComparison(comparison, labels, 300, uint64_t(s) + 1);
            const Interval i = report.headToHead.at(0).interval;
            covered += i.low <= 2.0 / 3.0 && 2.0 / 3.0 <= i.high;
        }
        qInfo("coverage of the 95%% interval: %d / %d", covered, simulations);
        QVERIFY(covered >= 180 && covered <= 198);
    }

    void comparisonCountsSidesTiesAndSkips()
    {
        ComparisonRecord comparison{4, "binary-integers:8", {"ref", "tuned"}, "", 5, 5};
        auto game = [&](const std::string& left, const std::string& right, Choice choice, int n) {
            JudgedLabel l = label("x", bits(n), bits(n + 100), choice, PairPurpose::Compare);
            l.comparisonId = 4;
            l.leftModelId = left;
            l.rightModelId = right;
            return l;
        };
        // tuned wins on either side; one tie, one both-bad, one skip.
        const std::vector<JudgedLabel> labels = {game("ref", "tuned", Choice::Right, 1),
                                                 game("tuned", "ref", Choice::Left, 2),
                                                 game("ref", "tuned", Choice::Tie, 3),
                                                 game("tuned", "ref", Choice::BothBad, 4),
                                                 game("ref", "tuned", Choice::Skip, 5)};
        const ComparisonReport report = measureComparison(comparison, labels, 200, 1);
        QCOMPARE(report.games, int64_t(4));
        QCOMPARE(report.skips, int64_t(1));
        const HeadToHead& h = report.headToHead.at(0);
        QCOMPARE(h.first, std::string("ref"));
        QCOMPARE(h.secondWins, int64_t(2));
        QCOMPARE(h.firstWins, int64_t(0));
        QCOMPARE(h.ties, int64_t(2));
        QCOMPARE(h.bothBad, int64_t(1));
        QVERIFY(std::abs(report.models.at(1).winRate - 0.75) < 1e-12); // (2 + 0.5 + 0.5) / 4
    }

    // Three simulated labelers who flip the right answer with probabilities 0.05, 0.15 and 0.30,
    // on 3000 shared pairs and 400 gold pairs each: gold accuracy recovers 1 - noise, and each
    // kappa recovers (1 - 2 e_a)(1 - 2 e_b), what two balanced binary raters with those noise rates
    // have in expectation.
    void teamReportRecoversKnownNoiseRates()
    {
        const std::vector<std::pair<std::string, double>> team = {{"ana", 0.05}, {"ben", 0.15}, {"cy", 0.30}};
        std::vector<JudgedLabel> labels;
        for (const auto& [name, noise] : team) {
            std::bernoulli_distribution flip(noise), leftFirst(0.5);
            std::mt19937_64 own(std::hash<std::string>{}(name));
            for (int item = 0; item < 3400; ++item) {
                // Half the items have their first sequence right, half the second (balanced
                // categories); the sides are random per labeler, as each saw its own pair.
                const std::string a = bits(item % 200), b = bits(200 + item % 50) + "." + std::to_string(item);
                const bool aRight = item % 2 == 0;
                const bool aLeft = leftFirst(own);
                const bool pickA = flip(own) ? !aRight : aRight;
                const bool gold = item >= 3000;
                JudgedLabel l = label(name, aLeft ? a : b, aLeft ? b : a, pickA == aLeft ? Choice::Left : Choice::Right,
                                      gold ? PairPurpose::Gold : PairPurpose::Train);
                if (gold)
                    l.goldAnswer = aRight == aLeft ? Choice::Left : Choice::Right;
                l.decideMs = 1000 + item % 3;
                labels.push_back(l);
            }
        }
        const TeamAgreement report = measureAgreement(labels, "", 200, 3);
        QCOMPARE(report.items, int64_t(3000));
        QCOMPARE(report.sharedItems, int64_t(3000));
        QCOMPARE(report.pairs.size(), size_t(3));
        for (const LabelerProfile& p : report.labelers) {
            const double noise = p.labeler == "ana" ? 0.05 : p.labeler == "ben" ? 0.15 : 0.30;
            QVERIFY2(std::abs(p.goldAccuracy - (1 - noise)) < 0.05, qPrintable(QString::number(p.goldAccuracy)));
            QVERIFY(std::abs(p.leftShare - 0.5) < 0.03);
            QCOMPARE(p.medianDecideMs, 1001.0);
            QCOMPARE(p.goldJudged, int64_t(400));
        }
        for (const LabelerPairAgreement& pair : report.pairs) {
            auto noiseOf = [](const std::string& n) { return n == "ana" ? 0.05 : n == "ben" ? 0.15 : 0.30; };
            const double expected = (1 - 2 * noiseOf(pair.first)) * (1 - 2 * noiseOf(pair.second));
            QVERIFY2(std::abs(pair.kappa - expected) < 0.05 && pair.interval.low < expected + 0.02 &&
                         pair.interval.high > expected - 0.02,
                     qPrintable(QStringLiteral("%1-%2 %3 vs %4").arg(QString::fromStdString(pair.first),
                                                                     QString::fromStdString(pair.second))
                                    .arg(pair.kappa).arg(expected)));
        }
        QVERIFY(report.alpha > 0.3 && report.alpha < 0.6);
    }

    void teamReportEdgeCases()
    {
        // One labeler: no kappa, alpha undefined.
        const TeamAgreement alone = measureAgreement({label("ana", bits(1), bits(2), Choice::Left)});
        QVERIFY(alone.pairs.empty());
        QVERIFY(std::isnan(alone.alpha));
        // No shared pairs: no kappa pair is listed.
        const TeamAgreement apart = measureAgreement({label("ana", bits(1), bits(2), Choice::Left),
                                                      label("ben", bits(3), bits(4), Choice::Left)});
        QVERIFY(apart.pairs.empty());
        QCOMPARE(apart.sharedItems, int64_t(0));
        // The same pair shown with sides swapped and picked the same sequence: agreement, not a
        // disagreement; a skip is no judgement.
        const TeamAgreement swapped = measureAgreement({label("ana", bits(1), bits(2), Choice::Left),
                                                        label("ben", bits(2), bits(1), Choice::Right),
                                                        label("ana", bits(5), bits(6), Choice::Right),
                                                        label("ben", bits(6), bits(5), Choice::Left),
                                                        label("cy", bits(5), bits(6), Choice::Skip)});
        QCOMPARE(swapped.pairs.size(), size_t(1));
        QCOMPARE(swapped.pairs[0].shared, int64_t(2));
        QCOMPARE(swapped.pairs[0].kappa, 1.0);
        QCOMPARE(swapped.alpha, 1.0);
        QVERIFY(std::isnan(swapped.labelers.at(2).goldAccuracy));
    }
};

QTEST_GUILESS_MAIN(TestAgreement)
#include "tst_agreement.moc"
