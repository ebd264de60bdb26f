// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/ziprecords.h"

#include <algorithm>
#include <cstdio>

namespace d2dpo {

namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr size_t kEndOfDirectoryBytes = 22;
constexpr size_t kDirectoryEntryBytes = 46;
constexpr uint32_t kUnknown32 = 0xffffffffu;

/// Little-endian fields at checked offsets: reading past the end is an error, never a crash.
class Fields {
public:
    explicit Fields(std::string_view bytes)
        : m_bytes(bytes)
    {
    }
    bool has(uint64_t at, uint64_t n) const { return at <= m_bytes.size() && n <= m_bytes.size() - at; }
    uint64_t read(uint64_t at, int n) const
    {
        uint64_t value = 0;
        for (int i = n - 1; i >= 0; --i)
            value = (value << 8) | static_cast<unsigned char>(m_bytes[size_t(at) + size_t(i)]);
        return value;
    }
    uint16_t u16(uint64_t at) const { return uint16_t(read(at, 2)); }
    uint32_t u32(uint64_t at) const { return uint32_t(read(at, 4)); }
    uint64_t u64(uint64_t at) const { return read(at, 8); }
    std::string_view text(uint64_t at, uint64_t n) const { return m_bytes.substr(size_t(at), size_t(n)); }

private:
    std::string_view m_bytes;
};

std::string gibibytes(uint64_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(1ull << 30));
    return text;
}

} // namespace

Result<std::vector<ZipRecord>> readZipRecords(std::string_view archive)
{
    const Fields f(archive);
    if (archive.size() < kEndOfDirectoryBytes)
        return makeError("not a zip archive (too short for its directory)");
    // The end record is the last 22 bytes, or earlier by a comment of up to 64 KiB.
    const uint64_t last = archive.size() - kEndOfDirectoryBytes;
    const uint64_t first = last > 0xffff ? last - 0xffff : 0;
    uint64_t end = last + 1;
    for (uint64_t at = last + 1; at-- > first;)
        if (f.u32(at) == kEndOfDirectory) {
            end = at;
            break;
        }
    if (end > last)
        return makeError("not a zip archive (no end of its central directory)");
    uint64_t entries = f.u16(end + 10);
    uint64_t directorySize = f.u32(end + 12);
    uint64_t directoryAt = f.u32(end + 16);
    if (entries == 0xffff || directorySize == kUnknown32 || directoryAt == kUnknown32) {
        if (end < 20 || f.u32(end - 20) != kZip64Locator)
            return makeError("a zip64 archive without its zip64 locator");
        const uint64_t at = f.u64(end - 20 + 8);
        if (!f.has(at, 56) || f.u32(at) != kZip64EndOfDirectory)
            return makeError("a zip64 archive whose zip64 directory end is missing");
        entries = f.u64(at + 32);
        directorySize = f.u64(at + 40);
        directoryAt = f.u64(at + 48);
    }
    if (!f.has(directoryAt, directorySize))
        return makeError("a zip archive whose central directory lies outside the file (truncated?)");
    if (entries > directorySize / kDirectoryEntryBytes)
        return makeError("a zip archive whose central directory states more records than it holds");
    std::vector<ZipRecord> records;
    records.reserve(size_t(entries));
    uint64_t at = directoryAt;
    const uint64_t directoryEnd = directoryAt + directorySize;
    for (uint64_t i = 0; i < entries; ++i) {
        if (at + kDirectoryEntryBytes > directoryEnd || f.u32(at) != kDirectoryEntry)
            return makeError("a zip archive whose central directory is damaged at record " + std::to_string(i + 1));
        const uint16_t method = f.u16(at + 10);
        uint64_t stored = f.u32(at + 20);
        uint64_t inflated = f.u32(at + 24);
        const uint16_t nameBytes = f.u16(at + 28), extraBytes = f.u16(at + 30), commentBytes = f.u16(at + 32);
        uint64_t localAt = f.u32(at + 42);
        const uint64_t nameAt = at + kDirectoryEntryBytes, extraAt = nameAt + nameBytes;
        const uint64_t next = extraAt + extraBytes + commentBytes;
        if (next > directoryEnd)
            return makeError("a zip archive whose central directory is damaged at record " + std::to_string(i + 1));
        // Sizes that do not fit 32 bits are in the zip64 extra field, in this order, when marked.
        for (uint64_t x = extraAt; x + 4 <= extraAt + extraBytes;) {
            const uint16_t id = f.u16(x), size = f.u16(x + 2);
            uint64_t field = x + 4;
            const uint64_t fieldEnd = std::min<uint64_t>(field + size, extraAt + extraBytes);
            if (id == 1) {
                for (uint64_t* value : {&inflated, &stored, &localAt})
                    if (*value == kUnknown32 && field + 8 <= fieldEnd) {
                        *value = f.u64(field);
                        field += 8;
                    }
                break;
            }
            x = fieldEnd;
        }
        if (stored == kUnknown32 || inflated == kUnknown32)
            return makeError("a zip archive whose record " + std::to_string(i + 1) + " has no zip64 sizes");
        if (!f.has(localAt, stored))
            return makeError("a zip archive whose record '" +
                             std::string(f.text(nameAt, std::min<uint64_t>(nameBytes, 80))) +
                             "' lies outside the file (truncated?)");
        records.push_back({std::string(f.text(nameAt, nameBytes)), stored, inflated, method != 0});
        at = next;
    }
    return records;
}

Status checkZipBudget(std::string_view archive, uint64_t smallRecordBytes, uint64_t slackBytes)
{
    auto records = readZipRecords(archive);
    if (!records)
        return makeError(records.error());
    const uint64_t budget = 2 * uint64_t(archive.size()) + slackBytes;
    uint64_t total = 0;
    for (const ZipRecord& r : records.value()) {
        // "<archive>/data/<n>" are the tensors; everything else (code, pickles, version) is small.
        const size_t slash = r.name.find('/');
        const bool tensor = slash != std::string::npos && r.name.compare(slash, 6, "/data/") == 0;
        const std::string name = r.name.substr(0, 120);
        if (!tensor && r.inflatedBytes > smallRecordBytes)
            return makeError("its record '" + name + "' says it inflates to " + gibibytes(r.inflatedBytes) +
                             ", where code and pickles take kilobytes: a zip bomb is never read");
        if (!r.compressed && r.inflatedBytes != r.storedBytes)
            return makeError("its record '" + name + "' is stored uncompressed but states another size");
        total += std::min<uint64_t>(r.inflatedBytes, budget + 1);
        if (total > budget)
            return makeError("its records say they inflate to more than " + gibibytes(budget) + " from a " +
                             gibibytes(archive.size()) + " file, far beyond what weights compress to: a zip bomb " +
                             "is never read");
    }
    return Ok{};
}

} // namespace d2dpo
