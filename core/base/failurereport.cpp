// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/failurereport.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/timeutil.h"

namespace d2dpo {

namespace fs = std::filesystem;

std::string failureLogPath()
{
    fs::path base;
    if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state)
        base = state;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = fs::path(home) / ".local" / "state";
    else
        base = fs::temp_directory_path();
    return (base / "d2dpo-studio" / "errors.log").string();
}

std::string userMessage(const std::string& what)
{
    // LibTorch's errors end with "Exception raised from ... (most recent call first):" and one
    // "frame #N:" line per frame; some put the trace right after the first line.
    size_t cut = what.find("Exception raised from");
    for (const char* marker : {"\nframe #", "(most recent call first)"})
        cut = std::min(cut, what.find(marker));
    std::string message = what.substr(0, cut);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
        message.pop_back();
    if (message.empty())
        message = "an internal error";
    if (message.size() > 300)
        message = message.substr(0, 297) + "...";
    if (cut == std::string::npos)
        return message;
    const std::string log = failureLogPath();
    std::error_code ec;
    fs::create_directories(fs::path(log).parent_path(), ec);
    std::ofstream out(log, std::ios::app);
    out << "---- " << utcNow() << "\n" << what << "\n";
    out.flush();
    return out ? message + " (details in " + log + ")" : message;
}

} // namespace d2dpo
