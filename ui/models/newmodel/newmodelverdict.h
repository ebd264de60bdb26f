// SPDX-License-Identifier: GPL-3.0-or-later
// What a dialog that made a model (a new model from data, an import) says once the model is
// measured: its figures, and whether it can be labelled (core's base/modelverdict.h). A model too
// weak to label keeps its dialog open on the advice, with the accept button off and Cancel read
// as Close; the model is in the store all the same.
#pragma once

#include <QString>

#include "base/samplemetrics.h"

class QDialogButtonBox;

namespace d2dpo::ui {

struct NewModelVerdict {
    QString figures;     ///< "VSR 0.972, rule share 0.514 on 200 samples"
    bool tooWeak = false;
    QString summaryHtml; ///< for the dialog's summary line
};

/// `made`: how the dialog names what it did ("Made", "Imported"); `hint`: a sentence added to the
/// advice of a weak model (for an import: check the vocabulary).
NewModelVerdict newModelVerdict(const SampleMetrics& metrics, const QString& made, const QString& hint = {});

/// After a weak model: the accept button off, Cancel reads Close. `resetButtons` undoes it for a new job.
void keepOpenOnAdvice(QDialogButtonBox* buttons);
void resetButtons(QDialogButtonBox* buttons);

} // namespace d2dpo::ui
