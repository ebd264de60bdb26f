// The main window of d2dpo-studio: the Label view (training and model views join it later),
// a menu to open another store and to import or export preferences, a status bar for messages.
// Window geometry and the hints setting persist in QSettings.
#pragma once

#include <QMainWindow>

#include <memory>

#include "preferencestore.h"

namespace d2dpo::ui {

class LabelView;

class MainWindow final : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(std::unique_ptr<PreferenceStore> store, QWidget* parent = nullptr);
    ~MainWindow() override;

    LabelView* labelView() const { return m_labelView; }
    PreferenceStore& store() const { return *m_store; }

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildMenus();
    void importPreferences();
    void exportPreferences();

    std::unique_ptr<PreferenceStore> m_store;
    LabelView* m_labelView = nullptr;
};

} // namespace d2dpo::ui
