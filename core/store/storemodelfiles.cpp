// SPDX-License-Identifier: GPL-3.0-or-later
// A team's checkpoints: a model's path names a file on the machine that made it, so a team store
// keeps the file itself (model_files) and every other machine reads it from there, through a
// local cache, the first time it needs it. An SQLite store keeps its files where they are.
#include "store/storemodelfiles.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "base/timeutil.h"

namespace d2dpo {

namespace fs = std::filesystem;

namespace {

/// $XDG_CACHE_HOME/d2dpo-studio/team-models, else ~/.cache/...; empty without a home.
fs::path cacheFolder()
{
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return fs::path(xdg) / "d2dpo-studio" / "team-models";
    if (const char* home = std::getenv("HOME"); home && *home)
        return fs::path(home) / ".cache" / "d2dpo-studio" / "team-models";
    return {};
}

/// A model id as a file name: its own characters when they are plain, else refused (empty).
std::string fileNameOf(const std::string& id)
{
    if (id.empty() || id.size() > 128)
        return {};
    for (unsigned char c : id)
        if (!(std::isalnum(c) || c == '-' || c == '_'))
            return {};
    return id + ".d2dpo";
}

} // namespace

void storeModelFile(sql::Database& db, const std::string& modelId, const std::string& path)
{
    std::error_code ec;
    if (path.empty() || !fs::is_regular_file(path, ec))
        return; // nothing here to share (a file on a shared folder, or a record without its file)
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof())
        throw sql::Error(sql::ErrorKind::Other, "cannot read the checkpoint '" + path + "' to share it");
    sql::Statement q(db, "INSERT INTO model_files (model_id, bytes, size, created_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT (model_id) DO UPDATE SET bytes = excluded.bytes, size = excluded.size, "
                         "created_at = excluded.created_at");
    q.bind(1, modelId);
    q.bindBlob(2, bytes);
    q.bind(3, int64_t(bytes.size()));
    q.bind(4, utcNow());
    q.exec();
}

std::string localModelPath(sql::Database& db, const std::string& modelId, const std::string& path)
{
    std::error_code ec;
    if (fs::is_regular_file(path, ec))
        return path; // the machine that made it, or a folder every client reads
    const fs::path folder = cacheFolder();
    const std::string name = fileNameOf(modelId);
    if (folder.empty() || name.empty())
        return path;
    sql::Statement size(db, "SELECT size FROM model_files WHERE model_id = ?");
    size.bind(1, modelId);
    if (!size.executeStep())
        return path; // not shared: the views say the file is missing
    const auto expected = uintmax_t(size.getColumn(0).getInt64());
    const fs::path cached = folder / name;
    if (fs::is_regular_file(cached, ec) && fs::file_size(cached, ec) == expected)
        return cached.string();
    sql::Statement q(db, "SELECT bytes FROM model_files WHERE model_id = ?");
    q.bind(1, modelId);
    if (!q.executeStep())
        return path;
    const std::string bytes = q.getBlob(0);
    fs::create_directories(folder, ec);
    // Written aside and renamed: a reader never finds half a checkpoint.
    const fs::path partial = folder / (name + ".part" + std::to_string(::getpid()));
    {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), std::streamsize(bytes.size()));
        if (!out.good()) {
            fs::remove(partial, ec);
            return path;
        }
    }
    fs::rename(partial, cached, ec);
    return ec ? path : cached.string();
}

} // namespace d2dpo
