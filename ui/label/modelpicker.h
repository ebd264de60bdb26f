// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view's "Model" box: the store's models with their tasks ("d2dpo run 2 step 300 ·
// globins45.fa"), newest chosen by default, each item carrying its checkpoint path and task key:
// new pairs come from the chosen model and the queue holds its task's pairs. While a blind comparison's pair is on screen it names no model
// (a name above the pair would read as where the pair came from) and keeps the choice for
// generating more pairs.
#pragma once

#include <QComboBox>

#include "labeling/taskcatalog.h"
#include "store/preferencestore.h"

namespace d2dpo::ui {

class ModelPicker final : public QComboBox {
    Q_OBJECT

public:
    explicit ModelPicker(QWidget* parent = nullptr);

    /// Lists the store's models again, keeping the choice (else the newest); the store's error
    /// in words, or an empty string.
    QString reload(PreferenceStore& store, TaskCatalog& tasks);
    /// Lists these models (read elsewhere: a team store's worker), keeping the choice as reload()
    /// does; `tasks` names each model's task from what it knows.
    void showModels(const std::vector<ModelRecord>& models, TaskCatalog& tasks);
    /// Chooses the model with this checkpoint; false when it is not listed.
    bool select(const QString& checkpointPath);
    /// The chosen model's checkpoint (named on screen or not); empty when there is none.
    QString checkpointPath() const;
    /// The chosen model's task key (named on screen or not); empty when there is none.
    QString taskKey() const;
    /// Masked: no model named, the box disabled, the choice kept.
    void setMasked(bool masked);
    bool masked() const { return m_masked; }

private:
    bool m_masked = false;
    QString m_kept; ///< the choice while masked
    QString m_keptTask;
};

} // namespace d2dpo::ui
