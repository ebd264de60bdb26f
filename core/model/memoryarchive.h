// SPDX-License-Identifier: GPL-3.0-or-later
// A TorchScript or checkpoint archive read where it lies in memory. LibTorch's istream readers
// want an std::istream, and an std::istringstream copies the bytes it is given: a model of 2 GiB
// would be held twice more while it loads. These read the caller's bytes in place, and write an
// archive straight into one string, so that loading or saving a model costs its bytes once.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace caffe2::serialize {
class ReadAdapterInterface;
}

namespace d2dpo {

/// A reader of `bytes` for PyTorchStreamReader and torch::jit::load; the bytes must outlive it.
std::shared_ptr<caffe2::serialize::ReadAdapterInterface> memoryArchiveReader(std::string_view bytes);

/// A writer for LibTorch's save_to/ExportModule that appends to `out` (reserve it first: a string
/// that grows by doubling holds its old and new buffers at once). It never throws and never
/// writes short: LibTorch's zip writer calls it from C code, where an exception, or the error a
/// short write raises on the next call, ends the process. Out of memory, it empties `out`, sets
/// `failed` and takes the rest of the archive without keeping it: the caller checks `failed`.
std::function<size_t(const void*, size_t)> appendingArchiveWriter(std::string& out, bool& failed);

} // namespace d2dpo
