// SPDX-License-Identifier: GPL-3.0-or-later
// The code records of a TorchScript archive, judged from their syntax before LibTorch compiles them.
// Compiling already runs code: a parameter's default value and a class constant
// (`k : Final[int] = <expr>`) are evaluated while the archive loads, before the op allowlist could
// see a graph, and constant folding runs an op whose inputs are all literals. So every such value
// must be a literal (a number, a string, None, a tuple of them, torch.device("cpu")), and every
// call of a builtin (`torch.x(...)`, `ops.ns.x(...)`) must name an op on the allowlist.
#pragma once

#include <string_view>

#include "base/result.h"
#include "model/archivegate.h"

namespace d2dpo {

/// Whether the Python source of one code record (`name`, for messages) may be compiled, or why not.
/// With ArchiveCode::None no function may be defined at all.
Status checkScriptSource(std::string_view source, std::string_view name, ArchiveCode code);

} // namespace d2dpo
