// SPDX-License-Identifier: GPL-3.0-or-later
// A model brought in may warn (Python's warnings.warn, compiled into its TorchScript): its text is
// someone else's, and it comes on every call. LibTorch's own handler prints each one whole, so a
// forward that warns with 8 MB floods the terminal with a line per pass. Here each distinct
// warning is shown once, as a printable excerpt, and past a few the rest are only counted.
#pragma once

#include <cstdint>

namespace d2dpo {

/// Distinct warnings shown in full (as excerpts) before the rest are only counted.
inline constexpr int kShownModelWarnings = 20;
/// The most bytes of one warning that are shown.
inline constexpr int kWarningExcerptBytes = 300;

/// Makes the filter LibTorch's warning handler on the calling thread. LibTorch 1.13 keeps one
/// handler per thread, so whatever runs a model's code (its forward, its loading) calls this first;
/// a thread's second call costs a branch.
void useModelWarningFilter();

/// Warnings raised since the filter was installed, shown or not.
int64_t modelWarningsRaised();

} // namespace d2dpo
