// SPDX-License-Identifier: GPL-3.0-or-later
#include "assays/assayfile.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <map>

#include "base/untrustedtext.h"

namespace d2dpo {

namespace {

/// Bad lines named in one message: the first ones, then how many more.
constexpr size_t kLinesNamed = 10;

struct Record {
    int64_t line = 0;
    std::vector<std::string> fields;
};

/// RFC 4180 records: quoted fields may hold the delimiter, doubled quotes and line breaks; CRLF
/// and LF both end a record; blank lines are skipped.
Result<std::vector<Record>> splitRecords(std::string_view text, char delimiter)
{
    std::vector<Record> out;
    Record current;
    std::string field;
    bool quoted = false, fieldStarted = false;
    int64_t line = 1;
    current.line = 1;
    const auto endRecord = [&] {
        current.fields.push_back(std::move(field));
        field.clear();
        const bool blank = current.fields.size() == 1 && current.fields[0].empty();
        if (!blank)
            out.push_back(std::move(current));
        current = Record{};
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
                if (c == '\n')
                    ++line;
                field += c;
            }
            continue;
        }
        if (c == '"' && !fieldStarted && field.empty()) {
            quoted = fieldStarted = true;
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
        return makeError("line " + std::to_string(current.line) + ": a quoted field is never closed");
    if (!field.empty() || !current.fields.empty())
        endRecord();
    return out;
}

std::string trimmed(const std::string& text)
{
    const size_t begin = text.find_first_not_of(" \t");
    if (begin == std::string::npos)
        return {};
    return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

/// A finite number in the C locale's notation, or why not.
Result<double> numberIn(const std::string& raw, const char* what)
{
    const std::string text = trimmed(raw);
    double value = 0;
    const char* begin = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return makeError(std::string("the ") + what + " '" + excerpt(text, 40) + "' is not a number");
    if (!std::isfinite(value))
        return makeError(std::string("the ") + what + " is " + excerpt(text, 40) + ", not a finite number");
    return value;
}

class Reader {
public:
    explicit Reader(const AssayFileOptions& options) : m_options(options) {}

    /// A bad line, kept for the message.
    void bad(int64_t line, const std::string& why)
    {
        if (++m_badCount <= kLinesNamed)
            m_bad.push_back("line " + std::to_string(line) + ": " + why);
    }

    /// Checks the sequence's symbols and length, then keeps the measurement.
    void keep(Measurement m)
    {
        if (m.sequence.empty())
            return bad(m.line, "the sequence is empty");
        for (size_t i = 0; i < m.sequence.size(); ++i) {
            const auto u = static_cast<unsigned char>(m.sequence[i]);
            const bool allowed = m_options.symbols.empty() ? (u > 0x20 && u < 0x7f)
                                                           : m_options.symbols.find(char(u)) != std::string::npos;
            if (!allowed)
                return bad(m.line, "the symbol " + quotedSymbol(m.sequence[i]) + " at position " + std::to_string(i + 1) +
                                       " is not one of the model's (" + excerpt(m_options.symbols, 60) + ")");
        }
        if (m.sequence.size() < m_options.minLength || m.sequence.size() > m_options.maxLength)
            return bad(m.line, "the sequence is " + std::to_string(m.sequence.size()) + " long; the model takes " +
                                   std::to_string(m_options.minLength) + " to " + std::to_string(m_options.maxLength));
        m.assay = m_options.assay;
        m_kept.push_back(std::move(m));
    }

    Result<std::vector<Measurement>> finish()
    {
        if (m_badCount > 0) {
            std::string message = std::to_string(m_badCount) + " bad line" + (m_badCount > 1 ? "s" : "") + ": ";
            for (size_t i = 0; i < m_bad.size(); ++i)
                message += (i ? "; " : "") + m_bad[i];
            if (m_badCount > m_bad.size())
                message += "; and " + std::to_string(m_badCount - m_bad.size()) + " more";
            return makeError(message);
        }
        if (m_kept.empty())
            return makeError("it holds no measurement, only a header");
        return std::move(m_kept);
    }

    const AssayFileOptions& options() const { return m_options; }

private:
    static std::string quotedSymbol(char c)
    {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x21 && u < 0x7f)
            return std::string("'") + c + "'";
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", u);
        return hex;
    }

    const AssayFileOptions& m_options;
    std::vector<Measurement> m_kept;
    std::vector<std::string> m_bad;
    size_t m_badCount = 0;
};

/// Column positions by name, or an error naming the columns there are.
Result<std::map<std::string, size_t>> columnsOf(const Record& header)
{
    std::map<std::string, size_t> out;
    for (size_t i = 0; i < header.fields.size(); ++i) {
        const std::string name = trimmed(header.fields[i]);
        if (!out.emplace(name, i).second)
            return makeError("the header names the column '" + excerpt(name, 40) + "' twice");
    }
    return out;
}

std::string columnList(const std::map<std::string, size_t>& columns)
{
    std::string out;
    for (const auto& [name, at] : columns)
        out += (out.empty() ? "" : ", ") + excerpt(name, 40);
    return out;
}

Result<size_t> column(const std::map<std::string, size_t>& columns, const std::string& name)
{
    const auto found = columns.find(name);
    if (found == columns.end())
        return makeError("it has no column '" + excerpt(name, 40) + "' (its columns: " + columnList(columns) + ")");
    return found->second;
}

Result<std::vector<Measurement>> readTable(const std::vector<Record>& records, Reader& reader)
{
    const AssayFileOptions& o = reader.options();
    auto columns = columnsOf(records.front());
    if (!columns)
        return makeError(columns.error());
    auto sequence = column(columns.value(), o.sequenceColumn);
    auto value = column(columns.value(), o.valueColumn);
    if (!sequence || !value)
        return makeError(sequence ? value.error() : sequence.error());
    std::optional<size_t> sd, replicates;
    if (!o.sdColumn.empty()) {
        auto at = column(columns.value(), o.sdColumn);
        if (!at)
            return makeError(at.error());
        sd = at.value();
    }
    if (!o.replicatesColumn.empty()) {
        auto at = column(columns.value(), o.replicatesColumn);
        if (!at)
            return makeError(at.error());
        replicates = at.value();
    }
    const size_t width = records.front().fields.size();
    for (size_t r = 1; r < records.size(); ++r) {
        const Record& record = records[r];
        if (record.fields.size() != width) {
            reader.bad(record.line, std::to_string(record.fields.size()) + " fields where the header has " +
                                        std::to_string(width));
            continue;
        }
        Measurement m;
        m.line = record.line;
        m.sequence = trimmed(record.fields[sequence.value()]);
        auto v = numberIn(record.fields[value.value()], "value");
        if (!v) {
            reader.bad(record.line, v.error());
            continue;
        }
        m.value = v.value();
        if (sd && !trimmed(record.fields[*sd]).empty()) {
            auto s = numberIn(record.fields[*sd], "standard deviation");
            if (!s || s.value() < 0) {
                reader.bad(record.line, s ? "the standard deviation is negative" : s.error());
                continue;
            }
            m.sd = s.value();
        }
        if (replicates) {
            auto n = numberIn(record.fields[*replicates], "replicate count");
            if (!n || n.value() < 1 || n.value() > 1e9 || n.value() != std::floor(n.value())) {
                reader.bad(record.line, n ? "the replicate count must be a whole number of at least 1" : n.error());
                continue;
            }
            m.replicates = int(n.value());
        }
        reader.keep(std::move(m));
    }
    return reader.finish();
}

/// "A23G:L45P" applied to the wild type, or why it disagrees with it.
Result<std::string> applyMutant(const std::string& mutant, const std::string& wildType)
{
    std::string out = wildType;
    size_t start = 0;
    while (start <= mutant.size()) {
        const size_t end = std::min(mutant.find(':', start), mutant.size());
        const std::string one = mutant.substr(start, end - start);
        int64_t position = 0;
        const bool shaped = one.size() >= 3 && std::isalpha(static_cast<unsigned char>(one.front())) &&
                            std::isalpha(static_cast<unsigned char>(one.back())) &&
                            std::from_chars(one.data() + 1, one.data() + one.size() - 1, position).ptr ==
                                one.data() + one.size() - 1;
        if (!shaped)
            return makeError("the mutant '" + excerpt(one, 40) + "' is not written as A23G");
        if (position < 1 || position > int64_t(wildType.size()))
            return makeError("the mutant " + one + " names position " + std::to_string(position) +
                             " of a wild type " + std::to_string(wildType.size()) + " long");
        if (wildType[size_t(position - 1)] != one.front())
            return makeError("the mutant " + one + " says position " + std::to_string(position) + " is " + one.front() +
                             " where the wild type has " + wildType[size_t(position - 1)]);
        out[size_t(position - 1)] = one.back();
        start = end + 1;
    }
    return out;
}

Result<std::vector<Measurement>> readProteinGym(const std::vector<Record>& records, Reader& reader)
{
    const AssayFileOptions& o = reader.options();
    auto columns = columnsOf(records.front());
    if (!columns)
        return makeError(columns.error());
    auto mutant = column(columns.value(), "mutant");
    auto score = column(columns.value(), "DMS_score");
    if (!mutant || !score)
        return makeError(mutant ? score.error() : mutant.error());
    const auto mutated = columns->find("mutated_sequence");
    if (mutated == columns->end() && o.wildType.empty())
        return makeError("it has no mutated_sequence column, so the wild type its mutants are written against is "
                         "needed (--wild-type)");
    const size_t width = records.front().fields.size();
    for (size_t r = 1; r < records.size(); ++r) {
        const Record& record = records[r];
        if (record.fields.size() != width) {
            reader.bad(record.line, std::to_string(record.fields.size()) + " fields where the header has " +
                                        std::to_string(width));
            continue;
        }
        Measurement m;
        m.line = record.line;
        const std::string name = trimmed(record.fields[mutant.value()]);
        const bool wild = name.empty() || name == "WT" || name == "wt" || name == "_wt";
        std::optional<std::string> fromMutant;
        if (!o.wildType.empty()) {
            auto applied = wild ? Result<std::string>(o.wildType) : applyMutant(name, o.wildType);
            if (!applied) {
                reader.bad(record.line, applied.error());
                continue;
            }
            fromMutant = applied.value();
        }
        if (mutated != columns->end()) {
            m.sequence = trimmed(record.fields[mutated->second]);
            if (fromMutant && *fromMutant != m.sequence) {
                reader.bad(record.line, "the mutated_sequence is not the wild type with " + excerpt(name, 40));
                continue;
            }
        } else {
            m.sequence = *fromMutant;
        }
        auto v = numberIn(record.fields[score.value()], "DMS_score");
        if (!v) {
            reader.bad(record.line, v.error());
            continue;
        }
        m.value = v.value();
        reader.keep(std::move(m));
    }
    return reader.finish();
}

/// The value in a FASTA header: "key=1.25", "key:1.25" or a last "|1.25" field.
Result<double> headerValue(const std::string& header, const std::string& key)
{
    for (const std::string& mark : {key + "=", key + ":"}) {
        const size_t at = header.find(mark);
        if (at != std::string::npos) {
            const size_t begin = at + mark.size();
            const size_t end = std::min(header.find_first_of(" \t|;", begin), header.size());
            return numberIn(header.substr(begin, end - begin), "value");
        }
    }
    const size_t bar = header.rfind('|');
    if (bar != std::string::npos)
        return numberIn(header.substr(bar + 1), "value");
    return makeError("the header gives no value (" + key + "=1.25, " + key + ":1.25 or a last |1.25 field)");
}

Result<std::vector<Measurement>> readFasta(std::string_view text, Reader& reader)
{
    Measurement open;
    bool isOpen = false, openIsBad = false;
    int64_t line = 0;
    size_t start = 0;
    const auto close = [&] {
        if (isOpen && !openIsBad)
            reader.keep(std::move(open));
        open = Measurement{};
        isOpen = false;
    };
    while (start < text.size()) {
        ++line;
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        std::string row(text.substr(start, end - start));
        start = end + 1;
        if (!row.empty() && row.back() == '\r')
            row.pop_back();
        if (row.empty())
            continue;
        if (row[0] == '>') {
            close();
            isOpen = true;
            open.line = line;
            auto v = headerValue(row.substr(1), reader.options().fastaValueKey);
            openIsBad = !v;
            if (!v)
                reader.bad(line, v.error());
            else
                open.value = v.value();
        } else if (!isOpen) {
            reader.bad(line, "a sequence line before any '>' header");
        } else {
            open.sequence += trimmed(row);
        }
    }
    close();
    return reader.finish();
}

std::string lowered(std::string text)
{
    for (char& c : text)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

AssayFileFormat formatOf(std::string_view text, const AssayFileOptions& options, const std::string& path)
{
    if (options.format != AssayFileFormat::Auto)
        return options.format;
    const std::string name = lowered(path);
    for (const char* tail : {".fasta", ".fa", ".faa", ".fas"})
        if (name.size() >= std::strlen(tail) && name.compare(name.size() - std::strlen(tail), std::string::npos, tail) == 0)
            return AssayFileFormat::Fasta;
    if (!text.empty() && text[0] == '>')
        return AssayFileFormat::Fasta;
    const std::string_view header = text.substr(0, text.find('\n'));
    if (header.find("mutant") != std::string_view::npos && header.find("DMS_score") != std::string_view::npos)
        return AssayFileFormat::ProteinGym;
    return AssayFileFormat::Table;
}

} // namespace

Result<AssayFileReport> parseAssayText(std::string_view text, const AssayFileOptions& options, const std::string& path)
{
    if (options.assay.empty())
        return makeError("no assay was named for its values");
    if (text.empty())
        return makeError("it is empty");
    if (text.size() > options.maxBytes)
        return makeError("it holds more than " + std::to_string(options.maxBytes >> 20) + " MiB");
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
        return makeError("it holds a NUL byte at offset " + std::to_string(nul) + ": it is not text");
    AssayFileReport report;
    report.format = formatOf(text, options, path);
    report.lines = size_t(std::count(text.begin(), text.end(), '\n')) + (text.back() != '\n');
    Reader reader(options);
    Result<std::vector<Measurement>> read = makeError("");
    if (report.format == AssayFileFormat::Fasta) {
        read = readFasta(text, reader);
    } else {
        const std::string_view header = text.substr(0, text.find('\n'));
        auto records = splitRecords(text, header.find('\t') != std::string_view::npos ? '\t' : ',');
        if (!records)
            return makeError(records.error());
        if (records->empty())
            return makeError("it holds only blank lines");
        read = report.format == AssayFileFormat::ProteinGym ? readProteinGym(records.value(), reader)
                                                             : readTable(records.value(), reader);
    }
    if (!read)
        return makeError(read.error());
    report.measurements = std::move(read.value());
    return report;
}

Result<AssayFileReport> readAssayFile(const std::string& path, const AssayFileOptions& options)
{
    auto bytes = readBoundedRegularFile(path, options.maxBytes);
    if (!bytes)
        return makeError(bytes.error());
    return parseAssayText(bytes.value(), options, path);
}

} // namespace d2dpo
