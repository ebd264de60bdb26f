// SPDX-License-Identifier: GPL-3.0-or-later
// Small helpers shared by the test suites: tiny configurations and tensor comparisons.
#pragma once

#include <QtTest/QtTest>
#include <torch/torch.h>

#include <fstream>
#include <iterator>
#include <string>

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

inline double maxAbsDiff(const torch::Tensor& a, const torch::Tensor& b)
{
    return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

/// A whole file as bytes (empty when missing).
inline std::string readAll(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void writeAll(const std::string& path, const std::string& bytes)
{
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

} // namespace d2dpo::test
