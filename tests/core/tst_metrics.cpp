// SPDX-License-Identifier: GPL-3.0-or-later
// The binary-integers task's metrics and rule on hand-made samples (values worked out by hand).
#include <cmath>

#include "support/testsupport.h"

#include "tasks/binaryintegerstask.h"
#include "model/device.h"
#include "base/samplemetrics.h"
#include "base/timeutil.h"
#include "base/modelverdict.h"
#include "base/samplebudget.h"

using namespace d2dpo;

namespace {

torch::Tensor rows(std::initializer_list<std::initializer_list<int64_t>> values)
{
    std::vector<torch::Tensor> out;
    for (const auto& row : values)
        out.push_back(torch::tensor(std::vector<int64_t>(row), torch::kLong));
    return torch::stack(out);
}

/// Encodings b_i of the values (N = length), invalid ones written as "-1" -> "0101...".
torch::Tensor encodings(const std::vector<int64_t>& values, int64_t length)
{
    std::vector<int64_t> flat;
    for (int64_t v : values)
        for (int64_t k = 0; k < length; ++k)
            flat.push_back(v < 0 ? (k == 1 ? 1 : 0) : (k < v ? 1 : 0)); // -1: "01000..." (invalid)
    return torch::tensor(flat, torch::kLong).view({int64_t(values.size()), length});
}

} // namespace

class TestMetrics final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void binaryRowsDecodeToTheirIntegerOrInvalid()
    {
        BinaryIntegersTask task(4);
        const auto samples = rows({{0, 0, 0, 0}, {1, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 0, 0}, {0, 1, 0, 0},
                                   {1, 0, 1, 0}, {1, 1, 2, 0}});
        const std::vector<int64_t> host = rowsToHost(samples);
        const std::vector<int64_t> expected = {0, 1, 4, 2, -1, -1, -1};
        const std::vector<double> ranks = {1, 2, 1, 1, 0, 0, 0};
        for (size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(task.decode(host.data() + 4 * i), expected[i]);
            QCOMPARE(task.rank(host.data() + 4 * i), ranks[i]);
        }
        QVERIFY(task.encode(torch::tensor({0, 3}, torch::kLong)).equal(rows({{0, 0, 0, 0}, {1, 1, 1, 0}})));
    }

    void handMadeSamplesGiveTheirCountedMetrics()
    {
        // N = 4: values 0..4. Samples: 1, 1, 3, 2, 4, invalid, invalid, 0 (8 samples, 6 valid, 3 odd).
        BinaryIntegersTask task(4);
        const SampleMetrics m = task.measure(encodings({1, 1, 3, 2, 4, -1, -1, 0}, 4));
        QCOMPARE(m.samples, int64_t(8));
        QCOMPARE(m.vsr(), 6.0 / 8);
        QCOMPARE(m.valueOr0("odd_ratio"), 3.0 / 8);
        QCOMPARE(m.ruleMetric, std::string("odd_ratio"));
        QCOMPARE(m.valueOr0("odd_share_valid"), 3.0 / 6);
        QCOMPARE(m.histogram.invalid, int64_t(2));
        QCOMPARE(m.histogram.counts, (std::vector<int64_t>{1, 2, 1, 1, 1}));
        QCOMPARE(m.histogram.labels, (std::vector<std::string>{"0", "1", "2", "3", "4"}));
        QCOMPARE(m.histogram.axis, std::string("i"));
        // Uniform over odd values {1, 3}: target (0, .5, 0, .5, 0) against (1/6, 2/6, 1/6, 1/6, 1/6).
        const double tv = 0.5 * (1.0 / 6 + (0.5 - 2.0 / 6) + 1.0 / 6 + (0.5 - 1.0 / 6) + 1.0 / 6);
        QVERIFY(std::abs(m.valueOr0("tv_from_odd_uniform") - tv) < 1e-12);
        const double entropy = -(4 * (1.0 / 6) * std::log(1.0 / 6) + (2.0 / 6) * std::log(2.0 / 6));
        QVERIFY(std::abs(m.valueOr0("entropy") - entropy) < 1e-12);
        // Declared in the task's order, each with a description; VSR and the odd ratio are plotted.
        std::vector<std::string> names;
        for (const MetricValue& v : m.values) {
            names.push_back(v.name);
            QVERIFY(!v.description.empty());
            QCOMPARE(v.plotted, v.name == "vsr" || v.name == "odd_ratio");
        }
        QCOMPARE(names, (std::vector<std::string>{"vsr", "odd_ratio", "odd_share_valid", "tv_from_odd_uniform",
                                                   "entropy"}));
    }

    void metricsRoundTripThroughJson()
    {
        BinaryIntegersTask task(4);
        const SampleMetrics m = task.measure(encodings({1, 1, 3, 2, 4, -1, -1, 0}, 4));
        const SampleMetrics back = sampleMetricsFromJson(m.toJson()).value();
        QCOMPARE(back.samples, m.samples);
        QCOMPARE(back.ruleMetric, m.ruleMetric);
        QCOMPARE(back.values.size(), m.values.size());
        for (size_t i = 0; i < m.values.size(); ++i) {
            QCOMPARE(back.values[i].name, m.values[i].name);
            QCOMPARE(back.values[i].value, m.values[i].value);
            QCOMPARE(back.values[i].plotted, m.values[i].plotted);
        }
        QCOMPARE(back.histogram.counts, m.histogram.counts);
        QCOMPARE(back.histogram.labels, m.histogram.labels);
        // The form older stores and checkpoints hold reads too.
        const auto old = sampleMetricsFromJson(
            R"({"samples": 8, "vsr": 0.75, "odd_ratio": 0.375, "histogram": [1, 2, 1, 1, 1], "invalid": 2})");
        QVERIFY(old.ok());
        QCOMPARE(old->ruleMetric, std::string("odd_ratio"));
        QCOMPARE(old->valueOr0("odd_ratio"), 0.375);
        QCOMPARE(old->histogram.invalid, int64_t(2));
        QCOMPARE(old->histogram.labels.back(), std::string("4"));
        QVERIFY(!sampleMetricsFromJson("[1, 2]").ok());
    }

    void perfectlyAlignedSamplesHaveZeroTv()
    {
        BinaryIntegersTask task(6);
        const SampleMetrics m = task.measure(encodings({1, 3, 5, 1, 3, 5}, 6));
        QCOMPARE(m.vsr(), 1.0);
        QCOMPARE(m.valueOr0("odd_ratio"), 1.0);
        QVERIFY(m.valueOr0("tv_from_odd_uniform") < 1e-12);
        QVERIFY(std::abs(m.valueOr0("entropy") - std::log(3.0)) < 1e-12);
    }

    void emptyOrAllInvalidSamplesHaveAZeroVsr()
    {
        BinaryIntegersTask task(4);
        QCOMPARE(task.measureRows({}, 0).vsr(), 0.0);
        const SampleMetrics m = task.measure(encodings({-1, -1}, 4));
        QCOMPARE(m.vsr(), 0.0);
        QCOMPARE(m.histogram.invalid, int64_t(2));
        QCOMPARE(m.valueOr0("odd_share_valid"), 0.0);
    }

    void dataIsUniformOverValues()
    {
        BinaryIntegersTask task(5);
        auto generator = makeGenerator(9, torch::kCPU);
        const SampleMetrics m = task.measure(task.sampleData(6000, generator, torch::kCPU));
        QCOMPARE(m.vsr(), 1.0);
        for (int64_t count : m.histogram.counts)
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
        const auto [winners, losers] = task.rulePairs(3000, generator, torch::kCPU).value();
        const SampleMetrics w = task.measure(winners);
        const SampleMetrics l = task.measure(losers);
        QCOMPARE(w.vsr(), 1.0);
        QCOMPARE(w.valueOr0("odd_ratio"), 1.0);
        QCOMPARE(l.vsr(), 1.0);
        QCOMPARE(l.valueOr0("odd_ratio"), 0.0);
        for (int v = 0; v <= length; ++v) // every odd value is a winner, every even value a loser
            QVERIFY((v % 2 == 1 ? w.histogram.counts[size_t(v)] : l.histogram.counts[size_t(v)]) > 0);
        const std::vector<int64_t> a = rowsToHost(winners), b = rowsToHost(losers);
        for (int64_t i = 0; i < 3000; ++i)
            QVERIFY(task.rank(a.data() + i * length) > task.rank(b.data() + i * length));
    }

    void timeLeftIsTheRateSoFarAndUnknownBeforeTheFirstUnit()
    {
        QCOMPARE(secondsLeft(10.0, 0, 100), -1.0);  // nothing done: no rate yet
        QCOMPARE(secondsLeft(10.0, 25, 100), 30.0); // 25 in 10 s: 75 more take 30 s
        QCOMPARE(secondsLeft(10.0, 100, 100), 0.0);
        QCOMPARE(secondsLeft(10.0, 120, 100), 0.0); // past the total: never negative
        QCOMPARE(secondsLeft(-1.0, 5, 10), -1.0);
        QCOMPARE(clockDuration(secondsLeft(60.0, 1, 66)), std::string("1:05:00"));
        QCOMPARE(clockDuration(secondsLeft(10.0, 0, 100)), std::string("–"));
        QCOMPARE(secondsLeft(2.0, 0.25, 10), 78.0); // a quarter of a sample in 2 s: 9.75 more take 78 s
        QCOMPARE(secondsLeft(2.0, 0.0001, 10) > 1e5, true);
    }

    void aFittedCountIsWhatFitsTheTimeOnAOneTwoFiveScale()
    {
        // 30 s at 0.15 s a sample: 200 fit exactly; at 0.1 s, 300 fit and 200 is drawn.
        QCOMPARE(samplesWithin(0.15, 30, 2000), int64_t(200));
        QCOMPARE(samplesWithin(0.1, 30, 2000), int64_t(200));
        QCOMPARE(samplesWithin(0.05, 30, 2000), int64_t(500));
        QCOMPARE(samplesWithin(0.0299, 30, 2000), int64_t(1000)); // 1003 fit
        QCOMPARE(samplesWithin(0.001, 30, 2000), int64_t(2000));  // 30000 fit: the most wins
        QCOMPARE(samplesWithin(0.001, 30, 700), int64_t(700));
        QCOMPARE(samplesWithin(7.5, 30, 2000), kFewestFittedSamples); // 4 fit: the fewest that say something
        QCOMPARE(samplesWithin(7.5, 30, 10), int64_t(10));            // ...unless fewer were asked for
        QCOMPARE(samplesWithin(0, 30, 2000), int64_t(2000));          // too fast for the clock
        QCOMPARE(samplesWithin(std::nan(""), 30, 2000), int64_t(2000));
        QCOMPARE(describeFittedCount(200, 0.15), std::string("200 samples (about 0:30, 0.15 s a sample)"));
        QCOMPARE(describeFittedCount(2000, 0.0005), std::string("2000 samples (about 0:01, 0.5 ms a sample)"));
        QCOMPARE(evaluationBatchFor(20), int64_t(50));
        QCOMPARE(evaluationBatchFor(2000), int64_t(250));
        // An 8M protein model at length 150: about 0.05 s a sequence in a pass; a pass within 0.5 s holds 8.
        QCOMPARE(rowsPerPassWithin(0.05, 0.5), int64_t(8));
        QCOMPARE(rowsPerPassWithin(0.0625, 0.5), int64_t(8)); // exactly 8 fit
        QCOMPARE(rowsPerPassWithin(2.0, 0.5), int64_t(1));    // a pass of one takes longer: still one
        QCOMPARE(rowsPerPassWithin(1e-6, 0.5), int64_t(262144));
        QCOMPARE(rowsPerPassWithin(0, 0.5), int64_t(1) << 20);
    }

    void theSamplerFitsItsPassesToTheTimeADrawMayTake()
    {
        // Length 150 at 10 ms a pass: the exact sampler's 150 passes take 1.5 s.
        QCOMPARE(passesWithin(0.01, 1.5, 150), int64_t(150));  // they fit: exact
        QCOMPARE(passesWithin(0.01, 10, 150), int64_t(150));   // never more than a pass per position
        QCOMPARE(passesWithin(0.01, 0.499, 150), int64_t(49)); // 49.9 fit: the confident sampler at 49
        QCOMPARE(passesWithin(0.01, 0.01, 150), int64_t(kFewestConfidentPasses)); // one fits: the fewest
        QCOMPARE(passesWithin(0.01, 0.01, 4), int64_t(4));     // a length under the fewest: exact
        QCOMPARE(passesWithin(0, 0.01, 150), int64_t(150));    // too fast for the clock
        QCOMPARE(passesWithin(std::nan(""), 1, 150), int64_t(150));
        QCOMPARE(passesWithin(0.01, -1, 150), int64_t(kFewestConfidentPasses));
    }

    void aModelMostlyInvalidIsTooWeakToLabel()
    {
        SampleMetrics weak;
        weak.samples = 200;
        weak.set("vsr", 0.065, "valid share");
        weak.set("rule_share", 0.015, "rule share");
        weak.ruleMetric = "rule_share";
        const std::string advice = weakModelAdvice(weak);
        QVERIFY2(advice.find("% of its 200 samples are valid sequences (VSR 0.065)") != std::string::npos,
                 advice.c_str());
        QVERIFY(advice.find("more steps") != std::string::npos && advice.find("import") != std::string::npos);
        QCOMPARE(newModelFigures(weak), std::string("VSR 0.065, rule share 0.015 on 200 samples"));
        SampleMetrics fit = weak;
        fit.set("vsr", kWeakModelVsr, "valid share"); // half valid: labelable
        QCOMPARE(weakModelAdvice(fit), std::string());
        QCOMPARE(weakModelAdvice(SampleMetrics{}), std::string()); // not measured: nothing to say
    }

    void binaryIntegersRefuseAnyRuleButOdd()
    {
        TaskConfig config;
        config.length = 8;
        config.rule = "motif:1";
        const auto task = makeTask(config);
        QVERIFY(!task.ok());
        QVERIFY2(task.error().find("known: odd") != std::string::npos, task.error().c_str());
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
