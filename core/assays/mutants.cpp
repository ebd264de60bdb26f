// SPDX-License-Identifier: GPL-3.0-or-later
#include "assays/mutants.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "base/untrustedtext.h"

namespace d2dpo {

namespace {

bool isSymbol(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

/// The symbol at a 1-based position, quoted for a message.
std::string symbolAt(const std::string& sequence, int64_t position)
{
    return std::string("'") + sequence[size_t(position - 1)] + "'";
}

} // namespace

bool isWildTypeMutant(const std::string& mutant)
{
    return mutant.empty() || mutant == "WT" || mutant == "wt" || mutant == "_wt";
}

Result<std::vector<Substitution>> parseMutant(const std::string& mutant)
{
    std::vector<Substitution> out;
    if (isWildTypeMutant(mutant))
        return out;
    size_t start = 0;
    while (start <= mutant.size()) {
        const size_t end = std::min(mutant.find(':', start), mutant.size());
        const std::string one = mutant.substr(start, end - start);
        Substitution s;
        // Digits only between the two letters: from_chars alone would take "A-3G" as position -3.
        const bool digits = one.size() >= 3 && std::all_of(one.begin() + 1, one.end() - 1, [](char c) {
                                return std::isdigit(static_cast<unsigned char>(c)) != 0;
                            });
        const bool shaped = digits && isSymbol(one.front()) && isSymbol(one.back()) &&
                            std::from_chars(one.data() + 1, one.data() + one.size() - 1, s.position).ec == std::errc();
        if (!shaped)
            return makeError("the mutant '" + excerpt(one, 40) + "' is not written as A23G (in '" +
                             excerpt(mutant, 60) + "')");
        if (s.position < 1)
            return makeError("the mutant " + one + " names position 0; positions start at 1");
        s.from = one.front();
        s.to = one.back();
        out.push_back(s);
        start = end + 1;
    }
    return out;
}

Result<std::string> applyMutant(const std::string& mutant, const std::string& wildType)
{
    auto substitutions = parseMutant(mutant);
    if (!substitutions)
        return makeError(substitutions.error());
    std::string out = wildType;
    for (const Substitution& s : substitutions.value()) {
        const std::string name = s.from + std::to_string(s.position) + s.to;
        if (s.position > int64_t(wildType.size()))
            return makeError("the mutant " + name + " names position " + std::to_string(s.position) +
                             " of a wild type " + std::to_string(wildType.size()) + " long");
        if (wildType[size_t(s.position - 1)] != s.from)
            return makeError("the mutant " + name + " says position " + std::to_string(s.position) + " is '" + s.from +
                             "' where the wild type has " + symbolAt(wildType, s.position));
        out[size_t(s.position - 1)] = s.to;
    }
    return out;
}

Status checkMutantAgainstMutated(const std::string& mutant, const std::string& mutatedSequence)
{
    auto substitutions = parseMutant(mutant);
    if (!substitutions)
        return makeError(substitutions.error());
    for (const Substitution& s : substitutions.value()) {
        const std::string name = s.from + std::to_string(s.position) + s.to;
        if (s.position > int64_t(mutatedSequence.size()))
            return makeError("the mutant " + name + " names position " + std::to_string(s.position) +
                             " of a mutated_sequence " + std::to_string(mutatedSequence.size()) + " long");
        if (mutatedSequence[size_t(s.position - 1)] != s.to)
            return makeError("the mutant " + name + " puts '" + s.to + "' at position " + std::to_string(s.position) +
                             " where the mutated_sequence has " + symbolAt(mutatedSequence, s.position));
    }
    return Ok{};
}

} // namespace d2dpo
