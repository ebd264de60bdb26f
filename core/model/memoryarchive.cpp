// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/memoryarchive.h"

#include <algorithm>
#include <cstring>

#include <caffe2/serialize/read_adapter_interface.h>

namespace d2dpo {

namespace {

class MemoryArchiveReader final : public caffe2::serialize::ReadAdapterInterface {
public:
    explicit MemoryArchiveReader(std::string_view bytes) : m_bytes(bytes) {}
    size_t size() const override { return m_bytes.size(); }
    size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override
    {
        if (pos >= m_bytes.size())
            return 0;
        const size_t count = std::min<size_t>(n, m_bytes.size() - size_t(pos));
        std::memcpy(buf, m_bytes.data() + pos, count);
        return count;
    }

private:
    std::string_view m_bytes;
};

} // namespace

std::shared_ptr<caffe2::serialize::ReadAdapterInterface> memoryArchiveReader(std::string_view bytes)
{
    return std::make_shared<MemoryArchiveReader>(bytes);
}

std::function<size_t(const void*, size_t)> appendingArchiveWriter(std::string& out, bool& failed)
{
    failed = false;
    return [&out, &failed](const void* data, size_t size) noexcept {
        if (failed)
            return size;
        try {
            out.append(static_cast<const char*>(data), size);
        } catch (...) { // std::bad_alloc or std::length_error
            failed = true;
            std::string().swap(out); // its memory back now
        }
        return size;
    };
}

} // namespace d2dpo
