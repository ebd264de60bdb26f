// The Euler sampler: no mask survives, the per-step unmask and re-mask rates match the formula,
// and the same seed gives the same samples.
#include <cmath>

#include "testsupport.h"

#include "denoiser.h"
#include "device.h"
#include "eulersampler.h"

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
        QCOMPARE(sampler.counters().forwardPasses, int64_t(3 * steps)); // 3 batches of <= 128
    }

    void unmaskProbabilityFormula()
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

    void sameSeedSameSamples()
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
};

QTEST_GUILESS_MAIN(TestSampler)
#include "tst_sampler.moc"
