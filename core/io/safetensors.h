// SPDX-License-Identifier: GPL-3.0-or-later
// Tensors as data: the safetensors format (Hugging Face's), read without running any code. A file
// is an 8-byte little-endian header length N, N bytes of JSON naming each tensor's dtype, shape and
// byte range ("data_offsets", relative to the end of the header) plus an optional "__metadata__"
// object of strings, then the tensors' bytes. Reading checks everything a crafted file could lie
// about before a byte is copied: the header's size and depth, keys named twice, known dtypes,
// shapes whose bytes match their range, ranges inside the file that cover it without gap or
// overlap. Python reads what this writes with `safetensors.torch.load_file`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "base/result.h"

namespace d2dpo {

struct SafetensorsContents {
    std::map<std::string, std::string> metadata;
    std::vector<std::pair<std::string, torch::Tensor>> tensors; ///< in the order of their bytes
};

/// The largest header read (the safetensors library's own limit): names and shapes, never weights.
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100ull << 20;

/// Appends the safetensors bytes of `tensors` (CPU or not, any layout; written contiguous, in
/// the order given) and `metadata` to `out`. Names must be distinct and not "__metadata__".
/// Returns false, with `out` emptied, when memory runs out.
bool appendSafetensors(std::string& out, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata);

/// The bytes `appendSafetensors` will append, to reserve them at once.
uint64_t safetensorsBytes(const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                          const std::map<std::string, std::string>& metadata);

/// Reads `bytes` (a whole safetensors file) into CPU tensors that own their memory, or says
/// what is wrong with it in a sentence.
Result<SafetensorsContents> readSafetensors(std::string_view bytes);

} // namespace d2dpo
