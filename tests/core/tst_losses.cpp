// SPDX-License-Identifier: GPL-3.0-or-later
// The D2-DPO loss on masking noise against hand-worked values, its invariants, the pretraining
// loss, and the positions-only forward and loss against their full-forward formulations.
#include <cmath>

#include "support/testsupport.h"

#include "model/transformerdenoiser.h"
#include "model/device.h"
#include "diffusion/dpoestimator.h"
#include "diffusion/maskingnoise.h"

using namespace d2dpo;

namespace {

constexpr int64_t M = 2; // mask token for S = 2

/// The hand-worked pair: S = 2, D = 2. Winner x1 = [0, 1] seen as x_t = [M, 1]; loser
/// x1 = [1, 1] seen as x_t = [M, M]. Probabilities of the clean tokens at the masked positions:
/// winner pos 0, token 0: theta 0.8, ref 0.5; loser pos 0, token 1: theta 0.3, ref 0.6;
/// loser pos 1, token 1: theta 0.5, ref 0.5. Unmasked position 1 of the winner: theta 0.1, ref
/// 0.9 for its clean token, which must not count.
struct HandPair {
    torch::Tensor xt, x1, logpTheta, logpRef;
};

DpoConfig dpoConfig(double beta, double tEpsilon, int tSamples)
{
    DpoConfig config;
    config.beta = beta;
    config.tEpsilon = tEpsilon;
    config.tSamplesPerPair = tSamples;
    return config;
}

HandPair handPair()
{
    HandPair p;
    p.xt = torch::tensor(std::vector<int64_t>{M, 1, M, M}).view({2, 2});
    p.x1 = torch::tensor(std::vector<int64_t>{0, 1, 1, 1}).view({2, 2});
    const auto theta = torch::tensor({0.8, 0.2, 0.9, 0.1, 0.7, 0.3, 0.5, 0.5}, torch::kDouble).view({2, 2, 2});
    const auto ref = torch::tensor({0.5, 0.5, 0.1, 0.9, 0.4, 0.6, 0.5, 0.5}, torch::kDouble).view({2, 2, 2});
    p.logpTheta = theta.log();
    p.logpRef = ref.log();
    return p;
}

} // namespace

class TestLosses final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void theMaskingDivergenceAndLossMatchHandWorkedValues_data()
    {
        QTest::addColumn<double>("t");
        QTest::addColumn<double>("eta");
        QTest::addColumn<double>("beta");
        QTest::addColumn<double>("divergenceChosen");
        QTest::addColumn<double>("divergenceRejected");
        QTest::addColumn<double>("loss");
        // D_w = (1+eta t)/(1-t) log(0.8/0.5); D_l = (1+eta t)/(1-t) log(0.3/0.6);
        // loss = log(1 + exp(-beta (D_w - D_l))).
        QTest::newRow("t=0.5 eta=0 beta=1") << 0.5 << 0.0 << 1.0 << 0.940007258 << -1.386294361 << 0.093177225;
        QTest::newRow("t=0.5 eta=1 beta=0.1") << 0.5 << 1.0 << 0.1 << 1.410010888 << -2.079441542 << 0.533818308;
        QTest::newRow("t=0.2 eta=0 beta=0.1") << 0.2 << 0.0 << 0.1 << 0.587504537 << -0.866433976 << 0.623090352;
    }
    void theMaskingDivergenceAndLossMatchHandWorkedValues()
    {
        QFETCH(double, t);
        QFETCH(double, eta);
        QFETCH(double, beta);
        QFETCH(double, divergenceChosen);
        QFETCH(double, divergenceRejected);
        QFETCH(double, loss);
        const HandPair p = handPair();
        MaskingNoise noise(2, eta);
        const auto times = torch::full({2}, t, torch::kDouble);
        const auto d = noise.divergence(p.xt, p.x1, p.logpTheta, p.logpRef, times);
        QVERIFY(std::abs(d[0].item<double>() - divergenceChosen) < 1e-8);
        QVERIFY(std::abs(d[1].item<double>() - divergenceRejected) < 1e-8);
        const DpoTerms terms = dpoLossFromDivergences(d.slice(0, 0, 1), d.slice(0, 1, 2), beta);
        QVERIFY(std::abs(terms.loss.item<double>() - loss) < 1e-8);
        // The general rate-matrix form gives the same numbers.
        const auto general = generalDivergence(noise, p.xt, p.x1, p.logpTheta, p.logpRef, times);
        QVERIFY(test::maxAbsDiff(general, d) < 1e-12);
    }

    void swappingWinnerAndLoserMirrorsTheLoss()
    {
        const HandPair p = handPair();
        MaskingNoise noise(2, 0.0);
        const auto d = noise.divergence(p.xt, p.x1, p.logpTheta, p.logpRef, torch::full({2}, 0.5, torch::kDouble));
        const double beta = 0.7;
        const auto forward = dpoLossFromDivergences(d.slice(0, 0, 1), d.slice(0, 1, 2), beta);
        const auto swapped = dpoLossFromDivergences(d.slice(0, 1, 2), d.slice(0, 0, 1), beta);
        const double margin = beta * (d[0].item<double>() - d[1].item<double>());
        // -log s(-z) = -log s(z) + z, and the reward margins flip sign.
        QVERIFY(std::abs(swapped.loss.item<double>() - forward.loss.item<double>() - margin) < 1e-10);
        const RewardStats a = rewardStats(forward, beta);
        const RewardStats b = rewardStats(swapped, beta);
        QVERIFY(std::abs(a.margins + b.margins) < 1e-6);
        QCOMPARE(a.accuracies, 1.0);
        QCOMPARE(b.accuracies, 0.0);
        QVERIFY(std::abs(a.chosen - b.rejected) < 1e-6);
    }

    void policyEqualToReferenceGivesLog2()
    {
        torch::manual_seed(3);
        const ModelSpec spec = test::tinySpec(8);
        Denoiser policy = makeDenoiser(spec, 2, torch::kCPU);
        Denoiser reference = frozenCopy(policy);
        MaskingNoise noise(2, 0.5);
        auto generator = makeGenerator(11, torch::kCPU);
        const auto winners = torch::randint(0, 2, {32, 8}, torch::kLong);
        const auto losers = torch::randint(0, 2, {32, 8}, torch::kLong);
        const DpoTerms terms = d2dpoLoss(policy, reference, noise, winners, losers, dpoConfig(0.1, 1e-3, 2), generator);
        QVERIFY(std::abs(terms.loss.item<double>() - std::log(2.0)) < 1e-6);
        QCOMPARE(terms.divergenceChosen.size(0), 64); // 32 pairs x 2 draws of t
        QVERIFY(terms.divergenceChosen.abs().max().item<double>() < 1e-5);
        // And the gradient flows to the policy only.
        terms.loss.backward();
        QVERIFY(policy->parameters().front().grad().defined());
        QVERIFY(!reference->parameters().front().grad().defined());
    }

    void corruptionKeepsEachTokenWithProbabilityT()
    {
        MaskingNoise noise(2, 0.0);
        auto generator = makeGenerator(1, torch::kCPU);
        const auto x1 = torch::ones({4000, 16}, torch::kLong);
        const auto xt = noise.corrupt(x1, torch::full({4000}, 0.3, torch::kFloat), generator);
        const double kept = xt.eq(1).to(torch::kDouble).mean().item<double>();
        QVERIFY(std::abs(kept - 0.3) < 0.01);
        QVERIFY(xt.eq(1).logical_or(xt.eq(2)).all().item<bool>()); // only clean token or mask
    }

    void pretrainLossCountsMaskedPositionsOnly()
    {
        // Replays the loss's own draws (same seed) and computes the mean cross-entropy over the
        // masked positions by hand; the unmasked positions' predictions must not count.
        torch::manual_seed(2);
        const ModelSpec spec = test::tinySpec(8);
        Denoiser model = makeDenoiser(spec, 2, torch::kCPU);
        MaskingNoise noise(2, 0.0);
        const auto x1 = torch::randint(0, 2, {64, 8}, torch::kLong);
        auto generator = makeGenerator(4, torch::kCPU);
        const double loss = pretrainLoss(model, noise, x1, generator, false).item<double>();

        auto replay = makeGenerator(4, torch::kCPU);
        const auto t = torch::rand({64}, replay, torch::kFloat);
        const auto xt = noise.corrupt(x1, t, replay);
        const auto logp = torch::log_softmax(model->forward(xt, t), -1);
        const auto nll = -logp.gather(-1, x1.unsqueeze(-1)).squeeze(-1);
        const auto masked = xt.eq(2);
        QVERIFY(masked.any().item<bool>() && masked.logical_not().any().item<bool>());
        const double expected = nll.masked_select(masked).mean().item<double>();
        QVERIFY2(std::abs(loss - expected) < 1e-5, qPrintable(QString("%1 vs %2").arg(loss).arg(expected)));
    }

    void forwardAtEqualsFullForward_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("layers");
        QTest::addColumn<bool>("time");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("float, 2 layers") << int(torch::kFloat) << 2 << true << 1e-5;
        QTest::newRow("double, 2 layers") << int(torch::kDouble) << 2 << true << 1e-12;
        QTest::newRow("double, 1 layer, no time") << int(torch::kDouble) << 1 << false << 1e-12;
    }

    void forwardAtEqualsFullForward()
    {
        // The loss path computes the denoiser only at masked positions; its logits and the
        // gradients they send to every parameter must be those of the full forward.
        QFETCH(int, dtype);
        QFETCH(int, layers);
        QFETCH(bool, time);
        QFETCH(double, tolerance);
        torch::manual_seed(4);
        ModelSpec spec = test::tinySpec(8, time);
        spec.model.layers = layers;
        Denoiser model = makeDenoiser(spec, 2, torch::kCPU);
        model->to(torch::ScalarType(dtype));
        auto xt = torch::randint(0, 3, {12, 8}, torch::kLong);
        xt[3] = 1;  // a sequence with no mask: not computed at all
        xt[7] = 2;  // all masked
        xt[11] = 0; // no mask, last row
        const auto t = torch::rand({12}, torch::dtype(torch::ScalarType(dtype)));
        const auto positions = xt.reshape({-1}).eq(2).nonzero().squeeze(1);
        const auto upstream = torch::randn({positions.size(0), 2}, torch::dtype(torch::ScalarType(dtype)));

        auto gradients = [&](bool partial) {
            model->zero_grad();
            const auto logits = partial ? model->forwardAt(xt, t, positions)
                                        : model->forward(xt, t).reshape({-1, 2}).index_select(0, positions);
            (logits * upstream).sum().backward();
            std::vector<torch::Tensor> grads{logits.detach()};
            for (const auto& p : model->parameters())
                grads.push_back(p.grad().clone());
            return grads;
        };
        const auto partial = gradients(true);
        const auto full = gradients(false);
        QCOMPARE(partial.front().sizes(), full.front().sizes());
        for (size_t i = 0; i < full.size(); ++i)
            QVERIFY2(test::maxAbsDiff(partial[i], full[i]) < tolerance,
                     qPrintable(QString("tensor %1: %2").arg(i).arg(test::maxAbsDiff(partial[i], full[i]))));

        // No position at all: an empty result, no error.
        const auto none = model->forwardAt(xt, t, torch::empty({0}, torch::kLong));
        QCOMPARE(none.size(0), 0);
    }

    void d2dpoLossEqualsFullForwardFormulation()
    {
        // d2dpoLoss computes both models at the masked positions only. Replaying its draws and
        // computing everything in full through NoiseProcess::divergence must give the same loss
        // and the same gradients.
        torch::manual_seed(6);
        const ModelSpec spec = test::tinySpec(8);
        Denoiser policy = makeDenoiser(spec, 2, torch::kCPU);
        Denoiser reference = frozenCopy(policy);
        {
            torch::NoGradGuard noGrad;
            for (auto& p : policy->parameters())
                p.add_(torch::randn_like(p) * 0.05); // a policy that differs from its reference
        }
        MaskingNoise noise(2, 0.5);
        const auto winners = torch::randint(0, 2, {16, 8}, torch::kLong);
        const auto losers = torch::randint(0, 2, {16, 8}, torch::kLong);
        const double beta = 0.3, epsilon = 1e-3;

        auto generator = makeGenerator(21, torch::kCPU);
        policy->zero_grad();
        const DpoTerms terms = d2dpoLoss(policy, reference, noise, winners, losers, dpoConfig(beta, epsilon, 1), generator);
        terms.loss.backward();
        std::vector<torch::Tensor> partialGrads;
        for (const auto& p : policy->parameters())
            partialGrads.push_back(p.grad().clone());

        auto replay = makeGenerator(21, torch::kCPU);
        const auto t = torch::rand({16}, replay, torch::kFloat) * (1 - epsilon);
        const auto tBoth = torch::cat({t, t});
        const auto x1 = torch::cat({winners, losers});
        const auto xt = noise.corrupt(x1, tBoth, replay);
        policy->zero_grad();
        const auto logpTheta = torch::log_softmax(policy->forward(xt, tBoth), -1);
        const auto logpRef = torch::log_softmax(reference->forward(xt, tBoth), -1);
        const auto d = noise.divergence(xt, x1, logpTheta, logpRef, tBoth);
        const DpoTerms full = dpoLossFromDivergences(d.slice(0, 0, 16), d.slice(0, 16), beta);
        full.loss.backward();

        QVERIFY(std::abs(terms.loss.item<double>() - std::log(2.0)) > 1e-4); // not the trivial case
        QVERIFY2(std::abs(terms.loss.item<double>() - full.loss.item<double>()) < 1e-6,
                 qPrintable(QString("%1 vs %2").arg(terms.loss.item<double>()).arg(full.loss.item<double>())));
        QVERIFY(test::maxAbsDiff(terms.divergenceChosen, full.divergenceChosen) < 1e-5);
        QVERIFY(test::maxAbsDiff(terms.divergenceRejected, full.divergenceRejected) < 1e-5);
        const auto params = policy->parameters();
        for (size_t i = 0; i < params.size(); ++i) {
            const double scale = std::max(1e-3, params[i].grad().abs().max().item<double>());
            QVERIFY2(test::maxAbsDiff(partialGrads[i], params[i].grad()) < 1e-4 * scale,
                     qPrintable(QString("parameter %1").arg(i)));
        }
    }
};

QTEST_GUILESS_MAIN(TestLosses)
#include "tst_losses.moc"
