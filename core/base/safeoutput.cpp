// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/safeoutput.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace d2dpo {

namespace fs = std::filesystem;

namespace {

const char* describeFileType(fs::file_type type)
{
    switch (type) {
    case fs::file_type::directory: return "a folder";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
    }
}

/// The file a write to `path` would replace: the path itself, or what its chain of links names.
fs::path resolvedTarget(const fs::path& path)
{
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(path, ec)))
        return path;
    const fs::path canonical = fs::weakly_canonical(path, ec);
    return ec ? path : canonical;
}

/// Whether `a` and `b` are the same existing file.
bool sameFile(const fs::path& a, const fs::path& b)
{
    std::error_code ec;
    const bool same = fs::equivalent(a, b, ec);
    return !ec && same;
}

/// Creates and removes an empty file in `folder`: whether a file can be written there, known
/// before any work is done (a permission check proves nothing for root, a read-only mount or
/// a full inode table says no only to a real write).
Status probeWrite(const fs::path& folder, const std::string& where)
{
    std::string name = (folder / ".d2dpo-write-check-XXXXXX").string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0)
        return makeError(where + "the folder '" + folder.string() + "' cannot be written (" + std::strerror(errno) +
                         "); nothing was done");
    ::close(fd);
    ::unlink(name.c_str());
    return Ok{};
}

} // namespace

std::vector<std::string> storeFiles(const std::string& path)
{
    if (path.empty())
        return {};
    return {path, path + "-wal", path + "-shm", path + "-journal"};
}

/// What an existing file is, by its first bytes: "a preference store (an SQLite database)", "a
/// d2dpo checkpoint" (io/checkpoint.h's magic) or "" for anything else.
std::string valuableKind(const fs::path& file)
{
    char head[16] = {};
    std::ifstream in(file, std::ios::binary);
    if (!in.read(head, sizeof head))
        return {};
    if (std::memcmp(head, "SQLite format 3", 16) == 0)
        return "a preference store (an SQLite database)";
    if (std::memcmp(head, "D2DPOCKP", 8) == 0)
        return "a d2dpo checkpoint";
    return {};
}

Status checkOutputFile(const std::string& path, const std::vector<std::string>& inputs, bool writesCheckpoint)
{
    if (path.empty())
        return makeError("no output file was given");
    const std::string where = "'" + path + "': ";
    const fs::path target = resolvedTarget(path);
    std::error_code ec;
    const fs::file_status status = fs::status(target, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) // too long, a loop of links, no permission...
        return makeError(where + ec.message() + "; nothing was written");
    if (fs::exists(status) && !fs::is_regular_file(status))
        return makeError(where + describeFileType(status.type()) + ", not a file this command may replace; nothing "
                                 "was written");
    for (const std::string& input : inputs)
        if (!input.empty() && sameFile(target, input))
            return makeError(where + "this command reads that file ('" + input +
                             "'); writing over it would destroy it. Choose another output; nothing was written");
    if (fs::is_regular_file(status))
        if (const std::string kind = valuableKind(target);
            !kind.empty() && !(writesCheckpoint && kind == "a d2dpo checkpoint"))
            return makeError(where + "it is " + kind + ", which this command does not write; replacing it would "
                                     "lose it. Choose another output; nothing was written");
    const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    const bool folder = fs::is_directory(parent, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
        return makeError(where + "the folder '" + parent.string() + "': " + ec.message());
    if (!folder)
        return makeError(where + "the folder '" + parent.string() + "' does not exist");
    return probeWrite(parent, where);
}

Status checkOutputFolder(const std::string& path, const std::vector<std::string>& inputs, const std::string& what)
{
    if (path.empty())
        return makeError("no folder was given for " + what);
    const std::string where = what + " '" + path + "': ";
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status))
        return Ok{};
    if (!fs::is_directory(status))
        return makeError(where + describeFileType(status.type()) + ", not a folder; nothing was written");
    fs::directory_iterator entries(path, ec);
    if (ec)
        return makeError(where + "cannot be read: " + ec.message());
    if (entries != fs::directory_iterator()) {
        std::string example = entries->path().filename().string();
        for (const std::string& input : inputs)
            if (!input.empty() && fs::exists(input, ec)) {
                const fs::path parent = fs::weakly_canonical(fs::path(input), ec).parent_path();
                if (!ec && sameFile(parent, path))
                    return makeError(where + "holds '" + input + "', which this command reads; choose a new folder");
            }
        return makeError(where + "is not empty (it holds '" + example +
                         "', perhaps an earlier run's); choose a new folder so nothing is written over");
    }
    return Ok{};
}

Result<AtomicFile> AtomicFile::open(const std::string& path, const std::vector<std::string>& inputs,
                                    bool writesCheckpoint)
{
    if (Status s = checkOutputFile(path, inputs, writesCheckpoint); !s)
        return makeError(s.error());
    AtomicFile file;
    file.m_shownPath = path;
    file.m_target = resolvedTarget(path).string();
    // mkstemp: a fresh name no other file (or planted link) can have, created with O_EXCL.
    std::string pattern = file.m_target + ".tmp-XXXXXX";
    const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd < 0)
        return makeError("cannot write '" + path + "': " + std::strerror(errno) + "; nothing was written");
    // mkstemp makes the file 0600; give it the mode a normal new file gets (0666 less the umask),
    // or the replaced file's mode.
    struct stat existing {};
    mode_t mode = 0;
    if (::stat(file.m_target.c_str(), &existing) == 0) {
        mode = existing.st_mode & 07777;
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    ::fchmod(fd, mode);
    file.m_fd = fd;
    file.m_temporary = pattern;
    return file;
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : m_fd(other.m_fd)
    , m_target(std::move(other.m_target))
    , m_shownPath(std::move(other.m_shownPath))
    , m_temporary(std::move(other.m_temporary))
    , m_buffer(std::move(other.m_buffer))
    , m_error(std::move(other.m_error))
{
    other.m_fd = -1;
}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept
{
    if (this != &other) {
        discard();
        m_fd = other.m_fd;
        m_target = std::move(other.m_target);
        m_shownPath = std::move(other.m_shownPath);
        m_temporary = std::move(other.m_temporary);
        m_buffer = std::move(other.m_buffer);
        m_error = std::move(other.m_error);
        other.m_fd = -1;
    }
    return *this;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard()
{
    if (m_fd < 0)
        return;
    ::close(m_fd);
    ::unlink(m_temporary.c_str());
    m_fd = -1;
}

void AtomicFile::append(std::string_view bytes)
{
    m_buffer.append(bytes);
    if (m_buffer.size() >= (1u << 20))
        flushBuffer();
}

void AtomicFile::flushBuffer()
{
    size_t done = 0;
    while (m_error.empty() && done < m_buffer.size()) {
        const ssize_t n = ::write(m_fd, m_buffer.data() + done, m_buffer.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            m_error = std::strerror(errno);
        else
            done += size_t(n);
    }
    m_buffer.clear();
}

Status AtomicFile::commit()
{
    if (m_fd < 0)
        return makeError("'" + m_shownPath + "' was already written or abandoned");
    flushBuffer();
    if (m_error.empty() && ::fsync(m_fd) != 0)
        m_error = std::strerror(errno);
    if (m_error.empty() && ::rename(m_temporary.c_str(), m_target.c_str()) != 0)
        m_error = std::strerror(errno);
    if (!m_error.empty()) {
        const std::string error = m_error;
        discard();
        return makeError("cannot write '" + m_shownPath + "': " + error + "; it was left as it was");
    }
    ::close(m_fd);
    m_fd = -1;
    // Sync the folder too, so the rename itself survives a power loss.
    const std::string folder = fs::path(m_target).parent_path().empty() ? "." : fs::path(m_target).parent_path().string();
    if (const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
    return Ok{};
}

Status AtomicFile::write(const std::string& path, std::string_view bytes, const std::vector<std::string>& inputs)
{
    auto file = open(path, inputs);
    if (!file)
        return makeError(file.error());
    file->append(bytes);
    return file->commit();
}

} // namespace d2dpo
