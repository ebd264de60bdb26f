// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow: the models the File menu makes (a new model from a data file, an imported one):
// where they are written, and what the window does once one is in the store.
#include "ui/shell/mainwindow.h"

#include <QFileInfo>
#include <QStatusBar>

#include <optional>

#include "jobs/runfolder.h"
#include "ui/models/newmodel/datamodeldialog.h"
#include "ui/models/newmodel/importmodeldialog.h"
#include "ui/label/labelview.h"
#include "ui/models/modelsview.h"
#include "ui/train/trainview.h"

namespace d2dpo::ui {

QString MainWindow::modelFolder() const
{
    return QString::fromStdString(storeFolder(m_store->path())) + QStringLiteral("/models");
}

void MainWindow::modelAdded(const QString& path, const QString& said, const QString& figures, bool tooWeak)
{
    m_labelView->reload();
    m_trainView->reload();
    m_modelsView->reload();
    // A model fit to label is the one the Label view draws pairs from next, and the user hears so
    // (on a team store once the list read off the window's thread holds it).
    std::optional<ModelRecord> made;
    const bool team = m_labelView->teamChannel() != nullptr;
    if (team && !tooWeak) {
        m_labelView->useModelAt(path);
    } else if (!team && !tooWeak) {
        if (auto models = m_store->models())
            for (const ModelRecord& m : models.value())
                if (QString::fromStdString(m.path) == path)
                    made = m;
    }
    if (made)
        m_labelView->requeueForModel(QString::fromStdString(made->id));
    const QString name = made ? QString::fromStdString(made->name) : QFileInfo(path).fileName();
    const QString what = figures.isEmpty() ? said.arg(name) : tr("%1 (%2)").arg(said.arg(name), figures);
    statusBar()->showMessage(made || (team && !tooWeak) ? tr("%1; the Label view now draws pairs from it").arg(what)
                             : tooWeak ? tr("%1; too weak to label (the dialog says why)").arg(what)
                                       : what,
                             12000);
}

void MainWindow::newModelFromDataFile()
{
    // Kept across Cancel, with what was typed in it, while the store is the same; gone once it made a model.
    if (m_dataModelDialog && m_dataModelDialog->storePath() != QString::fromStdString(m_store->path()))
        delete m_dataModelDialog;
    if (!m_dataModelDialog) {
        auto* dialog = new DataModelDialog(QString::fromStdString(m_store->path()), modelFolder(), this);
        connect(dialog, &DataModelDialog::modelCreated, this, [this, dialog](const QString& path) {
            modelAdded(path, tr("New model %1 added to the store"), dialog->madeFigures(), dialog->madeTooWeak());
        });
        connect(dialog, &DataModelDialog::modelCreated, dialog, [dialog] { // its work done: closing ends it
            connect(dialog, &QDialog::finished, dialog, &QObject::deleteLater, Qt::UniqueConnection);
        });
        m_dataModelDialog = dialog;
    }
    m_dataModelDialog->open();
}

void MainWindow::importModel()
{
    // Kept across Cancel (a Cancel during the import too), with what was typed in it, while the
    // store is the same; gone once it imported a model.
    if (m_importDialog && m_importDialog->storePath() != QString::fromStdString(m_store->path()))
        delete m_importDialog;
    if (!m_importDialog) {
        auto* dialog = new ImportModelDialog(QString::fromStdString(m_store->path()), modelFolder(), this);
        connect(dialog, &ImportModelDialog::modelImported, this, [this, dialog](const QString& path) {
            modelAdded(path, tr("Imported model %1 added to the store"), dialog->madeFigures(), dialog->madeTooWeak());
        });
        connect(dialog, &ImportModelDialog::modelImported, dialog, [dialog] { // its work done: closing ends it
            connect(dialog, &QDialog::finished, dialog, &QObject::deleteLater, Qt::UniqueConnection);
        });
        m_importDialog = dialog;
    }
    m_importDialog->open();
}

} // namespace d2dpo::ui
