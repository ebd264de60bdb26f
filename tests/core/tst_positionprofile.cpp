// SPDX-License-Identifier: GPL-3.0-or-later
// What samples look like per position (analysis/): entropy and information content against
// hand-worked values and their identities (0 bits for a constant column, log2 K for a uniform
// one, IC + H + e(n) = log2 K where nothing is clamped), pads and foreign characters, the
// composition, the identity to the nearest training sequence (hand-worked, and its pruned search
// against a plain one), and the CSV files.
#include <QtTest/QtTest>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "analysis/nearestidentity.h"
#include "analysis/positionprofile.h"
#include "analysis/profilecsv.h"

using namespace d2dpo;

namespace {

bool near(double a, double b, double tolerance = 1e-12) { return std::abs(a - b) <= tolerance; }

std::string randomText(std::mt19937& random, const std::string& symbols, int length)
{
    std::string text;
    for (int i = 0; i < length; ++i)
        text += symbols[random() % symbols.size()];
    return text;
}

std::string readFile(const QString& path)
{
    std::ifstream in(path.toStdString());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

class TestPositionProfile final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void entropyOfColumns()
    {
        QCOMPARE(entropyBits({7}), 0.0);
        QCOMPARE(entropyBits({0, 5, 0}), 0.0);
        QCOMPARE(entropyBits({}), 0.0);
        QCOMPARE(entropyBits({3, 3, 3, 3}), 2.0);
        QVERIFY(near(entropyBits({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}), std::log2(20.0)));
        // p = (1/2, 1/4, 1/4): 1/2 + 2 x 1/4 x 2 = 1.5 bits.
        QCOMPARE(entropyBits({2, 1, 1}), 1.5);
    }

    void smallSampleCorrectionByHand()
    {
        // (K - 1) / (2 ln 2 n): K = 4, n = 10.
        QVERIFY(near(smallSampleCorrection(4, 10), 3.0 / (2.0 * std::log(2.0) * 10.0)));
        QVERIFY(near(smallSampleCorrection(4, 10), 0.21640425613334453));
        QCOMPARE(smallSampleCorrection(4, 0), 0.0);
        QCOMPARE(smallSampleCorrection(1, 10), 0.0);
    }

    void handWorkedProfile()
    {
        // Position 1: A A A. Position 2: C G, the third sequence ended. Position 3: T, then ended.
        const PositionProfile p = profilePositions({"ACT", "AG", "A.."}, "ACGT");
        QCOMPARE(p.length(), int64_t(3));
        QCOMPARE(p.sequences, int64_t(3));
        QCOMPARE(p.count(0, 0), int64_t(3));
        QCOMPARE(p.residues(1), int64_t(2));
        QCOMPARE(p.frequency(1, 1), 0.5);
        QCOMPARE(p.frequency(1, 2), 0.5);
        QCOMPARE(p.ended[0], 0.0);
        QVERIFY(near(p.ended[1], 1.0 / 3.0));
        QVERIFY(near(p.ended[2], 2.0 / 3.0));
        QCOMPARE(p.entropy[0], 0.0);
        QCOMPARE(p.entropy[1], 1.0);
        QCOMPARE(p.entropy[2], 0.0);
        // e(3) = 3 / (2 ln 2 x 3) = 0.7213 bits, so R = 2 - 0.7213; e(2) = 1.082 > 2 - 1 and
        // e(1) = 2.164 > 2: one T is no evidence of anything, clamped to 0.
        QVERIFY(near(p.information[0], 2.0 - 1.0 / (2.0 * std::log(2.0))));
        QCOMPARE(p.information[1], 0.0);
        QCOMPARE(p.information[2], 0.0);
        // Composition: A 3, C 1, G 1, T 1 of 6.
        const std::vector<double> shares = p.composition();
        QCOMPARE(shares[0], 0.5);
        QVERIFY(near(shares[1], 1.0 / 6.0));
        QVERIFY(near(shares[3], 1.0 / 6.0));
    }

    void constantAndUniformColumns()
    {
        std::vector<std::string> sequences;
        for (int i = 0; i < 400; ++i)
            sequences.push_back(std::string("K") + "ACGT"[i % 4]);
        const PositionProfile p = profilePositions(sequences, "ACGKT");
        QCOMPARE(p.entropy[0], 0.0);
        QVERIFY(near(p.information[0], std::log2(5.0) - smallSampleCorrection(5, 400)));
        // Four of five symbols equally often: H = log2 4.
        QVERIFY(near(p.entropy[1], 2.0));
        const PositionProfile uniform = profilePositions({"A", "C", "G", "T"}, "ACGT");
        QCOMPARE(uniform.entropy[0], std::log2(4.0));
        QCOMPARE(uniform.information[0], 0.0);
    }

    /// IC + H = log2 K before the correction, wherever the clamp does not bite.
    void informationPlusEntropyIsMaxBits()
    {
        std::mt19937 random(5);
        const std::string symbols = "ACDEFGHIKLMNPQRSTVWY";
        std::vector<std::string> sequences;
        for (int i = 0; i < 500; ++i) {
            std::string s = randomText(random, symbols, 40);
            // Skewed columns, so that some hold information: position p favours symbol p.
            for (int p = 0; p < 40; p += 2)
                if (random() % 3 != 0)
                    s[size_t(p)] = symbols[size_t(p % 20)];
            sequences.push_back(s);
        }
        const PositionProfile p = profilePositions(sequences, symbols);
        int unclamped = 0;
        for (int64_t i = 0; i < p.length(); ++i) {
            const double sum = p.information[size_t(i)] + p.entropy[size_t(i)] + p.correction[size_t(i)];
            if (p.information[size_t(i)] > 0) {
                QVERIFY(near(sum, std::log2(20.0), 1e-9));
                ++unclamped;
            }
            QVERIFY(p.information[size_t(i)] >= 0 && p.information[size_t(i)] <= p.maxBits());
            double frequencies = 0;
            for (int64_t k = 0; k < p.symbolCount(); ++k)
                frequencies += p.frequency(i, k);
            QVERIFY(near(frequencies, 1.0, 1e-12));
        }
        QVERIFY(unclamped >= 20);
    }

    void foreignCharactersAndLength()
    {
        const PositionProfile p = profilePositions({"AX", "A"}, "ACGT", 4);
        QCOMPARE(p.length(), int64_t(4));
        QCOMPARE(p.others[1], int64_t(1));
        QCOMPARE(p.residues(1), int64_t(0));
        QCOMPARE(p.ended[1], 0.5);
        QCOMPARE(p.ended[3], 1.0);
        QCOMPARE(p.information[3], 0.0); // a position nobody reaches holds nothing
        QCOMPARE(profilePositions({}, "ACGT").length(), int64_t(0));
    }

    void identityByHand()
    {
        QCOMPARE(positionIdentity("ABCD", "ABXD"), 0.75);
        QCOMPARE(positionIdentity("ABC", "ABCD"), 0.75); // over the longer of the two
        QCOMPARE(positionIdentity("AB..", "AB"), 1.0);
        QCOMPARE(positionIdentity("", ""), 1.0);
        QCOMPARE(positionIdentity("BCDE", "ABCD"), 0.0); // shifted is different: no alignment

        const NearestIdentity n = nearestTrainingIdentity({"ABCD", "XXXX", "AB"}, {"ABCE", "ABCD", "WXYZ", "ABCD"});
        QCOMPARE(n.identity, (std::vector<double>{1.0, 0.25, 0.5}));
        QCOMPARE(n.nearest, (std::vector<int64_t>{1, 2, 0})); // the first of equals
        QCOMPARE(n.copies, int64_t(1));
        QVERIFY(near(n.mean, 1.75 / 3.0));
        QCOMPARE(n.median, 0.5);
        QCOMPARE(n.histogram, (std::vector<int64_t>{0, 0, 1, 0, 0, 1, 0, 0, 0, 1}));
        QCOMPARE(nearestTrainingIdentity({"AB", "CD"}, {"AB", "CE"}).median, 0.75);

        const NearestIdentity none = nearestTrainingIdentity({"AB"}, {});
        QCOMPARE(none.nearest, (std::vector<int64_t>{-1}));
        QCOMPARE(none.identity, (std::vector<double>{0.0}));
    }

    /// The pruned search finds what comparing with every training sequence finds.
    void nearestAgainstPlainSearch()
    {
        std::mt19937 random(9);
        std::vector<std::string> training;
        for (int i = 0; i < 300; ++i)
            training.push_back(randomText(random, "abcd", 3 + int(random() % 6)));
        std::vector<std::string> samples;
        for (int i = 0; i < 200; ++i)
            samples.push_back(randomText(random, "abcd", 2 + int(random() % 8)) + (i % 5 == 0 ? ".." : ""));
        samples.push_back(training[17]);
        samples.push_back("zzzz"); // shares no position with any: identity 0, the first text nearest
        samples.push_back("");
        const NearestIdentity n = nearestTrainingIdentity(samples, training);
        for (size_t s = 0; s < samples.size(); ++s) {
            double best = -1;
            int64_t index = -1;
            for (size_t t = 0; t < training.size(); ++t)
                if (const double identity = positionIdentity(samples[s], training[t]); identity > best) {
                    best = identity;
                    index = int64_t(t);
                }
            QCOMPARE(n.identity[s], best);
            QCOMPARE(positionIdentity(samples[s], training[size_t(n.nearest[s])]), best);
            QCOMPARE(n.nearest[s], index); // the first of equals, as the plain search keeps it
        }
        QCOMPARE(n.identity[samples.size() - 3], 1.0); // the copy
        QCOMPARE(n.identity.back(), 0.0);
        QCOMPARE(n.nearest.back(), int64_t(0));
    }

    void csvFiles()
    {
        const std::vector<std::string> training = {"ACGT", "ACGA"};
        const ProfiledSet data = profileSet("training", training, "ACGT", {});
        const ProfiledSet model = profileSet("model", {"ACGT", "TCG"}, "ACGT", training);
        const std::string positions = positionsCsv({&data, &model});
        QVERIFY(positions.rfind("set,position,sequences,ended,A,C,G,T,entropy_bits,information_bits\n", 0) == 0);
        // Training position 4: A and T once each.
        QVERIFY(positions.find("training,4,2,0.000000,0.500000,0.000000,0.000000,0.500000,1.000000,0.000000\n") !=
                std::string::npos);
        // The model's position 4: T once, the second sample ended.
        QVERIFY(positions.find("model,4,2,0.500000,0.000000,0.000000,0.000000,1.000000,0.000000,") !=
                std::string::npos);
        QCOMPARE(std::count(positions.begin(), positions.end(), '\n'), 1 + 4 + 4);

        const std::string composition = compositionCsv({&data, &model});
        QVERIFY(composition.rfind("symbol,training,model\nA,0.375000,0.142857\n", 0) == 0);

        const std::string nearest = nearestCsv({&data, &model}, training);
        QCOMPARE(nearest, std::string("set,sample,sequence,identity,nearest,nearest_sequence\n"
                                      "model,1,ACGT,1.000000,1,ACGT\n"
                                      "model,2,TCG,0.500000,1,ACGT\n"));

        // A comma among the symbols is quoted.
        const ProfiledSet words = profileSet("model", {"a,b"}, "ab,", {});
        QVERIFY(positionsCsv({&words}).rfind("set,position,sequences,ended,a,b,\",\",entropy", 0) == 0);

        QTemporaryDir folder;
        QVERIFY(folder.isValid());
        const Status written = writeProfileCsvs(folder.path().toStdString(), {&data, &model}, training);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
        QCOMPARE(readFile(folder.filePath("positions.csv")), positions);
        QCOMPARE(readFile(folder.filePath("composition.csv")), composition);
        QCOMPARE(readFile(folder.filePath("nearest.csv")), nearest);
    }
};

QTEST_GUILESS_MAIN(TestPositionProfile)
#include "tst_positionprofile.moc"
