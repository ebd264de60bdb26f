// SPDX-License-Identifier: GPL-3.0-or-later
// The pickles of a TorchScript archive (data.pkl, constants.pkl, code/*.debug_pkl) walked before
// LibTorch's unpickler reads them. LibTorch 1.13's unpickler trusts its input: it pops without
// looking (a TUPLE with no MARK, an APPENDS on an empty stack), reads a memo slot it never set, and
// lays a tensor over its storage without asking whether the view fits (an offset, a size or a
// stride past the storage's end reads and writes the heap). This walker runs the same opcodes on
// a stack of its own: only those TorchScript writes, each pop checked, each memo slot known, only
// the globals TorchScript's pickler names, every storage no larger than its record and every
// tensor inside its storage. Any other pickle is refused with the opcode and its byte offset.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace d2dpo {

/// The size of the record "<folder>/<key>" a storage lives in, or none when there is no such record.
using StorageRecordSize = std::function<std::optional<uint64_t>(const std::string& key)>;

/// Walks `pickle` (named `name` in messages); `storageSize` answers for its storages' records
/// (data/N for data.pkl, constants/N for constants.pkl). A debug pickle holds no storage.
Status checkPickle(std::string_view pickle, const std::string& name, const StorageRecordSize& storageSize);

} // namespace d2dpo
