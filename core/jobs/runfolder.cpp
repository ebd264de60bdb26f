// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/runfolder.h"

#include <ctime>
#include <filesystem>

#include "store/preferencestore.h"

namespace d2dpo {

bool isTeamStoreUrl(const std::string& storePath)
{
    return storePath.rfind("postgresql://", 0) == 0 || storePath.rfind("postgres://", 0) == 0;
}

std::string storeFolder(const std::string& storePath)
{
    namespace fs = std::filesystem;
    if (isTeamStoreUrl(storePath)) {
        const std::string local = PreferenceStore::defaultPath();
        return local.empty() ? fs::temp_directory_path().string() : (fs::path(local).parent_path() / "team").string();
    }
    std::error_code ec;
    fs::path store = fs::absolute(storePath, ec);
    if (ec)
        store = storePath;
    return store.parent_path().string();
}

std::string newRunFolder(const std::string& storePath, const std::string& referenceModelId)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    const fs::path base = fs::path(storeFolder(storePath)) / "runs" / (std::string(stamp) + "-" + referenceModelId);
    // Two runs started within the same second get their own folders too.
    fs::path folder = base;
    for (int n = 2; fs::exists(folder, ec); ++n)
        folder = base.string() + "-" + std::to_string(n);
    return folder.string();
}

std::string runLockPath(const std::string& outputFolder)
{
    std::error_code ec;
    return (std::filesystem::absolute(outputFolder, ec).lexically_normal() / "run.lock").string();
}

std::error_code makeRunFolder(const std::string& folder, bool& made)
{
    std::error_code ec;
    made = !std::filesystem::exists(folder, ec);
    std::filesystem::create_directories(folder, ec);
    return ec;
}

void removeIfEmpty(const std::string& folder)
{
    std::error_code ec;
    if (std::filesystem::is_directory(folder, ec) && std::filesystem::is_empty(folder, ec))
        std::filesystem::remove(folder, ec);
}

} // namespace d2dpo
