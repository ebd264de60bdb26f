// SPDX-License-Identifier: GPL-3.0-or-later
// What a run in the store trained. The runs table keeps the kind as text; every run recorded today
// is a D2-DPO run. A kind this version does not know (written by a later one) is read as Unknown:
// listed by no view and resumed by no one, rather than a store that cannot be read.
#pragma once

#include <string>

namespace d2dpo {

enum class RunKind { D2dpo, Unknown };

/// "d2dpo" (the store's spelling) or "unknown".
const char* toString(RunKind kind);
RunKind runKindFromString(const std::string& text);

} // namespace d2dpo
