// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "base/untrustedtext.h"

namespace d2dpo {

namespace {

struct DtypeName {
    const char* name;
    torch::ScalarType type;
};

constexpr DtypeName kDtypes[] = {
    {"F64", torch::kFloat64}, {"F32", torch::kFloat32}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16},
    {"I64", torch::kInt64},   {"I32", torch::kInt32},   {"I16", torch::kInt16},   {"I8", torch::kInt8},
    {"U8", torch::kUInt8},    {"BOOL", torch::kBool},
};

const char* dtypeName(torch::ScalarType type)
{
    for (const DtypeName& d : kDtypes)
        if (d.type == type)
            return d.name;
    return nullptr;
}

/// The header, padded with spaces to a multiple of 8 bytes so that the tensors' bytes that follow
/// it start aligned (as the safetensors library writes it).
std::string headerFor(const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata, uint64_t& dataBytes)
{
    nlohmann::json header = nlohmann::json::object();
    if (!metadata.empty())
        header["__metadata__"] = metadata;
    dataBytes = 0;
    for (const auto& [name, tensor] : tensors) {
        const char* dtype = dtypeName(tensor.scalar_type());
        TORCH_CHECK(dtype, "safetensors cannot hold a tensor of type ", tensor.scalar_type(), " ('", name, "')");
        TORCH_CHECK(name != "__metadata__" && !header.contains(name), "the tensor name '", name, "' is taken");
        const uint64_t bytes = uint64_t(tensor.numel()) * uint64_t(tensor.element_size());
        header[name] = {{"dtype", dtype}, {"shape", tensor.sizes().vec()}, {"data_offsets", {dataBytes, dataBytes + bytes}}};
        dataBytes += bytes;
    }
    std::string text = header.dump();
    text.append((8 - (8 + text.size()) % 8) % 8, ' ');
    return text;
}

template <typename T>
bool readUnsigned(const nlohmann::json& value, T& out)
{
    if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<int64_t>() >= 0))
        return false;
    const uint64_t v = value.get<uint64_t>();
    if (v > uint64_t(std::numeric_limits<T>::max()))
        return false;
    out = T(v);
    return true;
}

struct Entry {
    std::string name;
    torch::ScalarType type;
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;
};

Result<Entry> entryOf(const std::string& name, const nlohmann::json& value, uint64_t dataBytes)
{
    const std::string where = "its tensor '" + excerpt(name, 80) + "' ";
    if (name.empty())
        return makeError("a tensor without a name");
    if (!value.is_object() || value.size() != 3 || !value.contains("dtype") || !value.contains("shape") ||
        !value.contains("data_offsets"))
        return makeError(where + "is not described by exactly dtype, shape and data_offsets");
    Entry entry{name, torch::kFloat32, {}, 0, 0};
    const auto& dtype = value["dtype"];
    const DtypeName* known = nullptr;
    for (const DtypeName& d : kDtypes)
        if (dtype.is_string() && dtype.get_ref<const std::string&>() == d.name)
            known = &d;
    if (!known)
        return makeError(where + "has a dtype this program does not read (" + excerpt(dtype.dump(), 20) +
                         "; F64, F32, F16, BF16, I64, I32, I16, I8, U8 and BOOL are read)");
    entry.type = known->type;
    const auto& shape = value["shape"];
    if (!shape.is_array() || shape.size() > 16)
        return makeError(where + "has a shape that is not a list of at most 16 sizes");
    uint64_t elements = 1;
    for (const auto& size : shape) {
        int64_t n = 0;
        if (!readUnsigned(size, n) || n > (int64_t(1) << 40)) // strides of larger sizes overflow
            return makeError(where + "has a size that is not a whole number from 0 to 2^40");
        if (n != 0 && elements > std::numeric_limits<uint64_t>::max() / uint64_t(n))
            return makeError(where + "states more elements than any file holds");
        elements *= uint64_t(n);
        entry.shape.push_back(n);
    }
    const auto& offsets = value["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !readUnsigned(offsets[0], entry.begin) ||
        !readUnsigned(offsets[1], entry.end) || entry.begin > entry.end || entry.end > dataBytes)
        return makeError(where + "has data_offsets that are not a range inside the file's " +
                         std::to_string(dataBytes) + " bytes of tensors");
    const uint64_t itemBytes = uint64_t(c10::elementSize(entry.type));
    if (elements > std::numeric_limits<uint64_t>::max() / itemBytes || elements * itemBytes != entry.end - entry.begin)
        return makeError(where + "takes " + std::to_string(entry.end - entry.begin) + " bytes, where its shape and " +
                         "dtype need another number");
    return entry;
}

} // namespace

uint64_t safetensorsBytes(const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                          const std::map<std::string, std::string>& metadata)
{
    uint64_t dataBytes = 0;
    return 8 + headerFor(tensors, metadata, dataBytes).size() + dataBytes;
}

bool appendSafetensors(std::string& out, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata)
{
    try {
        uint64_t dataBytes = 0;
        const std::string header = headerFor(tensors, metadata, dataBytes);
        const uint64_t headerBytes = header.size();
        for (int i = 0; i < 8; ++i)
            out.push_back(char((headerBytes >> (8 * i)) & 0xff));
        out += header;
        for (const auto& [name, tensor] : tensors) {
            const torch::Tensor bytes = tensor.detach().to(torch::kCPU).contiguous();
            out.append(static_cast<const char*>(bytes.data_ptr()), size_t(bytes.numel()) * bytes.element_size());
        }
        return true;
    } catch (const std::bad_alloc&) {
        std::string().swap(out);
        return false;
    }
}

Result<SafetensorsContents> readSafetensors(std::string_view bytes)
{
    if (bytes.size() < 8)
        return makeError("not a safetensors file (shorter than its header's length)");
    uint64_t headerBytes = 0;
    for (int i = 7; i >= 0; --i)
        headerBytes = (headerBytes << 8) | static_cast<unsigned char>(bytes[size_t(i)]);
    if (headerBytes > kMaxSafetensorsHeaderBytes || headerBytes > bytes.size() - 8)
        return makeError("not a safetensors file (its header says it takes " + std::to_string(headerBytes) +
                         " bytes, more than the file or the 100 MiB limit)");
    const std::string header(bytes.substr(8, size_t(headerBytes)));
    if (header.empty() || header.front() != '{')
        return makeError("not a safetensors file (its header is not a JSON object)");
    if (Status s = checkJsonDepth(header, 3); !s)
        return makeError("its header is " + s.error());
    if (const std::string twice = firstDuplicateKey(header); !twice.empty())
        return makeError("its header names '" + excerpt(twice, 80) + "' twice");
    nlohmann::json parsed;
    try {
        parsed = nlohmann::json::parse(header);
    } catch (const nlohmann::json::exception& e) {
        return makeError(std::string("its header is not JSON: ") + e.what());
    }
    if (!parsed.is_object())
        return makeError("its header is not a JSON object");
    const uint64_t dataBytes = bytes.size() - 8 - headerBytes;
    SafetensorsContents out;
    std::vector<Entry> entries;
    for (const auto& [name, value] : parsed.items()) {
        if (name == "__metadata__") {
            if (!value.is_object())
                return makeError("its __metadata__ is not an object of strings");
            for (const auto& [key, text] : value.items()) {
                if (!text.is_string())
                    return makeError("its __metadata__ value '" + excerpt(key, 80) + "' is not a string");
                out.metadata[key] = text.get<std::string>();
            }
            continue;
        }
        auto entry = entryOf(name, value, dataBytes);
        if (!entry)
            return makeError(entry.error());
        entries.push_back(std::move(entry.value()));
    }
    // The tensors' bytes are laid end to end: every byte belongs to exactly one tensor.
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
    uint64_t next = 0;
    for (const Entry& entry : entries) {
        if (entry.begin != next)
            return makeError("its tensor '" + excerpt(entry.name, 80) + "' " +
                             (entry.begin < next ? "overlaps the bytes of another" : "leaves a gap before it"));
        next = entry.end;
    }
    if (next != dataBytes)
        return makeError("it holds " + std::to_string(dataBytes - next) + " bytes that belong to no tensor");
    const char* data = bytes.data() + 8 + headerBytes;
    try {
        for (const Entry& entry : entries) {
            torch::Tensor tensor = torch::empty(entry.shape, torch::dtype(entry.type));
            if (entry.end > entry.begin)
                std::memcpy(tensor.data_ptr(), data + entry.begin, size_t(entry.end - entry.begin));
            if (entry.type == torch::kBool) // a byte other than 0 or 1 is no bool LibTorch can hold
                tensor = tensor.view(torch::kUInt8).ne(0);
            out.tensors.emplace_back(entry.name, std::move(tensor));
        }
    } catch (const std::bad_alloc&) {
        return makeError("not enough memory for its tensors");
    }
    return out;
}

} // namespace d2dpo
