// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/sql/placeholders.h"

#include <cctype>

namespace d2dpo::sql {

std::string numberedPlaceholders(const std::string& sql, int* count)
{
    std::string out;
    out.reserve(sql.size() + 16);
    int largest = 0;
    for (size_t i = 0; i < sql.size(); ++i) {
        const char c = sql[i];
        if (c == '\'' || c == '"') { // a quoted string or name, doubled quotes included
            const size_t end = sql.find(c, i + 1);
            const size_t stop = end == std::string::npos ? sql.size() : end + 1;
            out.append(sql, i, stop - i);
            i = stop - 1;
        } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') { // a comment, to the line's end
            const size_t end = sql.find('\n', i);
            const size_t stop = end == std::string::npos ? sql.size() : end;
            out.append(sql, i, stop - i);
            i = stop - 1;
        } else if (c == '?') {
            size_t j = i + 1;
            while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j])))
                ++j;
            const int index = j > i + 1 ? std::stoi(sql.substr(i + 1, j - i - 1)) : largest + 1;
            if (index > largest)
                largest = index;
            out += '$' + std::to_string(index);
            i = j - 1;
        } else {
            out += c;
        }
    }
    if (count)
        *count = largest;
    return out;
}

} // namespace d2dpo::sql
