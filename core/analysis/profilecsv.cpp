// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/profilecsv.h"

#include <cstdio>

#include "base/safeoutput.h"

namespace d2dpo {

namespace {

std::string number(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.6f", value);
    return text;
}

/// A field as RFC 4180 wants it: quoted (with quotes doubled) when it holds a comma, a quote or a
/// line break; sequences of words or symbols may hold any of them.
std::string field(const std::string& text)
{
    if (text.find_first_of(",\"\r\n") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"')
            quoted += '"';
        quoted += c;
    }
    return quoted + '"';
}

} // namespace

ProfiledSet profileSet(std::string name, std::vector<std::string> sequences, const std::string& symbols,
                       const std::vector<std::string>& training, int64_t length)
{
    ProfiledSet set;
    set.name = std::move(name);
    set.profile = profilePositions(sequences, symbols, length);
    if (!training.empty())
        set.nearest = nearestTrainingIdentity(sequences, training);
    set.sequences = std::move(sequences);
    return set;
}

std::string positionsCsv(const std::vector<const ProfiledSet*>& sets)
{
    std::string csv = "set,position,sequences,ended";
    const std::string symbols = sets.empty() ? std::string() : sets.front()->profile.symbols;
    for (char s : symbols)
        csv += ',' + field(std::string(1, s));
    csv += ",entropy_bits,information_bits\n";
    for (const ProfiledSet* set : sets) {
        const PositionProfile& p = set->profile;
        for (int64_t i = 0; i < p.length(); ++i) {
            csv += field(set->name) + ',' + std::to_string(i + 1) + ',' + std::to_string(p.sequences) + ',' +
                   number(p.ended[size_t(i)]);
            for (int64_t k = 0; k < p.symbolCount(); ++k)
                csv += ',' + number(p.frequency(i, k));
            csv += ',' + number(p.entropy[size_t(i)]) + ',' + number(p.information[size_t(i)]) + '\n';
        }
    }
    return csv;
}

std::string compositionCsv(const std::vector<const ProfiledSet*>& sets)
{
    std::string csv = "symbol";
    std::vector<std::vector<double>> shares;
    for (const ProfiledSet* set : sets) {
        csv += ',' + field(set->name);
        shares.push_back(set->profile.composition());
    }
    csv += '\n';
    const std::string symbols = sets.empty() ? std::string() : sets.front()->profile.symbols;
    for (size_t k = 0; k < symbols.size(); ++k) {
        csv += field(std::string(1, symbols[k]));
        for (const auto& column : shares)
            csv += ',' + number(k < column.size() ? column[k] : 0.0);
        csv += '\n';
    }
    return csv;
}

std::string nearestCsv(const std::vector<const ProfiledSet*>& sets, const std::vector<std::string>& training)
{
    std::string csv = "set,sample,sequence,identity,nearest,nearest_sequence\n";
    for (const ProfiledSet* set : sets) {
        const NearestIdentity& n = set->nearest;
        for (size_t i = 0; i < n.identity.size() && i < set->sequences.size(); ++i) {
            const int64_t index = n.nearest[i];
            const bool known = index >= 0 && size_t(index) < training.size();
            csv += field(set->name) + ',' + std::to_string(i + 1) + ',' + field(set->sequences[i]) + ',' +
                   number(n.identity[i]) + ',' + (known ? std::to_string(index + 1) : std::string()) + ',' +
                   (known ? field(training[size_t(index)]) : std::string()) + '\n';
        }
    }
    return csv;
}

Status writeProfileCsvs(const std::string& folder, const std::vector<const ProfiledSet*>& sets,
                        const std::vector<std::string>& training)
{
    const std::string base = folder.empty() || folder.back() == '/' ? folder : folder + '/';
    const std::pair<const char*, std::string> files[] = {
        {"positions.csv", positionsCsv(sets)},
        {"composition.csv", compositionCsv(sets)},
        {"nearest.csv", nearestCsv(sets, training)},
    };
    for (const auto& [name, text] : files)
        if (Status written = AtomicFile::write(base + name, text); !written)
            return written;
    return Ok{};
}

} // namespace d2dpo
