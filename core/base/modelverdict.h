// SPDX-License-Identifier: GPL-3.0-or-later
// What a new model's measurement says about labelling with it. A model whose samples are mostly
// invalid (a protein model pretrained too briefly: VSR 0.065) makes pairs of two broken sequences,
// and a label between them teaches nothing; the dialogs and `d2dpo pretrain`/`import` say so in
// the same words when the model is made, not after an expert's hour. Torch-free.
#pragma once

#include <string>

#include "base/samplemetrics.h"

namespace d2dpo {

/// The VSR under which a model is too weak to label with: most of its pairs would hold an invalid
/// sequence.
inline constexpr double kWeakModelVsr = 0.5;

/// "" when the model can be labelled; else one paragraph: what the figures say and what to do.
std::string weakModelAdvice(const SampleMetrics& metrics);

/// A new model's figures in a line: "VSR 0.972, odd ratio 0.514 on 200 samples".
std::string newModelFigures(const SampleMetrics& metrics);

} // namespace d2dpo
