// SPDX-License-Identifier: GPL-3.0-or-later
// An imported model's linear layers through oneDNN's sgemm (kernels/onednnlinear.h): each
// aten::linear of the rewritten forward (model/scriptattention.h) becomes d2dpo::linear, the same
// function with the same inputs at the same place in the graph, computed to rounding alike.
#pragma once

#include <cstdint>

namespace torch::jit {
struct Graph;
}

namespace d2dpo {

/// Replaces every aten::linear of `graph`, inner blocks included, by d2dpo::linear; returns how
/// many. None when oneDNN's sgemm is not to be had, or D2DPO_SCRIPT_LINEAR is "plain" (to compare
/// against LibTorch's own products).
int64_t routeScriptLinears(torch::jit::Graph& graph);

} // namespace d2dpo
