// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/train/trainplots.h"

#include <QGridLayout>

#include <algorithm>
#include <utility>
#include <vector>

#include "base/metricnames.h"
#include "ui/common/metricplot.h"

namespace d2dpo::ui {

namespace {

// Series indices within each plot.
enum { kLoss = 0, kLossAverage = 1 };
enum { kAccuracy = 0, kMargin = 1 };
enum { kChosen = 0, kRejected = 1 };

const QColor kBlue(31, 119, 180);
const QColor kOrange(255, 127, 14);
const QColor kGreen(44, 160, 44);
const QColor kRed(214, 39, 40);
const QColor kPurple(148, 103, 189);
const QColor kBrown(140, 86, 75);

} // namespace

TrainPlots::TrainPlots(QWidget* parent)
    : QWidget(parent)
{
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    m_lossPlot = new MetricPlot(tr("D2-DPO loss"), tr("step"), tr("loss (nats)"), this);
    m_lossPlot->addSeries(tr("loss"), QColor(kBlue.red(), kBlue.green(), kBlue.blue(), 90));
    m_lossPlot->addSeries(tr("loss, moving average"), kBlue);
    m_samplePlot = new MetricPlot(tr("Samples: the task's metrics"), tr("step"), tr("share of samples"), this);
    m_samplePlot->setFixedYRange(0, 1.04);
    // Plain names on the plot; the trainer's names (rewards/accuracies, rewards/margins) in the tooltip.
    m_accuracyPlot = new MetricPlot(tr("Pairs the model ranks as labelled"), tr("step"), tr("share of pairs"), this);
    m_accuracyPlot->addSeries(tr("share ranked as labelled"), kBlue);
    m_accuracyPlot->addSeries(tr("margin"), kRed, false, true);
    m_accuracyPlot->setRightAxisLabel(tr("margin (nats)"));
    m_accuracyPlot->setFixedYRange(0, 1.04);
    m_rewardPlot = new MetricPlot(tr("Chosen and rejected rewards"), tr("step"), tr("reward (nats)"), this);
    m_rewardPlot->addSeries(tr("chosen"), kGreen);
    m_rewardPlot->addSeries(tr("rejected"), kRed);
    // What each curve means, from the one list of metric names.
    const auto describe = [](std::initializer_list<const char*> names) {
        QStringList lines;
        for (const char* name : names)
            lines << QStringLiteral("%1: %2").arg(QLatin1String(name), QString::fromStdString(metric::describe(name)));
        return lines.join(QLatin1Char('\n'));
    };
    m_lossPlot->setToolTip(describe({metric::kLoss}));
    m_accuracyPlot->setToolTip(describe({metric::kRewardsAccuracies, metric::kRewardsMargins}));
    m_rewardPlot->setToolTip(describe({metric::kRewardsChosen, metric::kRewardsRejected}));
    grid->addWidget(m_lossPlot, 0, 0);
    grid->addWidget(m_samplePlot, 0, 1);
    grid->addWidget(m_accuracyPlot, 1, 0);
    grid->addWidget(m_rewardPlot, 1, 1);
}

void TrainPlots::clear()
{
    for (MetricPlot* plot : {m_lossPlot, m_samplePlot, m_accuracyPlot, m_rewardPlot})
        plot->clear();
    m_haveAverage = false;
}

void TrainPlots::setStepRange(int64_t steps)
{
    for (MetricPlot* plot : {m_lossPlot, m_samplePlot, m_accuracyPlot, m_rewardPlot})
        plot->setFixedXRange(0, double(std::max<int64_t>(1, steps)));
}

void TrainPlots::addProgress(const ProgressEvent& e)
{
    const double x = double(e.step);
    appendLoss(e.step, e.loss);
    if (e.rewards) {
        m_accuracyPlot->append(kAccuracy, x, e.rewards->accuracies);
        m_accuracyPlot->append(kMargin, x, e.rewards->margins);
        m_rewardPlot->append(kChosen, x, e.rewards->chosen);
        m_rewardPlot->append(kRejected, x, e.rewards->rejected);
    }
}

void TrainPlots::appendLoss(int64_t step, double loss)
{
    m_lossPlot->append(kLoss, double(step), loss);
    // An exponential moving average over ~20 steps: the trend under the per-batch noise.
    m_lossAverage = m_haveAverage ? 0.95 * m_lossAverage + 0.05 * loss : loss;
    m_haveAverage = true;
    m_lossPlot->append(kLossAverage, double(step), m_lossAverage);
}

void TrainPlots::setSampleMetrics(const SampleMetrics& declared)
{
    // The rule's share first (the paper's headline figure), then the task's other plotted values.
    QStringList names, tips;
    std::vector<MetricValue> plotted;
    for (const MetricValue& v : declared.values)
        if (v.plotted)
            plotted.insert(v.name == declared.ruleMetric ? plotted.begin() : plotted.end(), v);
    for (const MetricValue& v : plotted) {
        names << QString::fromStdString(v.name);
        tips << QStringLiteral("%1: %2").arg(names.back(), QString::fromStdString(v.description));
    }
    if (names == m_sampleNames)
        return;
    m_samplePlot->removeAllSeries();
    m_sampleNames = names;
    // The rule's share in the paper's orange, VSR in green, then the rest.
    const QColor others[] = {kPurple, kBrown, kBlue, kRed};
    int next = 0;
    for (const QString& name : names) {
        const QColor colour = name.toStdString() == declared.ruleMetric ? kOrange
                              : name == QLatin1String(metric::kVsr) ? kGreen
                                                                    : others[next++ % 4];
        m_samplePlot->addSeries(name, colour, true);
    }
    m_samplePlot->setToolTip(tips.join(QLatin1Char('\n')));
}

void TrainPlots::addEvaluation(const EvaluationEvent& e)
{
    const SampleMetrics& m = e.metrics;
    if (m_sampleNames.isEmpty() || e.ofReference)
        setSampleMetrics(m);
    for (int i = 0; i < m_sampleNames.size(); ++i) {
        const auto value = m.value(m_sampleNames[i].toStdString());
        if (!value)
            continue;
        if (e.ofReference)
            m_samplePlot->setBaseline(i, *value);
        else
            m_samplePlot->append(i, double(e.step), *value);
    }
}

void TrainPlots::showStoredRun(const StoredRun& stored)
{
    clear();
    setSampleMetrics(stored.declared);
    const std::vector<std::pair<int64_t, double>> none;
    auto series = [&](const std::string& name) -> const std::vector<std::pair<int64_t, double>>& {
        const auto found = stored.series.find(name);
        return found == stored.series.end() ? none : found->second;
    };
    const auto& loss = series(metric::kLoss);
    for (const auto& [step, value] : loss)
        appendLoss(step, value);
    for (int i = 0; i < m_sampleNames.size(); ++i) {
        const std::string name = m_sampleNames[i].toStdString();
        for (const auto& [step, value] : series(name))
            m_samplePlot->append(i, double(step), value);
        for (const auto& [step, value] : series(metric::ofReference(name)))
            m_samplePlot->setBaseline(i, value);
    }
    const std::pair<MetricPlot*, std::pair<int, const char*>> curves[] = {
        {m_accuracyPlot, {kAccuracy, metric::kRewardsAccuracies}},
        {m_accuracyPlot, {kMargin, metric::kRewardsMargins}},
        {m_rewardPlot, {kChosen, metric::kRewardsChosen}},
        {m_rewardPlot, {kRejected, metric::kRewardsRejected}},
    };
    for (const auto& [plot, which] : curves)
        for (const auto& [step, value] : series(which.second))
            plot->append(which.first, double(step), value);
    setStepRange(loss.empty() ? 1 : loss.back().first);
}

} // namespace d2dpo::ui
