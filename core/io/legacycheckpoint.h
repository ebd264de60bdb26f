// SPDX-License-Identifier: GPL-3.0-or-later
// Checkpoints of format 1 (written before 2026-11-28): the payload is LibTorch's serialize archive,
// which is a TorchScript archive, so reading it means handing it to TorchScript's loader. It is read
// only through the gate (model/archivegate.h) with no function allowed in it: such a payload as
// d2dpo wrote it declares modules and holds tensors, and a function in it can only be someone's
// code waiting to run. Format 2 (io/safetensors.h) never reaches TorchScript for a native model.
#pragma once

#include <string_view>

#include "base/result.h"
#include "io/checkpointpayload.h"

namespace d2dpo {

/// The contents of a format-1 payload, or why it is refused.
Result<CheckpointPayload> readLegacyCheckpoint(std::string_view payload);

} // namespace d2dpo
