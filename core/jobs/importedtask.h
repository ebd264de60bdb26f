// SPDX-License-Identifier: GPL-3.0-or-later
// The task an import makes, and the vocabulary it reads the task's tokens through: from the data
// file (its sequences, lengths and validity) or, without one, from the lengths the user gives; the
// vocabulary a contract file names or, for published weights, the one their vocab.txt makes (with
// a pad only where the lengths vary). For jobs/ sources only.
#pragma once

#include <utility>

#include "base/modelvocabulary.h"
#include "base/result.h"
#include "base/taskconfig.h"
#include "jobs/importjob.h"

namespace d2dpo {

struct PublishedWeights;

/// The task a vocabulary and a data file (or the spec's lengths) describe, its tokens the vocabulary's.
Result<TaskConfig> importedTask(const ImportJobSpec& spec, const ModelVocabulary& vocabulary);

/// The vocabulary of published weights and the task it makes: the user's contract when given,
/// else the one vocab.txt makes, with a pad only where the task's lengths vary.
Result<std::pair<ModelVocabulary, TaskConfig>> weightsVocabulary(const ImportJobSpec& spec, const PublishedWeights& weights);

} // namespace d2dpo
