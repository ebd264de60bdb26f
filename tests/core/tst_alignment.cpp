// SPDX-License-Identifier: GPL-3.0-or-later
// The pairwise alignment (analysis/alignment.h): hand-worked scores for each alphabet's scoring,
// the invariants every alignment keeps (its gapped strings are the inputs, its score is the one
// recomputed from them, its column map points at the inputs' symbols), the optimum against a
// brute force over every alignment of tiny sequences, and the time of a 1000 x 1000 alignment.
#include <QtTest/QtTest>

#include <chrono>
#include <limits>
#include <random>

#include "analysis/alignment.h"

using namespace d2dpo;

namespace {

std::string withoutGaps(const std::string& gapped)
{
    std::string plain;
    for (char c : gapped)
        if (c != '-')
            plain += c;
    return plain;
}

std::string randomText(std::mt19937& random, const std::string& symbols, int length)
{
    std::string text;
    std::uniform_int_distribution<size_t> pick(0, symbols.size() - 1);
    for (int i = 0; i < length; ++i)
        text += symbols[pick(random)];
    return text;
}

/// The best score over every alignment of a[i..] with b[j..], enumerated column by column (a
/// pair, a gap in b, a gap in a) with the gapped strings scored whole by AlignmentScoring::score.
int bruteForce(const std::string& a, const std::string& b, const AlignmentScoring& scoring, std::string ga = {},
               std::string gb = {}, size_t i = 0, size_t j = 0)
{
    if (i == a.size() && j == b.size())
        return scoring.score(ga, gb);
    int best = std::numeric_limits<int>::min();
    if (i < a.size() && j < b.size())
        best = std::max(best, bruteForce(a, b, scoring, ga + a[i], gb + b[j], i + 1, j + 1));
    if (i < a.size())
        best = std::max(best, bruteForce(a, b, scoring, ga + a[i], gb + '-', i + 1, j));
    if (j < b.size())
        best = std::max(best, bruteForce(a, b, scoring, ga + '-', gb + b[j], i, j + 1));
    return best;
}

/// What every alignment must be, whatever its inputs.
void checkInvariants(const Alignment& alignment, const std::string& first, const std::string& second,
                     const AlignmentScoring& scoring)
{
    QCOMPARE(alignment.first.size(), alignment.second.size());
    QCOMPARE(withoutGaps(alignment.first), withoutTrailingPads(first));
    QCOMPARE(withoutGaps(alignment.second), withoutTrailingPads(second));
    QCOMPARE(alignment.score, scoring.score(alignment.first, alignment.second));
    QCOMPARE(alignment.firstPositions.size(), alignment.first.size());
    int64_t identical = 0;
    for (size_t c = 0; c < alignment.first.size(); ++c) {
        const int p = alignment.firstPositions[c];
        const int q = alignment.secondPositions[c];
        QVERIFY(p >= 0 || q >= 0); // never a column of two gaps
        if (p >= 0)
            QCOMPARE(alignment.first[c], first[size_t(p)]);
        else
            QCOMPARE(alignment.first[c], '-');
        if (q >= 0)
            QCOMPARE(alignment.second[c], second[size_t(q)]);
        identical += p >= 0 && q >= 0 && first[size_t(p)] == second[size_t(q)] ? 1 : 0;
    }
    QCOMPARE(alignment.identical, identical);
}

} // namespace

class TestAlignment final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void handWorked_data()
    {
        QTest::addColumn<QString>("alphabet");
        QTest::addColumn<QString>("first");
        QTest::addColumn<QString>("second");
        QTest::addColumn<int>("score");
        QTest::addColumn<double>("identity");
        QTest::addColumn<int>("gaps");
        // BLOSUM62's diagonal: A 4, C 9, D 6, E 5, F 6, G 6.
        QTest::newRow("protein, identical") << "protein" << "ACDEFG" << "ACDEFG" << 36 << 1.0 << 0;
        // W/W 11 + W/F 1 + K/R 2: a substitution beats two gaps of 10.
        QTest::newRow("protein, substitutions") << "protein" << "WWK" << "WFR" << 14 << 1.0 / 3.0 << 0;
        // U (selenocysteine) is not in BLOSUM62: it scores as X (X/X = -1, X/A = 0).
        QTest::newRow("protein, U as X") << "protein" << "UA" << "UA" << 3 << 1.0 << 0;
        // Four matches (+20) and one gap of one (-10), wherever the gap sits.
        QTest::newRow("dna, one gap") << "dna" << "ACGT" << "ACGGT" << 10 << 1.0 << 1;
        // Two matches (+10), one gap of two: open 10 + extend 1.
        QTest::newRow("dna, affine gap") << "dna" << "AAAA" << "AA" << -1 << 1.0 << 2;
        // Nothing against three bases: one gap of three.
        QTest::newRow("dna, against nothing") << "dna" << "" << "ACG" << -12 << 0.0 << 3;
        QTest::newRow("rna, trailing pads dropped") << "rna" << "ACGU.." << "ACGU" << 20 << 1.0 << 0;
        // +1 +1 -1 +1 with no gap: two gaps (open 2 each) would cost more than the mismatch.
        QTest::newRow("binary, one mismatch") << "binary" << "1100" << "1000" << 2 << 0.75 << 0;
        // "walked" and "walking": "walk" (+4), then "ed" against "ing", nothing in common: two
        // mismatches (-2) and the one gap the lengths force (-2).
        QTest::newRow("text, a word and its kin") << "text" << "walked" << "walking" << 0 << 4.0 / 6.0 << 1;
    }
    void handWorked()
    {
        QFETCH(QString, alphabet);
        QFETCH(QString, first);
        QFETCH(QString, second);
        QFETCH(int, score);
        QFETCH(double, identity);
        QFETCH(int, gaps);
        const AlignmentScoring scoring = AlignmentScoring::forAlphabet(alphabet.toStdString());
        auto alignment = alignGlobal(first.toStdString(), second.toStdString(), scoring);
        QVERIFY2(alignment.ok(), alignment.ok() ? "" : alignment.error().c_str());
        QCOMPARE(alignment->score, score);
        QCOMPARE(alignment->identity(), identity);
        QCOMPARE(int(alignment->gaps()), gaps);
        checkInvariants(alignment.value(), first.toStdString(), second.toStdString(), scoring);
    }

    void scoringIsDocumented()
    {
        QCOMPARE(AlignmentScoring::forAlphabet("protein").describe(), std::string("BLOSUM62, gap open 10, extend 1"));
        QCOMPARE(AlignmentScoring::forAlphabet("dna").describe(),
                 std::string("nucleotide +5/-4, gap open 10, extend 1"));
        QCOMPARE(AlignmentScoring::forAlphabet("text").describe(),
                 std::string("match +1/mismatch -1, gap open 2, extend 1"));
        // The recomputation charges a new gap when a gap switches sequence (Gotoh's two states).
        const AlignmentScoring dna = AlignmentScoring::forAlphabet("dna");
        QCOMPARE(dna.score("A-C", "AG-"), 5 - 10 - 10);
        QCOMPARE(dna.score("A--", "AGG"), 5 - 10 - 1);
    }

    void identicalSequencesAlignWithoutGaps()
    {
        std::mt19937 random(7);
        for (const char* alphabet : {"protein", "dna", "text"}) {
            const std::string symbols = std::string(alphabet) == "protein" ? "ACDEFGHIKLMNPQRSTVWYX"
                                        : std::string(alphabet) == "dna"   ? "ACGT"
                                                                           : "abcdefghij";
            for (int length : {1, 2, 17, 150}) {
                const std::string text = randomText(random, symbols, length);
                auto alignment = alignGlobal(text, text, alphabet);
                QVERIFY(alignment.ok());
                QCOMPARE(alignment->first, text);
                QCOMPARE(alignment->second, text);
                QCOMPARE(alignment->gaps(), int64_t(0));
                QCOMPARE(alignment->identity(), 1.0);
            }
        }
    }

    /// Random pairs of every length pair up to 5 (with the default and other gap costs): the
    /// optimum is the brute force's, and the invariants hold.
    void optimalAgainstBruteForce()
    {
        std::mt19937 random(2024);
        struct Case {
            std::string alphabet;
            std::string symbols;
            int open;
            int extend;
        };
        const Case cases[] = {{"protein", "ACDEFGHIKLMNPQRSTVWY", 10, 1}, {"protein", "AWKRDE", 3, 1},
                              {"dna", "ACGT", 10, 1},     {"dna", "ACGT", 4, 2},
                              {"binary", "01", 2, 1},     {"text", "abc", 1, 1},
                              {"text", "ab", 3, 0}};
        int checked = 0;
        for (const Case& c : cases) {
            AlignmentScoring scoring = AlignmentScoring::forAlphabet(c.alphabet);
            scoring.gapOpen = c.open;
            scoring.gapExtend = c.extend;
            for (int m = 1; m <= 5; ++m)
                for (int n = 1; n <= 5; ++n)
                    for (int repeat = 0; repeat < 3; ++repeat) {
                        const std::string a = randomText(random, c.symbols, m);
                        const std::string b = randomText(random, c.symbols, n);
                        auto alignment = alignGlobal(a, b, scoring);
                        QVERIFY(alignment.ok());
                        const int best = bruteForce(a, b, scoring);
                        if (alignment->score != best)
                            qWarning("%s vs %s (%s): %d, brute force %d", a.c_str(), b.c_str(),
                                     scoring.describe().c_str(), alignment->score, best);
                        QCOMPARE(alignment->score, best);
                        checkInvariants(alignment.value(), a, b, scoring);
                        ++checked;
                    }
        }
        QCOMPARE(checked, 7 * 25 * 3);
    }

    void invariantsAtProteinLengths()
    {
        std::mt19937 random(11);
        const std::string residues = "ACDEFGHIKLMNPQRSTVWY";
        const AlignmentScoring scoring = AlignmentScoring::forAlphabet("protein");
        for (int repeat = 0; repeat < 20; ++repeat) {
            const std::string a = randomText(random, residues, 120 + repeat);
            // A relative: some residues changed, a stretch deleted, one inserted.
            std::string b = a;
            for (int k = 0; k < 15; ++k)
                b[random() % b.size()] = residues[random() % residues.size()];
            b.erase(30, 5 + repeat % 4);
            b.insert(80, "GGGG");
            auto alignment = alignGlobal(a, b, scoring);
            QVERIFY(alignment.ok());
            checkInvariants(alignment.value(), a, b, scoring);
            QVERIFY2(alignment->identity() > 0.75, "a close relative aligns mostly identical");
        }
    }

    void refusesTheGapCharacter()
    {
        auto alignment = alignGlobal("AC-G", "ACG", "dna");
        QVERIFY(!alignment.ok());
        QVERIFY(alignment.error().find("'-'") != std::string::npos);
    }

    /// Not a timed assertion: the figure is printed for people (the pair view aligns on a key).
    void thousandByThousand()
    {
        std::mt19937 random(3);
        const std::string residues = "ACDEFGHIKLMNPQRSTVWY";
        const std::string a = randomText(random, residues, 1000);
        std::string b = a;
        for (int k = 0; k < 300; ++k)
            b[random() % b.size()] = residues[random() % residues.size()];
        b.erase(400, 20);
        b += randomText(random, residues, 20);
        const auto start = std::chrono::steady_clock::now();
        auto alignment = alignGlobal(a, b, "protein");
        const auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
        QVERIFY(alignment.ok());
        checkInvariants(alignment.value(), a, b, AlignmentScoring::forAlphabet("protein"));
        qInfo("benchmark: 1000 x 1000 protein alignment with traceback: %.1f ms (score %d, identity %.3f, %lld gaps)",
              elapsed.count(), alignment->score, alignment->identity(), static_cast<long long>(alignment->gaps()));
    }
};

QTEST_GUILESS_MAIN(TestAlignment)
#include "tst_alignment.moc"
