// SPDX-License-Identifier: GPL-3.0-or-later
#include "assays/csvrecords.h"

namespace d2dpo {

Result<std::vector<CsvRecord>> splitCsvRecords(std::string_view text, char delimiter)
{
    std::vector<CsvRecord> out;
    CsvRecord current;
    current.line = 1;
    std::string field;
    bool quoted = false, fieldStarted = false;
    int64_t line = 1;
    int64_t quoteOpenedOn = 0;
    const auto endRecord = [&] {
        current.fields.push_back(std::move(field));
        field.clear();
        const bool blank = current.fields.size() == 1 && current.fields[0].empty();
        if (!blank)
            out.push_back(std::move(current));
        current = CsvRecord{};
        fieldStarted = false;
    };
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                // A line break inside quotes is part of the field, but still a line of the file.
                if (c == '\n')
                    ++line;
                field += c;
            }
            continue;
        }
        if (c == '"' && !fieldStarted) {
            quoted = fieldStarted = true;
            quoteOpenedOn = line;
        } else if (c == delimiter) {
            current.fields.push_back(std::move(field));
            field.clear();
            fieldStarted = false;
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')
                ++i;
            endRecord();
            current.line = ++line;
        } else {
            field += c;
            fieldStarted = true;
        }
    }
    if (quoted)
        return makeError("line " + std::to_string(quoteOpenedOn) + ": a quoted field is never closed");
    if (!field.empty() || fieldStarted || !current.fields.empty())
        endRecord();
    return out;
}

char csvDelimiterOf(std::string_view headerLine)
{
    return headerLine.find('\t') != std::string_view::npos ? '\t' : ',';
}

} // namespace d2dpo
