// SPDX-License-Identifier: GPL-3.0-or-later
// Reading text input one line at a time with a bound on the line's length, so a file that is
// one endless line (a copy of /dev/zero, a binary file given by mistake) is refused at its line
// number instead of growing memory without end.
#pragma once

#include <cstddef>
#include <istream>
#include <string>

namespace d2dpo {

/// The longest input line any reader accepts.
inline constexpr size_t kMaxLineBytes = size_t(1) << 20;

enum class LineRead {
    Line,    ///< `line` holds the next line, without its '\n'
    End,     ///< no more input
    TooLong, ///< the line is longer than the bound; stop reading
};

/// Reads the next line into `line`.
inline LineRead readBoundedLine(std::istream& in, std::string& line, size_t maxBytes = kMaxLineBytes)
{
    line.clear();
    std::streambuf* buffer = in.rdbuf();
    bool any = false;
    for (;;) {
        const int c = buffer->sbumpc();
        if (c == std::char_traits<char>::eof())
            return any ? LineRead::Line : LineRead::End;
        any = true;
        if (c == '\n')
            return LineRead::Line;
        if (line.size() >= maxBytes)
            return LineRead::TooLong;
        line.push_back(char(c));
    }
}

} // namespace d2dpo
