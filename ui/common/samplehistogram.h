// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view's histogram over the task's bins (the integer i for binary integers, the length
// for sequence files): a model's samples side by side with its reference's, as shares of the
// samples drawn, the last bin holding the invalid ones; drag to pan and wheel to zoom.
#pragma once

#include <QString>
#include <QWidget>

#include <optional>

#include "facades/modelfiles.h"

class QCustomPlot;
class QCPTextElement;

namespace d2dpo::ui {

class SampleHistogram final : public QWidget {
    Q_OBJECT

public:
    explicit SampleHistogram(QWidget* parent = nullptr);

    /// Bars for the model and, when given, its reference; a summary not drawn yet has no bars.
    void draw(const std::optional<ModelSummary>& model, const QString& modelName,
              const std::optional<ModelSummary>& reference, const QString& referenceName);
    /// No model: no bars.
    void clear();

private:
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
};

} // namespace d2dpo::ui
