// SPDX-License-Identifier: GPL-3.0-or-later
// The main window of d2dpo-studio: the Label, Train and Models views as tabs, wired into the
// loop (label -> train -> look at the new model -> label its outputs), a menu to import or
// export preferences, a status bar for messages. Window geometry, the current tab and the
// hints setting persist in QSettings.
#pragma once

#include <QMainWindow>
#include <QPointer>

#include <memory>

#include "store/preferencestore.h"

namespace d2dpo::ui {

class CompareModelsDialog;
class DataModelDialog;
class ImportModelDialog;
class ComparisonResults;
class LabelersPanel;
class LabelView;
class MeasurementsView;
class ModelsView;
class QueueSettingsDialog;
class TrainView;
struct ModelList;

class MainWindow final : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(std::unique_ptr<PreferenceStore> store, QWidget* parent = nullptr);
    ~MainWindow() override;

    LabelView* labelView() const { return m_labelView; }
    TrainView* trainView() const { return m_trainView; }
    ModelsView* modelsView() const { return m_modelsView; }
    MeasurementsView* measurementsView() const { return m_measurementsView; }
    /// Shows the Label (0), Train (1) or Models (2) view.
    void showView(int index);
    PreferenceStore& store() const { return *m_store; }
    /// Closes as Quit does but without asking: a run in progress stops after its current step with
    /// its checkpoint kept (SIGINT and SIGTERM do this: closeonsignals.h).
    void closeWithoutAsking();
    /// View ▸ Labelers…: the agreement panel, beside the window.
    void showLabelers();
    /// The comparison results window, showing comparison `comparisonId` when it is given.
    void showComparisonResults(qint64 comparisonId = 0);
    /// "Compare models…" with `modelId` selected: the dialog, opened (it deletes itself on close).
    CompareModelsDialog* compareModels(const QString& modelId);
    /// Settings ▸ Labeling queue…: the dialog, opened (it deletes itself on close); a change
    /// accepted there makes the Label view read its queue again.
    QueueSettingsDialog* editQueueSettings();
    /// The windows beside this one, or null before they were first shown.
    LabelersPanel* labelersPanel() const { return m_labelers; }
    ComparisonResults* comparisonResults() const { return m_results; }
    /// File ▸ Import preferences… once the file is chosen: `path` is imported as the task of a
    /// model of `models`, which the user picks, in the background (the status bar says how it went).
    void importPreferencesAs(const QString& path, const ModelList& models);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildMenus();
    void newModelFromDataFile();
    void importModel();
    /// Where new and imported models' checkpoints go: models/ beside the store.
    QString modelFolder() const;
    /// A model was added to the store: the views read it, the status bar says `message`.
    /// After a dialog made the model at `path`: the views read it, and one fit to label (not
    /// `tooWeak`) becomes the Label view's model; `said` (with %1 for its name) and `figures` are shown.
    void modelAdded(const QString& path, const QString& said, const QString& figures, bool tooWeak);
    // File ▸ Import and Export preferences (mainwindowpreferences.cpp): the store is read and
    // written in the background.
    void importPreferences();
    void exportPreferences();
    // Opening another store (mainwindowstores.cpp): it opens in a new window, and this one closes.
    void openStore();
    void openTeamStore();
    void reopenOn(const QString& store);
    void changeLabeler();
    /// Gives the keys back to the Label view when it is the current view (after a menu or dialog).
    void refocus();

    std::unique_ptr<PreferenceStore> m_store;
    bool m_movingPreferences = false; ///< an import or export of preferences is on its way
    LabelView* m_labelView = nullptr;
    TrainView* m_trainView = nullptr;
    ModelsView* m_modelsView = nullptr;
    QPointer<ImportModelDialog> m_importDialog;   ///< kept across Cancel with what was typed
    QPointer<DataModelDialog> m_dataModelDialog;  ///< likewise
    MeasurementsView* m_measurementsView = nullptr;
    LabelersPanel* m_labelers = nullptr;   ///< made when first shown
    ComparisonResults* m_results = nullptr; ///< made when first shown
    class QTabWidget* m_tabs = nullptr;
    bool m_askBeforeClosing = true;
};

} // namespace d2dpo::ui
