// SPDX-License-Identifier: GPL-3.0-or-later
// Uniform noise: its closed form against a hand-worked value, the positions it reads, the
// corruption statistics, the rate-Euler sampler on toy denoisers of a fixed output distribution
// (where the marginals are known exactly), and pretraining on it.
#include <cmath>
#include <memory>
#include <vector>

#include "support/testsupport.h"

#include "model/transformerdenoiser.h"
#include "model/device.h"
#include "diffusion/eulersampler.h"
#include "diffusion/losses.h"
#include "diffusion/maskingnoise.h"
#include "diffusion/ratesampler.h"
#include "diffusion/uniformnoise.h"

using namespace d2dpo;

namespace {

/// A denoiser whose p_theta(. | x_t, t) is `probs` at every position whatever its input: the
/// output head's weights are zeroed and its bias set to log probs.
Denoiser fixedDistributionModel(const std::vector<double>& probs, int length)
{
    torch::manual_seed(9);
    Denoiser model = makeDenoiser(test::tinySpec(length), int64_t(probs.size()), torch::kCPU);
    torch::NoGradGuard noGrad;
    for (auto& item : model->named_parameters()) {
        if (item.key() == "head.weight")
            item.value().zero_();
        else if (item.key() == "head.bias")
            item.value().copy_(torch::tensor(probs, torch::kDouble).log());
    }
    return model;
}

/// Whether every per-position frequency of every token in `samples` [N, D] is within 5 standard
/// errors of `expected` [S] (per-token probabilities); reports the worst gap.
bool frequenciesMatch(const torch::Tensor& samples, const torch::Tensor& expected, QString* worst)
{
    const int64_t count = samples.size(0);
    const auto frequencies = torch::one_hot(samples, expected.size(0)).to(torch::kDouble).mean(0); // [D, S]
    const auto sigma = (expected * (1 - expected) / double(count)).sqrt();
    const auto gap = ((frequencies - expected) / sigma).abs();
    *worst = QString("worst gap %1 sigma").arg(gap.max().item<double>());
    return gap.max().item<double>() < 5;
}

} // namespace

class TestUniform final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void uniformNoiseReadsEveryPosition_data()
    {
        QTest::addColumn<double>("t");
        for (double t : {0.1, 0.5, 0.9})
            QTest::addRow("t=%g", t) << t;
    }
    void uniformNoiseReadsEveryPosition()
    {
        QFETCH(double, t);
        const int64_t batch = 16, length = 12;
        UniformNoise noise(5, 0.5);
        auto generator = makeGenerator(5, torch::kCPU);
        const auto x1 = torch::randint(0, 5, {batch, length}, torch::kLong);
        const auto xt = noise.corrupt(x1, torch::full({batch}, t, torch::kDouble), generator);
        QVERIFY(noise.positionsRead(xt).equal(torch::arange(batch * length, torch::kLong)));
    }

    void theDivergenceMatchesAHandWorkedValue_data()
    {
        QTest::addColumn<double>("eta");
        QTest::addColumn<double>("expected");
        // S = 2, D = 2, t = 0.5. Position 0: x_t = 0, x_1 = 1 (corrupted), p_theta = (0.2, 0.8),
        // p_ref = (0.5, 0.5). Position 1: x_t = x_1 = 1 (clean), p_theta = (0.4, 0.6), p_ref = (0.1, 0.9).
        // eta = 0.5: c = (1 + 0.5 (0.5*2 + 0.5)) / 0.5 = 3.5.
        //   pos 0: R^theta(0->1) = 3.5*0.8 + 0.5*0.2 = 2.9, R^ref = 3.5*0.5 + 0.5*0.5 = 2.0, R^q = c = 3.5:
        //          3.5 log(2.9/2.0) + 2.0 - 2.9 = 0.400472447
        //   pos 1: R^theta(1->0) = 3.5*0.4 + 0.5*0.6 = 1.7, R^ref = 3.5*0.1 + 0.5*0.9 = 0.8, R^q = eta = 0.5:
        //          0.5 log(1.7/0.8) + 0.8 - 1.7 = -0.523114099
        //   sum -0.122641651
        // eta = 0: c = 2. pos 0: 2 log(1.6/1.0) + 1.0 - 1.6 = 0.340007258; pos 1: R^q = 0, only the
        //   exit rates: 0.2 - 0.8 = -0.6 (nonzero: a clean position still counts). Sum -0.259992742.
        QTest::newRow("eta=0.5") << 0.5 << -0.122641651298;
        QTest::newRow("eta=0") << 0.0 << -0.259992741509;
    }
    void theDivergenceMatchesAHandWorkedValue()
    {
        QFETCH(double, eta);
        QFETCH(double, expected);
        UniformNoise noise(2, eta);
        const auto xt = torch::tensor(std::vector<int64_t>{0, 1}).view({1, 2});
        const auto x1 = torch::tensor(std::vector<int64_t>{1, 1}).view({1, 2});
        const auto logpTheta = torch::tensor({0.2, 0.8, 0.4, 0.6}, torch::kDouble).view({1, 2, 2}).log();
        const auto logpRef = torch::tensor({0.5, 0.5, 0.1, 0.9}, torch::kDouble).view({1, 2, 2}).log();
        const auto times = torch::full({1}, 0.5, torch::kDouble);
        const double closed = noise.divergence(xt, x1, logpTheta, logpRef, times).item<double>();
        QVERIFY2(std::abs(closed - expected) < 1e-11, qPrintable(QString::number(closed, 'g', 12)));
        const double general = generalDivergence(noise, xt, x1, logpTheta, logpRef, times).item<double>();
        QVERIFY(std::abs(general - expected) < 1e-11);
        QCOMPARE(noise.rateFactor(times).item<double>(), eta == 0 ? 2.0 : 3.5);
    }

    void theDivergenceIsZeroWhenThePolicyIsTheReference()
    {
        torch::manual_seed(4);
        for (double eta : {0.0, 1.0}) {
            UniformNoise noise(5, eta);
            auto generator = makeGenerator(6, torch::kCPU);
            const auto x1 = torch::randint(0, 5, {32, 10}, torch::kLong);
            const auto times = torch::rand({32}, torch::kDouble) * 0.99;
            const auto xt = noise.corrupt(x1, times, generator);
            const auto logp = torch::log_softmax(torch::randn({32, 10, 5}, torch::kDouble) * 3, -1);
            QVERIFY(noise.divergence(xt, x1, logp, logp, times).abs().max().item<double>() < 1e-12);
        }
        // Through both models on a real denoiser: zero when the policy is the reference, and the
        // all-positions (GPU) and positions-read (CPU) paths give the same divergences.
        const ModelSpec spec = test::tinySpec(8);
        Denoiser policy = makeDenoiser(spec, 3, torch::kCPU);
        Denoiser reference = frozenCopy(policy);
        Denoiser other = makeDenoiser(spec, 3, torch::kCPU); // a policy that differs from the reference
        UniformNoise noise(3, 0.5);
        auto generator = makeGenerator(11, torch::kCPU);
        const auto x1 = torch::randint(0, 3, {32, 8}, generator, torch::kLong);
        const auto t = torch::rand({32}, generator, torch::kFloat) * 0.99;
        const auto xt = noise.corrupt(x1, t, generator);
        QVERIFY(divergencesAtPositions(policy, reference, noise, x1, xt, t).divergence.abs().max().item<double>() <
                1e-5);
        const auto all = divergencesAllPositions(other, reference, noise, x1, xt, t).divergence;
        const auto at = divergencesAtPositions(other, reference, noise, x1, xt, t).divergence;
        QVERIFY(all.abs().max().item<double>() > 1e-3);
        QVERIFY2(test::maxAbsDiff(all, at) < 1e-4, qPrintable(QString::number(test::maxAbsDiff(all, at))));
    }

    void corruptionGivesTheDataAtOneAndUniformTokensAtZero()
    {
        UniformNoise noise(4, 0.0);
        auto generator = makeGenerator(7, torch::kCPU);
        const auto x1 = torch::randint(0, 4, {200, 100}, torch::kLong);
        QVERIFY(noise.corrupt(x1, torch::ones({200}), generator).equal(x1)); // t = 1: the data
        // t = 0: uniform tokens whatever x_1 (all zeros here). 20000 draws, 5 standard errors.
        const auto noisy = noise.corrupt(torch::zeros_like(x1), torch::zeros({200}), generator);
        const auto frequencies = torch::one_hot(noisy.flatten(), 4).to(torch::kDouble).mean(0);
        const double tolerance = 5 * std::sqrt(0.25 * 0.75 / 20000);
        QVERIFY2((frequencies - 0.25).abs().max().item<double>() < tolerance,
                 qPrintable(QString::number((frequencies - 0.25).abs().max().item<double>())));
        const auto prior = noise.prior(200, 100, torch::kCPU, generator);
        QVERIFY((torch::one_hot(prior.flatten(), 4).to(torch::kDouble).mean(0) - 0.25).abs().max().item<double>() <
                tolerance);
        // corruptWhere touches only the selected positions.
        const auto select = torch::rand({200, 100}, generator).lt(0.5);
        const auto partly = noise.corruptWhere(x1, select, generator);
        QVERIFY(partly.masked_select(select.logical_not()).equal(x1.masked_select(select.logical_not())));
    }

    void corruptionChangesTheExpectedShareOfPositions_data()
    {
        QTest::addColumn<double>("t");
        QTest::addColumn<int>("vocab");
        QTest::newRow("t=0.2 S=4") << 0.2 << 4;
        QTest::newRow("t=0.7 S=4") << 0.7 << 4;
        QTest::newRow("t=0.5 S=2") << 0.5 << 2;
    }
    void corruptionChangesTheExpectedShareOfPositions()
    {
        QFETCH(double, t);
        QFETCH(int, vocab);
        UniformNoise noise(vocab, 1.0);
        auto generator = makeGenerator(8, torch::kCPU);
        const auto x1 = torch::randint(0, vocab, {400, 50}, torch::kLong);
        const auto xt = noise.corrupt(x1, torch::full({400}, t), generator);
        // A corrupted position draws its own token again with probability 1/S.
        const double expected = (1 - t) * (1 - 1.0 / vocab);
        const double changed = xt.ne(x1).to(torch::kDouble).mean().item<double>();
        const double tolerance = 5 * std::sqrt(expected * (1 - expected) / 20000);
        QVERIFY2(std::abs(changed - expected) < tolerance, qPrintable(QString("%1 vs %2").arg(changed).arg(expected)));
    }

    void theFactoryMakesUniformNoiseAndNamesTheKnownProcesses()
    {
        NoiseConfig config;
        config.process = "uniform";
        config.eta = 0.5;
        auto made = makeNoiseProcess(config, 6);
        QVERIFY(made.ok());
        QCOMPARE(QString::fromStdString(made.value()->name()), QString("uniform"));
        QCOMPARE(made.value()->stateCount(), int64_t(6));
        QCOMPARE(made.value()->vocabSize(), int64_t(6));
        config.process = "gaussian";
        const auto refused = makeNoiseProcess(config, 6);
        QVERIFY(!refused.ok());
        QCOMPARE(QString::fromStdString(refused.error()),
                 QString("unknown noise process 'gaussian' (known: masking, uniform)"));
    }

    void rateSamplerStepFollowsTheRates()
    {
        // One step from x = 0 everywhere at t = 0.5, dt = 0.02, S = 4, eta = 1, p = (0.1, 0.2, 0.3, 0.4):
        // c = (1 + (2 + 0.5)) / 0.5 = 7, R(0 -> j) = 7 p(j) + 0.1 = 1.5, 2.2, 2.9 for j = 1, 2, 3,
        // so each position moves to j with probability dt R = 0.030, 0.044, 0.058 (and stays 0.868).
        const std::vector<double> p{0.1, 0.2, 0.3, 0.4};
        RateEulerSampler sampler(fixedDistributionModel(p, 16), std::make_shared<UniformNoise>(4, 1.0), 50);
        auto generator = makeGenerator(12, torch::kCPU);
        torch::InferenceMode inference;
        const auto next = sampler.step(torch::zeros({4000, 16}, torch::kLong), 0.5, 0.02, false, generator);
        const auto expected = torch::tensor({0.868, 0.030, 0.044, 0.058}, torch::kDouble);
        QString worst;
        QVERIFY2(frequenciesMatch(next.flatten().unsqueeze(1), expected, &worst), qPrintable(worst));
        QCOMPARE(sampler.counters().forwardPasses, int64_t(1));
        QCOMPARE(sampler.counters().rowsForwarded, int64_t(4000));
    }

    void theRateSamplerMovesAFixedModelsMarginalsExactly()
    {
        // With p_theta = p fixed and eta = 0, the rates c p(j) move the marginal exactly as the
        // forward process would for data ~ p: at t it is t p + (1 - t)/S. Euler is exact here too
        // (the factors (1 - (k + 1) dt)/(1 - k dt) telescope), so after half the steps of K = 16
        // the per-position frequencies are 0.5 p + 0.125, and after the last step p.
        const std::vector<double> p{0.1, 0.2, 0.3, 0.4};
        const auto probs = torch::tensor(p, torch::kDouble);
        auto noise = std::make_shared<UniformNoise>(4, 0.0);
        RateEulerSampler sampler(fixedDistributionModel(p, 8), noise, 16);
        QCOMPARE(QString::fromStdString(sampler.describe()), QString("Euler on the rates, 16 steps"));
        auto generator = makeGenerator(13, torch::kCPU);
        QString worst;
        {
            torch::InferenceMode inference;
            auto x = noise->prior(6000, 8, torch::kCPU, generator);
            for (int k = 0; k < 8; ++k)
                x = sampler.step(x, k / 16.0, 1 / 16.0, false, generator);
            QVERIFY2(frequenciesMatch(x, 0.5 * probs + 0.125, &worst), qPrintable(worst));
        }
        for (double eta : {0.0, 2.0}) {
            RateEulerSampler full(fixedDistributionModel(p, 8), std::make_shared<UniformNoise>(4, eta), 64);
            const auto samples = full.sample(6000, generator, 2500);
            QCOMPARE(samples.size(0), 6000);
            QVERIFY2(frequenciesMatch(samples, probs, &worst), qPrintable(worst));
            QCOMPARE(full.counters().forwardPasses, int64_t(3 * 64));
            QCOMPARE(full.counters().steps, int64_t(3 * 64));
        }
    }

    void rateSamplerOnMaskingAgreesWithEuler_data()
    {
        QTest::addColumn<double>("eta");
        QTest::newRow("eta=0") << 0.0;
        QTest::newRow("eta=1") << 1.0;
    }
    void rateSamplerOnMaskingAgreesWithEuler()
    {
        QFETCH(double, eta);
        const std::vector<double> p{0.6, 0.3, 0.1};
        const int steps = 20;
        RateEulerSampler rates(fixedDistributionModel(p, 8), std::make_shared<MaskingNoise>(3, eta), steps);
        EulerSampler euler(fixedDistributionModel(p, 8), 3, steps, eta, EulerSampler::Mode::Reference);
        auto g1 = makeGenerator(14, torch::kCPU);
        auto g2 = makeGenerator(15, torch::kCPU);
        // Halfway, the state frequencies (mask included) of both agree within 5 standard errors of
        // the difference of two independent estimates.
        torch::Tensor a, b;
        {
            torch::InferenceMode inference;
            a = torch::full({6000, 8}, 3, torch::kLong);
            b = a.clone();
            for (int k = 0; k < steps / 2; ++k) {
                a = rates.step(a, double(k) / steps, 1.0 / steps, false, g1);
                b = euler.step(b, double(k) / steps, 1.0 / steps, false, g2);
            }
        }
        const auto fa = torch::one_hot(a, 4).to(torch::kDouble).mean(0);
        const auto fb = torch::one_hot(b, 4).to(torch::kDouble).mean(0);
        const auto sigma = ((fa * (1 - fa) + fb * (1 - fb)) / 6000).sqrt().clamp_min(1e-3);
        const double gap = ((fa - fb).abs() / sigma).max().item<double>();
        QVERIFY2(gap < 5, qPrintable(QString("worst gap %1 sigma").arg(gap)));
        if (eta == 0) // the mask fraction at t = 0.5 is exactly 1 - t in expectation
            QVERIFY(std::abs(fa.select(1, 3).mean().item<double>() - 0.5) < 5 * std::sqrt(0.25 / 48000));
        // The last step fills every mask and keeps real tokens (which the denoiser never learnt).
        {
            torch::InferenceMode inference;
            const auto clean = torch::zeros({100, 8}, torch::kLong);
            QVERIFY(rates.step(clean, 1 - 1.0 / steps, 1.0 / steps, true, g1).equal(clean));
        }
        // Whole samples: no mask left and per-position frequencies p for both.
        const auto probs = torch::tensor(p, torch::kDouble);
        QString worst;
        const auto sa = rates.sample(6000, g1, 3000);
        const auto sb = euler.sample(6000, g2, 3000);
        QVERIFY(sa.lt(3).all().item<bool>());
        QVERIFY2(frequenciesMatch(sa, probs, &worst), qPrintable(worst));
        QVERIFY2(frequenciesMatch(sb, probs, &worst), qPrintable(worst));
    }

    void theSameSeedGivesTheSameSamples()
    {
        torch::manual_seed(3);
        Denoiser model = makeDenoiser(test::tinySpec(8), 3, torch::kCPU);
        RateEulerSampler a(model, std::make_shared<UniformNoise>(3, 0.5), 12);
        auto g1 = makeGenerator(42, torch::kCPU);
        auto g2 = makeGenerator(42, torch::kCPU);
        auto g3 = makeGenerator(43, torch::kCPU);
        const auto s1 = a.sample(100, g1, 64);
        QVERIFY(s1.equal(a.sample(100, g2, 64)));
        QVERIFY(!s1.equal(a.sample(100, g3, 64)));
        QVERIFY(s1.ge(0).all().item<bool>() && s1.lt(3).all().item<bool>());
    }

    void pretrainingOnUniformNoiseLearns()
    {
        // Two sequences, equally likely: a model that learns them beats the untrained one clearly.
        torch::manual_seed(21);
        Denoiser model = makeDenoiser(test::tinySpec(6), 4, torch::kCPU);
        UniformNoise noise(4, 0.0);
        torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-2));
        auto generator = makeGenerator(22, torch::kCPU);
        const auto patterns = torch::tensor(std::vector<int64_t>{0, 1, 2, 3, 0, 1, 3, 2, 1, 0, 3, 2}).view({2, 6});
        std::vector<double> losses;
        for (int step = 0; step < 150; ++step) {
            const auto x1 = patterns.index_select(0, torch::randint(0, 2, {64}, generator, torch::kLong));
            const auto loss = pretrainLoss(model, noise, x1, generator, false);
            QVERIFY(std::isfinite(loss.item<double>()));
            adam.zero_grad();
            loss.backward();
            adam.step();
            losses.push_back(loss.item<double>());
        }
        const auto mean = [&](size_t from) {
            double sum = 0;
            for (size_t i = from; i < from + 20; ++i)
                sum += losses[i];
            return sum / 20;
        };
        qInfo("pretraining loss: first 20 steps %.3f, last 20 steps %.3f", mean(0), mean(losses.size() - 20));
        QVERIFY(mean(losses.size() - 20) < 0.8 * mean(0));
    }
};

QTEST_GUILESS_MAIN(TestUniform)
#include "tst_uniform.moc"
