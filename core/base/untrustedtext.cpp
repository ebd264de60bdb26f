// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/untrustedtext.h"

#include <cctype>
#include <cerrno>
#include <regex>
#include <set>
#include <vector>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace d2dpo {

namespace {

bool isControl(char c)
{
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
}

} // namespace

std::string excerpt(std::string_view text, size_t limit)
{
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (out.size() >= limit)
            return out + "...";
        if (isControl(text[i])) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(text[i]));
            out += escaped;
        } else {
            out += text[i];
        }
    }
    return out;
}

bool hasControlCharacter(std::string_view text)
{
    for (char c : text)
        if (isControl(c))
            return true;
    return false;
}

Status checkJsonDepth(std::string_view text, int maxDepth)
{
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > maxDepth)
                return makeError("nested more than " + std::to_string(maxDepth) +
                                 " arrays or objects deep; not a file of this kind");
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return Ok{};
}

Result<std::string> readBoundedRegularFile(const std::string& path, uint64_t maxBytes)
{
    // O_NONBLOCK: opening a FIFO must not wait for a writer; the check below refuses it.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return makeError(errno == ENOENT ? std::string("cannot open the file (it does not exist)")
                                         : "cannot open the file (" + std::string(std::strerror(errno)) + ")");
    struct stat status { };
    std::string bytes;
    const auto fail = [&](const std::string& why) -> Result<std::string> {
        ::close(fd);
        return makeError(why);
    };
    if (::fstat(fd, &status) != 0)
        return fail("cannot read the file (" + std::string(std::strerror(errno)) + ")");
    if (!S_ISREG(status.st_mode))
        return fail("not a regular file (a device, a pipe or a folder): it is never read");
    if (uint64_t(status.st_size) > maxBytes)
        return fail("larger than " + std::to_string(maxBytes >> 10) + " KiB; not a file of this kind");
    bytes.resize(size_t(status.st_size));
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail("reading the file failed (" + std::string(std::strerror(errno)) + ")");
        if (n == 0)
            break; // it shrank meanwhile
        done += size_t(n);
    }
    bytes.resize(done);
    ::close(fd);
    return bytes;
}

std::string firstDuplicateKey(const std::string& text)
{
    std::vector<std::set<std::string>> objects;
    std::string duplicate;
    nlohmann::json::parser_callback_t watch = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (event == nlohmann::json::parse_event_t::object_start)
            objects.emplace_back();
        else if (event == nlohmann::json::parse_event_t::object_end && !objects.empty())
            objects.pop_back();
        else if (event == nlohmann::json::parse_event_t::key && !objects.empty() && duplicate.empty() &&
                 !objects.back().insert(parsed.get<std::string>()).second)
            duplicate = parsed.get<std::string>();
        return true;
    };
    const nlohmann::json parsed = nlohmann::json::parse(text, watch, /*allow_exceptions=*/false); // read for its keys alone
    return parsed.is_discarded() ? std::string() : duplicate;
}

bool isTimestamp(std::string_view text)
{
    static const std::regex form(R"(^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}(:?\d{2})?)?$)");
    std::match_results<std::string_view::const_iterator> m;
    if (text.size() > 40 || !std::regex_match(text.begin(), text.end(), m, form))
        return false;
    const auto field = [&m](int i) { return std::stoi(m[i].str()); };
    const int year = field(1), month = field(2), day = field(3);
    if (month < 1 || month > 12 || day < 1)
        return false;
    // The days of the month, February's by the Gregorian rule: February 30 is no time.
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const int days = kDays[month - 1] + (month == 2 && leap ? 1 : 0);
    return day <= days && field(4) <= 23 && field(5) <= 59 && field(6) <= 60; // 60: a leap second
}

bool isPlainId(std::string_view text)
{
    if (text.empty() || text.size() > 64)
        return false;
    for (const char c : text)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != ':' && c != '+')
            return false;
    return true;
}

} // namespace d2dpo
