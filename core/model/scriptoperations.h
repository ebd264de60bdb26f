// SPDX-License-Identifier: GPL-3.0-or-later
// A TorchScript model is code someone else wrote, and it runs as whoever opens it. Before any of
// it runs, every function of the archive's code (every method of every module and class, called
// or not) is read node by node, and any operation outside the tensor arithmetic a denoiser needs
// is refused by name: no file, process or network operation, no printing, no threads, no
// operation from another namespace than ATen's (a custom op). The check works on the compiled
// graphs, not on the text, so no spelling of a call escapes it.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace torch::jit {
struct Graph;
struct Module;
}

namespace d2dpo {

/// Whether a TorchScript operation (e.g. "aten::linear", "prim::If") is one a denoiser may use.
bool isAllowedScriptOperation(std::string_view kind);

/// Guards the fast-path attention ops of a scripted function as checkScriptOperations() does (for
/// code compiled outside an archive: the tests).
void guardScriptGraph(torch::jit::Graph& graph);

/// Every operation of every function compiled from `module`'s archive is allowed, or the first
/// that is not, in a sentence naming it and the function it is in. Once all are, the arguments
/// an allowed op trusts are guarded in its graphs: the fast-path attention ops' head count (0
/// would divide by zero in LibTorch 1.13) raises an error instead.
Status checkScriptOperations(const torch::jit::Module& module);

} // namespace d2dpo
