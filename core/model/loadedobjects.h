// SPDX-License-Identifier: GPL-3.0-or-later
// A loaded archive's values as its types declare them. LibTorch's loader fills each object's
// slots from data.pkl without comparing them with its class (an edited pickle can put a class of
// two attributes where one of twenty is declared), and a list's or dict's type tag is whatever the
// pickle said; the interpreter then reads slots by index, checked only in debug builds. So before
// anything runs, every object reachable from the module must have one slot per attribute of its
// class, each holding a value of the attribute's type, and every list, dict and tuple must hold
// what its type says, recursively.
#pragma once

#include "base/result.h"

namespace torch::jit {
struct Module;
}

namespace d2dpo {

/// Every value reachable from `module` agrees with its declared type, or the first that does not.
Status checkLoadedObjects(const torch::jit::Module& module);

} // namespace d2dpo
