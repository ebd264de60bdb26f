// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/measurements/measurementsview.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <utility>
#include <QtConcurrent/QtConcurrentRun>

#include "store/preferencestore.h"
#include "ui/common/longjobs.h"
#include "ui/common/ownconnection.h"
#include "ui/measurements/assayhistogram.h"
#include "ui/measurements/assayimportdialog.h"
#include "ui/measurements/pairspreview.h"

namespace d2dpo::ui {

namespace {

constexpr int kAssayRole = Qt::UserRole;
constexpr int kImportRole = Qt::UserRole + 1;

} // namespace

MeasurementsView::MeasurementsView(PreferenceStore& store, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_import(new QFutureWatcher<Result<AssayImportResult>>(this))
    , m_listing(new QFutureWatcher<Listing>(this))
    , m_values(new QFutureWatcher<Values>(this))
    , m_reader(std::make_shared<OwnConnection>(store.path()))
{
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    auto* left = new QWidget(splitter);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    m_tree = new QTreeWidget(left);
    m_tree->setObjectName(QStringLiteral("assays"));
    m_tree->setHeaderLabels({tr("Assay / import"), tr("Values"), tr("Sequences"), tr("Task or file")});
    m_tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_tree->setAccessibleName(tr("Assays and their imports"));
    leftLayout->addWidget(m_tree, 1);
    auto* buttons = new QHBoxLayout;
    m_importButton = new QPushButton(tr("&Import values…"), left);
    m_deleteButton = new QPushButton(tr("&Delete import…"), left);
    m_undoButton = new QPushButton(tr("&Undo import"), left);
    m_undoButton->setToolTip(tr("Take out the last import made here (Ctrl+Z)"));
    for (QPushButton* b : {m_importButton, m_deleteButton, m_undoButton})
        buttons->addWidget(b);
    buttons->addStretch(1);
    leftLayout->addLayout(buttons);
    m_status = new QLabel(left);
    m_status->setObjectName(QStringLiteral("measurementsStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    leftLayout->addWidget(m_status);
    auto* right = new QSplitter(Qt::Vertical, splitter);
    m_histogram = new AssayHistogram(right);
    m_pairs = new PairsPreview(store.path(), right);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setSizes({440, 840}); // the tree's four columns readable at 1280 wide
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(splitter);

    connect(m_importButton, &QPushButton::clicked, this, &MeasurementsView::chooseAndImport);
    connect(m_undoButton, &QPushButton::clicked, this, &MeasurementsView::undoLastImport);
    connect(new QShortcut(QKeySequence::Undo, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut),
            &QShortcut::activated, this, &MeasurementsView::undoLastImport);
    connect(m_deleteButton, &QPushButton::clicked, this, [this] {
        const qint64 id = selectedImport();
        if (id <= 0)
            return;
        if (QMessageBox::question(this, tr("Delete import"),
                                  tr("Take import %1 and its values out of the store? Runs already trained on "
                                     "them keep their models.")
                                      .arg(id)) == QMessageBox::Yes)
            deleteImport(id);
    });
    connect(m_tree, &QTreeWidget::currentItemChanged, this, &MeasurementsView::showSelected);
    connect(m_listing, &QFutureWatcherBase::finished, this, [this] {
        const Listing listing = m_listing->result();
        if (std::exchange(m_listAgain, false))
            reload();
        showListing(listing);
    });
    connect(m_values, &QFutureWatcherBase::finished, this, [this] {
        const Values values = m_values->result();
        if (values.assay != m_valuesWanted) { // another assay was chosen meanwhile
            showSelected();
            return;
        }
        if (!values.error.isEmpty())
            setStatus(tr("Cannot read the values of '%1': %2").arg(values.assay, values.error));
        const auto direction = m_directions.find(values.assay);
        m_histogram->draw(values.assay, values.values,
                          direction == m_directions.end() ? QStringLiteral("higher") : direction->second);
        Q_EMIT valuesShown();
    });
    connect(m_import, &QFutureWatcherBase::finished, this, [this] {
        const Result<AssayImportResult> result = m_import->result();
        m_importButton->setEnabled(true);
        QString message;
        if (!result) {
            message = tr("Nothing was imported: %1").arg(QString::fromStdString(result.error()));
        } else if (result->stored.alreadyImported) {
            message = tr("This file is already in the store as import %1: nothing was added.")
                          .arg(result->stored.importId);
        } else {
            m_made.push_back(result->stored.importId);
            message = tr("Imported %L1 measurements of %L2 sequences (%3) into '%4' as import %5.")
                          .arg(qint64(result->rows))
                          .arg(qint64(result->sequences))
                          .arg(QString::fromStdString(result->format))
                          .arg(m_importedAssay)
                          .arg(result->stored.importId);
        }
        if (result)
            m_selectAfterListing = m_importedAssay;
        reload();
        setStatus(message);
        Q_EMIT importFinished(result.ok(), message);
        if (result && !result->stored.alreadyImported)
            Q_EMIT measurementsChanged();
    });
    reload();
}

// An import writes through a connection of its own: waited for, so that it is never cut halfway.
// A read on its way holds only its shared connection and is left to land on nobody.
MeasurementsView::~MeasurementsView() { m_import->waitForFinished(); }

void MeasurementsView::setStatus(const QString& text)
{
    m_status->setText(text);
    Q_EMIT statusMessage(text);
}

QString MeasurementsView::statusText() const { return m_status->text(); }

void MeasurementsView::reload()
{
    if (m_listing->isRunning()) {
        m_listAgain = true; // an import may have landed meanwhile: read once more after this one
        return;
    }
    m_listing->setFuture(QtConcurrent::run(storeReadPool(), [reader = m_reader]() -> Listing {
        Listing listing;
        auto store = reader->get();
        if (!store) {
            listing.error = QString::fromStdString(store.error());
            return listing;
        }
        auto assays = store.value()->assays();
        auto imports = store.value()->assayImports();
        if (!assays || !imports) {
            listing.error = QString::fromStdString(assays ? imports.error() : assays.error());
            return listing;
        }
        listing.assays = std::move(assays.value());
        listing.imports = std::move(imports.value());
        return listing;
    }));
}

void MeasurementsView::showListing(const Listing& listing)
{
    if (!listing.error.isEmpty()) {
        setStatus(tr("Cannot read the measurements: %1").arg(listing.error));
        return;
    }
    const QString assay = std::exchange(m_selectAfterListing, QString()).isEmpty() ? selectedAssay() : m_importedAssay;
    const qint64 import = selectedImport();
    const QSignalBlocker block(m_tree);
    m_tree->clear();
    m_directions.clear();
    QTreeWidgetItem* current = nullptr;
    for (const AssayRecord& a : listing.assays) {
        const QString name = QString::fromStdString(a.name);
        m_directions[name] = QString::fromStdString(a.direction);
        auto* item = new QTreeWidgetItem(m_tree, {name, QLocale().toString(qint64(a.measurements)),
                                                  QLocale().toString(qint64(a.sequences)),
                                                  QString::fromStdString(a.task)});
        item->setData(0, kAssayRole, name);
        item->setToolTip(0, a.direction == "lower" ? tr("a lower value is better") : tr("a higher value is better"));
        for (const AssayImportRecord& i : listing.imports) {
            if (i.assay != a.name)
                continue;
            const QString file = QString::fromStdString(i.file);
            auto* child = new QTreeWidgetItem(item, {tr("import %1").arg(i.id), QLocale().toString(qint64(i.measurements)),
                                                     QString(), QFileInfo(file).fileName()});
            child->setToolTip(0, tr("imported %1").arg(QString::fromStdString(i.createdAt)));
            child->setToolTip(3, file);
            child->setData(0, kAssayRole, name);
            child->setData(0, kImportRole, qint64(i.id));
            if (i.id == import && name == assay)
                current = child;
        }
        item->setExpanded(true);
        if (!current && name == assay)
            current = item;
    }
    if (!current && m_tree->topLevelItemCount() > 0)
        current = m_tree->topLevelItem(0);
    m_tree->setCurrentItem(current);
    showSelected();
    if (m_tree->topLevelItemCount() == 0 && m_status->text().isEmpty())
        m_status->setText(tr("No measurements yet. Import a file of assay values (CSV/TSV, ProteinGym's DMS "
                             "layout or FASTA with values): its pairs train beside or instead of the labels."));
    Q_EMIT listed();
}

QString MeasurementsView::selectedAssay() const
{
    const QTreeWidgetItem* item = m_tree->currentItem();
    return item ? item->data(0, kAssayRole).toString() : QString();
}

qint64 MeasurementsView::selectedImport() const
{
    const QTreeWidgetItem* item = m_tree->currentItem();
    return item ? item->data(0, kImportRole).toLongLong() : 0;
}

bool MeasurementsView::selectAssay(const QString& name)
{
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i)
        if (m_tree->topLevelItem(i)->data(0, kAssayRole).toString() == name) {
            m_tree->setCurrentItem(m_tree->topLevelItem(i));
            return true;
        }
    return false;
}

void MeasurementsView::showSelected()
{
    const QString assay = selectedAssay();
    m_deleteButton->setEnabled(selectedImport() > 0);
    m_undoButton->setEnabled(!m_made.empty());
    m_pairs->showAssay(assay); // the preview reads in the background too
    m_valuesWanted = assay;
    if (assay.isEmpty()) {
        m_histogram->clear();
        return;
    }
    if (m_values->isRunning())
        return; // the assay wanted is read when the read on its way lands
    m_values->setFuture(QtConcurrent::run(storeReadPool(), [reader = m_reader, assay]() -> Values {
        Values out;
        out.assay = assay;
        auto store = reader->get();
        auto values = store ? store.value()->measurementsOf(assay.toStdString())
                            : Result<std::vector<StoredMeasurement>>(makeError(store.error()));
        if (!values) {
            out.error = QString::fromStdString(values.error());
            return out;
        }
        for (const StoredMeasurement& m : values.value())
            out.values.push_back(m.value);
        return out;
    }));
}

void MeasurementsView::chooseAndImport()
{
    if (importing())
        return;
    auto models = m_store.models();
    if (!models || models->empty()) {
        setStatus(models ? tr("Import needs a model of the sequences' task: add one first (File ▸ New model from a "
                              "data file, or Import model).")
                         : QString::fromStdString(models.error()));
        return;
    }
    std::vector<ModelRecord> newestFirst(models->rbegin(), models->rend());
    AssayImportDialog dialog(newestFirst, m_store.path(), this);
    if (dialog.exec() == QDialog::Accepted)
        importFile(dialog.spec());
}

void MeasurementsView::importFile(const AssayImportSpec& spec)
{
    if (importing())
        return;
    m_importedAssay = QString::fromStdString(spec.read.assay);
    m_importButton->setEnabled(false);
    setStatus(tr("Checking %1 against the model's task…").arg(QString::fromStdString(spec.file)));
    // The import opens a connection of its own: the window's stays free while a large file is read.
    m_import->setFuture(QtConcurrent::run(longJobPool(), [spec] { return importAssayFile(spec); }));
}

bool MeasurementsView::deleteImport(qint64 importId)
{
    const auto removed = m_store.deleteAssayImport(importId, false);
    if (!removed) {
        setStatus(tr("Import %1 was not taken out: %2").arg(importId).arg(QString::fromStdString(removed.error())));
        return false;
    }
    m_made.erase(std::remove(m_made.begin(), m_made.end(), importId), m_made.end());
    reload();
    setStatus(tr("Took out import %1 and its %L2 measurements.").arg(importId).arg(qint64(removed.value())));
    Q_EMIT measurementsChanged();
    return true;
}

bool MeasurementsView::undoLastImport()
{
    if (m_made.empty() || importing())
        return false;
    return deleteImport(m_made.back());
}

} // namespace d2dpo::ui
