// SPDX-License-Identifier: GPL-3.0-or-later
// Which measured sequences are held out of training, so that a model's ranking can be checked on
// values it never saw. Three splits, as ProteinGym's supervised benchmark makes them:
//   random     a seeded hash of the sequence itself;
//   position   a seeded hash of each mutated position: a sequence is held out when any position
//              it mutates is, so training never sees a change at a held-out position;
//   mutations  the sequences with the most mutations, whole counts at a time (train on singles,
//              judge on doubles and more).
// Mutations are read against the assay's consensus (the most common symbol at each position; for
// a deep mutational scan, its wild type). Every split is a function of the sequences and the seed,
// so training and evaluation agree on it without storing it, and a sequence measured twice falls
// on one side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace d2dpo {

enum class SplitKind { Random, Position, Mutations };
const char* toString(SplitKind kind);
/// "random", "position" or "mutations", or why not.
Result<SplitKind> splitKindNamed(const std::string& name);

/// One flag per sequence, true when it is held out by the split of `kind` with this share (0..1)
/// and seed. position: `share` of the positions the sequences mutate; mutations: whole mutation
/// counts from the highest down while their sequences fit in `share` (at least the highest
/// count). An error when the split cannot hold out anything useful: every sequence equal to the
/// consensus, or (mutations) a single mutation count.
Result<std::vector<bool>> heldOutFlags(const std::vector<std::string>& sequences, SplitKind kind, double share,
                                       uint64_t seed);

/// The most common symbol at each position (ties to the smaller byte), as long as the longest.
std::string consensusOf(const std::vector<std::string>& sequences);

/// Whether `sequence` is in the held-out share (0..1) of the split made with `seed`.
bool isHeldOut(const std::string& sequence, double share, uint64_t seed);

/// Spearman's rank correlation of two equally long series (average ranks for ties); NaN when
/// either is constant, shorter than 2 or holds a value that is not finite.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

} // namespace d2dpo
