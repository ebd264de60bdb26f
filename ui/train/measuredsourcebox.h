// SPDX-License-Identifier: GPL-3.0-or-later
// The Train view's choice of measured preferences: which assay of the reference's task, how its
// values become pairs (the strategy, the held-out share and split that `measurements eval` judges
// on later), and whether the experts' labels train beside them at a stated share of each batch.
// The same choices as `d2dpo train --source measurements|labels,measurements`.
#pragma once

#include <QWidget>

#include <string>
#include <vector>

#include "jobs/assaypairs.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;

namespace d2dpo::ui {

class MeasuredSourceBox final : public QWidget {
    Q_OBJECT

public:
    explicit MeasuredSourceBox(QWidget* parent = nullptr);

    /// Lists the assays of `task` (the choice kept when it is still there); the count listed.
    int listAssays(const std::vector<AssayRecord>& assays, const std::string& task);
    bool hasAssay() const;
    /// Selects an assay by name; false when it is not listed.
    bool selectAssay(const QString& name);
    /// The assay and how its pairs are made, as chosen.
    AssayPairsSpec spec() const;
    /// Whether the experts' labels train too, and their share of each batch (0..1).
    bool withLabels() const;
    double labelsShare() const;
    /// Whether each group's pairs are scored in one pass (g-DPO): with clusters and no labels only.
    bool grouped() const;
    void setGrouped(bool grouped);
    void setWithLabels(bool with, double share);
    void setEditable(bool editable);

Q_SIGNALS:
    /// A choice changed: the pair count is counted again.
    void changed();

private:
    void updateEnabled();

    QComboBox* m_assay = nullptr;
    QComboBox* m_strategy = nullptr;
    QDoubleSpinBox* m_heldOut = nullptr;
    QComboBox* m_split = nullptr;
    QCheckBox* m_withLabels = nullptr;
    QDoubleSpinBox* m_labelsShare = nullptr;
    QCheckBox* m_grouped = nullptr;
    bool m_editable = true;
};

} // namespace d2dpo::ui
