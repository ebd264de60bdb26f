// SPDX-License-Identifier: GPL-3.0-or-later
// The comparison results window (Models ▸ Comparison results…): the store's blind comparisons
// and, for the chosen one, the report over the pairs labelled so far (experts/comparisonreport.h):
// each model's win rate and Bradley-Terry score, the head-to-head record of each two, with
// bootstrap 95% intervals. Measured in the background, again when this window's Label view
// labels and, while the window is open, whenever a poll of the store finds that the comparison's
// label count changed (other processes label too).
#pragma once

#include <QFutureWatcher>
#include <QHash>
#include <QWidget>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "experts/comparisonreport.h"
#include "store/preferencestore.h"
#include "ui/common/ownconnection.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;
class QTimer;

namespace d2dpo::ui {

class ComparisonResults final : public QWidget {
    Q_OBJECT

public:
    explicit ComparisonResults(PreferenceStore& store, QWidget* parent = nullptr);

    /// Lists the comparisons again and measures the chosen one when its labels changed, or always
    /// with `force` (a label undone and another made leave the count as it was).
    void refresh(bool force = false);
    /// Chooses comparison `id` (listing the store's comparisons again first).
    bool showComparison(qint64 id);
    qint64 shownComparison() const;
    bool busy() const { return m_watcher->isRunning(); }
    /// The report on screen.
    const std::optional<ComparisonReport>& report() const { return m_report; }
    /// How often the store is polled while the window is shown.
    void setPollInterval(int milliseconds);

    static constexpr int kResamples = 1000;

Q_SIGNALS:
    /// A report (or "no comparison") is on screen, the last one asked for.
    void refreshed();

protected:
    void showEvent(QShowEvent* event) override;
    void hideEvent(QHideEvent* event) override;

private:
    /// Lists `comparisons`, keeping the choice (or the one asked for); the chosen one.
    std::optional<ComparisonRecord> listComparisons(const std::vector<ComparisonRecord>& comparisons);
    /// Lists them and measures the chosen one when its labels changed (or `force`).
    void refreshWith(const std::vector<ComparisonRecord>& comparisons, bool force);
    void measure(const ComparisonRecord& comparison);
    void showReport(const ComparisonReport& report);
    void showStandings(const ComparisonReport& report);
    void showHeadToHead(const ComparisonReport& report);
    QString modelName(const std::string& id) const;

    PreferenceStore& m_store;
    std::optional<ComparisonReport> m_report;
    std::optional<ComparisonRecord> m_measuring; ///< the comparison (and its label count) being measured
    qint64 m_measuredId = 0;
    qint64 m_measuredLabels = -1;
    bool m_again = false;
    QHash<QString, QString> m_names; ///< model id -> name

    QComboBox* m_comparisons = nullptr;
    QPushButton* m_refresh = nullptr;
    QProgressBar* m_busy = nullptr;
    QLabel* m_summary = nullptr;
    QTableWidget* m_standings = nullptr;
    QTableWidget* m_headToHead = nullptr;
    QTimer* m_poll = nullptr;
    /// A measurement: the comparison's labels and its models' names are read with the report, on
    /// the pool, through a connection of its own (never the window's: a team store's round trips).
    struct Measured {
        std::optional<ComparisonReport> report;
        std::map<std::string, std::string> names; ///< model id -> name
        std::string error;
    };
    QFutureWatcher<Measured>* m_watcher = nullptr;
    std::shared_ptr<OwnConnection> m_reader;
    /// On a team store every listing is a look on a pool thread with a connection of its own: the
    /// poll's, and a refresh's (forced: measured whether or not the label counts changed).
    struct Looked {
        bool ok = false; ///< false: the server could not be read (the next look tries again)
        std::vector<ComparisonRecord> comparisons;
    };
    QFutureWatcher<Looked>* m_look = nullptr;
    std::shared_ptr<OwnConnection> m_lookout;
    std::string m_looked;    ///< the comparisons' label counts at the last look
    bool m_forceNext = false; ///< a forced refresh waits for the look's landing
    bool m_lookAgain = false; ///< a refresh came while a look was on its way: one more look after it
    qint64 m_wanted = 0;      ///< a comparison asked for before its look landed
    void look();
    void onLooked();
};

} // namespace d2dpo::ui
