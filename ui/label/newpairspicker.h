// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view's choice of which new pairs to keep: as drawn, or picked by the model's implicit
// reward margin (jobs/pairscorer.h): least sure first or surest first. It never takes keys or the
// wheel while unfocused: the Label view's keys label pairs.
#pragma once

#include <QComboBox>

#include <optional>

#include "jobs/pairscorer.h"

namespace d2dpo::ui {

class NewPairsPicker final : public QComboBox {
    Q_OBJECT

public:
    /// `candidates`: the candidate pairs drawn per pair kept when picking by margin.
    NewPairsPicker(int candidates, QWidget* parent = nullptr);

    /// Nothing: as drawn.
    std::optional<PairPick> pick() const;
    void setPick(std::optional<PairPick> pick);

protected:
    void wheelEvent(QWheelEvent* event) override;
};

} // namespace d2dpo::ui
