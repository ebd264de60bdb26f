// SPDX-License-Identifier: GPL-3.0-or-later
// The held-out splits (assays/heldoutsplit.h) on a deep mutational scan made here: a wild type and
// its single, double and triple mutants. What each split promises is checked as a property of the
// whole set: the random split holds out about its share; the position split leaves no training
// sequence with a change at a held-out position; the mutation-count split holds out only
// sequences with more mutations than any training one; and Spearman against hand-worked values.
#include <QtTest/QtTest>

#include <cmath>
#include <random>
#include <set>

#include "assays/heldoutsplit.h"

using namespace d2dpo;

namespace {

const std::string kWildType = "MKTAYIAKQRQISFVKSHFSRQ";

/// The wild type, 300 single, 300 double and 100 triple mutants (distinct, seeded).
std::vector<std::string> scan()
{
    std::mt19937_64 random(4);
    std::set<std::string> seen{kWildType};
    std::vector<std::string> out{kWildType};
    const std::string symbols = "ACDEFGHIKLMNPQRSTVWY";
    for (const auto& [mutations, count] : std::vector<std::pair<int, int>>{{1, 300}, {2, 300}, {3, 100}})
        for (int made = 0; made < count;) {
            std::string s = kWildType;
            std::set<size_t> where;
            while (int(where.size()) < mutations)
                where.insert(random() % s.size());
            for (size_t p : where) {
                char c;
                do
                    c = symbols[random() % symbols.size()];
                while (c == kWildType[p]);
                s[p] = c;
            }
            if (seen.insert(s).second) {
                out.push_back(s);
                ++made;
            }
        }
    return out;
}

std::set<size_t> changedPositions(const std::string& s)
{
    std::set<size_t> out;
    for (size_t i = 0; i < s.size(); ++i)
        if (s[i] != kWildType[i])
            out.insert(i);
    return out;
}

} // namespace

class TestHeldOutSplit final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void theConsensusOfAScanIsItsWildType() { QCOMPARE(consensusOf(scan()), kWildType); }

    void theRandomSplitHoldsOutItsShare()
    {
        const auto sequences = scan();
        const auto flags = heldOutFlags(sequences, SplitKind::Random, 0.2, 7);
        QVERIFY(flags);
        const double share = double(std::count(flags->begin(), flags->end(), true)) / double(sequences.size());
        QVERIFY2(std::abs(share - 0.2) < 0.05, qPrintable(QString::number(share)));
        // A function of the sequence and the seed: the same flags again, others with another seed.
        QCOMPARE(heldOutFlags(sequences, SplitKind::Random, 0.2, 7).value(), flags.value());
        QVERIFY(heldOutFlags(sequences, SplitKind::Random, 0.2, 8).value() != flags.value());
    }

    void thePositionSplitKeepsHeldOutPositionsOutOfTraining()
    {
        const auto sequences = scan();
        const auto flags = heldOutFlags(sequences, SplitKind::Position, 0.2, 3);
        QVERIFY(flags);
        std::set<size_t> trained, heldOutOnly;
        for (size_t i = 0; i < sequences.size(); ++i)
            if (!flags.value()[i])
                for (size_t p : changedPositions(sequences[i]))
                    trained.insert(p);
        size_t heldOut = 0;
        for (size_t i = 0; i < sequences.size(); ++i) {
            if (!flags.value()[i])
                continue;
            ++heldOut;
            // Each held-out sequence changes at least one position no training sequence changes.
            const auto changed = changedPositions(sequences[i]);
            QVERIFY(std::any_of(changed.begin(), changed.end(), [&](size_t p) { return !trained.count(p); }));
        }
        QVERIFY(heldOut > 0 && heldOut < sequences.size() / 2);
        QVERIFY(!flags.value()[0]); // the wild type mutates nothing: it trains
    }

    void theMutationSplitHoldsOutTheMostMutated()
    {
        const auto sequences = scan();
        const auto flags = heldOutFlags(sequences, SplitKind::Mutations, 0.2, 1);
        QVERIFY(flags);
        size_t heldOut = 0, fewestHeldOut = 99, mostTrained = 0;
        for (size_t i = 0; i < sequences.size(); ++i) {
            const size_t n = changedPositions(sequences[i]).size();
            if (flags.value()[i]) {
                ++heldOut;
                fewestHeldOut = std::min(fewestHeldOut, n);
            } else {
                mostTrained = std::max(mostTrained, n);
            }
        }
        QCOMPARE(heldOut, size_t(100)); // the triples: 100 of 701 fit in 0.2; the doubles would not
        QVERIFY(fewestHeldOut > mostTrained);
        // A larger share takes the doubles too, never the wild type and the singles.
        const auto wide = heldOutFlags(sequences, SplitKind::Mutations, 0.6, 1);
        QCOMPARE(size_t(std::count(wide->begin(), wide->end(), true)), size_t(400));
    }

    void aSplitThatCannotHoldOutIsRefused()
    {
        const std::vector<std::string> singles = {"AAAA", "CAAA", "ACAA", "AACA", "AAAC"};
        // One mutation count besides the consensus: the mutation split still holds out the singles.
        const auto singlesOut = heldOutFlags(singles, SplitKind::Mutations, 0.5, 1);
        QVERIFY(singlesOut);
        QCOMPARE(std::count(singlesOut->begin(), singlesOut->end(), true), 4);
        const std::vector<std::string> same = {"AAAA", "AAAA"};
        const auto none = heldOutFlags(same, SplitKind::Mutations, 0.5, 1);
        QVERIFY(!none && QString::fromStdString(none.error()).contains("at least two mutation counts"));
        QVERIFY(!heldOutFlags(same, SplitKind::Position, 0.5, 1));
        QVERIFY(!splitKindNamed("contiguous"));
        QCOMPARE(splitKindNamed("position").value(), SplitKind::Position);
        QCOMPARE(heldOutFlags(singles, SplitKind::Random, 0.0, 1).value(), std::vector<bool>(5, false));
    }

    void spearmanAgreesWithHandWorkedValues()
    {
        QCOMPARE(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
        QCOMPARE(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
        // Ranks 1,2,3,4 against 2,1,4,3: d² = 4, rho = 1 - 6*4/(4*15) = 0.6.
        QVERIFY(std::abs(spearman({1, 2, 3, 4}, {2, 1, 4, 3}) - 0.6) < 1e-12);
        QVERIFY(std::isnan(spearman({1, 1, 1}, {1, 2, 3})));
    }
};

QTEST_APPLESS_MAIN(TestHeldOutSplit)
#include "tst_heldoutsplit.moc"
