// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/storename.h"

#include <regex>

namespace d2dpo {

namespace {

/// A URL without its password, in either of libpq's places for it.
std::string urlWithoutPassword(std::string url)
{
    const size_t scheme = url.find("://");
    const size_t at = url.find('@', scheme + 3);
    const size_t slash = url.find('/', scheme + 3);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
        const size_t colon = url.find(':', scheme + 3);
        if (colon != std::string::npos && colon < at)
            url.erase(colon, at - colon);
    }
    for (const char* key : {"?password=", "&password="}) {
        const size_t found = url.find(key);
        if (found != std::string::npos) {
            const size_t end = url.find('&', found + 1);
            url.erase(found + 1, (end == std::string::npos ? url.size() : end + 1) - found - 1);
            if (!url.empty() && (url.back() == '&' || url.back() == '?'))
                url.pop_back();
        }
    }
    return url;
}

} // namespace

std::string storeNameForMessages(const std::string& name)
{
    if (name.find("://") != std::string::npos)
        return urlWithoutPassword(name);
    if (!looksLikeConnectionString(name))
        return name;
    // libpq's value: 'quoted, with \' and \\ escapes' or a run of non-blanks.
    static const std::regex password(R"(\bpassword\s*=\s*('([^'\\]|\\.)*'?|\S*)\s*)", std::regex::icase);
    std::string shown = std::regex_replace(name, password, "");
    shown.erase(shown.find_last_not_of(" \t") + 1);
    return shown;
}

bool looksLikeConnectionString(const std::string& name)
{
    static const std::regex
        keyword(R"((^|\s)(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|connect_timeout)\s*=)",
                std::regex::icase);
    return name.find("://") == std::string::npos && std::regex_search(name, keyword);
}

} // namespace d2dpo
