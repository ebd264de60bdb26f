// SPDX-License-Identifier: GPL-3.0-or-later
#include "assays/assayfile.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "assays/csvrecords.h"
#include "assays/measurementcollector.h"
#include "assays/mutants.h"
#include "base/untrustedtext.h"

namespace d2dpo {

const char* toString(AssayFileFormat format)
{
    switch (format) {
    case AssayFileFormat::Auto:
        return "auto";
    case AssayFileFormat::Table:
        return "table";
    case AssayFileFormat::ProteinGym:
        return "proteingym";
    case AssayFileFormat::Fasta:
        return "fasta";
    }
    return "auto";
}

Result<AssayFileFormat> assayFileFormatNamed(const std::string& name)
{
    for (auto format : {AssayFileFormat::Auto, AssayFileFormat::Table, AssayFileFormat::ProteinGym, AssayFileFormat::Fasta})
        if (name == toString(format))
            return format;
    return makeError("the file's layout is auto, table, proteingym or fasta, not '" + name.substr(0, 40) + "'");
}

namespace {

/// The byte-order mark spreadsheet programs put at the start of a UTF-8 CSV: without this, the
/// first column's name would be "\xEF\xBB\xBFsequence" and never found.
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

std::string trimmed(const std::string& text)
{
    const size_t begin = text.find_first_not_of(" \t");
    if (begin == std::string::npos)
        return {};
    return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

/// A finite number in the C locale's notation, or why not. std::from_chars never reads the
/// locale, so a German desktop reads "1.5" as a lab in Boston wrote it.
Result<double> numberIn(const std::string& raw, const char* what)
{
    const std::string text = trimmed(raw);
    double value = 0;
    const char* begin = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range)
        return makeError(std::string("the ") + what + " '" + excerpt(text, 40) + "' is out of range");
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return makeError(std::string("the ") + what + " '" + excerpt(text, 40) + "' is not a number");
    if (!std::isfinite(value))
        return makeError(std::string("the ") + what + " is " + excerpt(text, 40) + ", not a finite number");
    return value;
}

constexpr const char* kHeaderOnly = "it holds a header and no rows";

/// A table's columns by name, looked up with an error that names the columns there are.
class Columns {
public:
    static Result<Columns> of(const CsvRecord& header)
    {
        Columns out;
        for (size_t i = 0; i < header.fields.size(); ++i) {
            const std::string name = trimmed(header.fields[i]);
            if (!out.m_at.emplace(name, i).second)
                return makeError("the header names the column '" + excerpt(name, 40) + "' twice");
        }
        out.m_width = header.fields.size();
        return out;
    }

    Result<size_t> required(const std::string& name) const
    {
        const auto found = m_at.find(name);
        if (found != m_at.end())
            return found->second;
        std::string names;
        for (const auto& [column, at] : m_at)
            names += (names.empty() ? "" : ", ") + excerpt(column, 40);
        return makeError("it has no column '" + excerpt(name, 40) + "' (its columns: " + names + ")");
    }

    /// The column when `name` is not empty: "" asks for none.
    Result<std::optional<size_t>> optional(const std::string& name) const
    {
        if (name.empty())
            return std::optional<size_t>();
        auto at = required(name);
        if (!at)
            return makeError(at.error());
        return std::optional<size_t>(at.value());
    }

    std::optional<size_t> find(const std::string& name) const
    {
        const auto found = m_at.find(name);
        return found == m_at.end() ? std::nullopt : std::optional<size_t>(found->second);
    }

    /// Whether a row has the header's width, else names the line as bad.
    bool fits(const CsvRecord& record, MeasurementCollector& collector) const
    {
        if (record.fields.size() == m_width)
            return true;
        const size_t count = record.fields.size();
        collector.bad(record.line, std::to_string(count) + (count == 1 ? " field" : " fields") +
                                       " where the header has " + std::to_string(m_width));
        return false;
    }

private:
    std::map<std::string, size_t> m_at;
    size_t m_width = 0;
};

/// One table row's optional sd and replicate count into `m`, or why not.
Status readSpread(const CsvRecord& record, std::optional<size_t> sd, std::optional<size_t> replicates, Measurement& m)
{
    // An empty cell is a value the lab did not give: no sd, one replicate.
    if (sd && !trimmed(record.fields[*sd]).empty()) {
        auto s = numberIn(record.fields[*sd], "standard deviation");
        if (!s)
            return makeError(s.error());
        if (s.value() < 0)
            return makeError("the standard deviation " + trimmed(record.fields[*sd]) + " is negative");
        m.sd = s.value();
    }
    if (replicates && !trimmed(record.fields[*replicates]).empty()) {
        auto n = numberIn(record.fields[*replicates], "replicate count");
        if (!n)
            return makeError(n.error());
        if (n.value() < 1 || n.value() > 1e9 || n.value() != std::floor(n.value()))
            return makeError("the replicate count " + trimmed(record.fields[*replicates]) +
                             " is not a whole number of at least 1");
        m.replicates = int(n.value());
    }
    return Ok{};
}

Result<std::vector<Measurement>> readTable(const std::vector<CsvRecord>& records, MeasurementCollector& collector)
{
    const AssayFileOptions& o = collector.options();
    auto columns = Columns::of(records.front());
    if (!columns)
        return makeError(columns.error());
    auto sequence = columns->required(o.sequenceColumn);
    auto value = columns->required(o.valueColumn);
    auto sd = columns->optional(o.sdColumn);
    auto replicates = columns->optional(o.replicatesColumn);
    for (const Status& s : {statusOf(sequence), statusOf(value), statusOf(sd), statusOf(replicates)})
        if (!s)
            return makeError(s.error());
    for (size_t r = 1; r < records.size(); ++r) {
        const CsvRecord& record = records[r];
        if (!columns->fits(record, collector))
            continue;
        Measurement m;
        m.line = record.line;
        m.sequence = trimmed(record.fields[sequence.value()]);
        auto v = numberIn(record.fields[value.value()], "value");
        if (!v) {
            collector.bad(record.line, v.error());
            continue;
        }
        m.value = v.value();
        if (Status s = readSpread(record, sd.value(), replicates.value(), m); !s) {
            collector.bad(record.line, s.error());
            continue;
        }
        collector.keep(std::move(m));
    }
    return collector.finish(kHeaderOnly);
}

/// ProteinGym's DMS substitutions: `mutant`, `mutated_sequence`, `DMS_score` (others, such as
/// DMS_score_bin, ignored). The mutant is checked against the wild type when one is given, else
/// against mutated_sequence; without mutated_sequence the sequence is built from the wild type.
Result<std::vector<Measurement>> readProteinGym(const std::vector<CsvRecord>& records, MeasurementCollector& collector)
{
    const AssayFileOptions& o = collector.options();
    auto columns = Columns::of(records.front());
    if (!columns)
        return makeError(columns.error());
    auto mutant = columns->required("mutant");
    auto score = columns->required("DMS_score");
    if (!mutant || !score)
        return makeError(mutant ? score.error() : mutant.error());
    const std::optional<size_t> mutated = columns->find("mutated_sequence");
    if (!mutated && o.wildType.empty())
        return makeError("it has no mutated_sequence column, so the wild type its mutants are written against is "
                         "needed (--wild-type)");
    for (size_t r = 1; r < records.size(); ++r) {
        const CsvRecord& record = records[r];
        if (!columns->fits(record, collector))
            continue;
        Measurement m;
        m.line = record.line;
        const std::string name = trimmed(record.fields[mutant.value()]);
        if (!o.wildType.empty()) {
            auto applied = applyMutant(name, o.wildType);
            if (!applied) {
                collector.bad(record.line, applied.error());
                continue;
            }
            m.sequence = applied.value();
            if (mutated && trimmed(record.fields[*mutated]) != m.sequence) {
                const std::string applied = isWildTypeMutant(name) ? "no mutation" : excerpt(name, 40);
                collector.bad(record.line, "the mutated_sequence is not the wild type with " + applied);
                continue;
            }
        } else {
            m.sequence = trimmed(record.fields[*mutated]);
            if (Status s = checkMutantAgainstMutated(name, m.sequence); !s) {
                collector.bad(record.line, s.error());
                continue;
            }
        }
        auto v = numberIn(record.fields[score.value()], "DMS_score");
        if (!v) {
            collector.bad(record.line, v.error());
            continue;
        }
        m.value = v.value();
        collector.keep(std::move(m));
    }
    return collector.finish(kHeaderOnly);
}

/// The value in a FASTA header: "key=1.25" or "key:1.25" as a word of its own (so that
/// "myvalue=3" is not "value=3"), else a last "|1.25" field.
Result<double> headerValue(const std::string& header, const std::string& key)
{
    for (const std::string& mark : {key + "=", key + ":"}) {
        for (size_t at = header.find(mark); at != std::string::npos; at = header.find(mark, at + 1)) {
            if (at > 0 && std::strchr(" \t|;", header[at - 1]) == nullptr)
                continue;
            const size_t begin = at + mark.size();
            const size_t end = std::min(header.find_first_of(" \t|;", begin), header.size());
            return numberIn(header.substr(begin, end - begin), "value");
        }
    }
    const size_t bar = header.rfind('|');
    if (bar != std::string::npos)
        return numberIn(header.substr(bar + 1), "value");
    return makeError("the header gives no value (" + excerpt(key, 40) + "=1.25, " + excerpt(key, 40) +
                     ":1.25 or a last |1.25 field)");
}

/// FASTA records; a record's line is its header's, and its sequence may span lines.
Result<std::vector<Measurement>> readFasta(std::string_view text, MeasurementCollector& collector)
{
    Measurement open;
    bool isOpen = false, openIsBad = false;
    int64_t line = 0;
    size_t start = 0;
    const auto close = [&] {
        if (isOpen && !openIsBad)
            collector.keep(std::move(open));
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
        if (trimmed(row).empty())
            continue;
        if (row[0] == '>') {
            close();
            isOpen = true;
            open.line = line;
            auto v = headerValue(row.substr(1), collector.options().fastaValueKey);
            openIsBad = !v;
            if (!v)
                collector.bad(line, v.error());
            else
                open.value = v.value();
        } else if (!isOpen) {
            collector.bad(line, "a sequence line before any '>' header");
        } else {
            open.sequence += trimmed(row);
        }
    }
    close();
    return collector.finish("it holds no FASTA record");
}

bool endsWith(const std::string& text, std::string_view tail)
{
    return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

/// Auto: FASTA by extension or a leading '>', ProteinGym by its header's columns, else a table.
AssayFileFormat formatOf(std::string_view text, const AssayFileOptions& options, const std::string& path)
{
    if (options.format != AssayFileFormat::Auto)
        return options.format;
    std::string name = path;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](char c) { return char(std::tolower(static_cast<unsigned char>(c))); });
    for (std::string_view tail : {".fasta", ".fa", ".faa", ".fas"})
        if (endsWith(name, tail))
            return AssayFileFormat::Fasta;
    if (!text.empty() && text[0] == '>')
        return AssayFileFormat::Fasta;
    const std::string_view headerLine = text.substr(0, text.find_first_of("\r\n"));
    auto header = splitCsvRecords(headerLine, csvDelimiterOf(headerLine));
    if (header && !header->empty()) {
        const auto& fields = header->front().fields;
        const auto has = [&](const char* column) {
            const auto named = [&](const std::string& field) { return trimmed(field) == column; };
            return std::any_of(fields.begin(), fields.end(), named);
        };
        if (has("mutant") && has("DMS_score"))
            return AssayFileFormat::ProteinGym;
    }
    return AssayFileFormat::Table;
}

} // namespace

Result<AssayFileReport> parseAssayText(std::string_view text, const AssayFileOptions& options, const std::string& path)
{
    if (options.assay.empty())
        return makeError("no assay was named for its values");
    if (text.size() > options.maxBytes)
        return makeError("it is " + std::to_string(text.size()) + " bytes, more than the " +
                         std::to_string(options.maxBytes) + " allowed");
    if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom)
        text.remove_prefix(kUtf8Bom.size());
    if (text.empty())
        return makeError("it is empty");
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
        return makeError("it holds a NUL byte at offset " + std::to_string(nul) + ": it is not text");
    AssayFileReport report;
    report.format = formatOf(text, options, path);
    report.lines = size_t(std::count(text.begin(), text.end(), '\n')) + (text.back() != '\n');
    MeasurementCollector collector(options);
    Result<std::vector<Measurement>> read = makeError("");
    if (report.format == AssayFileFormat::Fasta) {
        read = readFasta(text, collector);
    } else {
        auto records = splitCsvRecords(text, csvDelimiterOf(text.substr(0, text.find('\n'))));
        if (!records)
            return makeError(records.error());
        if (records->empty())
            return makeError("it holds only blank lines");
        read = report.format == AssayFileFormat::ProteinGym ? readProteinGym(records.value(), collector)
                                                            : readTable(records.value(), collector);
    }
    if (!read)
        return makeError(read.error());
    report.measurements = std::move(read.value());
    return report;
}

Result<AssayFileReport> readAssayFile(const std::string& path, const AssayFileOptions& options)
{
    // The size is checked before a byte is read, and a device or a folder is never read at all.
    auto bytes = readBoundedRegularFile(path, options.maxBytes);
    if (!bytes)
        return makeError(bytes.error());
    return parseAssayText(bytes.value(), options, path);
}

} // namespace d2dpo
