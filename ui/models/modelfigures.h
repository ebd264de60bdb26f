// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view's figures of the selected model's samples beside its reference's, as tabs: the
// histogram over the task's bins, and what the samples look like per position (logos,
// conservation, composition, identity to the nearest training sequence; PositionProfilePanel).
#pragma once

#include <QFutureWatcher>
#include <QString>
#include <QTabWidget>

#include <optional>

#include "facades/modelfiles.h"
#include "store/records.h"
#include "facades/taskinfo.h"
#include "ui/models/positionprofilepanel.h"

namespace d2dpo {
class PreferenceStore;
}

namespace d2dpo::ui {

class SampleHistogram;

/// A per-position profile computed in the background, with what it was computed from.
struct ProfiledInputs {
    PositionProfiles profiles;
    PositionProfileInputs inputs;
};

/// One model's drawn samples, named for the legends.
struct NamedSummary {
    QString id;
    QString name;
    std::optional<ModelSummary> summary; ///< none while not drawn
};

class ModelFigures final : public QTabWidget {
    Q_OBJECT

public:
    /// `store`: what the held-out tab reads the assays and runs from.
    explicit ModelFigures(PreferenceStore& store, QWidget* parent = nullptr);

    /// Draws the model's samples beside its reference's (when it has one); `task` gives the
    /// per-position tab its symbols and training sequences (profiled in the background, shown
    /// when done). Drawn again only when what it shows changed (another model, or samples drawn since).
    void show(const NamedSummary& model, const NamedSummary& reference, const TaskInfo* task);
    void clear();
    /// The held-out tab follows the selected model (its run's assay and split preset).
    void showHeldOut(const ModelRecord& model);

    SampleHistogram* histogram() const { return m_histogram; }
    PositionProfilePanel* profile() const { return m_profile; }
    /// The held-out measurements tab (its figures are scored on request).
    class HeldOutPanel* heldOut() const { return m_heldOut; }

private:
    SampleHistogram* m_histogram = nullptr;
    PositionProfilePanel* m_profile = nullptr;
    class HeldOutPanel* m_heldOut = nullptr;
    QString m_profiled; ///< what the profile tab shows (ids and sample counts), so it is not redone
    QFutureWatcher<ProfiledInputs>* m_watcher = nullptr; ///< the profile being computed
};

} // namespace d2dpo::ui
