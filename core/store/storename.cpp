// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/storename.h"

#include <cctype>
#include <cstdio>
#include <regex>
#include <vector>

namespace d2dpo {

namespace {

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


/// A connection parameter that holds a secret: the server's password or the SSL key's.
bool isSecretKey(std::string decodedKey)
{
    // libpq's keys are lower case, and it refuses others with a message that may repeat the URL:
    // a "Password" is stripped too.
    for (char& c : decodedKey)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return decodedKey == "password" || decodedKey == "sslpassword";
}

/// A URL cut as libpq cuts it (conninfo_uri_parse): "scheme://", then the user part up to the
/// first '@' met before any '/' (its password after its first ':'), then the rest up to '?', then
/// the parameters, split at '&', each "key=value" with both percent-decoded.
struct UrlParts {
    std::string scheme;   ///< through "://"
    std::string user;     ///< "" or "name" (without ":password" and '@')
    bool hasUser = false; ///< an '@' was there
    std::string userPassword;
    bool hasUserPassword = false;
    std::string rest;     ///< host, port and database, up to '?'
    std::vector<std::string> parameters; ///< as written
};

UrlParts cutUrl(const std::string& url)
{
    UrlParts parts;
    const size_t scheme = url.find("://");
    const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
    parts.scheme = url.substr(0, start);
    size_t p = start;
    while (p < url.size() && url[p] != '@' && url[p] != '/')
        ++p;
    size_t hostStart = start;
    if (p < url.size() && url[p] == '@') {
        parts.hasUser = true;
        const std::string userInfo = url.substr(start, p - start);
        const size_t colon = userInfo.find(':');
        parts.user = userInfo.substr(0, colon);
        if (colon != std::string::npos) {
            parts.hasUserPassword = true;
            parts.userPassword = userInfo.substr(colon + 1);
        }
        hostStart = p + 1;
    }
    const size_t question = url.find('?', hostStart);
    parts.rest = url.substr(hostStart, question == std::string::npos ? std::string::npos : question - hostStart);
    if (question != std::string::npos) {
        const std::string query = url.substr(question + 1);
        size_t from = 0;
        while (from <= query.size()) {
            const size_t amp = query.find('&', from);
            const std::string parameter = query.substr(from, amp == std::string::npos ? std::string::npos : amp - from);
            if (!parameter.empty())
                parts.parameters.push_back(parameter);
            if (amp == std::string::npos)
                break;
            from = amp + 1;
        }
    }
    return parts;
}

std::string keyOf(const std::string& parameter)
{
    return percentDecoded(parameter.substr(0, parameter.find('=')));
}

/// A URL without a secret anywhere libpq would read one: the user part's password, and every
/// password or sslpassword parameter however its key is spelled (libpq decodes keys, and the
/// last of a repeated key wins, so no one of them may stay).
std::string urlWithoutPassword(const std::string& url)
{
    const UrlParts parts = cutUrl(url);
    std::string shown = parts.scheme;
    std::string rest = parts.rest;
    // A password with an '@' left unencoded ("ana:p@ss@host") ends libpq's user part early; the
    // name shown drops everything up to the last '@' before the path; a user part that reads as
    // parameters ("host?password=p@ss") leaves nothing of the URL shown.
    if (const size_t at = rest.substr(0, rest.find('/')).rfind('@'); parts.hasUser && at != std::string::npos)
        rest.erase(0, at + 1);
    if (parts.hasUser && parts.user.find_first_of("?&=") != std::string::npos)
        return parts.scheme + "(a URL whose '@' stands among its parameters: not shown)";
    if (parts.hasUser)
        shown += parts.user + "@";
    shown += rest;
    std::string query;
    for (const std::string& parameter : parts.parameters)
        if (!isSecretKey(keyOf(parameter)))
            query += (query.empty() ? "" : "&") + parameter;
    if (!query.empty())
        shown += "?" + query;
    return shown;
}

} // namespace

namespace {

/// The last `key` parameter of a URL, percent-decoded (libpq reads them in order); "" when none.
std::string lastParameter(const UrlParts& parts, const std::string& key, std::string value)
{
    for (const std::string& parameter : parts.parameters)
        if (keyOf(parameter) == key)
            value = percentDecoded(parameter.find('=') == std::string::npos ? std::string()
                                                                             : parameter.substr(parameter.find('=') + 1));
    return value;
}

std::string encoded(const std::string& text)
{
    std::string out;
    for (unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += char(c);
        } else {
            char escape[4];
            std::snprintf(escape, sizeof escape, "%%%02X", c);
            out += escape;
        }
    }
    return out;
}

std::string withParameter(const std::string& url, const std::string& key, const std::string& value)
{
    if (value.empty())
        return url;
    return url + (url.find('?') == std::string::npos ? "?" : "&") + key + "=" + encoded(value);
}

} // namespace

std::string storePassword(const std::string& url)
{
    if (url.find("://") == std::string::npos)
        return {};
    // As libpq: the parameters are read after the user part, and the last "password" wins.
    const UrlParts parts = cutUrl(url);
    return lastParameter(parts, "password", parts.hasUserPassword ? percentDecoded(parts.userPassword) : "");
}

std::string storeSslPassword(const std::string& url)
{
    if (url.find("://") == std::string::npos)
        return {};
    return lastParameter(cutUrl(url), "sslpassword", "");
}

std::string storeUrlWithSslPassword(const std::string& url, const std::string& sslPassword)
{
    return withParameter(url, "sslpassword", sslPassword);
}

std::string storeUrlWithPassword(const std::string& url, const std::string& password)
{
    return withParameter(url, "password", password);
}

std::string storeNameForMessages(const std::string& name)
{
    if (name.find("://") != std::string::npos)
        return urlWithoutPassword(name);
    if (!looksLikeConnectionString(name))
        return name;
    // libpq's value: 'quoted, with \' and \\ escapes' or a run of non-blanks.
    // Each match leaves the blank before it, so that the next secret's own blank is still there.
    static const std::regex password(R"((^|\s)(ssl)?password\s*=\s*('([^'\\]|\\.)*'?|\S*))", std::regex::icase);
    static const std::regex blanks(R"(\s+)");
    std::string shown = std::regex_replace(std::regex_replace(name, password, "$1"), blanks, " ");
    shown.erase(0, shown.find_first_not_of(' ') == std::string::npos ? shown.size() : shown.find_first_not_of(' '));
    shown.erase(shown.find_last_not_of(' ') + 1);
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
