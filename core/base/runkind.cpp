// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/runkind.h"

namespace d2dpo {

const char* toString(RunKind kind) { return kind == RunKind::D2dpo ? "d2dpo" : "unknown"; }

RunKind runKindFromString(const std::string& text) { return text == "d2dpo" ? RunKind::D2dpo : RunKind::Unknown; }

} // namespace d2dpo
