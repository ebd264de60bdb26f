// SPDX-License-Identifier: GPL-3.0-or-later
#include "assays/measurementcollector.h"

#include <cstdio>

#include "base/untrustedtext.h"

namespace d2dpo {

namespace {

/// A symbol as a message can show it: printable ones quoted, others (a tab, a UTF-8 byte) in hex,
/// so that a byte from the file can never move the user's cursor.
std::string quotedSymbol(char c)
{
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x21 && u < 0x7f)
        return std::string("'") + c + "'";
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", u);
    return hex;
}

} // namespace

void MeasurementCollector::bad(int64_t line, const std::string& why)
{
    // Counted past the tenth, but not kept: a file of a million bad lines is not a message.
    if (++m_badCount <= kLinesNamed)
        m_bad.push_back("line " + std::to_string(line) + ": " + why);
}

void MeasurementCollector::keep(Measurement m)
{
    if (m.sequence.empty())
        return bad(m.line, "the sequence is empty");
    const bool anySymbol = m_options.symbols.empty();
    for (size_t i = 0; i < m.sequence.size(); ++i) {
        const auto u = static_cast<unsigned char>(m.sequence[i]);
        if (anySymbol ? (u > 0x20 && u < 0x7f) : m_options.symbols.find(char(u)) != std::string::npos)
            continue;
        return bad(m.line, "the symbol " + quotedSymbol(m.sequence[i]) + " at position " + std::to_string(i + 1) +
                               (anySymbol ? std::string(" is not a printable character")
                                          : " is not one of the model's (" + excerpt(m_options.symbols, 60) + ")"));
    }
    if (m.sequence.size() < m_options.minLength || m.sequence.size() > m_options.maxLength)
        return bad(m.line, "the sequence is " + std::to_string(m.sequence.size()) + " long; the model takes " +
                               std::to_string(m_options.minLength) + " to " + std::to_string(m_options.maxLength));
    m.assay = m_options.assay;
    m_kept.push_back(std::move(m));
}

Result<std::vector<Measurement>> MeasurementCollector::finish(const std::string& emptyWhy)
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
        return makeError(emptyWhy);
    return std::move(m_kept);
}

} // namespace d2dpo
