// SPDX-License-Identifier: GPL-3.0-or-later
// bf16 matrix products (base/precision.h, kernels/matmulprecision.h, kernels/onednnlinear.h): the
// setting's one name table and its JSON; the scope, per thread and restored; float32 left bit for
// bit as it was; under bf16 every product (the forward and both gradients) equals the float64
// product of the bf16-rounded operands, far closer than to the float32 product, so the rounding is
// real and nothing else is rounded; double stays double. Then a D2-DPO run at bf16 against the same
// run at float32, or on a processor without bf16 units, the refusal that says why.
#include <QtTest/QtTest>

#include <thread>

#include <torch/torch.h>

#include "support/testsupport.h"

#include "base/config.h"
#include "diffusion/maskingnoise.h"
#include "kernels/matmulprecision.h"
#include "kernels/onednnlinear.h"
#include "model/device.h"
#include "model/transformerdenoiser.h"
#include "tasks/binaryintegerstask.h"
#include "train/dpotrainer.h"

using namespace d2dpo;
using test::maxAbsDiff;

namespace {

torch::Tensor roundedToBf16(const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kDouble); }

/// The D2-DPO losses of `steps` steps of the paper's small setting at `precision`, and the weights after.
std::pair<std::vector<double>, std::vector<torch::Tensor>> dpoRun(Precision precision, int steps)
{
    BinaryIntegersTask task(6);
    MaskingNoise noise(2, 0.0);
    const ModelSpec spec = test::tinySpec(6);
    torch::manual_seed(5);
    DpoConfig dpo = test::tinyDpo(steps);
    dpo.precision = precision;
    DpoTrainer trainer(makeDenoiser(spec, 2, torch::kCPU), task, noise, DpoTrainerOptions(spec, dpo).seed(3));
    auto generator = makeGenerator(8, torch::kCPU);
    const auto [winners, losers] = task.rulePairs(256, generator, torch::kCPU).value();
    trainer.setPreferences(winners, losers);
    std::vector<double> losses;
    for (int i = 0; i < steps; ++i)
        losses.push_back(trainer.trainStep(false).loss);
    std::vector<torch::Tensor> weights;
    for (const auto& p : trainer.policy()->parameters())
        weights.push_back(p.detach().clone());
    return {losses, weights};
}

} // namespace

class TestPrecision final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void oneNameTableAndItsJson()
    {
        QCOMPARE(precisionNames(), (std::vector<std::string>{"float32", "bf16"}));
        for (const std::string& name : precisionNames())
            QCOMPARE(precisionName(*precisionFromName(name)), std::string_view(name));
        QVERIFY(!precisionFromName("fp16"));
        QVERIFY(!precisionFromName("BF16 "));

        DpoConfig config;
        config.precision = Precision::BFloat16;
        auto back = dpoConfigFromJson(toJson(config, DpoScheduleConfig{}));
        QVERIFY(back);
        QCOMPARE(back->precision, Precision::BFloat16);
        // A run written before precisions existed trains at float32.
        QCOMPARE(dpoConfigFromJson("{\"beta\": 0.1}")->precision, Precision::Float32);
        const auto refused = dpoConfigFromJson("{\"precision\": \"half\\u001b[2J\"}");
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("'half\\x1b[2J'") != std::string::npos, refused.error().c_str());
    }

    void theScopeIsPerThreadAndRestored()
    {
        QCOMPARE(matmulPrecision(), Precision::Float32);
        {
            const MatmulPrecisionScope outer(Precision::BFloat16);
            QCOMPARE(matmulPrecision(), Precision::BFloat16);
            Precision elsewhere = Precision::BFloat16;
            std::thread([&] { elsewhere = matmulPrecision(); }).join();
            QCOMPARE(elsewhere, Precision::Float32);
            {
                const MatmulPrecisionScope inner(Precision::Float32);
                QCOMPARE(matmulPrecision(), Precision::Float32);
            }
            QCOMPARE(matmulPrecision(), Precision::BFloat16);
        }
        QCOMPARE(matmulPrecision(), Precision::Float32);
    }

    /// The project's own transformer keeps its float32 numbers: the same operations as torch::linear.
    void float32IsTorchLinearItself()
    {
        torch::manual_seed(1);
        const auto w = torch::randn({24, 40}), b = torch::randn({24});
        for (const auto& x : {torch::randn({7, 40}), torch::randn({3, 5, 40}), torch::randn({40, 7}).t()}) {
            QVERIFY(torch::equal(linearAtPrecision(x, w, b), torch::linear(x, w, b)));
            QVERIFY(torch::equal(linearAtPrecision(x, w, std::nullopt), torch::linear(x, w)));
        }
    }

    void bf16RoundsTheOperandsAndNothingElse_data()
    {
        QTest::addColumn<std::vector<int64_t>>("inputShape");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<bool>("transposedInput");
        QTest::newRow("rows, bias") << std::vector<int64_t>{96, 384} << true << false;
        QTest::newRow("batch of sequences, no bias") << std::vector<int64_t>{4, 30, 384} << false << false;
        QTest::newRow("non-contiguous input") << std::vector<int64_t>{384, 50} << true << true;
    }
    void bf16RoundsTheOperandsAndNothingElse()
    {
        QFETCH(std::vector<int64_t>, inputShape);
        QFETCH(bool, bias);
        QFETCH(bool, transposedInput);
        torch::manual_seed(2);
        auto x = torch::randn(inputShape);
        if (transposedInput)
            x = x.t();
        x.requires_grad_(true);
        const auto w = (torch::randn({200, 384}) / std::sqrt(384.0)).requires_grad_(true);
        const auto b = torch::randn({200}).requires_grad_(true);
        torch::Tensor out;
        {
            const MatmulPrecisionScope bf16(Precision::BFloat16);
            out = onednnLinear(x, w, bias ? std::optional(b) : std::nullopt);
        }
        QCOMPARE(out.scalar_type(), torch::kFloat);
        const auto xd = x.detach().to(torch::kDouble), wd = w.detach().to(torch::kDouble);
        auto rounded = torch::matmul(roundedToBf16(xd), roundedToBf16(wd).t());
        auto exact = torch::matmul(xd, wd.t());
        if (bias) {
            rounded += b.detach().to(torch::kDouble);
            exact += b.detach().to(torch::kDouble);
        }
        const double toRounded = maxAbsDiff(out.to(torch::kDouble), rounded);
        const double toExact = maxAbsDiff(out.to(torch::kDouble), exact);
        qInfo("forward: |bf16 - rounded operands' product| %.2e, |bf16 - float64 product| %.2e", toRounded, toExact);
        QVERIFY2(toRounded < 2e-5, qPrintable(QString::number(toRounded)));
        QVERIFY2(toExact > 20 * toRounded, qPrintable(QString::number(toExact))); // the operands were rounded

        // Both gradients: the float64 products of the bf16-rounded gradient and operands.
        const auto g = torch::randn(out.sizes());
        (out * g).sum().backward();
        const auto gd = g.to(torch::kDouble).reshape({-1, 200});
        const auto xRows = xd.reshape({-1, 384});
        const auto expectedX = torch::matmul(roundedToBf16(gd), roundedToBf16(wd)).view(xd.sizes());
        const auto expectedW = torch::matmul(roundedToBf16(gd).t(), roundedToBf16(xRows));
        QCOMPARE(x.grad().scalar_type(), torch::kFloat);
        QCOMPARE(w.grad().scalar_type(), torch::kFloat);
        QVERIFY2(maxAbsDiff(x.grad().to(torch::kDouble), expectedX) < 2e-5,
                 qPrintable(QString::number(maxAbsDiff(x.grad().to(torch::kDouble), expectedX))));
        QVERIFY2(maxAbsDiff(w.grad().to(torch::kDouble), expectedW) < 1e-4,
                 qPrintable(QString::number(maxAbsDiff(w.grad().to(torch::kDouble), expectedW))));
        if (bias) // the bias's gradient is a float32 sum, never rounded
            QVERIFY(maxAbsDiff(b.grad().to(torch::kDouble), gd.sum(0)) < 1e-4);
    }

    /// Without gradients (a frozen reference, sampling) the same product, with no autograd node.
    void bf16WithoutGradients()
    {
        torch::manual_seed(3);
        const auto x = torch::randn({64, 128}), w = torch::randn({32, 128}) / 12.0;
        const MatmulPrecisionScope bf16(Precision::BFloat16);
        const auto tracked = onednnLinear(x.requires_grad_(), w, std::nullopt).detach();
        torch::NoGradGuard noGrad;
        const auto plain = onednnLinear(x, w, std::nullopt);
        QVERIFY(!plain.requires_grad());
        QVERIFY(maxAbsDiff(plain, tracked) < 1e-6);
    }

    void doubleStaysDouble()
    {
        torch::manual_seed(4);
        const auto x = torch::randn({9, 33}, torch::kDouble), w = torch::randn({5, 33}, torch::kDouble);
        const MatmulPrecisionScope bf16(Precision::BFloat16);
        QVERIFY(torch::equal(onednnLinear(x, w, std::nullopt), torch::linear(x, w)));
        QVERIFY(torch::equal(linearAtPrecision(x, w, std::nullopt), torch::linear(x, w)));
    }

    /// The paper's small setting, 12 steps at bf16 and at float32 from the same start and draws:
    /// the same first loss (policy = reference, ln 2), close losses after, close weights that are
    /// not equal (the products were rounded). Where the processor has no bf16 units, the run
    /// refuses with the reason instead.
    void aD2dpoRunAtBf16FollowsFloat32()
    {
        const std::string unsupported = precisionUnsupportedReason(Precision::BFloat16, torch::kCPU);
        if (!unsupported.empty()) {
            BinaryIntegersTask task(6);
            MaskingNoise noise(2, 0.0);
            DpoConfig dpo = test::tinyDpo(3);
            dpo.precision = Precision::BFloat16;
            DpoTrainer trainer(makeDenoiser(test::tinySpec(6), 2, torch::kCPU), task, noise,
                               DpoTrainerOptions(test::tinySpec(6), dpo));
            try {
                trainer.trainStep(false);
                QFAIL("a bf16 run started on a processor without bf16 units");
            } catch (const std::exception& e) {
                QVERIFY2(std::string(e.what()).find("--precision bf16: this processor has no bf16 units") == 0,
                         e.what());
            }
            return;
        }
        const auto [lossesBf16, weightsBf16] = dpoRun(Precision::BFloat16, 12);
        const auto [losses32, weights32] = dpoRun(Precision::Float32, 12);
        QCOMPARE(lossesBf16.front(), losses32.front());
        QVERIFY(std::abs(losses32.front() - std::log(2.0)) < 1e-6);
        double lossGap = 0, weightGap = 0;
        for (size_t i = 0; i < losses32.size(); ++i)
            lossGap = std::max(lossGap, std::abs(lossesBf16[i] - losses32[i]));
        for (size_t i = 0; i < weights32.size(); ++i)
            weightGap = std::max(weightGap, maxAbsDiff(weightsBf16[i], weights32[i]));
        qInfo("12 steps: largest |loss bf16 - float32| %.2e, largest weight gap %.2e", lossGap, weightGap);
        QVERIFY2(lossGap < 0.02, qPrintable(QString::number(lossGap)));
        QVERIFY(weightGap > 0);
        QVERIFY2(weightGap < 12 * 2 * test::tinyDpo(12).learningRate, qPrintable(QString::number(weightGap)));
    }
};

QTEST_GUILESS_MAIN(TestPrecision)
#include "tst_precision.moc"
