// SPDX-License-Identifier: GPL-3.0-or-later
// Pairs from measurements (assays/measuredpairs.h): hand-worked summaries and margins, the winner
// always the better by the assay's direction, no pair twice, the budget and the seed kept, g-DPO's
// clusters holding their pairs, and 100,000 sequences paired by each strategy (the time printed,
// never asserted).
#include <QElapsedTimer>
#include <QtTest/QtTest>

#include <random>
#include <set>

#include "assays/measuredpairs.h"

using namespace d2dpo;

namespace {

Measurement value(const std::string& sequence, double v, std::optional<double> sd = std::nullopt, int replicates = 1)
{
    Measurement m;
    m.sequence = sequence;
    m.value = v;
    m.sd = sd;
    m.replicates = replicates;
    return m;
}

/// `count` sequences of `length` around one wild type, 1 to 3 mutations each, valued by a
/// position-additive fitness plus noise.
std::vector<MeasuredSequence> family(size_t count, size_t length, uint64_t seed)
{
    std::mt19937_64 random(seed);
    const std::string symbols = "ACDEFGHIKLMNPQRSTVWY";
    std::string wild(length, 'A');
    for (char& c : wild)
        c = symbols[random() % symbols.size()];
    std::vector<Measurement> values;
    std::normal_distribution<double> noise(0, 0.1);
    for (size_t i = 0; i < count; ++i) {
        std::string s = wild;
        double fitness = 0;
        for (size_t m = 0; m < 1 + random() % 3; ++m) {
            const size_t p = random() % length;
            s[p] = symbols[random() % symbols.size()];
            fitness += double(p % 7) / 7.0 - 0.5;
        }
        values.push_back(value(s, fitness + noise(random), 0.1));
    }
    return summariseMeasurements(values);
}

} // namespace

class TestMeasuredPairs final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void summariesByHand()
    {
        const auto s = summariseMeasurements({value("B", 1.0), value("A", 5.0, 2.0, 4), value("B", 3.0)});
        QCOMPARE(s.size(), size_t(2));
        QCOMPARE(s[0].sequence, std::string("A")); // sorted by sequence
        QCOMPARE(s[0].mean, 5.0);
        QCOMPARE(s[0].spread, 1.0); // sd 2 over sqrt(4 replicates)
        QCOMPARE(s[1].mean, 2.0);
        QCOMPARE(s[1].count, 2);
        QCOMPARE(s[1].spread, 1.0); // sample sd sqrt(2) over sqrt(2)
    }

    void theMarginByHand()
    {
        // Means 0, 1, 3, 10 with spreads 0, 0, 1, 0, k = 2 and a fixed margin of 1.5: 1 over 0 falls
        // short of 1.5; 3 over 0 passes (3 > max(1.5, 2 x 1)); 3 over 1 falls short (2 is not > 2);
        // 10 passes over each. Exactly 4 pairs.
        std::vector<MeasuredSequence> s = {{"a", 0, 0, 1}, {"b", 1, 0, 1}, {"c", 3, 1, 1}, {"d", 10, 0, 1}};
        MeasuredPairOptions o;
        o.k = 2;
        o.fixedMargin = 1.5;
        o.budget = 100;
        const auto made = makeMeasuredPairs(s, o);
        QVERIFY(made);
        std::set<std::pair<size_t, size_t>> got;
        for (const MeasuredPair& p : made->pairs)
            got.insert({p.winner, p.loser});
        const std::set<std::pair<size_t, size_t>> expected = {{2, 0}, {3, 0}, {3, 1}, {3, 2}};
        QCOMPARE(got, expected);
        QCOMPARE(made->pairs.size(), size_t(4)); // none twice
        o.direction = AssayDirection::LowerIsBetter;
        const auto lower = makeMeasuredPairs(s, o);
        QVERIFY(lower);
        for (const MeasuredPair& p : lower->pairs)
            QVERIFY(s[p.winner].mean < s[p.loser].mean);
        o.fixedMargin = 20;
        const auto none = makeMeasuredPairs(s, o);
        QVERIFY(!none);
        QVERIFY2(none.error().find("the largest difference is 10") != std::string::npos, none.error().c_str());
        QVERIFY(!makeMeasuredPairs({s[0]}, o));
    }

    void everyStrategyKeepsItsPromises_data()
    {
        QTest::addColumn<int>("strategy");
        QTest::newRow("margin") << int(PairStrategy::Margin);
        QTest::newRow("clusters") << int(PairStrategy::UnionMaskClusters);
        QTest::newRow("best") << int(PairStrategy::BestAgainstRest);
    }

    void everyStrategyKeepsItsPromises()
    {
        QFETCH(int, strategy);
        const auto s = family(3000, 40, 11);
        MeasuredPairOptions o;
        o.strategy = PairStrategy(strategy);
        o.budget = 2000;
        o.seed = 5;
        const auto made = makeMeasuredPairs(s, o);
        QVERIFY2(made, made ? "" : made.error().c_str());
        QVERIFY(!made->pairs.empty() && made->pairs.size() <= o.budget);
        std::set<std::pair<size_t, size_t>> seen;
        for (const MeasuredPair& p : made->pairs) {
            QVERIFY(s[p.winner].mean > s[p.loser].mean);
            QVERIFY(std::abs(s[p.winner].mean - s[p.loser].mean) > o.k * std::hypot(s[p.winner].spread, s[p.loser].spread));
            QVERIFY(seen.insert({std::min(p.winner, p.loser), std::max(p.winner, p.loser)}).second);
        }
        const auto again = makeMeasuredPairs(s, o);
        QCOMPARE(again->pairs.size(), made->pairs.size());
        for (size_t i = 0; i < made->pairs.size(); ++i)
            QVERIFY(again->pairs[i].winner == made->pairs[i].winner && again->pairs[i].loser == made->pairs[i].loser);
        QVERIFY(!made->description.empty());
    }

    void clustersHoldTheirPairsAndStaySmall()
    {
        const auto s = family(2000, 30, 3);
        const auto clusters = unionMaskClusters(s, 64);
        std::vector<size_t> clusterOf(s.size(), SIZE_MAX);
        size_t members = 0;
        for (size_t c = 0; c < clusters.size(); ++c) {
            QVERIFY(!clusters[c].empty() && clusters[c].size() <= 64);
            for (size_t i : clusters[c]) {
                QCOMPARE(clusterOf[i], SIZE_MAX); // in one cluster only
                clusterOf[i] = c;
                ++members;
            }
        }
        QCOMPARE(members, s.size());
        MeasuredPairOptions o;
        o.strategy = PairStrategy::UnionMaskClusters;
        o.budget = 100000;
        const auto made = makeMeasuredPairs(s, o);
        QVERIFY(made);
        for (const MeasuredPair& p : made->pairs)
            QCOMPARE(clusterOf[p.winner], clusterOf[p.loser]);
    }

    void aHundredThousandSequences()
    {
        const auto s = family(100000, 200, 1);
        for (PairStrategy strategy : {PairStrategy::Margin, PairStrategy::UnionMaskClusters, PairStrategy::BestAgainstRest}) {
            MeasuredPairOptions o;
            o.strategy = strategy;
            o.budget = 100000;
            QElapsedTimer timer;
            timer.start();
            const auto made = makeMeasuredPairs(s, o);
            QVERIFY(made);
            qInfo("%s: %zu pairs of %zu sequences in %.2f s", made->description.substr(0, 40).c_str(), made->pairs.size(),
                  s.size(), double(timer.nsecsElapsed()) / 1e9);
        }
    }
};

QTEST_GUILESS_MAIN(TestMeasuredPairs)
#include "tst_measuredpairs.moc"
