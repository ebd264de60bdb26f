// SPDX-License-Identifier: GPL-3.0-or-later
#include "train/bestcheckpoint.h"

#include <cstdio>

namespace d2dpo {

namespace {

std::string fixed(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.4f", value);
    return text;
}

} // namespace

BestCheckpoint::BestCheckpoint(std::string choice, double vsrSlack, double referenceVsr)
    : m_choice(std::move(choice))
    , m_vsrFloor(referenceVsr - vsrSlack)
{
}

bool BestCheckpoint::offer(int64_t step, const SampleMetrics& metrics)
{
    if (!enabled())
        return false;
    ++m_offered;
    const bool minimise = m_choice.front() == '-';
    std::string name = minimise ? m_choice.substr(1) : m_choice;
    if (name == "rule")
        name = metrics.ruleMetric;
    const std::optional<double> value = metrics.value(name);
    if (!value || metrics.vsr() < m_vsrFloor)
        return false;
    const bool better = !m_bestStep || (minimise ? *value < m_bestValue : *value > m_bestValue);
    if (!better)
        return false;
    m_metric = name;
    m_bestStep = step;
    m_bestValue = *value;
    m_bestVsr = metrics.vsr();
    return true;
}

std::string BestCheckpoint::describe() const
{
    if (!m_bestStep)
        return "no evaluation of " + std::to_string(m_offered) + " had '" + m_choice + "' with VSR >= " +
               fixed(m_vsrFloor);
    return "step " + std::to_string(*m_bestStep) + ": " + m_metric + " " + fixed(m_bestValue) + ", VSR " +
           fixed(m_bestVsr) + " (>= " + fixed(m_vsrFloor) + " required)";
}

} // namespace d2dpo
