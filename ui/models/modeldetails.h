// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view's details of one model, as rich text: name and id, what it was trained from,
// the run that made it (where a stopped run stopped), its figures with their provenance, its task
// and its file; and the text of its sample list.
#pragma once

#include <QString>

#include <optional>

#include "base/samplemetrics.h"
#include "facades/modelfiles.h"
#include "store/preferencestore.h"
#include "ui/common/modellistreader.h"

namespace d2dpo::ui {

/// `measured`: the view's measurement of the model (its figures), else those recorded when it was made.
/// `run`: the run that made it, as already read (else it is read from `store`).
QString modelDetails(PreferenceStore& store, const ModelRecord& model, const std::optional<ModelRecord>& reference,
                     const SampleMetrics* measured = nullptr, const RunBrief* run = nullptr);
/// The first `shown` samples, each with what the task reads in it (its annotation in a column of
/// its own), under the figures they give and how they were drawn.
QString samplesText(const ModelSummary& summary, int shown);

} // namespace d2dpo::ui
