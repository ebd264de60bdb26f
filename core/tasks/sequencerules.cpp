// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>
#include <memory>

#include <re2/re2.h>

#include "tasks/rule.h"

namespace d2dpo {

namespace {

/// Matched by RE2, in time linear in the text whatever the pattern: a user's pattern cannot hang
/// an evaluation ("(a+)+$" on a run of a's took std::regex minutes; RE2 takes microseconds).
class MotifRule final : public Rule {
public:
    MotifRule(std::string pattern, std::unique_ptr<const re2::RE2> regex)
        : m_pattern(std::move(pattern)), m_regex(std::move(regex))
    {
    }
    std::string spec() const override { return "motif:" + m_pattern; }
    std::string describe() const override { return "a match of " + m_pattern + " beats no match"; }
    double score(const std::string& text) const override { return re2::RE2::PartialMatch(text, *m_regex) ? 1.0 : 0.0; }
    std::string explain(const std::string& text) const override
    {
        return score(text) > 0 ? "matches " + m_pattern : "no match";
    }
    std::vector<std::pair<int, int>> matches(const std::string& text) const override
    {
        // Leftmost matches, each search starting where the last ended; ^ still means the start of
        // the whole text (RE2::Match keeps the context). An empty match marks nothing: step past it.
        std::vector<std::pair<int, int>> spans;
        size_t from = 0;
        re2::StringPiece found;
        while (from <= text.size() &&
               m_regex->Match(text, from, text.size(), re2::RE2::UNANCHORED, &found, 1)) {
            const size_t begin = size_t(found.data() - text.data());
            const size_t end = begin + found.size();
            if (end > begin)
                spans.emplace_back(int(begin), int(end));
            from = end > begin ? end : begin + 1;
        }
        return spans;
    }

private:
    std::string m_pattern;
    std::unique_ptr<const re2::RE2> m_regex;
};

class CompositionRule final : public Rule {
public:
    explicit CompositionRule(std::string symbols) : m_symbols(std::move(symbols)) {}
    std::string spec() const override { return "composition:" + m_symbols; }
    std::string describe() const override { return "a higher share of " + m_symbols + " wins"; }
    double score(const std::string& text) const override
    {
        if (text.empty())
            return 0;
        size_t hits = 0;
        for (char c : text)
            hits += m_symbols.find(c) != std::string::npos;
        return double(hits) / double(text.size());
    }
    std::string explain(const std::string& text) const override
    {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%.0f%% ", 100 * score(text));
        return buffer + m_symbols;
    }
    bool binary() const override { return false; }

private:
    std::string m_symbols;
};

class InDataRule final : public Rule {
public:
    explicit InDataRule(const std::unordered_set<std::string>& data) : m_data(data) {}
    std::string spec() const override { return "in-data"; }
    std::string describe() const override { return "one of the training sequences beats a novel one"; }
    double score(const std::string& text) const override { return m_data.count(text) ? 1.0 : 0.0; }
    std::string explain(const std::string& text) const override { return score(text) > 0 ? "in the data" : "novel"; }

private:
    const std::unordered_set<std::string>& m_data;
};

} // namespace

Result<std::unique_ptr<Rule>> makeSequenceRule(const std::string& spec, const std::string& symbols,
                                               const std::unordered_set<std::string>& data)
{
    const auto colon = spec.find(':');
    const std::string name = spec.substr(0, colon);
    const std::string argument = colon == std::string::npos ? "" : spec.substr(colon + 1);
    if (name == "motif") {
        if (argument.empty())
            return makeError("motif needs a pattern: motif:REGEX (for example motif:^[aeiou])");
        re2::RE2::Options options;
        options.set_log_errors(false);
        auto regex = std::make_unique<const re2::RE2>(argument, options);
        if (!regex->ok())
            return makeError("motif:" + argument + " is not a valid regular expression: " + regex->error());
        return std::unique_ptr<Rule>(std::make_unique<MotifRule>(argument, std::move(regex)));
    }
    if (name == "composition") {
        if (argument.empty())
            return makeError("composition needs symbols: composition:SYMBOLS (for example composition:GC)");
        for (char c : argument)
            if (symbols.find(c) == std::string::npos)
                return makeError(std::string("composition:") + argument + ": '" + c +
                                 "' is not a symbol of this task (" + symbols + ")");
        return std::unique_ptr<Rule>(std::make_unique<CompositionRule>(argument));
    }
    if (name == "in-data" && argument.empty())
        return std::unique_ptr<Rule>(std::make_unique<InDataRule>(data));
    return makeError("unknown rule '" + spec + "' for sequence files (known: motif:REGEX, composition:SYMBOLS, in-data)");
}

} // namespace d2dpo
