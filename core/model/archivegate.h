// SPDX-License-Identifier: GPL-3.0-or-later
// The one gate every TorchScript archive passes before LibTorch reads it: a model brought in, and
// every later load of a checkpoint that carries one. Loading an archive already runs code (a class's
// __setstate__, a TorchBind class's own), so the archive is judged here from its zip directory and
// its records' bytes alone, with nothing unpickled or compiled:
// - record names as the loader looks them up. PyTorchStreamReader finds a record through miniz,
//   whose look-up ignores case: "CODE/x.py" is read for "code/x.py", and of two names that differ
//   only in case either may be read. So every name is refused unless it is exactly one of the names
//   TorchScript writes, and names equal once lower-cased (duplicates included) are refused;
// - no record that the loader would not read ("extra/", ".data/...", "../", "./");
// - no __setstate__ or __getstate__ anywhere, and no TorchBind class ("torch.classes"): a denoiser
//   needs none, and each is code run while loading, before the op allowlist could be asked;
// - the zip budget (base/ziprecords.h): no record is inflated past what the archive can need.
// After loading, model/scriptoperations.h checks every compiled function against the op allowlist.
#pragma once

#include <string_view>

#include "base/result.h"

namespace d2dpo {

enum class ArchiveCode {
    Functions, ///< a model's archive: classes with methods, checked by the op allowlist after loading
    None,      ///< a checkpoint written before format 2: module declarations only, no function at all
};

/// Whether `bytes` (a whole TorchScript archive) may be handed to LibTorch, or why not in a sentence.
Status checkArchiveBeforeLoading(std::string_view bytes, ArchiveCode code = ArchiveCode::Functions);

} // namespace d2dpo
