// SPDX-License-Identifier: GPL-3.0-or-later
// The hand-written CPU kernels other than attention: the vectorizable exp and normal CDF, GELU,
// layer norm, the rotary embedding and the fused Adam step, each against LibTorch's own (values and gradients) and the
// C library, plus the properties the trainers rely on (inference path, thread count, fallbacks).
#include <cmath>
#include <limits>

#include <ATen/Parallel.h>

#include "support/testsupport.h"

#include "kernels/fusedadam.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/rotary.h"
#include "kernels/vectormath.h"

using namespace d2dpo;
using d2dpo::test::maxAbsDiff;

namespace {

/// Output and the gradients of every input that requires one, for a fixed upstream gradient.
template <typename F>
std::vector<torch::Tensor> valueAndGrads(F f, std::vector<torch::Tensor> inputs, const torch::Tensor& upstream)
{
    for (auto& input : inputs)
        input = input.detach().clone().requires_grad_(true);
    const auto out = f(inputs);
    (out * upstream).sum().backward();
    std::vector<torch::Tensor> result{out.detach()};
    for (const auto& input : inputs)
        result.push_back(input.grad());
    return result;
}

/// A small two-layer model whose parameters start from a fixed seed.
torch::nn::Sequential smallModel()
{
    torch::manual_seed(21);
    return torch::nn::Sequential(torch::nn::Linear(12, 40), torch::nn::Tanh(), torch::nn::Linear(40, 5));
}

} // namespace

class TestKernels : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void expIsWithinTwoUlpOfTheLibrary()
    {
        double worst = 0;
        for (float x = -87.0f; x < 88.0f; x += 0.0013f) {
            const double exact = std::exp(double(x));
            const float ulp = std::nextafter(float(exact), INFINITY) - float(exact);
            worst = std::max(worst, std::abs(double(vectormath::exp(x)) - exact) / ulp);
        }
        QVERIFY2(worst <= 2.0, qPrintable(QString::number(worst)));
        QCOMPARE(vectormath::exp(0.0f), 1.0f);
        QCOMPARE(vectormath::exp(-100.0f), 0.0f);
        QCOMPARE(vectormath::exp(100.0f), std::numeric_limits<float>::infinity());
        QVERIFY(std::isnan(vectormath::exp(std::numeric_limits<float>::quiet_NaN())));
    }

    void normalCdfMatchesErfc()
    {
        double worst = 0;
        for (float x = -12.0f; x < 12.0f; x += 0.0007f)
            worst = std::max(worst, std::abs(double(vectormath::normalCdf(x)) - 0.5 * std::erfc(-x / std::sqrt(2.0))));
        QVERIFY2(worst < 3e-7, qPrintable(QString::number(worst)));
        QCOMPARE(vectormath::normalCdf(-30.0f), 0.0f); // the tail, not 1 - 1 rounded
        QCOMPARE(vectormath::normalCdf(30.0f), 1.0f);
    }

    void geluMatchesLibTorch_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("double") << int(torch::kDouble) << 1e-12;
        QTest::newRow("float") << int(torch::kFloat) << 1e-6;
    }

    void geluMatchesLibTorch()
    {
        QFETCH(int, dtype);
        QFETCH(double, tolerance);
        torch::manual_seed(1);
        const auto options = torch::dtype(torch::ScalarType(dtype));
        // Odd sizes (vector remainders), values well into both tails, a parallel-sized tensor.
        for (const auto& shape : {std::vector<int64_t>{7, 13}, std::vector<int64_t>{3, 70001}}) {
            const auto x = torch::randn(shape, options) * 4;
            const auto upstream = torch::randn(shape, options);
            const auto ours = valueAndGrads([](const auto& in) { return exactGelu(in[0]); }, {x}, upstream);
            const auto theirs = valueAndGrads([](const auto& in) { return torch::gelu(in[0]); }, {x.to(torch::kDouble)},
                                              upstream.to(torch::kDouble));
            QVERIFY2(maxAbsDiff(ours[0], theirs[0]) < 4 * tolerance, qPrintable(QString::number(maxAbsDiff(ours[0], theirs[0]))));
            QVERIFY2(maxAbsDiff(ours[1], theirs[1]) < 4 * tolerance, qPrintable(QString::number(maxAbsDiff(ours[1], theirs[1]))));
        }
    }

    void geluInferencePathEqualsTrainingPathAndTakesAnyLayout()
    {
        torch::manual_seed(2);
        const auto x = torch::randn({64, 33});
        const auto trained = valueAndGrads([](const auto& in) { return exactGelu(in[0]); }, {x}, torch::ones_like(x))[0];
        torch::Tensor inferred;
        {
            c10::InferenceMode inference;
            inferred = exactGelu(x);
        }
        QCOMPARE(maxAbsDiff(trained, inferred), 0.0);
        QCOMPARE(maxAbsDiff(exactGelu(x.t()), trained.t()), 0.0); // a transposed view, same values
        const auto withNan = torch::tensor({1.0f, std::numeric_limits<float>::quiet_NaN()});
        QVERIFY(std::isnan(exactGelu(withNan)[1].item<float>()));
    }

    void layerNormMatchesLibTorch_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("width");
        QTest::addColumn<double>("tolerance");
        for (const auto& [name, dtype, tolerance] :
             {std::tuple{"double", int(torch::kDouble), 1e-12}, std::tuple{"float", int(torch::kFloat), 2e-5}}) {
            QTest::addRow("%s small width", name) << dtype << 37 << 64 << tolerance;
            QTest::addRow("%s width not a multiple of 16", name) << dtype << 9 << 12 << tolerance;
            QTest::addRow("%s several chunks, large width", name) << dtype << 300 << 256 << tolerance;
            QTest::addRow("%s one row", name) << dtype << 1 << 16 << tolerance;
        }
    }

    void layerNormMatchesLibTorch()
    {
        QFETCH(int, dtype);
        QFETCH(int, rows);
        QFETCH(int, width);
        QFETCH(double, tolerance);
        torch::manual_seed(3);
        const auto options = torch::dtype(torch::ScalarType(dtype));
        const auto x = torch::randn({rows, width}, options) * 3 + 1.5; // off-centre, not unit scale
        const auto w = torch::randn({width}, options);
        const auto b = torch::randn({width}, options);
        const auto upstream = torch::randn({rows, width}, options);
        const auto ours = valueAndGrads([](const auto& in) { return layerNorm(in[0], in[1], in[2], 1e-5); },
                                        {x, w, b}, upstream);
        const auto theirs = valueAndGrads(
            [width](const auto& in) { return torch::layer_norm(in[0], {width}, in[1], in[2], 1e-5); },
            {x.to(torch::kDouble), w.to(torch::kDouble), b.to(torch::kDouble)}, upstream.to(torch::kDouble));
        const char* names[] = {"value", "dx", "dweight", "dbias"};
        for (size_t i = 0; i < ours.size(); ++i) {
            // The weight and bias gradients sum over rows: their scale grows with the row count.
            const double scale = i >= 2 ? std::max(1.0, theirs[i].abs().max().item<double>()) : 1.0;
            QVERIFY2(maxAbsDiff(ours[i], theirs[i]) < tolerance * scale,
                     qPrintable(QString("%1: %2").arg(names[i]).arg(maxAbsDiff(ours[i], theirs[i]))));
        }
    }

    void layerNormKeepsShapeAndModuleParameters()
    {
        torch::manual_seed(4);
        torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({24}));
        torch::NoGradGuard noGrad;
        norm->weight.normal_();
        norm->bias.normal_();
        const auto x = torch::randn({2, 5, 24});
        const auto y = layerNorm(norm, x);
        QCOMPARE(y.sizes(), x.sizes());
        QVERIFY(maxAbsDiff(y, norm->forward(x)) < 2e-6);
        QCOMPARE(layerNorm(norm, torch::randn({0, 24})).size(0), 0);
    }

    void layerNormThreadCountDoesNotChangeResults()
    {
        torch::manual_seed(5);
        const auto x = torch::randn({1000, 64});
        const auto w = torch::randn({64}), b = torch::randn({64});
        const auto upstream = torch::randn({1000, 64});
        auto run = [&] {
            return valueAndGrads([](const auto& in) { return layerNorm(in[0], in[1], in[2], 1e-5); }, {x, w, b},
                                 upstream);
        };
        const int threads = at::get_num_threads();
        at::set_num_threads(1);
        const auto one = run();
        at::set_num_threads(2);
        const auto two = run();
        at::set_num_threads(threads);
        for (size_t i = 0; i < one.size(); ++i)
            QCOMPARE(maxAbsDiff(one[i], two[i]), 0.0);
    }

    void rotaryEmbeddingTurnsTheHeadsAndCopiesTheRest_data()
    {
        QTest::addColumn<int>("rotated");
        QTest::addColumn<int>("columns");
        QTest::addColumn<int>("headWidth");
        QTest::newRow("q|k|v packed: q and k turned") << 2 * 40 << 3 * 40 << 8;
        QTest::newRow("k|v: k turned") << 64 << 128 << 32;
        QTest::newRow("every column") << 24 << 24 << 6;
    }
    /// Against ESM's rotation written out in float64 (its float32 angles), values and gradients;
    /// the columns past the rotated ones pass through untouched; no-gradient and gradient paths agree.
    void rotaryEmbeddingTurnsTheHeadsAndCopiesTheRest()
    {
        QFETCH(int, rotated);
        QFETCH(int, columns);
        QFETCH(int, headWidth);
        torch::manual_seed(3);
        const int64_t b = 3, length = 37, half = headWidth / 2;
        const auto x = torch::randn({b, length, columns});
        const auto upstream = torch::randn({b, length, columns});
        const auto ours = valueAndGrads([&](const auto& in) { return rotaryEmbedding(in[0], rotated, headWidth); }, {x},
                                        upstream);
        const auto invFreq =
            1.0 / torch::pow(10000.0, torch::arange(0, headWidth, 2, torch::kLong).to(torch::kFloat) / double(headWidth));
        const auto angles = torch::outer(torch::arange(length, torch::kFloat), invFreq).to(torch::kDouble); // [L, w/2]
        const auto written = [&](const std::vector<torch::Tensor>& in) {
            const auto heads = in[0].narrow(2, 0, rotated).view({b, length, -1, headWidth});
            const auto x1 = heads.narrow(3, 0, half), x2 = heads.narrow(3, half, half);
            const auto c = angles.cos().view({1, length, 1, half}), s = angles.sin().view({1, length, 1, half});
            const auto turned = torch::cat({x1 * c - x2 * s, x2 * c + x1 * s}, 3).view({b, length, rotated});
            return torch::cat({turned, in[0].narrow(2, rotated, columns - rotated)}, 2);
        };
        const auto expected = valueAndGrads(written, {x.to(torch::kDouble)}, upstream.to(torch::kDouble));
        QVERIFY2(maxAbsDiff(ours[0], expected[0]) < 1e-5, qPrintable(QString::number(maxAbsDiff(ours[0], expected[0]))));
        QVERIFY2(maxAbsDiff(ours[1], expected[1]) < 1e-5, qPrintable(QString::number(maxAbsDiff(ours[1], expected[1]))));
        QVERIFY(torch::equal(ours[0].narrow(2, rotated, columns - rotated), x.narrow(2, rotated, columns - rotated)));
        torch::NoGradGuard noGrad;
        QVERIFY(torch::equal(rotaryEmbedding(x, rotated, headWidth), ours[0]));
        // Double takes LibTorch's operators, the same rotation.
        QVERIFY(maxAbsDiff(rotaryEmbedding(x.to(torch::kDouble), rotated, headWidth), expected[0]) < 1e-12);
    }

    void fusedAdamMatchesLibTorchAdam_data()
    {
        QTest::addColumn<double>("weightDecay");
        QTest::newRow("plain") << 0.0;
        QTest::newRow("weight decay") << 0.01;
    }

    void fusedAdamMatchesLibTorchAdam()
    {
        QFETCH(double, weightDecay);
        auto ours = smallModel();
        auto theirs = smallModel();
        const auto options = torch::optim::AdamOptions(3e-3).weight_decay(weightDecay);
        FusedAdam fused(ours->parameters(), options);
        torch::optim::Adam reference(theirs->parameters(), options);
        torch::manual_seed(6);
        for (int step = 0; step < 30; ++step) {
            const auto input = torch::randn({16, 12});
            const auto target = torch::randn({16, 5});
            for (auto* pair : {&ours, &theirs})
                torch::mse_loss((*pair)->forward(input), target).backward();
            fused.step();
            reference.step();
            fused.zero_grad();
            reference.zero_grad();
        }
        const auto a = ours->parameters(), b = theirs->parameters();
        for (size_t i = 0; i < a.size(); ++i) {
            QVERIFY(maxAbsDiff(a[i], theirs->parameters()[i].detach()) > -1); // same shapes, both finite
            QVERIFY2(maxAbsDiff(a[i], b[i]) < 1e-6, qPrintable(QString::number(maxAbsDiff(a[i], b[i]))));
        }
        // The parameters moved: a test of two optimizers that do nothing would pass above.
        QVERIFY(maxAbsDiff(a[0], smallModel()->parameters()[0]) > 1e-3);
    }

    void fusedAdamSkipsParametersWithoutGradientAndFallsBack()
    {
        auto model = smallModel();
        const auto before = model->parameters()[2].detach().clone(); // the second layer's weight
        FusedAdam adam(model->parameters(), torch::optim::AdamOptions(1e-2));
        // A gradient only for the first layer (the others are left undefined, as dropGradients
        // leaves a parameter the loss did not reach).
        model->parameters()[0].mutable_grad() = torch::ones_like(model->parameters()[0]);
        adam.step();
        QCOMPARE(maxAbsDiff(model->parameters()[2], before), 0.0);
        QCOMPARE(adam.state().size(), size_t(1));

        // amsgrad and double parameters are not fused: the step is LibTorch's, with the same result.
        for (const bool amsgrad : {true, false}) {
            auto ours = smallModel();
            auto theirs = smallModel();
            if (!amsgrad) {
                ours->to(torch::kDouble);
                theirs->to(torch::kDouble);
            }
            const auto options = torch::optim::AdamOptions(1e-2).amsgrad(amsgrad);
            FusedAdam fused(ours->parameters(), options);
            torch::optim::Adam reference(theirs->parameters(), options);
            for (int step = 0; step < 3; ++step) {
                for (auto* m : {&ours, &theirs})
                    for (auto& p : (*m)->parameters())
                        p.mutable_grad() = torch::full_like(p, 0.1 * (step + 1));
                fused.step();
                reference.step();
            }
            for (size_t i = 0; i < ours->parameters().size(); ++i)
                QCOMPARE(maxAbsDiff(ours->parameters()[i], theirs->parameters()[i]), 0.0);
        }
    }
};

QTEST_GUILESS_MAIN(TestKernels)
#include "tst_kernels.moc"
