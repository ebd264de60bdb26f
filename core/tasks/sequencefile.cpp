// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/sequencefile.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_set>

#include "base/boundedline.h"
#include "base/configlimits.h"
#include "tasks/vocabulary.h"

namespace d2dpo {

namespace {


struct Record {
    std::string text;
    int64_t line = 0; ///< where it starts, 1-based
};

std::string trimmed(std::string line)
{
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n' || line.back() == ' ' || line.back() == '\t'))
        line.pop_back();
    size_t start = 0;
    while (start < line.size() && (line[start] == ' ' || line[start] == '\t'))
        ++start;
    return line.substr(start);
}

Result<std::vector<Record>> readRecords(std::istream& in, const std::string& path, bool& fasta)
{
    std::vector<Record> records;
    std::string line;
    int64_t number = 0;
    bool sawContent = false;
    for (LineRead read; (read = readBoundedLine(in, line)) != LineRead::End;) {
        ++number;
        if (read == LineRead::TooLong)
            return makeError(path + ":" + std::to_string(number) + ": a line longer than 1 MB; is this a text file?");
        line = trimmed(std::move(line));
        if (line.empty())
            continue;
        if (!sawContent) {
            fasta = line[0] == '>';
            sawContent = true;
        }
        if (fasta && line[0] == '>') {
            records.push_back({"", number});
            continue;
        }
        if (fasta) {
            if (records.back().text.empty())
                records.back().line = number;
            records.back().text += line;
        } else {
            records.push_back({line, number});
        }
    }
    if (in.bad())
        return makeError(path + ": reading failed");
    for (Record& r : records) {
        if (fasta) {
            while (!r.text.empty() && r.text.back() == '*')
                r.text.pop_back();
            std::transform(r.text.begin(), r.text.end(), r.text.begin(),
                           [](unsigned char c) { return char(std::toupper(c)); });
            if (r.text.empty())
                return makeError(path + ":" + std::to_string(r.line) + ": a FASTA record without a sequence");
        }
    }
    return records;
}

} // namespace

Result<SequenceFileTask> readSequenceFile(const std::string& path, const SequenceFileOptions& options)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec))
        return makeError("data file '" + path + "' does not exist");
    if (fs::is_directory(path, ec))
        return makeError("data file '" + path + "' is a folder");
    if (!fs::is_regular_file(path, ec)) // a device or a pipe may never end
        return makeError("data file '" + path + "' is not a regular file (a device or a pipe?)");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError("cannot open the data file '" + path + "' (no permission?)");
    bool fasta = false;
    auto records = readRecords(in, path, fasta);
    if (!records)
        return makeError(records.error());
    if (records->empty())
        return makeError("data file '" + path + "' holds no sequences");

    // The vocabulary: named (and upper case, as sequence databases write it) or read from the data.
    std::string named;
    if (options.vocabulary.rfind("symbols:", 0) == 0) {
        named = options.vocabulary.substr(8);
        if (named.empty())
            return makeError("--vocabulary symbols: needs the symbols (for example symbols:ACGT)");
    }
    else if (options.vocabulary != "data") {
        auto symbols = namedVocabulary(options.vocabulary);
        if (!symbols)
            return makeError(symbols.error());
        named = symbols.value();
        for (Record& r : records.value())
            std::transform(r.text.begin(), r.text.end(), r.text.begin(),
                           [](unsigned char c) { return char(std::toupper(c)); });
    }
    const auto where = [&](const Record& r) { return path + ":" + std::to_string(r.line) + ": "; };
    std::set<char> seen;
    for (const Record& r : records.value())
        for (size_t i = 0; i < r.text.size(); ++i) {
            const char c = r.text[i];
            if (!named.empty() && named.find(c) == std::string::npos)
                return makeError(where(r) + "'" + std::string(1, c) + "' at position " + std::to_string(i + 1) +
                                 " is not in the vocabulary " + named);
            if (c <= ' ' || c > '~' || c == Vocabulary::kMaskSymbol || c == Vocabulary::kPadSymbol)
                return makeError(where(r) + "the character at position " + std::to_string(i + 1) +
                                 " cannot be a symbol (printable ASCII other than '_' and '.')");
            seen.insert(c);
        }

    const int limit = options.maxLength > 0 ? options.maxLength : limits::kMaxLength;
    if (options.maxLength > limits::kMaxLength)
        return makeError("--max-length must be at most " + std::to_string(limits::kMaxLength));
    SequenceFileTask result;
    SequenceFileReport& report = result.report;
    report.format = fasta ? "fasta" : "lines";
    int64_t tooLong = 0;
    const Record* firstTooLong = nullptr;
    for (Record& r : records.value())
        if (int(r.text.size()) > limit) {
            if (options.crop) {
                r.text.resize(size_t(limit));
                ++report.cropped;
            } else if (++tooLong == 1) {
                firstTooLong = &r;
            }
        }
    if (tooLong > 0)
        return makeError(std::to_string(tooLong) + " sequence" + (tooLong > 1 ? "s are" : " is") + " longer than " +
                         std::to_string(limit) + " symbols; the first, at " + path + ":" +
                         std::to_string(firstTooLong->line) + ", has " + std::to_string(firstTooLong->text.size()) +
                         " (crop them with --crop, or raise --max-length)");

    TaskConfig& task = result.task;
    task.name = "sequences";
    // X (an unknown residue) is a symbol only where the data has it: a model given a token the data
    // never shows still learns to write it now and then, and such a sample reads as well-formed.
    if (options.vocabulary == "protein" && !seen.count('X'))
        named.erase(std::remove(named.begin(), named.end(), 'X'), named.end());
    task.symbols = named.empty() ? std::string(seen.begin(), seen.end()) : named;
    task.validity = options.validity;
    task.rule = options.rule;
    task.source = fs::path(path).filename().string();
    std::unordered_set<std::string> distinct;
    report.minLength = int(records->front().text.size());
    for (Record& r : records.value()) {
        report.minLength = std::min(report.minLength, int(r.text.size()));
        report.maxLength = std::max(report.maxLength, int(r.text.size()));
        distinct.insert(r.text);
        task.data.push_back(std::move(r.text));
    }
    task.length = report.maxLength;
    task.minLength = report.minLength;
    task.padded = report.minLength < report.maxLength;
    report.sequences = int64_t(task.data.size());
    report.distinct = int64_t(distinct.size());
    report.duplicates = report.sequences - report.distinct;
    report.symbols = task.symbols;
    if (Status s = validate(task); !s)
        return makeError(s.error());
    return result;
}

} // namespace d2dpo
