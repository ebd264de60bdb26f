// SPDX-License-Identifier: GPL-3.0-or-later
// Every noise process makeNoiseProcess makes, held to the same cross-checks: its closed-form D2-DPO
// divergence equals the general rate-matrix form (values and gradients), divergenceAt over the
// positions it reads is divergence, and its rates have the documented shape and no diagonal.
#include <algorithm>
#include <memory>
#include <vector>

#include "support/testsupport.h"

#include "diffusion/losses.h"
#include "diffusion/noiseprocess.h"
#include "model/device.h"

using namespace d2dpo;

namespace {

/// One row per noise process: a new process is covered by adding its name here.
const char* const kProcesses[] = {"masking", "uniform"};

std::unique_ptr<NoiseProcess> makeProcess(const QString& process, double eta, int vocab)
{
    NoiseConfig config;
    config.process = process.toStdString();
    config.eta = eta;
    auto made = makeNoiseProcess(config, vocab);
    return made ? std::move(made.value()) : nullptr;
}

} // namespace

class TestNoiseProcesses final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyProcessTheFactoryKnowsHasARow()
    {
        // The factory names what it knows when it refuses a name: that list is this file's rows.
        NoiseConfig config;
        config.process = "no-such-process";
        const auto refused = makeNoiseProcess(config, 4);
        QVERIFY(!refused.ok());
        const QString error = QString::fromStdString(refused.error());
        const QString known = error.section(QStringLiteral("(known: "), 1).section(QLatin1Char(')'), 0, 0);
        QStringList rows;
        for (const char* process : kProcesses)
            rows << QString::fromLatin1(process);
        QCOMPARE(known.split(QStringLiteral(", ")), rows);
        for (const char* process : kProcesses)
            QVERIFY2(makeProcess(QString::fromLatin1(process), 0.5, 4), process);
    }

    void closedFormEqualsGeneralRateForm_data()
    {
        QTest::addColumn<QString>("process");
        QTest::addColumn<double>("t");
        QTest::addColumn<double>("eta");
        QTest::addColumn<int>("vocab");
        for (const char* process : kProcesses)
            for (double t : {0.05, 0.1, 0.3, 0.5, 0.9, 0.99})
                for (double eta : {0.0, 0.5, 2.0, 3.0})
                    for (int vocab : {2, 5})
                        QTest::addRow("%s t=%g eta=%g S=%d", process, t, eta, vocab)
                            << QString::fromLatin1(process) << t << eta << vocab;
    }
    void closedFormEqualsGeneralRateForm()
    {
        QFETCH(QString, process);
        QFETCH(double, t);
        QFETCH(double, eta);
        QFETCH(int, vocab);
        torch::manual_seed(int(t * 1000) + int(eta * 10) + vocab);
        // Enough positions that even at t = 0.99 some are corrupted (and changed, for uniform noise).
        const int64_t batch = 256, length = 12;
        const auto noise = makeProcess(process, eta, vocab);
        QVERIFY(noise);
        const int64_t states = noise->stateCount();
        auto generator = makeGenerator(5, torch::kCPU);
        const auto x1 = torch::randint(0, vocab, {batch, length}, torch::kLong);
        for (auto dtype : {torch::kFloat, torch::kDouble}) {
            const bool single = dtype == torch::kFloat;
            const auto times = torch::full({batch}, t, dtype);
            const auto xt = noise->corrupt(x1, times, generator);
            QVERIFY(xt.ne(x1).any().item<bool>() && xt.eq(x1).any().item<bool>()); // both kinds of positions
            // Gradients are compared with respect to logits: a closed form may use sum_j p(j) = 1
            // (in the exit rates), so the two forms agree on normalised log-probabilities only.
            const auto logits = (torch::randn({batch, length, vocab}, dtype) * 3).requires_grad_();
            const auto logpTheta = torch::log_softmax(logits, -1);
            const auto logpRef = torch::log_softmax(torch::randn({batch, length, vocab}, dtype) * 3, -1);
            const auto closed = noise->divergence(xt, x1, logpTheta, logpRef, times);
            // Its own graph from the logits, so that each form can be differentiated once.
            const auto general = generalDivergence(*noise, xt, x1, torch::log_softmax(logits, -1), logpRef, times);
            const double scale = std::max(1.0, general.abs().max().item<double>());
            QVERIFY2(test::maxAbsDiff(closed, general) / scale < (single ? 2e-5 : 1e-12),
                     qPrintable(QString("max diff %1").arg(test::maxAbsDiff(closed, general))));
            // The gradients the trainer follows agree too.
            const auto gradClosed = torch::autograd::grad({closed.sum()}, {logits})[0];
            const auto gradGeneral = torch::autograd::grad({general.sum()}, {logits})[0];
            const double gradScale = std::max(1.0, gradGeneral.abs().max().item<double>());
            QVERIFY2(test::maxAbsDiff(gradClosed, gradGeneral) / gradScale < (single ? 2e-5 : 1e-9),
                     qPrintable(QString("max gradient diff %1").arg(test::maxAbsDiff(gradClosed, gradGeneral))));

            // divergenceAt over positionsRead (ascending flat indices, those of readMask) is divergence.
            const auto positions = noise->positionsRead(xt);
            QVERIFY(positions.equal(noise->readMask(xt).reshape({-1}).nonzero().squeeze(1)));
            const auto at =
                noise->divergenceAt(xt, x1, positions, logpTheta.view({-1, vocab}).index_select(0, positions),
                                    logpRef.view({-1, vocab}).index_select(0, positions), times);
            QVERIFY2(test::maxAbsDiff(at, closed) / scale < (single ? 2e-5 : 1e-12),
                     qPrintable(QString("max diff %1").arg(test::maxAbsDiff(at, closed))));

            // The rates have the documented shape and no diagonal.
            const auto rateQ = noise->conditionalRate(xt, x1, times);
            QCOMPARE(rateQ.sizes().vec(), (std::vector<int64_t>{batch, length, states}));
            QVERIFY(rateQ.gather(-1, xt.unsqueeze(-1)).eq(0).all().item<bool>());
            const auto rateTheta = noise->modelRate(xt, logpRef.exp(), times);
            QCOMPARE(rateTheta.sizes().vec(), (std::vector<int64_t>{batch, length, states}));
            QVERIFY(rateTheta.gather(-1, xt.unsqueeze(-1)).eq(0).all().item<bool>());
        }
    }
};

QTEST_GUILESS_MAIN(TestNoiseProcesses)
#include "tst_noiseprocesses.moc"
