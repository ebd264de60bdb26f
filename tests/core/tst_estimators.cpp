// SPDX-License-Identifier: GPL-3.0-or-later
// The D2-DPO estimator options and loss variants against hand-worked values and their invariants,
// the draws they make (stratified t, complementary masks), and the choice of the best checkpoint.
#include <cmath>

#include "support/testsupport.h"

#include "diffusion/dpoestimator.h"
#include "diffusion/maskingnoise.h"
#include "model/transformerdenoiser.h"
#include "model/device.h"
#include "train/bestcheckpoint.h"

using namespace d2dpo;

namespace {

double lossOf(double margin, const std::string& type, double beta, double smoothing)
{
    return preferenceLoss(torch::tensor({margin}, torch::kDouble), type, beta, smoothing).item<double>();
}

DpoConfig estimator(int outer, int inner, bool complementary, double beta = 1.0)
{
    DpoConfig config;
    config.tSamplesPerPair = outer;
    config.vrpoSamples = inner;
    config.maskCoupling = complementary ? "complementary" : "shared-t";
    config.beta = beta;
    return config;
}

/// Hand-made per-row figures for dpoTermsFrom: no model involved.
SequenceDivergences rows(std::vector<double> divergence, std::vector<double> nll = {}, std::vector<double> read = {})
{
    const auto n = int64_t(divergence.size());
    const auto tensor = [&](std::vector<double> v) {
        return v.empty() ? torch::ones({n}, torch::kDouble) : torch::tensor(v, torch::kDouble);
    };
    return {torch::tensor(divergence, torch::kDouble), tensor(nll), tensor(read)};
}

SampleMetrics metrics(double vsr, double odd, double tv)
{
    SampleMetrics m;
    m.set("vsr", vsr, "");
    m.set("odd_ratio", odd, "");
    m.set("tv_from_odd_uniform", tv, "");
    m.ruleMetric = "odd_ratio";
    return m;
}

} // namespace

class TestEstimators final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void eachLossVariantMatchesItsHandWorkedValue_data()
    {
        QTest::addColumn<QString>("type");
        QTest::addColumn<double>("margin");
        QTest::addColumn<double>("beta");
        QTest::addColumn<double>("smoothing");
        QTest::addColumn<double>("expected");
        // beta h = 1: -log sigmoid(1) = log(1 + e^-1) = 0.313261687518, -log sigmoid(-1) = 1.313261687518.
        QTest::newRow("sigmoid") << "sigmoid" << 2.0 << 0.5 << 0.0 << 0.313261687518;
        // conservative DPO: 0.9 * 0.313261687518 + 0.1 * 1.313261687518
        QTest::newRow("sigmoid, smoothing 0.1") << "sigmoid" << 2.0 << 0.5 << 0.1 << 0.413261687518;
        // robust: (0.9 * 0.313261687518 - 0.1 * 1.313261687518) / 0.8
        QTest::newRow("robust 0.1") << "robust" << 2.0 << 0.5 << 0.1 << 0.188261687518;
        QTest::newRow("robust 0 is sigmoid") << "robust" << 2.0 << 0.5 << 0.0 << 0.313261687518;
        QTest::newRow("hinge at the margin") << "hinge" << 2.0 << 0.5 << 0.0 << 0.0;
        QTest::newRow("hinge inside") << "hinge" << 1.0 << 0.5 << 0.0 << 0.5;      // 1 - 0.5
        QTest::newRow("hinge wrong side") << "hinge" << -2.0 << 0.5 << 0.0 << 2.0; // 1 + 1
        QTest::newRow("ipo") << "ipo" << 2.0 << 0.5 << 0.0 << 1.0;                 // (2 - 1)^2
        QTest::newRow("ipo at its target") << "ipo" << 5.0 << 0.1 << 0.0 << 0.0;   // 1/(2 * 0.1) = 5
    }
    void eachLossVariantMatchesItsHandWorkedValue()
    {
        QFETCH(QString, type);
        QFETCH(double, margin);
        QFETCH(double, beta);
        QFETCH(double, smoothing);
        QFETCH(double, expected);
        const double got = lossOf(margin, type.toStdString(), beta, smoothing);
        QVERIFY2(std::abs(got - expected) < 1e-10, qPrintable(QString("%1 vs %2").arg(got, 0, 'g', 12).arg(expected)));
    }

    void theLossesKeepTheirZeroMarginValuesAndSwapIdentity()
    {
        for (double beta : {0.01, 0.1, 1.0}) {
            // At a zero margin: log 2 for the logistic losses, 1 for hinge, 1/(4 beta^2) for IPO.
            QVERIFY(std::abs(lossOf(0, "sigmoid", beta, 0) - std::log(2.0)) < 1e-12);
            QVERIFY(std::abs(lossOf(0, "sigmoid", beta, 0.2) - std::log(2.0)) < 1e-12);
            QVERIFY(std::abs(lossOf(0, "robust", beta, 0.2) - std::log(2.0)) < 1e-12);
            QVERIFY(std::abs(lossOf(0, "hinge", beta, 0) - 1.0) < 1e-12);
            QVERIFY(std::abs(lossOf(0, "ipo", beta, 0) - 1 / (4 * beta * beta)) < 1e-9);
            // Swapping winner and loser: L(h) - L(-h) = -(1 - 2e) beta h for the logistic losses.
            for (double h : {-3.0, 0.7, 12.0})
                for (double e : {0.0, 0.1, 0.3}) {
                    const double d = lossOf(h, "sigmoid", beta, e) - lossOf(-h, "sigmoid", beta, e);
                    QVERIFY(std::abs(d + (1 - 2 * e) * beta * h) < 1e-9);
                }
        }
    }

    void vrpoAveragesInsideTheLoss()
    {
        // One pair, two draws: winner rows 1 and 5, loser rows 0 and 2 (rows: winners then losers).
        CorruptedPairs pairs;
        pairs.draws = 2;
        const auto figures = rows({1, 5, 0, 2});
        // Inside: D_w = 3, D_l = 1, h = 2: log(1 + e^-2) = 0.126928011043.
        const DpoTerms inside = dpoTermsFrom(pairs, figures, 1, estimator(1, 2, false));
        QVERIFY(std::abs(inside.loss.item<double>() - 0.126928011043) < 1e-10);
        QCOMPARE(inside.divergenceChosen.size(0), 1);
        // Outside (t-samples): terms h = 1 and h = 3: (0.313261687518 + 0.048587351573) / 2.
        const DpoTerms outside = dpoTermsFrom(pairs, figures, 1, estimator(2, 1, false));
        QVERIFY(std::abs(outside.loss.item<double>() - 0.180924519546) < 1e-10);
        QCOMPARE(outside.divergenceChosen.size(0), 2);
        // Jensen: the log-sigmoid of the average margin is below the average of the log-sigmoids.
        QVERIFY(inside.loss.item<double>() < outside.loss.item<double>());
    }

    void complementaryDrawsAverageInsideAndCrossEntropyIsAdded()
    {
        // One pair, one draw and its complement: rows w, l, w', l'.
        CorruptedPairs pairs;
        pairs.draws = 1;
        pairs.complementary = true;
        DpoConfig config = estimator(1, 1, true);
        config.rpoAlpha = 0.5;
        const DpoTerms terms = dpoTermsFrom(pairs, rows({1, 0, 3, 2}, {2, 7, 4, 9}, {1, 3, 3, 1}), 1, config);
        // D_w = (1 + 3)/2 = 2, D_l = (0 + 2)/2 = 1: log(1 + e^-1); nll of the winner (2 + 4)/(1 + 3) = 1.5.
        QVERIFY(std::abs(terms.nll.item<double>() - 1.5) < 1e-12);
        QVERIFY(std::abs(terms.loss.item<double>() - (0.313261687518 + 0.75)) < 1e-10);
    }

    void complementaryMasksReadEveryPositionOnce()
    {
        MaskingNoise noise(2, 0.0);
        DpoConfig config = estimator(2, 3, true);
        auto generator = makeGenerator(5, torch::kCPU);
        const auto winners = torch::randint(0, 2, {8, 12}, torch::kLong);
        const auto losers = torch::randint(0, 2, {8, 12}, torch::kLong);
        const CorruptedPairs pairs = corruptPairs(noise, winners, losers, config, generator);
        const int64_t r = 8 * 2 * 3;
        QCOMPARE(pairs.draws, r);
        QCOMPARE(pairs.xt.size(0), 4 * r);
        const auto first = pairs.xt.slice(0, 0, 2 * r).eq(2);
        const auto second = pairs.xt.slice(0, 2 * r).eq(2);
        QVERIFY(first.logical_xor(second).all().item<bool>()); // masked in exactly one of the two
        // The complement is a draw at 1 - t; winner and loser share t; rows repeat the pairs.
        const auto t = pairs.t;
        QVERIFY(test::maxAbsDiff(t.slice(0, 0, r), t.slice(0, r, 2 * r)) == 0);
        QVERIFY(test::maxAbsDiff(t.slice(0, 2 * r), 1 - t.slice(0, 0, 2 * r)) < 1e-6);
        QVERIFY(t.ge(config.tEpsilon - 1e-7).all().item<bool>() && t.le(1 - config.tEpsilon + 1e-7).all().item<bool>());
        QVERIFY(pairs.x1.slice(0, 8, 16).equal(winners) && pairs.x1.slice(0, r, r + 8).equal(losers));
        QVERIFY(pairs.x1.slice(0, 2 * r).equal(pairs.x1.slice(0, 0, 2 * r)));
        // Unmasked positions keep their clean token.
        const auto keptFirst = first.logical_not();
        QVERIFY(pairs.xt.slice(0, 0, 2 * r).masked_select(keptFirst).equal(pairs.x1.slice(0, 0, 2 * r).masked_select(keptFirst)));
    }

    void stratifiedTimesHoldOnePerStratum()
    {
        auto generator = makeGenerator(9, torch::kCPU);
        const double epsilon = 1e-3;
        const int64_t rows = 64;
        const auto t = drawTimes(rows, true, 0.0, 1 - epsilon, generator, torch::kDouble);
        const auto stratum = (std::get<0>(t.sort()) / (1 - epsilon) * double(rows)).floor().to(torch::kLong);
        QVERIFY(stratum.equal(torch::arange(rows, torch::kLong)));
        QVERIFY(t.ge(0).all().item<bool>() && t.lt(1 - epsilon).all().item<bool>());
        // Independent draws almost never do (64! / 64^64 ~ 1e-27).
        const auto free = drawTimes(rows, false, 0.0, 1 - epsilon, generator, torch::kDouble);
        const auto freeStratum = (std::get<0>(free.sort()) / (1 - epsilon) * double(rows)).floor().to(torch::kLong);
        QVERIFY(!freeStratum.equal(torch::arange(rows, torch::kLong)));
    }

    void everyOptionGivesItsZeroMarginLossWhenThePolicyIsItsReference_data()
    {
        QTest::addColumn<QString>("loss");
        QTest::addColumn<QString>("tSampling");
        QTest::addColumn<int>("outer");
        QTest::addColumn<int>("inner");
        QTest::addColumn<bool>("complementary");
        QTest::addColumn<double>("expected");
        const double log2 = std::log(2.0);
        QTest::newRow("paper") << "sigmoid" << "independent" << 1 << 1 << false << log2;
        QTest::newRow("stratified") << "sigmoid" << "stratified" << 1 << 1 << false << log2;
        QTest::newRow("vrpo 4") << "sigmoid" << "independent" << 1 << 4 << false << log2;
        QTest::newRow("t-samples 2, vrpo 2") << "sigmoid" << "stratified" << 2 << 2 << false << log2;
        QTest::newRow("complementary") << "sigmoid" << "independent" << 1 << 1 << true << log2;
        QTest::newRow("robust") << "robust" << "independent" << 1 << 2 << true << log2;
        QTest::newRow("hinge") << "hinge" << "independent" << 1 << 1 << false << 1.0;
        QTest::newRow("ipo beta 0.1") << "ipo" << "independent" << 1 << 1 << true << 25.0;
    }
    void everyOptionGivesItsZeroMarginLossWhenThePolicyIsItsReference()
    {
        QFETCH(QString, loss);
        QFETCH(QString, tSampling);
        QFETCH(int, outer);
        QFETCH(int, inner);
        QFETCH(bool, complementary);
        QFETCH(double, expected);
        torch::manual_seed(3);
        Denoiser policy = makeDenoiser(test::tinySpec(8), 2, torch::kCPU);
        Denoiser reference = frozenCopy(policy);
        MaskingNoise noise(2, 0.5);
        DpoConfig config = estimator(outer, inner, complementary, 0.1);
        config.lossType = loss.toStdString();
        config.tSampling = tSampling.toStdString();
        config.labelSmoothing = loss == "robust" ? 0.2 : 0.0;
        auto generator = makeGenerator(11, torch::kCPU);
        const auto winners = torch::randint(0, 2, {16, 8}, torch::kLong);
        const auto losers = torch::randint(0, 2, {16, 8}, torch::kLong);
        const DpoTerms terms = d2dpoLoss(policy, reference, noise, winners, losers, config, generator);
        QVERIFY2(std::abs(terms.loss.item<double>() - expected) < 1e-5,
                 qPrintable(QString("%1 vs %2").arg(terms.loss.item<double>()).arg(expected)));
        QCOMPARE(terms.divergenceChosen.size(0), 16 * outer);
        QVERIFY(terms.divergenceChosen.abs().max().item<double>() < 1e-5);
        terms.loss.backward(); // the gradient reaches the policy only
        QVERIFY(policy->parameters().front().grad().defined());
        QVERIFY(!reference->parameters().front().grad().defined());
    }

    void aBatchTrainedInPiecesHasTheWholeBatchsGradients_data()
    {
        QTest::addColumn<QString>("loss");
        QTest::addColumn<int>("outer");
        QTest::addColumn<int>("inner");
        QTest::addColumn<bool>("complementary");
        QTest::addColumn<double>("rpoAlpha");
        QTest::addColumn<int>("piece");
        QTest::newRow("the paper's, pieces of 8") << "sigmoid" << 1 << 1 << false << 0.0 << 8;
        QTest::newRow("uneven pieces of 24") << "sigmoid" << 1 << 1 << false << 0.0 << 24;
        QTest::newRow("t-samples 2, vrpo 2") << "sigmoid" << 2 << 2 << false << 0.0 << 8;
        QTest::newRow("complementary, rpo 0.5") << "robust" << 1 << 1 << true << 0.5 << 8;
        QTest::newRow("ipo, stratified, pieces of 1") << "ipo" << 2 << 1 << false << 0.25 << 1;
    }
    void aBatchTrainedInPiecesHasTheWholeBatchsGradients()
    {
        // Gradient accumulation: 64 pairs in pieces give the gradients, loss and rewards of the
        // 64 at once (the draws are the batch's either way), to 1e-5.
        QFETCH(QString, loss);
        QFETCH(int, outer);
        QFETCH(int, inner);
        QFETCH(bool, complementary);
        QFETCH(double, rpoAlpha);
        QFETCH(int, piece);
        torch::manual_seed(3);
        Denoiser policy = makeDenoiser(test::tinySpec(8), 2, torch::kCPU);
        Denoiser reference = frozenCopy(policy);
        {
            torch::NoGradGuard noGrad; // a policy that has moved, so the margins are not zero
            for (auto& p : policy->parameters())
                p.add_(torch::randn_like(p) * 0.05);
        }
        MaskingNoise noise(2, 0.5);
        DpoConfig config = estimator(outer, inner, complementary, 0.5);
        config.lossType = loss.toStdString();
        config.labelSmoothing = loss == "robust" ? 0.2 : 0.0;
        config.rpoAlpha = rpoAlpha;
        config.tSampling = loss == "ipo" ? "stratified" : "independent";
        const auto winners = torch::randint(0, 2, {64, 8}, torch::kLong);
        const auto losers = torch::randint(0, 2, {64, 8}, torch::kLong);
        auto run = [&](int64_t pieces) {
            for (auto& p : policy->parameters())
                p.mutable_grad() = torch::Tensor();
            auto generator = makeGenerator(11, torch::kCPU);
            const DpoTerms terms = d2dpoBackward(policy, reference, noise, winners, losers, config, generator, pieces);
            std::vector<torch::Tensor> grads;
            for (const auto& p : policy->parameters())
                grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
            return std::make_tuple(terms.loss.item<double>(), rewardStats(terms, config.beta), grads);
        };
        const auto [wholeLoss, wholeRewards, wholeGrads] = run(0);
        const auto [pieceLoss, pieceRewards, pieceGrads] = run(piece);
        // The one-piece path is d2dpoLoss's loss, back-propagated.
        auto generator = makeGenerator(11, torch::kCPU);
        QCOMPARE(d2dpoLoss(policy, reference, noise, winners, losers, config, generator).loss.item<double>(), wholeLoss);
        QVERIFY2(std::abs(pieceLoss - wholeLoss) < 1e-5, qPrintable(QString("%1 vs %2").arg(pieceLoss).arg(wholeLoss)));
        QVERIFY(std::abs(pieceRewards.margins - wholeRewards.margins) < 1e-5);
        QVERIFY(std::abs(pieceRewards.chosen - wholeRewards.chosen) < 1e-5);
        QCOMPARE(pieceRewards.accuracies, wholeRewards.accuracies);
        double largest = 0, worst = 0;
        for (size_t i = 0; i < wholeGrads.size(); ++i) {
            largest = std::max(largest, wholeGrads[i].abs().max().item<double>());
            worst = std::max(worst, (pieceGrads[i] - wholeGrads[i]).abs().max().item<double>());
        }
        QVERIFY2(largest > 1e-3, "the gradients must not be trivially zero");
        QVERIFY2(worst < 1e-5 * std::max(1.0, largest), qPrintable(QString("gradients differ by %1 (largest %2)").arg(worst).arg(largest)));
    }

    void bestCheckpointHonoursTheVsrFloor()
    {
        BestCheckpoint best("rule", 0.01, 0.96); // VSR >= 0.95
        QVERIFY(best.offer(50, metrics(0.97, 0.80, 0.3)));
        QVERIFY(!best.offer(100, metrics(0.90, 0.99, 0.1))); // aligned but broken: refused
        QVERIFY(!best.offer(150, metrics(0.96, 0.79, 0.3))); // worse
        QVERIFY(best.offer(200, metrics(0.95, 0.85, 0.2)));  // on the floor, better
        QCOMPARE(best.bestStep().value(), int64_t(200));
        QVERIFY(QString::fromStdString(best.describe()).startsWith("step 200: odd_ratio 0.8500, VSR 0.9500"));

        BestCheckpoint lowest("-tv_from_odd_uniform", 0.01, 0.96);
        QVERIFY(lowest.offer(50, metrics(0.97, 0.80, 0.3)));
        QVERIFY(lowest.offer(100, metrics(0.97, 0.70, 0.2)));
        QVERIFY(!lowest.offer(150, metrics(0.97, 0.90, 0.25)));
        QCOMPARE(lowest.bestStep().value(), int64_t(100));

        BestCheckpoint none("rule", 0.0, 0.99);
        QVERIFY(!none.offer(50, metrics(0.97, 0.80, 0.3)));
        QVERIFY(QString::fromStdString(none.describe()).contains("no evaluation of 1"));
        QVERIFY(!BestCheckpoint("", 0.01, 0.9).offer(1, metrics(1, 1, 0)));
        // A metric name is checked with the settings: nothing after '-', or not a name, is refused.
        DpoScheduleConfig config;
        for (const char* bad : {"-", "odd ratio", "--x"}) {
            config.keepBest = bad;
            QVERIFY2(!validate(config), bad);
        }
        for (const char* good : {"rule", "-tv_from_odd_uniform", "rewards/margins", ""}) {
            config.keepBest = good;
            QVERIFY2(validate(config).ok(), good);
        }
    }
};

QTEST_APPLESS_MAIN(TestEstimators)
#include "tst_estimators.moc"
