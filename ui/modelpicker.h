// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view's "Pairs from model" box: the store's models, newest chosen by default, each item
// carrying its checkpoint path. While a blind comparison's pair is on screen it names no model
// (a name above the pair would read as where the pair came from) and keeps the choice for
// generating more pairs.
#pragma once

#include <QComboBox>

#include "store/preferencestore.h"

namespace d2dpo::ui {

class ModelPicker final : public QComboBox {
    Q_OBJECT

public:
    explicit ModelPicker(QWidget* parent = nullptr);

    /// Lists the store's models again, keeping the choice (else the newest); the store's error
    /// in words, or an empty string.
    QString reload(PreferenceStore& store);
    /// Chooses the model with this checkpoint; false when it is not listed.
    bool select(const QString& checkpointPath);
    /// The chosen model's checkpoint (named on screen or not); empty when there is none.
    QString checkpointPath() const;
    /// Masked: no model named, the box disabled, the choice kept.
    void setMasked(bool masked);
    bool masked() const { return m_masked; }

private:
    bool m_masked = false;
    QString m_kept; ///< the choice while masked
};

} // namespace d2dpo::ui
