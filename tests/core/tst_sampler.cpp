// SPDX-License-Identifier: GPL-3.0-or-later
// The Euler sampler: no mask survives, the per-step unmask and re-mask rates match the formula,
// and the same seed gives the same samples. The exact sampler: a uniform unmask order, and
// exactly the model's distribution (enumerated), which Euler's approaches as K grows. The confident
// sampler: K passes that leave no mask, and in one pass the product of the all-masked marginals.
#include <algorithm>
#include <cmath>

#include <QTemporaryDir>

#include "support/testsupport.h"

#include "model/transformerdenoiser.h"
#include "model/device.h"
#include "base/samplebudget.h"
#include "base/samplingchecks.h"
#include "diffusion/confidentsampler.h"
#include "diffusion/eulersampler.h"
#include "diffusion/exactsampler.h"
#include "jobs/pairgenerator.h"
#include "support/tinycheckpoint.h"

using namespace d2dpo;

class TestSampler final : public QObject {
    Q_OBJECT

private:
    Denoiser model(bool timeConditioning = true)
    {
        torch::manual_seed(7);
        return makeDenoiser(test::tinySpec(16, timeConditioning), 2, torch::kCPU);
    }

private Q_SLOTS:
    void noMaskSurvives_data()
    {
        QTest::addColumn<int>("steps");
        QTest::addColumn<double>("eta");
        for (int steps : {1, 2, 7, 64})
            for (double eta : {0.0, 1.0, 10.0})
                QTest::addRow("K=%d eta=%g", steps, eta) << steps << eta;
    }
    void noMaskSurvives()
    {
        QFETCH(int, steps);
        QFETCH(double, eta);
        EulerSampler sampler(model(), 2, steps, eta);
        auto generator = makeGenerator(1, torch::kCPU);
        const auto samples = sampler.sample(300, generator, 128);
        QCOMPARE(samples.size(0), 300);
        QCOMPARE(samples.size(1), 16);
        QVERIFY(samples.lt(2).all().item<bool>());
        QVERIFY(samples.ge(0).all().item<bool>());
        EulerSampler reference(model(), 2, steps, eta, EulerSampler::Mode::Reference);
        QVERIFY(reference.sample(300, generator, 128).lt(2).all().item<bool>());
        QCOMPARE(reference.counters().forwardPasses, int64_t(3 * steps)); // 3 batches of <= 128
    }

    void theUnmaskProbabilityFollowsItsFormulaCappedAtOne()
    {
        QCOMPARE(EulerSampler::unmaskProbability(0.0, 0.1, 0.0), 0.1);
        QVERIFY(std::abs(EulerSampler::unmaskProbability(0.5, 0.1, 1.0) - 0.3) < 1e-12); // 0.1 * 1.5 / 0.5
        QCOMPARE(EulerSampler::unmaskProbability(0.95, 0.1, 0.0), 1.0);                   // capped at 1
    }

    void unmaskRateMatchesFormula_data()
    {
        QTest::addColumn<double>("t");
        QTest::addColumn<double>("dt");
        QTest::addColumn<double>("eta");
        QTest::newRow("t=0 dt=1/64") << 0.0 << 1.0 / 64 << 0.0;
        QTest::newRow("t=0.5 dt=0.1") << 0.5 << 0.1 << 0.0;
        QTest::newRow("t=0.5 dt=0.1 eta=1") << 0.5 << 0.1 << 1.0;
        QTest::newRow("t=0.8 dt=0.05 eta=2") << 0.8 << 0.05 << 2.0;
    }
    void unmaskRateMatchesFormula()
    {
        QFETCH(double, t);
        QFETCH(double, dt);
        QFETCH(double, eta);
        EulerSampler sampler(model(), 2, 10, eta);
        auto generator = makeGenerator(2, torch::kCPU);
        torch::InferenceMode inference;
        const auto masked = torch::full({4000, 16}, 2, torch::kLong);
        const auto next = sampler.step(masked, t, dt, false, generator);
        const double unmasked = next.ne(2).to(torch::kDouble).mean().item<double>();
        const double expected = (1 + eta * t) * dt / (1 - t);
        // 64000 positions: the standard error is below 0.002.
        QVERIFY2(std::abs(unmasked - expected) < 0.008, qPrintable(QString("%1 vs %2").arg(unmasked).arg(expected)));
    }

    void remaskRateIsEtaDtExceptOnTheLastStep()
    {
        const double eta = 2.0, dt = 0.05;
        EulerSampler sampler(model(), 2, 20, eta);
        auto generator = makeGenerator(3, torch::kCPU);
        torch::InferenceMode inference;
        const auto clean = torch::randint(0, 2, {4000, 16}, torch::kLong);
        const auto next = sampler.step(clean, 0.5, dt, false, generator);
        const double remasked = next.eq(2).to(torch::kDouble).mean().item<double>();
        QVERIFY2(std::abs(remasked - eta * dt) < 0.008, qPrintable(QString::number(remasked)));
        QVERIFY(next.ne(2).logical_and(next.ne(clean)).any().item<bool>() == false); // tokens never change
        const auto last = sampler.step(clean, 1 - dt, dt, true, generator);
        QVERIFY(last.equal(clean));
    }

    void lastStepFillsEveryMask()
    {
        EulerSampler sampler(model(), 2, 3, 0.0);
        auto generator = makeGenerator(4, torch::kCPU);
        torch::InferenceMode inference;
        const auto masked = torch::full({500, 16}, 2, torch::kLong);
        QVERIFY(sampler.step(masked, 2.0 / 3.0, 1.0 / 3.0, true, generator).lt(2).all().item<bool>());
    }

    void cachedSamplerGivesTheReferenceSamples_data()
    {
        QTest::addColumn<bool>("timeConditioning");
        QTest::addColumn<double>("eta");
        QTest::addColumn<int>("steps");
        QTest::newRow("time, eta 0, K 64") << true << 0.0 << 64;
        QTest::newRow("no time, eta 0, K 64") << false << 0.0 << 64;
        QTest::newRow("no time, eta 0, K 1000") << false << 0.0 << 1000;
        QTest::newRow("no time, eta 0.5, K 40") << false << 0.5 << 40;
        QTest::newRow("no time, eta 3, K 40") << false << 3.0 << 40;
        QTest::newRow("time, eta 0.5, K 20") << true << 0.5 << 20;
    }
    void cachedSamplerGivesTheReferenceSamples()
    {
        QFETCH(bool, timeConditioning);
        QFETCH(double, eta);
        QFETCH(int, steps);
        // Double precision: a forward pass on a subset of rows may round differently from one on the
        // whole batch in the last bit; in double that cannot flip an argmax in practice.
        Denoiser net = model(timeConditioning);
        net->to(torch::kDouble);
        EulerSampler cached(net, 2, steps, eta, EulerSampler::Mode::Cached);
        EulerSampler reference(net, 2, steps, eta, EulerSampler::Mode::Reference);
        auto g1 = makeGenerator(21, torch::kCPU);
        auto g2 = makeGenerator(21, torch::kCPU);
        const auto a = cached.sample(300, g1, 128);
        const auto b = reference.sample(300, g2, 128);
        QVERIFY(a.equal(b));
        QVERIFY(a.lt(2).all().item<bool>());
        const double perSequence = double(cached.counters().rowsForwarded) / 300;
        const double perSequenceReference = double(reference.counters().rowsForwarded) / 300;
        qInfo("forward passes per sequence: %.1f cached, %.1f reference", perSequence, perSequenceReference);
        QCOMPARE(perSequenceReference, double(steps));
        if (eta == 0) // at most one pass per distinct unmask step of the sequence's 16 positions
            QVERIFY(perSequence <= 16.0);
        else if (!timeConditioning)
            QVERIFY(perSequence < steps);
        else
            QCOMPARE(perSequence, double(steps)); // with time conditioning nothing can be reused
    }

    void eventSchedulingMatchesThePerStepAlgorithm()
    {
        // Without remasking the cached sampler draws each position's unmask step up front
        // (uniform over the K steps) instead of a coin per step; the two must agree in
        // distribution. Compared on per-position token means and whole-sequence patterns.
        Denoiser net = model(true);
        {
            // Sharpen the untrained model so its outputs depend strongly on the context (a wrong
            // unmasking order would then show in the joint statistics).
            torch::NoGradGuard noGrad;
            for (auto& p : net->parameters())
                p.mul_(4);
        }
        const int steps = 8;
        const int64_t count = 6000;
        EulerSampler sampler(net, 2, steps, 0.0);
        auto g1 = makeGenerator(5, torch::kCPU);
        const auto events = sampler.sample(count, g1, 2000).to(torch::kDouble);
        auto g2 = makeGenerator(6, torch::kCPU);
        torch::Tensor x;
        {
            torch::InferenceMode inference;
            x = torch::full({count, 16}, 2, torch::kLong);
            for (int k = 0; k < steps; ++k)
                x = sampler.step(x, double(k) / steps, 1.0 / steps, k == steps - 1, g2);
        }
        const auto perStep = x.to(torch::kDouble);
        // 6000 samples: the standard error of a mean of 0/1 tokens is below 0.0065.
        const double meanGap = (events.mean(0) - perStep.mean(0)).abs().max().item<double>();
        QVERIFY2(meanGap < 0.035, qPrintable(QString::number(meanGap)));
        const auto firstTwo = [](const torch::Tensor& s) { return (s.select(1, 0) * 2 + s.select(1, 1)); };
        for (int pattern = 0; pattern < 4; ++pattern) {
            const double a = firstTwo(events).eq(pattern).to(torch::kDouble).mean().item<double>();
            const double b = firstTwo(perStep).eq(pattern).to(torch::kDouble).mean().item<double>();
            QVERIFY2(std::abs(a - b) < 0.035, qPrintable(QString("pattern %1: %2 vs %3").arg(pattern).arg(a).arg(b)));
        }
    }

    void theSameSeedGivesTheSameSamples()
    {
        for (bool timeConditioning : {true, false}) {
            EulerSampler a(model(timeConditioning), 2, 16, 0.5);
            EulerSampler b(model(timeConditioning), 2, 16, 0.5);
            auto g1 = makeGenerator(42, torch::kCPU);
            auto g2 = makeGenerator(42, torch::kCPU);
            auto g3 = makeGenerator(43, torch::kCPU);
            const auto s1 = a.sample(200, g1, 64);
            QVERIFY(s1.equal(b.sample(200, g2, 64)));
            QVERIFY(!s1.equal(a.sample(200, g3, 64)));
        }
    }

    void exactUnmaskOrderIsAUniformPermutation()
    {
        auto generator = makeGenerator(8, torch::kCPU);
        const int64_t count = 48000, length = 4;
        const auto [order, times] = ExactMaskingSampler::unmaskSchedule(count, length, generator, torch::kDouble);
        QVERIFY(times.diff(1, 1).ge(0).all().item<bool>());
        QVERIFY(std::get<0>(order.sort(1)).equal(torch::arange(length).expand({count, length})));
        // Each of the 24 orders 2000 times give or take 5 sigma.
        const auto code = (order * torch::tensor({64, 16, 4, 1})).sum(1);
        const auto [values, inverse, counts] = torch::_unique2(code, true, false, true);
        QCOMPARE(values.size(0), 24);
        const double p = 1.0 / 24, sigma = std::sqrt(count * p * (1 - p));
        QVERIFY2((counts.to(torch::kDouble) - count * p).abs().max().item<double>() < 5 * sigma,
                 qPrintable(QString("counts %1..%2").arg(counts.min().item<int64_t>()).arg(counts.max().item<int64_t>())));
    }

    void exactSamplerDrawsTheModelsDistribution()
    {
        // A time-independent denoiser over D = 3 binary positions, with weights large enough that
        // each position depends strongly on the others. Without time, the continuous-time process's
        // distribution is the average over the 6 unmask orders of the product of the model's
        // conditionals: enumerated here, and compared with the exact sampler's frequencies and
        // with Euler's as K grows (K = 1 unmasks everything at once: the product of marginals).
        Denoiser net = coupledModel();
        const auto exact = enumeratedDistribution(net);
        const int64_t count = 40000;
        const auto frequencies = [&](Sampler& sampler) {
            auto generator = makeGenerator(3, torch::kCPU);
            const auto x = sampler.sample(count, generator, 10000);
            const auto code = (x * torch::tensor({4, 2, 1})).sum(1);
            return torch::bincount(code, {}, 8).to(torch::kDouble) / double(count);
        };
        const auto sigma = (exact * (1 - exact) / double(count)).sqrt().clamp_min(1e-4);
        const auto zScore = [&](const torch::Tensor& f) { return ((f - exact).abs() / sigma).max().item<double>(); };
        ExactMaskingSampler sampler(net, 2);
        EulerSampler fine(net, 2, 1000, 0.0);
        EulerSampler oneStep(net, 2, 1, 0.0);
        const double exactZ = zScore(frequencies(sampler)), fineZ = zScore(frequencies(fine));
        const double oneStepZ = zScore(frequencies(oneStep));
        QVERIFY2(exactZ < 5, qPrintable(QString::number(exactZ)));
        QCOMPARE(sampler.counters().forwardPasses, 3 * (count / 10000)); // D passes per batch
        QVERIFY2(fineZ < 5, qPrintable(QString::number(fineZ)));
        QVERIFY2(oneStepZ > 20, qPrintable(QString::number(oneStepZ))); // the comparison can fail
    }

    void confidentPassesShareOutEveryPosition()
    {
        for (int64_t length : {1, 3, 16, 150, 301})
            for (int64_t passes : {int64_t(1), int64_t(2), int64_t(7), length / 2 + 1, length}) {
                int64_t total = 0;
                for (int64_t pass = 0; pass < passes; ++pass) {
                    const int64_t n = ConfidentSampler::positionsInPass(pass, passes, length);
                    QVERIFY(n >= length / passes && n <= length / passes + 1); // as even as it gets
                    total += n;
                }
                QCOMPARE(total, length);
            }
    }

    void confidentSamplerLeavesNoMaskInKPasses_data()
    {
        QTest::addColumn<int>("passes");
        QTest::addColumn<bool>("timeConditioning");
        for (int passes : {1, 3, 16, 40})
            for (bool time : {true, false})
                QTest::addRow("K=%d time=%d", passes, int(time)) << passes << time;
    }
    void confidentSamplerLeavesNoMaskInKPasses()
    {
        QFETCH(int, passes);
        QFETCH(bool, timeConditioning);
        ConfidentSampler sampler(model(timeConditioning), 2, passes);
        auto generator = makeGenerator(4, torch::kCPU);
        const auto samples = sampler.sample(300, generator, 128);
        QCOMPARE(samples.size(0), 300);
        QCOMPARE(samples.size(1), 16);
        QVERIFY(samples.lt(2).all().item<bool>());
        QVERIFY(samples.ge(0).all().item<bool>());
        QCOMPARE(sampler.counters().forwardPasses, int64_t(3 * std::min(passes, 16))); // 3 batches of <= 128
        ConfidentSampler again(model(timeConditioning), 2, passes);
        auto sameSeed = makeGenerator(4, torch::kCPU);
        QVERIFY(again.sample(300, sameSeed, 128).equal(samples));
    }

    void oneConfidentPassDrawsTheAllMaskedMarginals()
    {
        // With K = 1 every position is drawn at once from p(. | all masked): the product of those
        // marginals, enumerated here over D = 3 binary positions of a strongly coupled model.
        Denoiser net = coupledModel();
        torch::Tensor marginals;
        {
            torch::InferenceMode inference;
            marginals = torch::softmax(net->forward(torch::full({1, 3}, 2, torch::kLong), torch::zeros({1})), -1)[0]
                            .to(torch::kDouble);
        }
        std::vector<double> product(8);
        for (int sequence = 0; sequence < 8; ++sequence) {
            product[size_t(sequence)] = 1;
            for (int position = 0; position < 3; ++position)
                product[size_t(sequence)] *= marginals[position][(sequence >> (2 - position)) & 1].item<double>();
        }
        const auto expected = torch::tensor(product, torch::kDouble);
        const int64_t count = 40000;
        ConfidentSampler sampler(net, 2, 1);
        auto generator = makeGenerator(5, torch::kCPU);
        const auto x = sampler.sample(count, generator, 10000);
        const auto frequencies =
            torch::bincount((x * torch::tensor({4, 2, 1})).sum(1), {}, 8).to(torch::kDouble) / double(count);
        const auto sigma = (expected * (1 - expected) / double(count)).sqrt().clamp_min(1e-4);
        const double z = ((frequencies - expected).abs() / sigma).max().item<double>();
        QVERIFY2(z < 5, qPrintable(QString::number(z)));
        // And the exact distribution is not that product here, so the comparison can fail.
        const double apart = ((enumeratedDistribution(net) - expected).abs() / sigma).max().item<double>();
        QVERIFY2(apart > 20, qPrintable(QString::number(apart)));
    }

    void pairsAreDrawnExactlyWhereTheyFitTheTimeElseInFewerPasses()
    {
        QTemporaryDir dir;
        const auto written = test::writeTinyCheckpoint(dir.filePath("m.d2dpo").toStdString(), {.length = 16});
        QVERIFY2(written, written ? "" : written.error().c_str());
        auto generator = PairGenerator::load(written->path, "cpu");
        QVERIFY2(generator, generator ? "" : generator.error().c_str());
        const auto roomy = generator.value()->samplingWithin(1e6);
        QVERIFY(roomy);
        QCOMPARE(roomy->sampling.sampler, std::string("exact"));
        QVERIFY(roomy->secondsPerPass > 0);
        QCOMPARE(roomy->secondsPerPair, roomy->secondsPerPass * 16);
        const auto tight = generator.value()->samplingWithin(0);
        QVERIFY(tight);
        QCOMPARE(tight->sampling.sampler, std::string("confident"));
        QCOMPARE(tight->sampling.steps, kFewestConfidentPasses);
        QVERIFY2(tight->describe.find("confident sampler, 8 passes") != std::string::npos, tight->describe.c_str());
        const auto pairs = generator.value()->generate(5, 3, tight->sampling);
        QVERIFY2(pairs, pairs ? "" : pairs.error().c_str());
        for (const ShownPair& pair : pairs->pairs) {
            QVERIFY(!pair.left.empty());
            QVERIFY(pair.left != pair.right);
        }
    }

    void theConfidentSamplerIsOnlyForMaskingWithoutRemasking()
    {
        SamplingConfig confident;
        confident.sampler = "confident";
        NoiseConfig masking;
        QVERIFY(validate(confident, masking));
        NoiseConfig remasking;
        remasking.eta = 1;
        NoiseConfig uniform;
        uniform.process = "uniform";
        for (const NoiseConfig& noise : {remasking, uniform}) {
            const Status refused = validate(confident, noise);
            QVERIFY(!refused);
            QVERIFY(refused.error().find("masking process without remasking") != std::string::npos);
            QVERIFY(validate(SamplingConfig{}, noise)); // the exact sampler (or its fine Euler) is fine
        }
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, makeSampler(model(), uniform, 2, confident));
    }

private:
    /// A time-independent denoiser over D = 3 binary positions, with weights large enough that
    /// each position depends strongly on the others.
    static Denoiser coupledModel()
    {
        torch::manual_seed(12);
        Denoiser net = makeDenoiser(test::tinySpec(3, false), 2, torch::kCPU);
        {
            torch::NoGradGuard noGrad;
            for (auto& parameter : net->parameters())
                parameter.mul_(4);
        }
        net->eval();
        return net;
    }

    /// The exact distribution over the 8 sequences of a time-independent model, D = 3, S = 2.
    static torch::Tensor enumeratedDistribution(Denoiser& net)
    {
        torch::InferenceMode inference;
        std::vector<double> probability(8, 0.0);
        std::vector<int> order{0, 1, 2};
        do {
            for (int sequence = 0; sequence < 8; ++sequence) {
                std::vector<int64_t> state{2, 2, 2};
                double p = 1;
                for (int position : order) {
                    const auto probs = torch::softmax(net->forward(torch::tensor(state).view({1, 3}),
                                                                   torch::zeros({1})), -1);
                    const int token = (sequence >> (2 - position)) & 1;
                    p *= probs[0][position][token].item<double>();
                    state[size_t(position)] = token;
                }
                probability[size_t(sequence)] += p / 6;
            }
        } while (std::next_permutation(order.begin(), order.end()));
        return torch::tensor(probability, torch::kDouble);
    }
};

QTEST_GUILESS_MAIN(TestSampler)
#include "tst_sampler.moc"
