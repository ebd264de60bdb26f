// SPDX-License-Identifier: GPL-3.0-or-later
// The Measurements view's look at the pairs a strategy would make of the selected assay, before
// any run trains on them: how many, from how many of its sequences, which are held out, and the
// first pairs themselves with their values and spreads (what `d2dpo measurements pairs` prints).
// Made in the background on a connection of its own: a large assay or a slow server never holds
// the window.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include <memory>
#include <string>

#include "base/result.h"
#include "jobs/assaypairs.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QTableWidget;

namespace d2dpo::ui {

class PairsPreview final : public QWidget {
    Q_OBJECT

public:
    /// `storePath`: the store the assays are read from.
    explicit PairsPreview(const std::string& storePath, QWidget* parent = nullptr);

    /// Shows the pairs of `assay` (none: empty) with the strategy as chosen; shown() follows.
    void showAssay(const QString& assay);
    /// The pairs made, and what was said of them.
    int pairCount() const { return m_pairs; }
    QString summary() const;
    QTableWidget* table() const { return m_table; }
    /// Chooses a strategy by its name ("margin", "clusters", "best").
    void setStrategy(const QString& name);

    static constexpr int kShown = 200; ///< the pairs listed (all are counted)

Q_SIGNALS:
    /// The pairs asked for last are on screen (or why there are none).
    void shown();

private:
    void update();
    void showMade(const Result<AssayPairsResult>& made);

    std::shared_ptr<class OwnConnection> m_reader;
    QFutureWatcher<Result<AssayPairsResult>>* m_making = nullptr;
    bool m_again = false; ///< the choices changed while pairs were made: made again when they land
    QString m_assay;
    QComboBox* m_strategy = nullptr;
    QDoubleSpinBox* m_heldOut = nullptr;
    QComboBox* m_split = nullptr;
    QSpinBox* m_budget = nullptr;
    QLabel* m_summary = nullptr;
    QTableWidget* m_table = nullptr;
    int m_pairs = 0;
};

} // namespace d2dpo::ui
