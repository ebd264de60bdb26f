// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/runfolder.h"

#include <ctime>
#include <filesystem>

namespace d2dpo {

std::string newRunFolder(const std::string& storePath, const std::string& referenceModelId)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path store = fs::absolute(storePath, ec);
    if (ec)
        store = storePath;
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    const fs::path base = store.parent_path() / "runs" / (std::string(stamp) + "-" + referenceModelId);
    // Two runs started within the same second get their own folders too.
    fs::path folder = base;
    for (int n = 2; fs::exists(folder, ec); ++n)
        folder = base.string() + "-" + std::to_string(n);
    return folder.string();
}

} // namespace d2dpo
