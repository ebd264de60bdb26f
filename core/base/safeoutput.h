// SPDX-License-Identifier: GPL-3.0-or-later
// The one way every command and the desktop application write an output file or folder, so that
// no output can destroy something it must not touch:
//   - a file is written to a new temporary file beside its target and renamed into place only
//     when everything was written and synced; a failed write (a full disk) leaves the target as
//     it was;
//   - the target must be absent or a regular file (a symbolic link is followed: the file it
//     names is replaced, the link stays); a device, FIFO, socket or folder is refused, as is any
//     input of the same command (the store, a checkpoint being read, the data file);
//   - an output folder must be new or empty, so a run never writes over an earlier run's files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace d2dpo {

/// The files of the SQLite store at `path` (the database and its WAL and shared-memory files):
/// the inputs no output may be written over.
std::vector<std::string> storeFiles(const std::string& path);

/// Ok when `path` may be written as a file; names what it is otherwise. `inputs` are the files
/// the command reads (missing ones are ignored). A preference store (an SQLite database) is never
/// replaced, and a d2dpo checkpoint only by a command that writes checkpoints: a mistyped output
/// (or a link to one of them) cannot turn the store or a model into text.
Status checkOutputFile(const std::string& path, const std::vector<std::string>& inputs,
                       bool writesCheckpoint = false);

/// Ok when `path` may be used as a new output folder: absent, or an empty folder, and not one
/// that holds any of `inputs`. `what` names the folder in messages ("the checkpoint folder").
Status checkOutputFolder(const std::string& path, const std::vector<std::string>& inputs, const std::string& what);

/// A file written all or nothing. Usage: open(), append() any number of times, commit(). Until
/// commit() succeeds the target is untouched; destroying an uncommitted file removes the
/// temporary file.
class AtomicFile {
public:
    /// Checks the target (checkOutputFile) and creates the temporary file beside it.
    static Result<AtomicFile> open(const std::string& path, const std::vector<std::string>& inputs = {},
                                   bool writesCheckpoint = false);

    AtomicFile(AtomicFile&& other) noexcept;
    AtomicFile& operator=(AtomicFile&& other) noexcept;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    /// Buffers `bytes`; a write error is remembered and reported by commit().
    void append(std::string_view bytes);
    /// Writes what is buffered, syncs it to the disk and renames it onto the target.
    Status commit();

    /// Writes `bytes` to `path` in one go: open, append, commit.
    static Status write(const std::string& path, std::string_view bytes, const std::vector<std::string>& inputs = {});

private:
    AtomicFile() = default;
    void flushBuffer();
    void discard();

    int m_fd = -1;
    std::string m_target;    ///< the file to replace (a link's target when the path was a link)
    std::string m_shownPath; ///< the path as the user gave it, for messages
    std::string m_temporary;
    std::string m_buffer;
    std::string m_error;
};

} // namespace d2dpo
