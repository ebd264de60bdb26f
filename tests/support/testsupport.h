// SPDX-License-Identifier: GPL-3.0-or-later
// What most suites include: Qt Test, LibTorch, tensor comparisons, and the torch-free tiny
// configurations (tinyconfigs.h) and file helpers (filebytes.h).
#pragma once

#include <QtTest/QtTest>
#include <torch/torch.h>

#include "support/filebytes.h"
#include "support/tinyconfigs.h"

namespace d2dpo::test {

inline double maxAbsDiff(const torch::Tensor& a, const torch::Tensor& b)
{
    return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

} // namespace d2dpo::test
