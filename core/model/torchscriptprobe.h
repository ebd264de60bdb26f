// SPDX-License-Identifier: GPL-3.0-or-later
// The checks a model brought in meets before anything is written: its forward run on small probe
// batches (shape, ids, finite logits over the whole range of t) and a backward pass through it,
// on a thread of its own under a time limit and the caller's stop.
#pragma once

#include <memory>

#include "base/result.h"
#include "base/trainlistener.h"

namespace d2dpo {

class TorchScriptDenoiser;

/// Probes a freshly loaded module on a small batch, as an import does before anything is
/// written: the output is one float tensor [B, begin + D + end, V] with V > every id of the
/// vocabulary (and V = its "size" when given), finite at every t in [0, 1], and a backward pass
/// through it works. Returns V, or what is wrong in a sentence. The model's code runs on a thread
/// of its own (base/abandonablecall.h) for at most probeSecondsAllowed(): a call that never
/// returns, or a stop, is named and left behind instead of hanging the caller.
Result<int64_t> probeTorchScriptDenoiser(const std::shared_ptr<TorchScriptDenoiser>& model,
                                         const StopToken* stop = nullptr, double seconds = 0);
/// The probe's time limit when none is given: a minute, and a second more per 10M parameters.
double probeSecondsAllowed(int64_t parameters);

} // namespace d2dpo
