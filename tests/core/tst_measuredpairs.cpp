// SPDX-License-Identifier: GPL-3.0-or-later
// Pairs from measurements (assays/measuredsequences.h, assays/measuredpairs.h): hand-worked
// summaries and margins, the winner always the better by the assay's direction, no pair twice,
// the budget and the seed kept, g-DPO's clusters holding their pairs with small union masks, and
// 100,000 sequences paired by each strategy (the time printed, never asserted: timed asserts flake).
#include <QElapsedTimer>
#include <QtTest/QtTest>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "assays/measuredpairs.h"

using namespace d2dpo;

Q_DECLARE_METATYPE(PairStrategy)
Q_DECLARE_METATYPE(AssayDirection)

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

/// `count` distinct sequences of `length` around one wild type, 1 to 4 substitutions each, valued
/// by a position-additive fitness plus noise, each with an sd of 0.1.
std::vector<MeasuredSequence> family(size_t count, size_t length, uint64_t seed)
{
    std::mt19937_64 random(seed);
    const std::string symbols = "ACDEFGHIKLMNPQRSTVWY";
    std::string wild(length, 'A');
    for (char& c : wild)
        c = symbols[random() % symbols.size()];
    std::vector<Measurement> values;
    std::set<std::string> seen;
    std::normal_distribution<double> noise(0, 0.1);
    while (values.size() < count) {
        std::string s = wild;
        double fitness = 0;
        for (size_t m = 0, mutations = 1 + random() % 4; m < mutations; ++m) {
            const size_t p = random() % length;
            s[p] = symbols[random() % symbols.size()];
            fitness += double(p % 7) / 7.0 - 0.5;
        }
        if (seen.insert(s).second)
            values.push_back(value(s, fitness + noise(random), 0.1));
    }
    return summariseMeasurements(values);
}

/// Each length's consensus (the most common symbol at each position, the lowest on a tie).
std::map<size_t, std::string> consensusByLength(const std::vector<MeasuredSequence>& s)
{
    std::map<size_t, std::vector<std::map<char, size_t>>> counts;
    for (const MeasuredSequence& m : s) {
        auto& c = counts[m.sequence.size()];
        c.resize(m.sequence.size());
        for (size_t p = 0; p < m.sequence.size(); ++p)
            ++c[p][m.sequence[p]];
    }
    std::map<size_t, std::string> out;
    for (const auto& [length, positions] : counts)
        for (const auto& symbols : positions)
            out[length] += std::max_element(symbols.begin(), symbols.end(), [](const auto& a, const auto& b) {
                               return a.second < b.second;
                           })->first;
    return out;
}

std::set<size_t> maskOf(const std::string& sequence, const std::string& consensus)
{
    std::set<size_t> out;
    for (size_t p = 0; p < sequence.size(); ++p)
        if (sequence[p] != consensus[p])
            out.insert(p);
    return out;
}

/// Every promise a pair set makes, whatever its strategy; the first one broken, or "".
QString broken(const std::vector<MeasuredSequence>& s, const MeasuredPairOptions& o, const MeasuredPairSet& made)
{
    if (made.pairs.empty() || made.pairs.size() > o.budget)
        return QStringLiteral("%1 pairs for a budget of %2").arg(made.pairs.size()).arg(o.budget);
    std::set<std::pair<size_t, size_t>> seen;
    std::set<size_t> used;
    for (const MeasuredPair& p : made.pairs) {
        const double w = s[p.winner].mean, l = s[p.loser].mean;
        if (o.direction == AssayDirection::HigherIsBetter ? !(w > l) : !(w < l))
            return QStringLiteral("the winner %1 is not better than %2").arg(w).arg(l);
        const double margin = std::max(o.fixedMargin, o.k * std::hypot(s[p.winner].spread, s[p.loser].spread));
        if (!(std::abs(w - l) > margin))
            return QStringLiteral("%1 against %2 does not pass the margin %3").arg(w).arg(l).arg(margin);
        if (!seen.insert({std::min(p.winner, p.loser), std::max(p.winner, p.loser)}).second)
            return QStringLiteral("the pair %1, %2 twice").arg(p.winner).arg(p.loser);
        used.insert(p.winner);
        used.insert(p.loser);
    }
    if (made.sequencesUsed != used.size())
        return QStringLiteral("sequencesUsed %1, not %2").arg(made.sequencesUsed).arg(used.size());
    if (made.candidates < made.pairs.size() || made.description.empty())
        return QStringLiteral("%1 candidates for %2 pairs").arg(made.candidates).arg(made.pairs.size());
    return {};
}

bool samePairs(const MeasuredPairSet& a, const MeasuredPairSet& b)
{
    if (a.pairs.size() != b.pairs.size())
        return false;
    for (size_t i = 0; i < a.pairs.size(); ++i)
        if (a.pairs[i].winner != b.pairs[i].winner || a.pairs[i].loser != b.pairs[i].loser)
            return false;
    return true;
}

} // namespace

class TestMeasuredPairs final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void summariesByHand()
    {
        const auto s = summariseMeasurements({value("B", 1.0), value("A", 5.0, 2.0, 4), value("B", 3.0),
                                              value("C", 7.0), value("D", 1.0, 9.0), value("D", 2.0, 9.0),
                                              value("D", 6.0, 9.0)});
        QCOMPARE(s.size(), size_t(4));
        QCOMPARE(s[0].sequence, std::string("A")); // sorted by sequence
        QCOMPARE(s[0].mean, 5.0);
        QCOMPARE(s[0].spread, 1.0); // sd 2 over sqrt(4 replicates)
        QCOMPARE(s[0].count, 1);
        QCOMPARE(s[1].mean, 2.0);
        QCOMPARE(s[1].count, 2);
        QCOMPARE(s[1].spread, 1.0); // two values 1 and 3: sample sd sqrt(2), over sqrt(2)
        QCOMPARE(s[2].spread, 0.0); // one value, no sd
        // 1, 2, 6: mean 3, squares 4 + 1 + 9 = 14, sample sd sqrt(7), over sqrt(3) (the given sd unused).
        QCOMPARE(s[3].mean, 3.0);
        QCOMPARE(s[3].count, 3);
        QVERIFY(std::abs(s[3].spread - std::sqrt(7.0 / 3.0)) < 1e-12);
        QVERIFY(summariseMeasurements({}).empty());
    }

    void theMarginByHand_data()
    {
        // Means 0, 1, 3, 10 with spreads 0, 0, 1, 0. A pair (winner, loser) counts when the
        // difference exceeds max(fixed, k x sqrt(spread² + spread²)).
        QTest::addColumn<PairStrategy>("strategy");
        QTest::addColumn<double>("k");
        QTest::addColumn<double>("fixed");
        QTest::addColumn<QString>("expected");
        for (PairStrategy strategy : {PairStrategy::Margin, PairStrategy::UnionMaskClusters}) {
            const char* name = strategy == PairStrategy::Margin ? "margin" : "clusters";
            // 1-0 short of 1.5; 3-0 passes (3 > max(1.5, 2)); 3-1 short (2 is not > 2); 10 over each.
            QTest::addRow("%s, k 2, fixed 1.5", name) << strategy << 2.0 << 1.5 << "2>0 3>0 3>1 3>2";
            // Every difference passes: 1 > 0, 3 > 1, 2 > 1, 7 > 1.
            QTest::addRow("%s, k 1", name) << strategy << 1.0 << 0.0 << "1>0 2>0 2>1 3>0 3>1 3>2";
            // 3-0 needs more than 3 and 3-1 more than 3: both short.
            QTest::addRow("%s, k 3", name) << strategy << 3.0 << 0.0 << "1>0 3>0 3>1 3>2";
            QTest::addRow("%s, fixed 2.5 alone", name) << strategy << 0.0 << 2.5 << "2>0 3>0 3>1 3>2";
            QTest::addRow("%s, fixed 7", name) << strategy << 0.0 << 7.0 << "3>0 3>1";
        }
    }

    void theMarginByHand()
    {
        QFETCH(PairStrategy, strategy);
        QFETCH(double, k);
        QFETCH(double, fixed);
        QFETCH(QString, expected);
        // One length and one symbol apart at most: one union-mask cluster holds all four.
        const std::vector<MeasuredSequence> s = {{"a", 0, 0, 1}, {"b", 1, 0, 1}, {"c", 3, 1, 1}, {"d", 10, 0, 1}};
        MeasuredPairOptions o;
        o.strategy = strategy;
        o.k = k;
        o.fixedMargin = fixed;
        o.budget = 100;
        const auto made = makeMeasuredPairs(s, o);
        QVERIFY2(made, made ? "" : made.error().c_str());
        std::set<QString> got;
        for (const MeasuredPair& p : made->pairs)
            got.insert(QStringLiteral("%1>%2").arg(p.winner).arg(p.loser));
        QCOMPARE(QStringList(got.begin(), got.end()).join(QLatin1Char(' ')), expected);
        QCOMPARE(made->pairs.size(), got.size()); // none twice
        QVERIFY2(broken(s, o, made.value()).isEmpty(), qPrintable(broken(s, o, made.value())));
        // Lower is better: the same pairs, each the other way round.
        o.direction = AssayDirection::LowerIsBetter;
        const auto lower = makeMeasuredPairs(s, o);
        QVERIFY(lower);
        QCOMPARE(lower->pairs.size(), made->pairs.size());
        for (const MeasuredPair& p : lower->pairs)
            QVERIFY(got.count(QStringLiteral("%1>%2").arg(p.loser).arg(p.winner)) == 1);
    }

    void badOptionsAreRefused_data()
    {
        QTest::addColumn<int>("sequences");
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("none") << 0 << "" << "at least 2 measured sequences; there are none";
        QTest::newRow("one") << 1 << "" << "at least 2 measured sequences; there is 1";
        QTest::newRow("budget 0") << 4 << "budget" << "the pair budget must be at least 1";
        QTest::newRow("k negative") << 4 << "k" << "the margin and k must be finite and at least 0";
        QTest::newRow("margin NaN") << 4 << "margin" << "the margin and k must be finite and at least 0";
        QTest::newRow("best share 0") << 4 << "share0" << "the best share must be above 0 and at most 1";
        QTest::newRow("best share 1.5") << 4 << "share2" << "the best share must be above 0 and at most 1";
        QTest::newRow("clusters of 1") << 4 << "cluster" << "a cluster must hold at least 2 sequences";
        QTest::newRow("no pair passes") << 4 << "wide" << "the largest difference found is 10, against a margin of 20";
        QTest::newRow("no pair passes the spread") << 4 << "spread" << "the largest difference found is 10, against a margin of 50";
        QTest::newRow("lengths differ") << 4 << "lengths" << "no two of the 4 measured sequences share a cluster";
    }

    void badOptionsAreRefused()
    {
        QFETCH(int, sequences);
        QFETCH(QString, option);
        QFETCH(QString, phrase);
        std::vector<MeasuredSequence> s = {{"a", 0, 0, 1}, {"b", 1, 0, 1}, {"c", 3, 1, 1}, {"d", 10, 0, 1}};
        s.resize(size_t(sequences));
        MeasuredPairOptions o;
        o.budget = option == QLatin1String("budget") ? 0 : 10;
        o.k = option == QLatin1String("k") ? -1 : 1;
        o.fixedMargin = option == QLatin1String("margin") ? std::nan("") : option == QLatin1String("wide") ? 20 : 0;
        if (option.startsWith(QLatin1String("share"))) {
            o.strategy = PairStrategy::BestAgainstRest;
            o.bestShare = option == QLatin1String("share0") ? 0 : 1.5;
        }
        if (option == QLatin1String("cluster")) {
            o.strategy = PairStrategy::UnionMaskClusters;
            o.maxClusterSize = 1;
        }
        if (option == QLatin1String("spread")) {
            s[0].spread = s[3].spread = 5;
            o.k = std::sqrt(50.0); // the extremes' margin: k x sqrt(25 + 25) = 50
        }
        if (option == QLatin1String("lengths")) {
            o.strategy = PairStrategy::UnionMaskClusters;
            for (size_t i = 0; i < s.size(); ++i)
                s[i].sequence = std::string(i + 1, 'A');
        }
        const auto made = makeMeasuredPairs(s, o);
        QVERIFY2(!made, "pairs were made");
        QVERIFY2(made.error().find(phrase.toStdString()) != std::string::npos, made.error().c_str());
    }

    void everyStrategyKeepsItsPromises_data()
    {
        QTest::addColumn<PairStrategy>("strategy");
        QTest::addColumn<AssayDirection>("direction");
        QTest::addColumn<double>("k");
        const std::pair<const char*, PairStrategy> strategies[] = {
            {"margin", PairStrategy::Margin}, {"clusters", PairStrategy::UnionMaskClusters}, {"best", PairStrategy::BestAgainstRest}};
        for (const auto& [name, strategy] : strategies) {
            QTest::addRow("%s, higher", name) << strategy << AssayDirection::HigherIsBetter << 1.0;
            QTest::addRow("%s, lower", name) << strategy << AssayDirection::LowerIsBetter << 1.0;
            QTest::addRow("%s, higher, k 3", name) << strategy << AssayDirection::HigherIsBetter << 3.0;
        }
    }

    void everyStrategyKeepsItsPromises()
    {
        QFETCH(PairStrategy, strategy);
        QFETCH(AssayDirection, direction);
        QFETCH(double, k);
        const auto s = family(3000, 40, 11);
        MeasuredPairOptions o;
        o.strategy = strategy;
        o.direction = direction;
        o.k = k;
        o.budget = 2000;
        o.seed = 5;
        const auto made = makeMeasuredPairs(s, o);
        QVERIFY2(made, made ? "" : made.error().c_str());
        QVERIFY2(broken(s, o, made.value()).isEmpty(), qPrintable(broken(s, o, made.value())));
        const auto again = makeMeasuredPairs(s, o);
        QVERIFY(again && samePairs(again.value(), made.value())); // the same seed, the same pairs
        o.seed = 6;
        const auto other = makeMeasuredPairs(s, o);
        QVERIFY(other && !samePairs(other.value(), made.value()));
        // The budget is a ceiling, and a small one is filled exactly.
        for (size_t budget : {size_t(1), size_t(7), size_t(100)}) {
            o.budget = budget;
            const auto few = makeMeasuredPairs(s, o);
            QVERIFY(few);
            QCOMPARE(few->pairs.size(), budget);
        }
    }

    void clustersHoldTheirPairsAndStaySmall()
    {
        // Two families of different lengths: a cluster never mixes them.
        auto s = family(2000, 30, 3);
        const auto shorter = family(500, 20, 4);
        s.insert(s.end(), shorter.begin(), shorter.end());
        for (size_t maxSize : {size_t(2), size_t(16), size_t(64)}) {
            const auto clusters = unionMaskClusters(s, maxSize);
            QVERIFY(unionMaskClusters(s, maxSize) == clusters); // deterministic
            const auto consensus = consensusByLength(s);
            std::vector<size_t> clusterOf(s.size(), SIZE_MAX);
            size_t members = 0;
            for (size_t c = 0; c < clusters.size(); ++c) {
                QVERIFY(!clusters[c].empty() && clusters[c].size() <= maxSize);
                const size_t length = s[clusters[c].front()].sequence.size();
                const std::string& lengthConsensus = consensus.at(length);
                const size_t seedMask = maskOf(s[clusters[c].front()].sequence, lengthConsensus).size();
                std::set<size_t> unionMask;
                for (size_t i : clusters[c]) {
                    QCOMPARE(clusterOf[i], SIZE_MAX); // in one cluster only
                    QCOMPARE(s[i].sequence.size(), length);
                    clusterOf[i] = c;
                    ++members;
                    const auto mask = maskOf(s[i].sequence, lengthConsensus);
                    unionMask.insert(mask.begin(), mask.end());
                }
                QVERIFY2(unionMask.size() <= seedMask + kUnionMaskSlack,
                         qPrintable(QStringLiteral("cluster %1: a union mask of %2 from a seed's %3")
                                        .arg(c).arg(unionMask.size()).arg(seedMask)));
            }
            QCOMPARE(members, s.size());
            MeasuredPairOptions o;
            o.strategy = PairStrategy::UnionMaskClusters;
            o.maxClusterSize = maxSize;
            o.budget = 100000;
            const auto made = makeMeasuredPairs(s, o);
            QVERIFY2(made, made ? "" : made.error().c_str());
            QVERIFY2(broken(s, o, made.value()).isEmpty(), qPrintable(broken(s, o, made.value())));
            QCOMPARE(made->pairs.size(), made->candidates); // under the budget: all of them
            for (const MeasuredPair& p : made->pairs)
                QCOMPARE(clusterOf[p.winner], clusterOf[p.loser]);
            QVERIFY2(made->description.find(std::to_string(clusters.size()) + " clusters") != std::string::npos,
                     made->description.c_str());
        }
    }

    void aHundredThousandSequences()
    {
        QElapsedTimer timer;
        timer.start();
        const auto s = family(100000, 200, 1);
        QCOMPARE(s.size(), size_t(100000));
        qInfo("100,000 distinct sequences of length 200 made and summarised in %.2f s (at -O0, the test's own)",
              double(timer.nsecsElapsed()) / 1e9);
        const std::pair<const char*, PairStrategy> strategies[] = {
            {"margin", PairStrategy::Margin}, {"clusters", PairStrategy::UnionMaskClusters}, {"best", PairStrategy::BestAgainstRest}};
        for (const auto& [name, strategy] : strategies) {
            MeasuredPairOptions o;
            o.strategy = strategy;
            o.budget = 100000;
            timer.restart();
            const auto made = makeMeasuredPairs(s, o);
            const double seconds = double(timer.nsecsElapsed()) / 1e9;
            QVERIFY2(made, made ? "" : made.error().c_str());
            qInfo("%-8s %6zu pairs of %zu sequences (%zu used, %zu candidates) in %.2f s", name, made->pairs.size(),
                  s.size(), made->sequencesUsed, made->candidates, seconds);
            QVERIFY2(broken(s, o, made.value()).isEmpty(), qPrintable(broken(s, o, made.value())));
        }
    }
};

QTEST_GUILESS_MAIN(TestMeasuredPairs)
#include "tst_measuredpairs.moc"
