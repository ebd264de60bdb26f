// SPDX-License-Identifier: GPL-3.0-or-later
// The Labelers panel (View ▸ Labelers…): how far the experts agree with each other, from the
// store's judged labels: Krippendorff's alpha over everyone, Cohen's kappa for each two labelers
// with the pairs they share, and each labeler's profile (agreement with the others' majority, left
// share as position bias, median time per decision, gold accuracy), with bootstrap 95% intervals.
// The report (experts/teamagreement.h, 1000 resamples) is measured in the background and again
// when labels change; an undefined figure says why. On a team store the labels are read in the
// background too, on a connection of the panel's own: the window never waits on the network.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "experts/teamagreement.h"
#include "store/preferencestore.h"
#include "ui/common/ownconnection.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace d2dpo::ui {

class LabelersPanel final : public QWidget {
    Q_OBJECT

public:
    explicit LabelersPanel(PreferenceStore& store, QWidget* parent = nullptr);

    /// Reads the labels and measures them again in the background; a refresh asked for while one
    /// runs follows it. A hidden panel measures when it is shown.
    void refresh();
    bool busy() const { return m_watcher->isRunning(); }
    /// The report on screen.
    const std::optional<TeamAgreement>& report() const { return m_report; }
    /// Only this task's pairs ("" for every task).
    void setTask(const QString& taskKey);

    static constexpr int kResamples = 1000;

Q_SIGNALS:
    /// A report is on screen (the last one asked for).
    void refreshed();

protected:
    void showEvent(QShowEvent* event) override;

private:
    /// What one measure read and found.
    struct Measured {
        TeamAgreement report;
        std::set<std::string> tasks;
        int64_t labels = 0;
        std::string error; ///< the labels could not be read
    };
    static Measured measure(const std::vector<JudgedLabel>& labels, const std::string& task);
    void listTasks(const std::set<std::string>& tasks);
    void showReport(const TeamAgreement& report);
    void showAlpha(const TeamAgreement& report);
    void showKappas(const TeamAgreement& report);
    void showProfiles(const TeamAgreement& report);

    PreferenceStore& m_store;
    std::optional<TeamAgreement> m_report;
    bool m_again = false;  ///< labels changed while measuring
    bool m_stale = true;   ///< labels changed while hidden
    int64_t m_labelCount = 0;

    QComboBox* m_task = nullptr;
    QPushButton* m_refresh = nullptr;
    QProgressBar* m_busy = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_alpha = nullptr;
    QLabel* m_items = nullptr;
    QTableWidget* m_kappas = nullptr;
    QLabel* m_noKappa = nullptr;
    QTableWidget* m_profiles = nullptr;
    QFutureWatcher<Measured>* m_watcher = nullptr;
    /// A team store's connection for reading the labels, used by one measure at a time.
    std::shared_ptr<OwnConnection> m_reader;
};

} // namespace d2dpo::ui
