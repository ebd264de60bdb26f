// SPDX-License-Identifier: GPL-3.0-or-later
// The fused attention kernel against the LibTorch matmul formulation (values and gradients), and
// its gradient against finite differences; attentionAt (queries at some positions) against both.
#include <ATen/Parallel.h>

#include "support/testsupport.h"

#include "kernels/attention.h"

using namespace d2dpo;
using d2dpo::test::maxAbsDiff;

namespace {

struct Shape {
    int64_t batch, length, dModel, heads;
};

/// Output and input gradient for a fixed upstream gradient.
std::pair<torch::Tensor, torch::Tensor> runWithGrad(const torch::Tensor& qkvValues, const torch::Tensor& upstream,
                                                    int64_t heads, bool fused)
{
    auto qkv = qkvValues.detach().clone().requires_grad_(true);
    auto out = fused ? selfAttention(qkv, heads) : referenceSelfAttention(qkv, heads);
    (out * upstream).sum().backward();
    return {out.detach(), qkv.grad()};
}

/// attentionAt's output and the gradients of q and kv, fused or through the reference.
std::vector<torch::Tensor> runAtWithGrad(const torch::Tensor& qValues, const torch::Tensor& kvValues,
                                         const torch::Tensor& rows, const torch::Tensor& upstream, int64_t heads,
                                         bool fused)
{
    auto q = qValues.detach().clone().requires_grad_(true);
    auto kv = kvValues.detach().clone().requires_grad_(true);
    auto out = fused ? attentionAt(q, kv, rows, heads) : referenceAttentionAt(q, kv, rows, heads);
    (out * upstream).sum().backward();
    return {out.detach(), q.grad(), kv.grad()};
}

} // namespace

class TestAttention : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void attentionMatchesTheMatmulFormulation_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("length");
        QTest::addColumn<int>("dModel");
        QTest::addColumn<int>("heads");
        QTest::addColumn<double>("tolerance");
        for (const auto& [name, dtype, tolerance] :
             {std::tuple{"double", int(torch::kDouble), 1e-12}, std::tuple{"float", int(torch::kFloat), 2e-5}}) {
            QTest::addRow("%s small setting", name) << dtype << 6 << 16 << 64 << 4 << tolerance;
            QTest::addRow("%s odd length", name) << dtype << 3 << 5 << 12 << 3 << tolerance;
            QTest::addRow("%s one position", name) << dtype << 2 << 1 << 8 << 2 << tolerance;
            QTest::addRow("%s one head", name) << dtype << 2 << 7 << 8 << 1 << tolerance;
            QTest::addRow("%s large setting's heads", name) << dtype << 2 << 64 << 256 << 8 << tolerance;
            QTest::addRow("%s heads 24 wide, protein length (ESM2-35M)", name)
                << dtype << 2 << 150 << 48 << 2 << tolerance;
        }
    }

    void attentionMatchesTheMatmulFormulation()
    {
        QFETCH(int, dtype);
        QFETCH(int, batch);
        QFETCH(int, length);
        QFETCH(int, dModel);
        QFETCH(int, heads);
        QFETCH(double, tolerance);
        torch::manual_seed(7);
        const auto options = torch::dtype(torch::ScalarType(dtype));
        // Scores of order 1-10 so the softmax is neither flat nor one-hot.
        const auto qkv = torch::randn({batch, length, 3 * dModel}, options) * 1.5;
        const auto upstream = torch::randn({batch, length, dModel}, options);
        const auto [out, grad] = runWithGrad(qkv, upstream, heads, true);
        const auto [refOut, refGrad] = runWithGrad(qkv, upstream, heads, false);
        QCOMPARE(out.sizes(), refOut.sizes());
        QVERIFY2(maxAbsDiff(out, refOut) < tolerance, qPrintable(QString::number(maxAbsDiff(out, refOut))));
        QVERIFY2(maxAbsDiff(grad, refGrad) < tolerance, qPrintable(QString::number(maxAbsDiff(grad, refGrad))));
        // Every part of qkv receives a gradient (q, k and v slices of every head); with one
        // position the softmax is the constant 1, so q and k rightly receive none.
        if (length == 1)
            return;
        const bool everyColumn = grad.abs().sum(std::vector<int64_t>{0, 1}).gt(0).all().item<bool>();
        QVERIFY(everyColumn);
    }

    void gradientMatchesFiniteDifferences()
    {
        torch::manual_seed(3);
        const auto options = torch::dtype(torch::kDouble);
        const auto qkv = torch::randn({2, 5, 3 * 6}, options);
        const auto upstream = torch::randn({2, 5, 6}, options);
        const auto grad = runWithGrad(qkv, upstream, 2, true).second;
        auto objective = [&](const torch::Tensor& x) { return (selfAttention(x, 2) * upstream).sum().item<double>(); };
        const double h = 1e-6;
        auto flat = qkv.view({-1});
        for (int64_t i = 0; i < flat.numel(); i += 7) {
            auto plus = flat.clone();
            auto minus = flat.clone();
            plus[i] += h;
            minus[i] -= h;
            const double numeric = (objective(plus.view_as(qkv)) - objective(minus.view_as(qkv))) / (2 * h);
            const double analytic = grad.view({-1})[i].item<double>();
            QVERIFY2(std::abs(numeric - analytic) < 1e-7,
                     qPrintable(QString("entry %1: %2 vs %3").arg(i).arg(analytic).arg(numeric)));
        }
    }

    void inferencePathEqualsTrainingPath()
    {
        torch::manual_seed(5);
        const auto qkv = torch::randn({4, 16, 3 * 64});
        const auto upstream = torch::randn({4, 16, 64});
        const auto trained = runWithGrad(qkv, upstream, 4, true).first;
        torch::Tensor inferred;
        {
            c10::InferenceMode inference;
            inferred = selfAttention(qkv, 4);
        }
        QCOMPARE(maxAbsDiff(trained, inferred), 0.0);
    }

    void attentionAcceptsNonContiguousInput()
    {
        torch::manual_seed(9);
        const auto wide = torch::randn({16, 3, 3 * 32}).transpose(0, 1); // [3, 16, 96], not contiguous
        QVERIFY(!wide.is_contiguous());
        QVERIFY(maxAbsDiff(selfAttention(wide, 4), referenceSelfAttention(wide, 4)) < 2e-5);
    }

    void threadCountDoesNotChangeResults()
    {
        torch::manual_seed(11);
        const auto qkv = torch::randn({32, 16, 3 * 64});
        const auto upstream = torch::randn({32, 16, 64});
        const int threads = at::get_num_threads();
        at::set_num_threads(1);
        const auto [one, gradOne] = runWithGrad(qkv, upstream, 4, true);
        at::set_num_threads(2);
        const auto [two, gradTwo] = runWithGrad(qkv, upstream, 4, true);
        at::set_num_threads(threads);
        QCOMPARE(maxAbsDiff(one, two), 0.0);
        QCOMPARE(maxAbsDiff(gradOne, gradTwo), 0.0);
    }

    void attentionAtMatchesSelfAttention_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("length");
        QTest::addColumn<int>("dModel");
        QTest::addColumn<int>("heads");
        QTest::addColumn<double>("keep"); // the share of positions that are queries
        QTest::addColumn<double>("tolerance");
        for (const auto& [name, dtype, tolerance] :
             {std::tuple{"double", int(torch::kDouble), 1e-12}, std::tuple{"float", int(torch::kFloat), 2e-5}}) {
            QTest::addRow("%s small setting, half the positions", name) << dtype << 6 << 16 << 64 << 4 << 0.5 << tolerance;
            QTest::addRow("%s every position", name) << dtype << 3 << 16 << 64 << 4 << 1.0 << tolerance;
            QTest::addRow("%s odd length, few positions", name) << dtype << 4 << 5 << 12 << 3 << 0.3 << tolerance;
            QTest::addRow("%s large setting's heads", name) << dtype << 2 << 64 << 256 << 8 << 0.4 << tolerance;
        }
    }

    void attentionAtMatchesSelfAttention()
    {
        QFETCH(int, dtype);
        QFETCH(int, batch);
        QFETCH(int, length);
        QFETCH(int, dModel);
        QFETCH(int, heads);
        QFETCH(double, keep);
        QFETCH(double, tolerance);
        torch::manual_seed(13);
        const auto options = torch::dtype(torch::ScalarType(dtype));
        const auto qkv = torch::randn({batch, length, 3 * dModel}, options) * 1.5;
        auto chosen = torch::rand({batch * length}).lt(keep);
        chosen[0] = true;
        if (batch > 1) // one sequence without a query: its keys and values get no gradient
            chosen.slice(0, length, 2 * length).fill_(false);
        const auto rows = chosen.nonzero().squeeze(1);
        const auto q = qkv.reshape({-1, 3 * dModel}).slice(1, 0, dModel).index_select(0, rows);
        const auto kv = qkv.slice(2, dModel).contiguous();
        const auto upstream = torch::randn({rows.size(0), dModel}, options);
        const auto fused = runAtWithGrad(q, kv, rows, upstream, heads, true);
        const auto reference = runAtWithGrad(q, kv, rows, upstream, heads, false);
        const char* names[] = {"output", "dq", "dkv"};
        for (size_t i = 0; i < fused.size(); ++i)
            QVERIFY2(maxAbsDiff(fused[i], reference[i]) < tolerance,
                     qPrintable(QString("%1: %2").arg(names[i]).arg(maxAbsDiff(fused[i], reference[i]))));
        // Row p is selfAttention's output at rows[p].
        const auto full = selfAttention(qkv, heads).reshape({-1, dModel}).index_select(0, rows);
        QVERIFY(maxAbsDiff(fused[0], full) < tolerance);
        if (batch > 1)
            QCOMPARE(fused[2][1].abs().max().item<double>(), 0.0);
    }

    void attentionAtInferencePathEqualsTrainingPath()
    {
        torch::manual_seed(15);
        const auto q = torch::randn({7, 64});
        const auto kv = torch::randn({3, 16, 128});
        const auto rows = torch::tensor({0, 3, 15, 16, 17, 40, 47}, torch::kLong);
        const auto trained = runAtWithGrad(q, kv, rows, torch::ones({7, 64}), 4, true)[0];
        torch::Tensor inferred;
        {
            c10::InferenceMode inference;
            inferred = attentionAt(q, kv, rows, 4);
        }
        QCOMPARE(maxAbsDiff(trained, inferred), 0.0);
        QCOMPARE(attentionAt(torch::randn({0, 64}), kv, torch::zeros({0}, torch::kLong), 4).size(0), 0);
    }

    void attentionAtRejectsUnorderedOrOutOfRangeRows()
    {
        const auto q = torch::randn({2, 8}), kv = torch::randn({2, 4, 16});
        QVERIFY_THROWS_EXCEPTION(c10::Error, attentionAt(q, kv, torch::tensor({3, 1}, torch::kLong), 2));
        QVERIFY_THROWS_EXCEPTION(c10::Error, attentionAt(q, kv, torch::tensor({2, 2}, torch::kLong), 2));
        QVERIFY_THROWS_EXCEPTION(c10::Error, attentionAt(q, kv, torch::tensor({1, 8}, torch::kLong), 2));
        QVERIFY_THROWS_EXCEPTION(c10::Error, attentionAt(q, torch::randn({2, 4, 8}), torch::tensor({0, 1}), 2));
    }

    void attentionRejectsMalformedShapes()
    {
        QVERIFY_THROWS_EXCEPTION(c10::Error, selfAttention(torch::randn({2, 4, 10}), 2)); // 10 is not 3 x E
        QVERIFY_THROWS_EXCEPTION(c10::Error, selfAttention(torch::randn({4, 12}), 2));
    }
};

QTEST_GUILESS_MAIN(TestAttention)
#include "tst_attention.moc"
