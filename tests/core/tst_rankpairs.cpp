// SPDX-License-Identifier: GPL-3.0-or-later
// The rule of a parallel `d2dpo pairs` (labeling/rankpairs.h), by hand-worked cases: the shares add
// up to the count, rank 0 keeps the seed, a draw survives its bytes, and the merge keeps every pair
// once (either way round) with its own margin, and says which ranks failed.
#include <QtTest/QtTest>

#include <set>

#include "labeling/rankpairs.h"

using namespace d2dpo;

namespace {

ShownPair pairOf(const std::string& left, const std::string& right)
{
    return {0, left, right, "m", "m", "binary:4"};
}

} // namespace

class TestRankPairs final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sharesAddUpToTheCount()
    {
        QCOMPARE(rankShareOf(10, 0, 3), int64_t(3));
        QCOMPARE(rankShareOf(10, 1, 3), int64_t(3));
        QCOMPARE(rankShareOf(10, 2, 3), int64_t(4));
        QCOMPARE(rankShareOf(1, 0, 2), int64_t(0)); // fewer pairs than ranks: the last rank draws it
        QCOMPARE(rankShareOf(1, 1, 2), int64_t(1));
        for (int world : {1, 2, 3, 7, 64})
            for (int64_t count : {1, 2, 50, 999, 1'000'000}) {
                int64_t sum = 0;
                for (int rank = 0; rank < world; ++rank) {
                    const int64_t share = rankShareOf(count, rank, world);
                    QVERIFY(share == count / world || share == count / world + 1);
                    sum += share;
                }
                QCOMPARE(sum, count);
            }
    }

    void rankZeroKeepsTheSeedAndTheOthersGetTheirOwn()
    {
        QCOMPARE(rankSeedOf(42, 0), uint64_t(42));
        std::set<uint64_t> seen{42, 43};
        for (int rank = 1; rank < 100; ++rank)
            QVERIFY(seen.insert(rankSeedOf(42, rank)).second); // never another rank's, nor seed + 1
        QVERIFY(rankSeedOf(42, 1) != rankSeedOf(43, 1));
    }

    void aDrawSurvivesItsBytes()
    {
        RankDraw draw;
        draw.pairs = {pairOf("0101", "1100"), pairOf("\"quoted\"\n", "ünï")};
        draw.margins = {0.25, -1.5};
        draw.scoredBy = "ref";
        draw.candidates = 8;
        draw.candidatesMeanAbs = 0.75;
        const auto back = decodeRankDraw(encodeRankDraw(draw));
        QVERIFY(back);
        QCOMPARE(back->pairs.size(), size_t(2));
        QCOMPARE(back->pairs[1].left, std::string("\"quoted\"\n"));
        QCOMPARE(back->pairs[1].right, std::string("ünï"));
        QCOMPARE(back->pairs[0].task, std::string("binary:4"));
        QCOMPARE(back->margins, draw.margins);
        QCOMPARE(back->candidates, int64_t(8));
        QCOMPARE(back->candidatesMeanAbs, 0.75);
        QVERIFY(!decodeRankDraw("{\"pairs\": 3}"));
        QVERIFY(!decodeRankDraw("not json"));
        QVERIFY(!decodeRankDraw(R"({"pairs":[["a","b","m","m","t"]],"margins":[1,2],"scored_by":"",)"
                                R"("candidates":2,"candidates_mean_abs":0,"error":""})"));
    }

    void theMergeKeepsEveryPairOnce()
    {
        RankDraw zero, one, two;
        zero.pairs = {pairOf("00", "01"), pairOf("10", "11"), pairOf("00", "01")}; // a repeat within a rank
        zero.margins = {0.1, 0.2, 0.3};
        zero.candidates = 12;
        zero.candidatesMeanAbs = 0.5;
        one.pairs = {pairOf("11", "10"), pairOf("01", "10")}; // the first: rank 0's second, the other way round
        one.margins = {0.4, -0.6};
        one.candidates = 4;
        one.candidatesMeanAbs = 1.0;
        two.error = "the checkpoint could not be read";
        const MergedDraws merged = mergeRankDraws({zero, one, two});
        QCOMPARE(merged.pairs.size(), size_t(3));
        QCOMPARE(merged.pairs[0].left, std::string("00"));
        QCOMPARE(merged.pairs[1].left, std::string("10"));
        QCOMPARE(merged.pairs[2].left, std::string("01"));
        QCOMPARE(merged.margins, (std::vector<double>{0.1, 0.2, -0.6})); // each pair's own margin
        QCOMPARE(merged.repeated, int64_t(2));
        QCOMPARE(merged.candidates, int64_t(16));
        QCOMPARE(merged.candidatesMeanAbs, (0.5 * 12 + 1.0 * 4) / 16);
        QCOMPARE(merged.keptMeanAbs, (0.1 + 0.2 + 0.6) / 3);
        QCOMPARE(merged.failures, std::vector<std::string>{"rank 2: the checkpoint could not be read"});
        // Pairs as drawn (no margins on a rank that drew some) keep no margins at all.
        one.margins.clear();
        QVERIFY(mergeRankDraws({zero, one}).margins.empty());
    }
};

QTEST_GUILESS_MAIN(TestRankPairs)
#include "tst_rankpairs.moc"
