// SPDX-License-Identifier: GPL-3.0-or-later
// The number format of a training step's matrix products: float32, or bf16 (bfloat16 operands,
// float32 accumulation and results) where the processor has bf16 units. Master weights, Adam's
// moments, the loss and every other operation stay float32 either way (kernels/matmulprecision.h
// applies it). One name table: the JSON of a run, the CLI's allowed values and the desktop's list.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace d2dpo {

enum class Precision { Float32, BFloat16 };

/// "float32" or "bf16": how a run's JSON, the CLI and the desktop name it.
std::string_view precisionName(Precision precision);
/// The value a name stands for; none for a name the table does not hold.
std::optional<Precision> precisionFromName(std::string_view name);
/// Every name, in the table's order (the CLI's allowed values, the desktop's list).
std::vector<std::string> precisionNames();

} // namespace d2dpo
