// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/alignment.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <parasail.h>
#include <parasail/matrices/blosum62.h>

namespace d2dpo {

namespace {

constexpr char Gap = '-';

/// parasail's BLOSUM62 score of two residues; a character BLOSUM62 does not name (U, O, a typo)
/// scores as X (parasail itself would score it as '*', a stop codon: -4 against everything).
int blosum62(char a, char b)
{
    const parasail_matrix_t& m = parasail_blosum62;
    const auto index = [&](char c) {
        const auto upper = static_cast<unsigned char>(std::toupper(static_cast<unsigned char>(c)));
        const bool named = upper != 0 && std::strchr(m.alphabet, upper) != nullptr;
        return m.mapper[named ? upper : static_cast<unsigned char>('X')];
    };
    return m.matrix[index(a) * m.size + index(b)];
}

/// The distinct characters of two texts, in first-seen order: the alphabet of the matrix handed
/// to parasail (so any character, and not only a task's symbols, can be aligned).
std::string charactersOf(const std::string& first, const std::string& second)
{
    std::string seen;
    for (const std::string* text : {&first, &second})
        for (char c : *text)
            if (seen.find(c) == std::string::npos)
                seen.push_back(c);
    return seen;
}

struct MatrixDeleter {
    void operator()(parasail_matrix_t* matrix) const { parasail_matrix_free(matrix); }
};
struct ResultDeleter {
    void operator()(parasail_result_t* result) const { parasail_result_free(result); }
};
struct TracebackDeleter {
    void operator()(parasail_traceback_t* traceback) const { parasail_traceback_free(traceback); }
};

/// Our scores as a parasail matrix over `characters` (case-sensitive: words keep their case).
std::unique_ptr<parasail_matrix_t, MatrixDeleter> matrixOver(const std::string& characters,
                                                             const AlignmentScoring& scoring)
{
    std::unique_ptr<parasail_matrix_t, MatrixDeleter> matrix(
        parasail_matrix_create_case_sensitive(characters.c_str(), 0, 0));
    if (!matrix)
        return matrix;
    // parasail appends '*' for characters outside the alphabet; none reaches it here.
    for (size_t i = 0; i < characters.size(); ++i)
        for (size_t j = 0; j < characters.size(); ++j)
            parasail_matrix_set_value(matrix.get(), int(i), int(j), scoring.substitution(characters[i], characters[j]));
    return matrix;
}

/// Fills the counts and the column map from the gapped strings.
void mapColumns(Alignment& alignment)
{
    int inFirst = 0;
    int inSecond = 0;
    const size_t columns = alignment.first.size();
    alignment.firstPositions.assign(columns, -1);
    alignment.secondPositions.assign(columns, -1);
    for (size_t c = 0; c < columns; ++c) {
        const char a = alignment.first[c];
        const char b = alignment.second[c];
        if (a != Gap)
            alignment.firstPositions[c] = inFirst++;
        if (b != Gap)
            alignment.secondPositions[c] = inSecond++;
        if (a != Gap && b != Gap) {
            ++alignment.aligned;
            alignment.identical += a == b ? 1 : 0;
        }
    }
}

/// One sequence against nothing: all gaps, one gap of its length.
Alignment againstNothing(const std::string& first, const std::string& second, const AlignmentScoring& scoring)
{
    Alignment alignment;
    alignment.first = first.empty() ? std::string(second.size(), Gap) : first;
    alignment.second = second.empty() ? std::string(first.size(), Gap) : second;
    alignment.score = scoring.score(alignment.first, alignment.second);
    mapColumns(alignment);
    return alignment;
}

} // namespace

AlignmentScoring AlignmentScoring::forAlphabet(const std::string& alphabet)
{
    if (alphabet == "protein")
        return {Matrix::Blosum62, 10, 1};
    if (alphabet == "dna" || alphabet == "rna")
        return {Matrix::Nucleotide, 10, 1};
    return {Matrix::MatchMismatch, 2, 1};
}

std::string AlignmentScoring::describe() const
{
    const char* name = matrix == Matrix::Blosum62     ? "BLOSUM62"
                       : matrix == Matrix::Nucleotide ? "nucleotide +5/-4"
                                                      : "match +1/mismatch -1";
    return std::string(name) + ", gap open " + std::to_string(gapOpen) + ", extend " + std::to_string(gapExtend);
}

int AlignmentScoring::substitution(char a, char b) const
{
    switch (matrix) {
    case Matrix::Blosum62: return blosum62(a, b);
    case Matrix::Nucleotide: return a == b ? 5 : -4;
    case Matrix::MatchMismatch: return a == b ? 1 : -1;
    }
    return 0;
}

int AlignmentScoring::score(const std::string& gappedFirst, const std::string& gappedSecond) const
{
    if (gappedFirst.size() != gappedSecond.size())
        throw std::invalid_argument("the gapped sequences differ in length");
    int total = 0;
    // A gap run is open in one sequence while its column has '-' there; a column with a gap in
    // the other sequence instead starts a new gap (Gotoh's two gap states).
    bool gapInFirst = false;
    bool gapInSecond = false;
    for (size_t c = 0; c < gappedFirst.size(); ++c) {
        const bool a = gappedFirst[c] == Gap;
        const bool b = gappedSecond[c] == Gap;
        if (a && b)
            throw std::invalid_argument("a column of two gaps at " + std::to_string(c));
        if (a)
            total -= gapInFirst ? gapExtend : gapOpen;
        else if (b)
            total -= gapInSecond ? gapExtend : gapOpen;
        else
            total += substitution(gappedFirst[c], gappedSecond[c]);
        gapInFirst = a;
        gapInSecond = b;
    }
    return total;
}

std::string withoutTrailingPads(const std::string& text)
{
    const size_t end = text.find_last_not_of('.');
    return end == std::string::npos ? std::string() : text.substr(0, end + 1);
}

Result<Alignment> alignGlobal(const std::string& firstText, const std::string& secondText,
                              const AlignmentScoring& scoring)
{
    const std::string first = withoutTrailingPads(firstText);
    const std::string second = withoutTrailingPads(secondText);
    if (first.find(Gap) != std::string::npos || second.find(Gap) != std::string::npos)
        return makeError("a sequence to align holds '-', the gap character of an alignment");
    if (first.empty() || second.empty())
        return againstNothing(first, second, scoring);

    const auto matrix = matrixOver(charactersOf(first, second), scoring);
    if (!matrix)
        return makeError("the aligner could not build its scoring matrix");
    // The scan vectorisation suits global alignment best (Daily 2016); "sat" starts with 8-bit
    // lanes and redoes the table with 16-bit ones if a score saturates.
    std::unique_ptr<parasail_result_t, ResultDeleter> result(
        parasail_nw_trace_scan_sat(first.data(), int(first.size()), second.data(), int(second.size()), scoring.gapOpen,
                                   scoring.gapExtend, matrix.get()));
    if (!result)
        return makeError("the aligner ran out of memory for sequences of " + std::to_string(first.size()) + " and " +
                         std::to_string(second.size()) + " symbols");
    std::unique_ptr<parasail_traceback_t, TracebackDeleter> traceback(
        parasail_result_get_traceback(result.get(), first.data(), int(first.size()), second.data(), int(second.size()),
                                      matrix.get(), '|', ':', '.'));
    if (!traceback)
        return makeError("the aligner could not trace its alignment back");

    Alignment alignment;
    alignment.first = traceback->query;
    alignment.second = traceback->ref;
    alignment.score = result->score;
    mapColumns(alignment);
    return alignment;
}

Result<Alignment> alignGlobal(const std::string& first, const std::string& second, const std::string& alphabet)
{
    return alignGlobal(first, second, AlignmentScoring::forAlphabet(alphabet));
}

} // namespace d2dpo
