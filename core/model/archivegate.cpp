// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/archivegate.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caffe2/serialize/inline_container.h>

#include "base/untrustedtext.h"
#include "base/ziprecords.h"
#include "model/memoryarchive.h"
#include "model/picklecheck.h"
#include "model/scriptsource.h"

namespace d2dpo {

namespace {

std::string lowered(std::string_view text)
{
    std::string out(text);
    for (char& c : out)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool isDigits(std::string_view text)
{
    return !text.empty() && text.size() <= 12 &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool isIdentifierPath(std::string_view path)
{
    // "__torch__/a/b": qualified names as TorchScript writes them, one folder per dot.
    size_t start = 0;
    while (true) {
        const size_t slash = std::min(path.find('/', start), path.size());
        const std::string_view part = path.substr(start, slash - start);
        if (part.empty() || !std::all_of(part.begin(), part.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
            }))
            return false;
        if (slash == path.size())
            return true;
        start = slash + 1;
    }
}

bool endsWith(std::string_view text, std::string_view tail)
{
    return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

/// What a record is, by its name below the archive's folder, exactly as TorchScript writes it.
enum class RecordKind { Tensor, Code, DebugInfo, Pickle, Small, Unexpected };

RecordKind kindOf(std::string_view inside)
{
    static constexpr std::array kSmall = {"version", ".data/version", "byteorder", ".data/serialization_id",
                                          ".format_version", ".storage_alignment"};
    if (inside == "data.pkl" || inside == "constants.pkl")
        return RecordKind::Pickle;
    if (std::find(kSmall.begin(), kSmall.end(), inside) != kSmall.end())
        return RecordKind::Small;
    for (std::string_view folder : {"data/", "constants/"})
        if (inside.substr(0, folder.size()) == folder && isDigits(inside.substr(folder.size())))
            return RecordKind::Tensor;
    if (inside.substr(0, 5) == "code/") {
        const std::string_view path = inside.substr(5);
        if (endsWith(path, ".py.debug_pkl") && isIdentifierPath(path.substr(0, path.size() - 13)))
            return RecordKind::DebugInfo;
        if (endsWith(path, ".py") && isIdentifierPath(path.substr(0, path.size() - 3)))
            return RecordKind::Code;
    }
    return RecordKind::Unexpected;
}

bool isArchiveFolderName(std::string_view name)
{
    // torch.jit.save names it after the file ("archive" in newer PyTorch): printable, no path.
    return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
           std::all_of(name.begin(), name.end(), [](char c) {
               const auto u = static_cast<unsigned char>(c);
               return (u >= 0x20 && u < 0x7f && c != '\\') || u >= 0x80;
           });
}

/// Where `word` occurs in `text`, ignoring ASCII case.
bool containsIgnoringCase(std::string_view text, std::string_view word)
{
    return std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           }) != text.end();
}

std::string shown(std::string_view name) { return excerpt(std::string(name), 120); }

Status checkRecordsAsTheLoaderReadsThem(std::string_view bytes, const std::vector<ZipRecord>& records,
                                        const std::string& folder,
                                        const std::vector<std::pair<std::string, RecordKind>>& toRead,
                                        ArchiveCode code);

} // namespace

Status checkArchiveBeforeLoading(std::string_view bytes, ArchiveCode code)
{
    auto records = readZipRecords(bytes);
    if (!records)
        return makeError(records.error());
    if (records.value().empty())
        return makeError("an empty zip archive");
    const std::string& first = records.value().front().name;
    const std::string folder = first.substr(0, first.find('/'));
    if (first.find('/') == std::string::npos || !isArchiveFolderName(folder))
        return makeError("its first record '" + shown(first) + "' is not inside an archive folder as TorchScript "
                         "writes it");
    std::unordered_map<std::string, std::string> seen; // lower-cased -> as written
    std::vector<std::pair<std::string, RecordKind>> toRead;
    for (const ZipRecord& record : records.value()) {
        const std::string_view name = record.name;
        const auto [it, fresh] = seen.emplace(lowered(name), record.name);
        if (!fresh)
            return makeError("it holds two records named '" + shown(it->second) + "'" +
                             (it->second == record.name ? std::string()
                                                        : " and '" + shown(name) + "', which differ only in case") +
                             ": the loader may read either, so neither is trusted");
        if (name.substr(0, folder.size() + 1) != folder + "/")
            return makeError("its record '" + shown(name) + "' lies outside the archive's folder '" + shown(folder) +
                             "/'");
        const std::string_view inside = name.substr(folder.size() + 1);
        const RecordKind kind = kindOf(inside);
        if (kind == RecordKind::Unexpected)
            return makeError("its record '" + shown(name) + "' is not one TorchScript writes (code/*.py, data.pkl, "
                             "constants.pkl, data/N, constants/N, version): names are matched as the loader reads "
                             "them, case-blind, so an unexpected one is never let through");
        if (kind != RecordKind::Tensor)
            toRead.emplace_back(std::string(inside), kind);
    }
    if (Status s = checkZipBudget(bytes); !s)
        return s;

    try {
        return checkRecordsAsTheLoaderReadsThem(bytes, records.value(), folder, toRead, code);
    } catch (const std::exception& e) { // miniz disagrees with the directory read above
        return makeError("its zip directory is not read alike by every reader: " + excerpt(e.what(), 200));
    }
}

namespace {

Status checkRecordsAsTheLoaderReadsThem(std::string_view bytes, const std::vector<ZipRecord>& records,
                                        const std::string& folder,
                                        const std::vector<std::pair<std::string, RecordKind>>& toRead,
                                        ArchiveCode code)
{
    caffe2::serialize::PyTorchStreamReader reader(memoryArchiveReader(bytes));
    // The loader's own list must be the one judged: a second directory (zip64 read where the
    // end record has no markers, say) would hide records from every check above.
    std::vector<std::string> listed = reader.getAllRecords();
    std::vector<std::string> judged;
    for (const ZipRecord& record : records)
        judged.push_back(record.name.substr(folder.size() + 1));
    std::sort(listed.begin(), listed.end());
    std::sort(judged.begin(), judged.end());
    if (listed != judged)
        return makeError("its zip holds another list of records for the loader than its directory states (" +
                         std::to_string(listed.size()) + " against " + std::to_string(judged.size()) +
                         "): a second directory is never trusted");
    std::unordered_map<std::string, uint64_t> sizes; // each record's bytes, by its name inside the folder
    for (const ZipRecord& record : records)
        sizes.emplace(record.name.substr(folder.size() + 1), record.inflatedBytes);
    for (const auto& [inside, kind] : toRead) {
        const auto [data, size] = reader.getRecord(inside);
        const std::string_view text(static_cast<const char*>(data.get()), size);
        if (kind == RecordKind::Pickle || kind == RecordKind::DebugInfo) {
            // data.pkl's storages are data/N, constants.pkl's constants/N; a debug pickle has none.
            const std::string storages = inside == "data.pkl" ? "data/" : inside == "constants.pkl" ? "constants/" : "";
            const StorageRecordSize storageSize = [&](const std::string& key) -> std::optional<uint64_t> {
                const auto found = storages.empty() ? sizes.end() : sizes.find(storages + key);
                return found == sizes.end() ? std::nullopt : std::optional(found->second);
            };
            if (Status s = checkPickle(text, inside, storageSize); !s)
                return s;
            if (kind == RecordKind::DebugInfo)
                continue; // the source it quotes is checked where it is code
        }
        for (const char* hook : {"__setstate__", "__getstate__"})
            if (containsIgnoringCase(text, hook))
                return makeError("its code (" + shown(inside) + ") defines " + hook +
                                 ", which TorchScript runs while it loads the archive, before anything could check "
                                 "it; a denoiser needs neither __setstate__ nor __getstate__, so the archive is never "
                                 "loaded");
        if (containsIgnoringCase(text, "torch.classes"))
            return makeError("its record '" + shown(inside) + "' uses a TorchBind class (torch.classes), native code "
                             "outside the op allowlist that loading would already run; a denoiser needs none");
        if (kind == RecordKind::Code)
            if (Status s = checkScriptSource(text, inside, code); !s)
                return s;
    }
    return Ok{};
}

} // namespace

} // namespace d2dpo
