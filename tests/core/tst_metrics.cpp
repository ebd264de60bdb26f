// SPDX-License-Identifier: GPL-3.0-or-later
// Metrics and the binary-integers task on hand-made samples.
#include <cmath>

#include "testsupport.h"

#include "tasks/binaryintegerstask.h"
#include "model/device.h"
#include "train/evaluation.h"
#include "base/samplemetrics.h"

using namespace d2dpo;

namespace {

torch::Tensor rows(std::initializer_list<std::initializer_list<int64_t>> values)
{
    std::vector<torch::Tensor> out;
    for (const auto& row : values)
        out.push_back(torch::tensor(std::vector<int64_t>(row), torch::kLong));
    return torch::stack(out);
}

} // namespace

class TestMetrics final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void decodeBinaryIntegers()
    {
        BinaryIntegersTask task(4);
        const auto samples = rows({{0, 0, 0, 0}, {1, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 0, 0}, {0, 1, 0, 0},
                                   {1, 0, 1, 0}, {1, 1, 2, 0}});
        const auto decoded = decodeToHost(task, samples);
        QCOMPARE(decoded, (std::vector<int64_t>{0, 1, 4, 2, -1, -1, -1}));
        const auto rank = task.ruleRank(samples);
        QVERIFY(rank.equal(torch::tensor({1, 2, 1, 1, 0, 0, 0}, torch::kLong)));
        QVERIFY(task.encode(torch::tensor({0, 3}, torch::kLong)).equal(rows({{0, 0, 0, 0}, {1, 1, 1, 0}})));
    }

    void metricsOnHandMadeSamples()
    {
        // N = 4: values 0..4. Samples: 1, 1, 3, 2, 4, invalid, invalid, 0 (8 samples, 6 valid, 3 odd).
        const SampleMetrics m = computeSampleMetrics({1, 1, 3, 2, 4, -1, -1, 0}, 4);
        QCOMPARE(m.samples, int64_t(8));
        QCOMPARE(m.vsr, 6.0 / 8);
        QCOMPARE(m.oddRatio, 3.0 / 8);
        QCOMPARE(m.oddShareValid, 3.0 / 6);
        QCOMPARE(m.invalid, int64_t(2));
        QCOMPARE(m.histogram, (std::vector<int64_t>{1, 2, 1, 1, 1}));
        // Uniform over odd values {1, 3}: target (0, .5, 0, .5, 0) against (1/6, 2/6, 1/6, 1/6, 1/6).
        const double tv = 0.5 * (1.0 / 6 + (0.5 - 2.0 / 6) + 1.0 / 6 + (0.5 - 1.0 / 6) + 1.0 / 6);
        QVERIFY(std::abs(m.tvFromOddUniform - tv) < 1e-12);
        const double entropy = -(4 * (1.0 / 6) * std::log(1.0 / 6) + (2.0 / 6) * std::log(2.0 / 6));
        QVERIFY(std::abs(m.entropy - entropy) < 1e-12);
    }

    void perfectlyAlignedSamplesHaveZeroTv()
    {
        const SampleMetrics m = computeSampleMetrics({1, 3, 5, 1, 3, 5}, 6);
        QCOMPARE(m.vsr, 1.0);
        QCOMPARE(m.oddRatio, 1.0);
        QVERIFY(m.tvFromOddUniform < 1e-12);
        QVERIFY(std::abs(m.entropy - std::log(3.0)) < 1e-12);
    }

    void emptyAndAllInvalid()
    {
        QCOMPARE(computeSampleMetrics({}, 4).vsr, 0.0);
        const SampleMetrics m = computeSampleMetrics({-1, -1}, 4);
        QCOMPARE(m.vsr, 0.0);
        QCOMPARE(m.invalid, int64_t(2));
        QCOMPARE(m.oddShareValid, 0.0);
    }

    void dataIsUniformOverValues()
    {
        BinaryIntegersTask task(5);
        auto generator = makeGenerator(9, torch::kCPU);
        const auto data = task.sampleData(6000, generator, torch::kCPU);
        const SampleMetrics m = measureSamples(task, data);
        QCOMPARE(m.vsr, 1.0);
        for (int64_t count : m.histogram)
            QVERIFY(std::abs(count / 6000.0 - 1.0 / 6) < 0.02);
    }

    void rulePairsPreferOddOverEven_data()
    {
        QTest::addColumn<int>("length");
        QTest::newRow("N=2") << 2;
        QTest::newRow("N=15") << 15;
        QTest::newRow("N=16") << 16;
    }
    void rulePairsPreferOddOverEven()
    {
        QFETCH(int, length);
        BinaryIntegersTask task(length);
        auto generator = makeGenerator(10, torch::kCPU);
        const auto [winners, losers] = task.rulePairs(3000, generator, torch::kCPU);
        const SampleMetrics w = measureSamples(task, winners);
        const SampleMetrics l = measureSamples(task, losers);
        QCOMPARE(w.vsr, 1.0);
        QCOMPARE(w.oddRatio, 1.0);
        QCOMPARE(l.vsr, 1.0);
        QCOMPARE(l.oddRatio, 0.0);
        for (int v = 0; v <= length; ++v) // every odd value is a winner, every even value a loser
            QVERIFY((v % 2 == 1 ? w.histogram[size_t(v)] : l.histogram[size_t(v)]) > 0);
        QVERIFY(task.ruleRank(winners).gt(task.ruleRank(losers)).all().item<bool>());
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
