// SPDX-License-Identifier: GPL-3.0-or-later
// The Measurements view: a lab's assay values as preferences. The store's assays with the files
// they came from (one row per import), the selected assay's values as a histogram, and the pairs
// a strategy would make of them. Import runs in the background (a file is checked whole against a
// model's task before anything is stored); an import is taken out again whole (Delete import), and
// the last one made here with Undo import (Ctrl+Z). A maintainer's view: on a team store, the
// database grants measurements to maintainers only.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include <map>
#include <memory>
#include <vector>

#include "base/result.h"
#include "jobs/assayimport.h"

class QLabel;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace d2dpo {
class PreferenceStore;
}

namespace d2dpo::ui {

class AssayHistogram;
class PairsPreview;

class MeasurementsView final : public QWidget {
    Q_OBJECT

public:
    explicit MeasurementsView(PreferenceStore& store, QWidget* parent = nullptr);
    ~MeasurementsView() override; ///< waits for an import on its way (it holds its own connection)

    /// Reads the assays and imports again in the background (the selection kept where it still
    /// is); listed() follows. Off the window's thread: a team store's server may stop answering.
    void reload();
    /// Opens the import dialog; imports what it is given.
    void chooseAndImport();
    /// Imports in the background; importFinished() says how it went.
    void importFile(const AssayImportSpec& spec);
    bool importing() const { return m_import->isRunning(); }
    /// Takes an import out of the store with its values; false (and a message) when it cannot.
    bool deleteImport(qint64 importId);
    /// Takes out the last import this view made; false when there is none left to undo.
    bool undoLastImport();
    bool selectAssay(const QString& name);

    QTreeWidget* tree() const { return m_tree; }
    AssayHistogram* histogram() const { return m_histogram; }
    PairsPreview* pairsPreview() const { return m_pairs; }
    QString statusText() const;

Q_SIGNALS:
    void statusMessage(const QString& message);
    /// An import landed or was taken out: the Train view counts its pairs again.
    void measurementsChanged();
    void importFinished(bool ok, const QString& message);
    /// A reload landed: the tree shows the store's assays.
    void listed();
    /// The selected assay's values landed: the histogram shows them.
    void valuesShown();

private:
    struct Listing {
        std::vector<AssayRecord> assays;
        std::vector<AssayImportRecord> imports;
        QString error;
    };
    struct Values {
        QString assay;
        std::vector<double> values;
        QString error;
    };
    void showListing(const Listing& listing);
    void showSelected();
    void setStatus(const QString& text);
    QString selectedAssay() const;
    qint64 selectedImport() const;

    PreferenceStore& m_store;
    QTreeWidget* m_tree = nullptr;
    QPushButton* m_importButton = nullptr;
    QPushButton* m_deleteButton = nullptr;
    QPushButton* m_undoButton = nullptr;
    QLabel* m_status = nullptr;
    AssayHistogram* m_histogram = nullptr;
    PairsPreview* m_pairs = nullptr;
    QFutureWatcher<Result<AssayImportResult>>* m_import = nullptr;
    QFutureWatcher<Listing>* m_listing = nullptr;
    QFutureWatcher<Values>* m_values = nullptr;
    std::shared_ptr<class OwnConnection> m_reader;
    bool m_listAgain = false;
    QString m_valuesWanted;      ///< the assay whose values should show (read again when another landed)
    std::map<QString, QString> m_directions; ///< each listed assay's better direction
    QString m_selectAfterListing; ///< an assay to select once the listing on its way lands
    QString m_importedAssay;     ///< the assay of the import on its way
    std::vector<qint64> m_made;  ///< the imports made here, the last last: what Undo takes out
};

} // namespace d2dpo::ui
