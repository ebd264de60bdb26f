// SPDX-License-Identifier: GPL-3.0-or-later
// Tiny model and D2-DPO settings, small enough to train in a test (torch-free: plain configs).
#pragma once

#include "base/config.h"

namespace d2dpo::test {

/// A model small enough to train in a test.
inline ModelSpec tinySpec(int length = 6, bool timeConditioning = true)
{
    ModelSpec spec;
    spec.task.length = length;
    spec.model.dModel = 16;
    spec.model.layers = 1;
    spec.model.heads = 2;
    spec.model.ffMultiplier = 2;
    spec.model.timeConditioning = timeConditioning;
    return spec;
}

/// D2-DPO settings for a few quick steps on a tiny model.
inline DpoConfig tinyDpo(int steps)
{
    DpoConfig config;
    config.steps = steps;
    config.batch = 16;
    config.learningRate = 1e-3;
    return config;
}

/// A quick run's schedule: no evaluations along the way, small ones at the end.
inline DpoScheduleConfig tinySchedule()
{
    DpoScheduleConfig schedule;
    schedule.evalEvery = 0;
    schedule.evalSamples = 50;
    return schedule;
}

} // namespace d2dpo::test
