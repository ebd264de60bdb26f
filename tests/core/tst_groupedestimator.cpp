// SPDX-License-Identifier: GPL-3.0-or-later
// g-DPO's grouped scoring (diffusion/groupedestimator.h) against what it claims: pairs are grouped
// by the sequences they link, with the union mask worked by hand; one corrupted row per group gives
// each member exactly the margin a row of its own (the same times and masks, its own tokens) gives,
// so sharing the pass changes the cost and nothing else; a policy equal to its reference has every
// margin 0 and the loss log 2; and a group whose union is too wide is refused.
#include <cmath>

#include "support/testsupport.h"
#include "diffusion/dpoestimator.h"
#include "diffusion/groupedestimator.h"
#include "diffusion/maskingnoise.h"
#include "model/device.h"
#include "model/transformerdenoiser.h"
#include "support/tinyconfigs.h"

using namespace d2dpo;

namespace {

torch::Tensor rows(const std::vector<std::vector<int64_t>>& values)
{
    auto out = torch::empty({int64_t(values.size()), int64_t(values.front().size())}, torch::kLong);
    for (size_t i = 0; i < values.size(); ++i)
        for (size_t j = 0; j < values[i].size(); ++j)
            out[int64_t(i)][int64_t(j)] = values[i][j];
    return out;
}

} // namespace

class TestGroupedEstimator final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void pairsAreGroupedByTheSequencesTheyLink()
    {
        // A-B and B-C link A, B, C (they differ at positions 1 and 2); D-E differ at position 0.
        const auto a = std::vector<int64_t>{0, 0, 0, 0}, b = std::vector<int64_t>{0, 1, 0, 0},
                   c = std::vector<int64_t>{0, 0, 1, 0}, d = std::vector<int64_t>{1, 1, 1, 1},
                   e = std::vector<int64_t>{0, 1, 1, 1};
        const GroupedPairs grouped = groupPairs(rows({a, b, d}), rows({b, c, e}), 4);
        QVERIFY(grouped.error.empty());
        const PairGroups& g = grouped.groups;
        QCOMPARE(g.members.size(0), 5);
        QCOMPARE(g.unionMask.size(0), 2);
        QCOMPARE(grouped.largestUnion, 2);
        const int64_t first = g.memberGroup[g.winners[0].item<int64_t>()].item<int64_t>();
        QCOMPARE(g.memberGroup[g.losers[1].item<int64_t>()].item<int64_t>(), first); // C with A and B
        QVERIFY(torch::equal(g.unionMask[first], torch::tensor({false, true, true, false})));
        QVERIFY(torch::equal(g.unionMask[1 - first], torch::tensor({true, false, false, false})));
        // Too wide a union for the bound: refused, the width named.
        const GroupedPairs wide = groupPairs(rows({a, b, d}), rows({b, c, e}), 1);
        QVERIFY(QString::fromStdString(wide.error).contains("differs at 2 positions, more than 1"));
    }

    void oneRowPerGroupGivesEachMemberItsOwnRowsMargin()
    {
        torch::manual_seed(4);
        Denoiser policy = makeDenoiser(test::tinySpec(6), 3, torch::kCPU);
        Denoiser reference = frozenCopy(policy);
        {
            torch::NoGradGuard noGrad;
            for (auto& p : policy->parameters())
                p.add_(torch::randn_like(p) * 0.1);
        }
        MaskingNoise noise(3, 0.5);
        // Two groups: three sequences differing at positions 2 and 4, and a pair differing at 0.
        const auto s1 = std::vector<int64_t>{1, 0, 2, 1, 0, 2}, s2 = std::vector<int64_t>{1, 0, 0, 1, 0, 2},
                   s3 = std::vector<int64_t>{1, 0, 2, 1, 1, 2}, s4 = std::vector<int64_t>{0, 2, 2, 2, 1, 0},
                   s5 = std::vector<int64_t>{2, 2, 2, 2, 1, 0};
        const GroupedPairs grouped = groupPairs(rows({s1, s1, s4, s3}), rows({s2, s3, s5, s2}), 6);
        QVERIFY(grouped.error.empty());
        DpoConfig config = test::tinyDpo(1);
        config.tSamplesPerPair = 2;
        const auto batch = torch::arange(4, torch::kLong);
        auto generator = makeGenerator(7, torch::kCPU);
        const DpoTerms terms = groupedD2dpoLoss(policy, reference, noise, grouped.groups, batch, config, generator);
        // The same draws again, by hand: the groups' times and masks, then each member in a row of
        // its own (its own tokens, the union masked), through the paper's closed-form divergence
        // with the union's weight (1 + eta t) = (1 - t) w(t).
        const PairGroups& g = grouped.groups;
        const auto present = std::get<0>(at::_unique(g.memberGroup.index_select(0, g.winners), true, true));
        const int64_t rowCount = present.size(0) * 2;
        auto again = makeGenerator(7, torch::kCPU);
        const auto real = torch::dtype(torch::kFloat);
        const auto t = drawTimes(rowCount, false, 0.0, 1 - config.tEpsilon, again, real);
        const auto rowGroup = present.repeat({2});
        const auto inUnion = g.unionMask.index_select(0, rowGroup);
        const auto select = torch::rand({rowCount, 6}, again, real).ge(t.unsqueeze(1)).logical_or(inUnion);
        torch::NoGradGuard noGrad;
        const auto own = [&](int64_t member, int64_t row) {
            const auto x1 = g.members[member].unsqueeze(0);
            const auto xt = noise.corruptWhere(x1, select[row].unsqueeze(0), again);
            const auto tRow = t[row].unsqueeze(0);
            const auto ratio = torch::log_softmax(policy->forward(xt, tRow), -1) - torch::log_softmax(reference->forward(xt, tRow), -1);
            const auto picked = ratio.gather(-1, x1.unsqueeze(-1)).squeeze(-1).squeeze(0);
            return ((1 + 0.5 * t[row]) * (picked * inUnion[row].to(torch::kFloat)).sum()).item<double>();
        };
        for (int64_t p = 0; p < 4; ++p) {
            const int64_t group = g.memberGroup[g.winners[p].item<int64_t>()].item<int64_t>();
            const int64_t u = (present == group).nonzero().item<int64_t>();
            double chosen = 0;
            for (int64_t k = 0; k < 2; ++k)
                chosen += own(g.winners[p].item<int64_t>(), k * present.size(0) + u) / 2;
            QVERIFY2(std::abs(chosen - terms.divergenceChosen[p].item<double>()) < 1e-5,
                     qPrintable(QString("pair %1: %2 vs %3").arg(p).arg(chosen).arg(terms.divergenceChosen[p].item<double>())));
        }
    }

    void aPolicyEqualToItsReferenceHasTheLossLog2()
    {
        torch::manual_seed(4);
        Denoiser policy = makeDenoiser(test::tinySpec(6), 2, torch::kCPU);
        Denoiser reference = frozenCopy(policy);
        MaskingNoise noise(2, 0.0);
        const GroupedPairs grouped = groupPairs(rows({{1, 0, 1, 0, 1, 0}}), rows({{1, 1, 1, 0, 1, 0}}), 6);
        auto generator = makeGenerator(1, torch::kCPU);
        const DpoTerms terms = groupedD2dpoLoss(policy, reference, noise, grouped.groups, torch::zeros({8}, torch::kLong),
                                                test::tinyDpo(1), generator);
        QVERIFY(std::abs(terms.loss.item<double>() - std::log(2.0)) < 1e-6);
        terms.loss.backward(); // the gradient reaches the policy only
        QVERIFY(policy->parameters().front().grad().defined());
        QVERIFY(!reference->parameters().front().grad().defined());
    }
};

QTEST_APPLESS_MAIN(TestGroupedEstimator)
#include "tst_groupedestimator.moc"
