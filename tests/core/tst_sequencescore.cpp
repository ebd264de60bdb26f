// SPDX-License-Identifier: GPL-3.0-or-later
// The likelihood bound a model ranks measured sequences by (diffusion/sequencescore.h), against
// hand-worked values: a model that knows nothing (every logit 0, so p = 1/S everywhere) has
// ELBO = -E_t[#masked / (1 - t)] log S = -D log S, since a position is masked with probability
// 1 - t; a bound never exceeds 0; the estimate is a function of its seed; and a process other
// than masking is refused rather than scored by the wrong formula.
#include <cmath>

#include "support/testsupport.h"
#include "diffusion/maskingnoise.h"
#include "diffusion/sequencescore.h"
#include "diffusion/uniformnoise.h"
#include "model/device.h"
#include "model/transformerdenoiser.h"
#include "support/tinyconfigs.h"

using namespace d2dpo;

class TestSequenceScore final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aModelThatKnowsNothingHasTheBoundDLogS()
    {
        torch::manual_seed(5);
        Denoiser model = makeDenoiser(test::tinySpec(8), 2, torch::kCPU);
        {
            torch::NoGradGuard noGrad;
            for (auto& p : model->parameters())
                p.zero_();
        }
        MaskingNoise noise(2, 0.0);
        auto generator = makeGenerator(3, torch::kCPU);
        const auto x1 = torch::randint(0, 2, {512, 8}, torch::kLong);
        const auto scores = elboScores(model, noise, x1, 16, 4096, generator);
        QCOMPARE(scores.size(0), 512);
        QVERIFY(scores.le(0).all().item<bool>());
        const double expected = -8 * std::log(2.0);
        // 512 sequences of 16 stratified draws: the mean's standard error is about 0.01 here; the
        // clamp of t below 1 - 1e-3 moves the mean by less than 1e-3 of it.
        const double mean = scores.mean().item<double>();
        QVERIFY2(std::abs(mean - expected) < 0.06, qPrintable(QString("%1 vs %2").arg(mean).arg(expected)));
    }

    void theBoundIsAFunctionOfItsSeed()
    {
        torch::manual_seed(5);
        Denoiser model = makeDenoiser(test::tinySpec(6), 2, torch::kCPU);
        MaskingNoise noise(2, 0.0);
        const auto x1 = torch::randint(0, 2, {32, 6}, torch::kLong);
        auto a = makeGenerator(9, torch::kCPU), b = makeGenerator(9, torch::kCPU);
        const auto first = elboScores(model, noise, x1, 8, 64, a);
        const auto second = elboScores(model, noise, x1, 8, 100000, b);
        // Passes of 64 rows or one pass of all: the draws differ (the generator is read per pass),
        // so only the same settings are compared exactly ...
        auto c = makeGenerator(9, torch::kCPU);
        QVERIFY(torch::equal(first, elboScores(model, noise, x1, 8, 64, c)));
        // ... and both estimate one bound.
        QVERIFY2((first.mean() - second.mean()).abs().item<double>() < 0.5,
                 qPrintable(QString("%1 vs %2").arg(first.mean().item<double>()).arg(second.mean().item<double>())));
    }

    void anotherNoiseThanMaskingIsRefused()
    {
        Denoiser model = makeDenoiser(test::tinySpec(6), 2, torch::kCPU);
        UniformNoise noise(2, 0.0);
        auto generator = makeGenerator(1, torch::kCPU);
        bool refused = false;
        try {
            elboScores(model, noise, torch::zeros({2, 6}, torch::kLong), 4, 64, generator);
        } catch (const std::exception& e) {
            refused = QString::fromUtf8(e.what()).contains("written for masking noise");
        }
        QVERIFY(refused);
    }
};

QTEST_APPLESS_MAIN(TestSequenceScore)
#include "tst_sequencescore.moc"
