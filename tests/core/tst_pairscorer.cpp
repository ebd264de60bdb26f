// SPDX-License-Identifier: GPL-3.0-or-later
// The implicit reward margin that orders pairs least sure first (diffusion/implicitreward.h,
// jobs/pairscorer.h): exactly 0 for a model against itself, the D2-DPO loss's own reward margin in
// expectation, on the rule's side once a model is fine-tuned on the rule's pairs, and the order
// it gives (smallest |margin| first, equal ones in a seeded order).
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>

#include "support/testsupport.h"
#include "support/tinycheckpoint.h"
#include "support/tinyconfigs.h"

#include "diffusion/dpoestimator.h"
#include "diffusion/implicitreward.h"
#include "diffusion/maskingnoise.h"
#include "jobs/pairscorer.h"
#include "model/device.h"
#include "model/transformerdenoiser.h"
#include "tasks/binaryintegerstask.h"
#include "train/dpotrainer.h"

using namespace d2dpo;

class TestPairScorer final : public QObject {
    Q_OBJECT

    BinaryIntegersTask m_task{6};
    MaskingNoise m_noise{2, 0.0};
    ModelSpec m_spec = test::tinySpec(6);

    Denoiser freshModel(uint64_t seed)
    {
        torch::manual_seed(seed);
        return makeDenoiser(m_spec, 2, torch::kCPU);
    }

    /// A model that differs from `model` by noise on every weight: a policy with opinions.
    static Denoiser perturbed(const Denoiser& model, double scale)
    {
        Denoiser copy = model->deepCopy();
        torch::NoGradGuard noGrad;
        torch::manual_seed(11);
        for (torch::Tensor p : copy->parameters())
            p.add_(torch::randn_like(p) * scale);
        return copy;
    }

    std::pair<torch::Tensor, torch::Tensor> rulePairs(int64_t count, uint64_t seed)
    {
        auto generator = makeGenerator(seed, torch::kCPU);
        return m_task.rulePairs(count, generator, torch::kCPU).value();
    }

private Q_SLOTS:
    void aModelAgainstItselfIsSureOfNothing()
    {
        Denoiser model = freshModel(1);
        Denoiser reference = frozenCopy(model);
        const auto [a, b] = rulePairs(40, 2);
        auto generator = makeGenerator(3, torch::kCPU);
        const auto margins = implicitRewardMargins(model, reference, m_noise, a, b, DpoConfig{}, {}, generator);
        QCOMPARE(margins.size(0), int64_t(40));
        QCOMPARE(margins.abs().max().item<double>(), 0.0);
    }

    void eachPairsMarginIsTheLossRewardMarginInExpectation()
    {
        // The D2-DPO loss's rewards/margins of a pair, averaged over many of its own draws (one t per
        // pair, independent masks), against the estimate with one draw (complementary masks) averaged
        // over many seeds: both are unbiased for beta E_t[D_w - D_l] for every pair, whatever its
        // place in the batch (times stratified across the batch were not: pair b drew t near b/P).
        Denoiser reference = frozenCopy(freshModel(1));
        Denoiser policy = perturbed(reference, 0.3);
        const int64_t pairs = 12;
        const auto [a, b] = rulePairs(pairs, 4);
        DpoConfig config;
        config.beta = 0.5;
        auto generator = makeGenerator(5, torch::kCPU);
        torch::NoGradGuard noGrad;
        const auto meanAndError = [](const std::vector<torch::Tensor>& draws) {
            const auto stacked = torch::stack(draws); // [draws, pairs]
            return std::pair{stacked.mean(0), stacked.std(0) / std::sqrt(double(draws.size()))};
        };
        std::vector<torch::Tensor> lossDraws, estimateDraws;
        for (int i = 0; i < 3000; ++i) {
            const DpoTerms terms = d2dpoLoss(policy, reference, m_noise, a, b, config, generator);
            lossDraws.push_back(config.beta * (terms.divergenceChosen - terms.divergenceRejected).to(torch::kDouble));
        }
        MarginEstimate oneDraw;
        oneDraw.draws = 1;
        for (int i = 0; i < 600; ++i)
            estimateDraws.push_back(implicitRewardMargins(policy, reference, m_noise, a, b, config, oneDraw, generator));
        const auto [lossMean, lossError] = meanAndError(lossDraws);
        const auto [estimateMean, estimateError] = meanAndError(estimateDraws);
        int awayFromZero = 0;
        for (int64_t i = 0; i < pairs; ++i) {
            const double loss = lossMean[i].item<double>(), estimate = estimateMean[i].item<double>();
            const double error = std::hypot(lossError[i].item<double>(), estimateError[i].item<double>());
            awayFromZero += std::abs(loss) > 3 * lossError[i].item<double>();
            QVERIFY2(std::abs(estimate - loss) < 5 * error,
                     qPrintable(QStringLiteral("pair %1: estimate %2, loss draws %3 ± %4")
                                    .arg(i)
                                    .arg(estimate)
                                    .arg(loss)
                                    .arg(error)));
        }
        QVERIFY(awayFromZero >= pairs / 2); // the comparison is not between zeros
    }

    void theDrawsPerPassBoundMemoryNotTheResult()
    {
        Denoiser reference = frozenCopy(freshModel(1));
        Denoiser policy = perturbed(reference, 0.3);
        const auto [a, b] = rulePairs(10, 6);
        MarginEstimate wide, narrow;
        wide.draws = narrow.draws = 256;
        narrow.rows = 4 * narrow.draws; // one pair a pass
        std::vector<std::pair<int64_t, int64_t>> heard;
        narrow.progress = [&heard](int64_t scored, int64_t total) { heard.emplace_back(scored, total); };
        auto g1 = makeGenerator(7, torch::kCPU), g2 = makeGenerator(7, torch::kCPU);
        const auto all = implicitRewardMargins(policy, reference, m_noise, a, b, DpoConfig{}, wide, g1);
        const auto onePerPass = implicitRewardMargins(policy, reference, m_noise, a, b, DpoConfig{}, narrow, g2);
        QCOMPARE(onePerPass.size(0), int64_t(10));
        QCOMPARE(heard.size(), size_t(10)); // a count after each pass
        for (size_t i = 0; i < heard.size(); ++i)
            QCOMPARE(heard[i], std::make_pair(int64_t(i + 1), int64_t(10)));
        // Other draws, the same expectation: each pair's two estimates agree (in its own place).
        const double spread = all.abs().max().item<double>();
        QVERIFY2(spread > 0.1, "the margins are not away from 0");
        QVERIFY2((all - onePerPass).abs().max().item<double>() < 0.15 * spread,
                 qPrintable(QStringLiteral("largest difference %1 of %2")
                                .arg((all - onePerPass).abs().max().item<double>())
                                .arg(spread)));
    }

    void aModelFineTunedOnTheRuleIsSureOfTheRulesPairs()
    {
        Denoiser start = freshModel(7);
        DpoConfig config = test::tinyDpo(600);
        config.learningRate = 1e-2;
        DpoTrainer trainer(start, m_task, m_noise, DpoTrainerOptions(m_spec, config).seed(3));
        const auto [winners, losers] = rulePairs(512, 8);
        trainer.setPreferences(winners, losers);
        for (int step = 0; step < config.steps; ++step)
            trainer.trainStep(false);
        Denoiser policy = trainer.policy(), reference = trainer.reference();
        const auto [a, b] = rulePairs(64, 9); // pairs it has not seen: winner first
        auto generator = makeGenerator(10, torch::kCPU);
        MarginEstimate estimate;
        estimate.draws = 256;
        const auto forward = implicitRewardMargins(policy, reference, m_noise, a, b, config, estimate, generator);
        const auto backward = implicitRewardMargins(policy, reference, m_noise, b, a, config, estimate, generator);
        QVERIFY2(forward.mean().item<double>() > 0, qPrintable(QString::number(forward.mean().item<double>())));
        const double positive = forward.gt(0).to(torch::kDouble).mean().item<double>();
        // Most pairs; the ones it is least sure of are odd against a neighbouring even (b_1 against b_2):
        // D2-DPO pushed the far ones (b_0, b_6) down hardest. The 64 pairs are repeats of the 12 odd-even
        // pairs of length 6, so which neighbours a BLAS kernel's training leaves unsure moves the share
        // in steps of about 1/12 (0.58 to 0.67 across kernels): "most" is the claim, more than half.
        QVERIFY2(positive > 0.5, qPrintable(QStringLiteral("share of positive margins %1").arg(positive)));
        QVERIFY(backward.mean().item<double>() < 0); // the same pairs shown the other way round
        // Shown the other way round, a margin is negated up to the estimator's own noise: a second,
        // independent estimate of the same margins differs from the first by as much. The bound is
        // that noise (whatever margins the BLAS kernel's training reached), not a share of |margin|.
        const auto again = implicitRewardMargins(policy, reference, m_noise, a, b, config, estimate, generator);
        const double noise = (forward - again).abs().mean().item<double>();
        const double asymmetry = (forward + backward).abs().mean().item<double>();
        qInfo("positive share %.3f, |forward + backward| %.4g, two estimates apart %.4g, |forward| %.4g", positive,
              asymmetry, noise, forward.abs().mean().item<double>());
        QVERIFY2(noise > 0 && asymmetry < 2 * noise,
                 qPrintable(QStringLiteral("|forward + backward| %1 against the estimate's noise %2")
                                .arg(asymmetry)
                                .arg(noise)));
        // An untrained pair order is what the queue puts first: the fine-tuned model is far surer of
        // its rule's pairs than a model against itself (0).
        QVERIFY(forward.abs().mean().item<double>() > 0.01);
    }

    void leastSureFirstOrdersByDistanceFromZero()
    {
        const std::vector<double> margins{0.5, -0.1, 0.0, 2.0, 0.1, -3.0};
        const auto order = leastSureFirst(margins, 1);
        QCOMPARE(order.size(), margins.size());
        QCOMPARE(order[0], size_t(2));
        QVERIFY((order[1] == 1 && order[2] == 4) || (order[1] == 4 && order[2] == 1)); // |0.1| twice
        QCOMPARE(order[3], size_t(0));
        QCOMPARE(order[4], size_t(3));
        QCOMPARE(order[5], size_t(5));
        QCOMPARE(leastSureFirst(margins, 1), order); // seeded
        // Equal margins (a model against itself) keep no fixed order: seeds differ.
        const std::vector<double> zeros(20, 0.0);
        QVERIFY(leastSureFirst(zeros, 1) != leastSureFirst(zeros, 2));
    }

    void theScorerReadsCheckpointsAndNamesABadPair()
    {
        QTemporaryDir dir;
        const auto model = test::writeTinyCheckpoint(dir.filePath(QStringLiteral("m.d2dpo")).toStdString());
        QVERIFY(model);
        auto scorer = PairScorer::load(model->path, model->path, "cpu");
        QVERIFY2(scorer, scorer ? "" : scorer.error().c_str());
        const std::string key = scorer.value()->taskKey();
        std::vector<ShownPair> pairs{{7, "111000", "110000", "", "", key}, {8, "100000", "000000", "", "", key}};
        std::vector<std::pair<int64_t, int64_t>> heard;
        const auto margins = scorer.value()->margins(pairs, 1, 8, [&heard](int64_t scored, int64_t total) {
            heard.emplace_back(scored, total);
        });
        QVERIFY2(margins, margins ? "" : margins.error().c_str());
        // A small model's pairs in one pass, as before passes were sized by the model's shape.
        QCOMPARE(heard, (std::vector<std::pair<int64_t, int64_t>>{{2, 2}}));
        QCOMPARE(margins->size(), size_t(2));
        QCOMPARE(margins.value(), std::vector<double>(2, 0.0)); // its own reference
        pairs[1].right = "10x000";
        const auto bad = scorer.value()->margins(pairs, 1, 8);
        QVERIFY(!bad);
        QVERIFY2(bad.error().find("pair 8") != std::string::npos, bad.error().c_str());
        pairs[1].right = "100000";
        pairs[0].task = "binary-integers:4";
        const auto other = scorer.value()->margins(pairs, 1, 8);
        QVERIFY(!other);
        QVERIFY2(other.error().find("pair 7 is of task") != std::string::npos, other.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestPairScorer)
#include "tst_pairscorer.moc"
