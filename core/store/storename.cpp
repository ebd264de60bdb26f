// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/storename.h"

#include <cctype>
#include <cstdio>
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

std::string percentDecoded(const std::string& text)
{
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
            out += char(std::stoi(text.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

} // namespace

std::string storePassword(const std::string& url)
{
    const size_t scheme = url.find("://");
    if (scheme == std::string::npos)
        return {};
    const size_t at = url.find('@', scheme + 3);
    const size_t slash = url.find('/', scheme + 3);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
        const size_t colon = url.find(':', scheme + 3);
        if (colon != std::string::npos && colon < at)
            return percentDecoded(url.substr(colon + 1, at - colon - 1));
    }
    for (const char* key : {"?password=", "&password="}) {
        const size_t found = url.find(key);
        if (found != std::string::npos) {
            const size_t start = found + std::string(key).size();
            const size_t end = url.find('&', start);
            return percentDecoded(url.substr(start, end == std::string::npos ? std::string::npos : end - start));
        }
    }
    return {};
}

std::string storeUrlWithPassword(const std::string& url, const std::string& password)
{
    if (password.empty())
        return url;
    std::string encoded;
    for (unsigned char c : password) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            encoded += char(c);
        } else {
            char escape[4];
            std::snprintf(escape, sizeof escape, "%%%02X", c);
            encoded += escape;
        }
    }
    return url + (url.find('?') == std::string::npos ? "?" : "&") + "password=" + encoded;
}

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
