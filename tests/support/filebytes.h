// SPDX-License-Identifier: GPL-3.0-or-later
// A whole file as bytes, read and written, for suites that check what a refused operation left.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace d2dpo::test {

/// A whole file as bytes (empty when missing).
inline std::string readAll(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void writeAll(const std::string& path, const std::string& bytes)
{
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

} // namespace d2dpo::test
