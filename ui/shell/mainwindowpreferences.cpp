// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow: File ▸ Import preferences… and Export preferences…. The file and the task are asked
// for on the window's thread; the store is read and written on the store-read pool through a
// connection of the job's own (a file of thousands of labels, or a team store's server that hangs,
// never holds the window), and the window says how it went when the job lands.
#include "ui/shell/mainwindow.h"

#include <QFileDialog>
#include <QFutureWatcher>
#include <QInputDialog>
#include <QMessageBox>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>

#include "facades/taskinfo.h"
#include "store/preferencejsonl.h"
#include "ui/common/longjobs.h"
#include "ui/common/modellistreader.h"
#include "ui/common/ownconnection.h"
#include "ui/label/labelview.h"
#include "ui/train/trainview.h"

namespace d2dpo::ui {

namespace {

/// What an import or export job brings back.
struct PreferencesMoved {
    std::string error;
    ImportOutcome imported; ///< an import's
    int64_t exported = 0; ///< an export's count of lines
};

/// Runs `work` on the pool with a connection of its own to the store at `url`, and `done` with
/// its outcome on `window`'s thread (not at all if the window is gone by then).
void moveInBackground(QObject* window, const std::string& url, std::function<PreferencesMoved(PreferenceStore&)> work,
                      std::function<void(const PreferencesMoved&)> done)
{
    auto* watcher = new QFutureWatcher<PreferencesMoved>(window);
    QObject::connect(watcher, &QFutureWatcherBase::finished, window, [watcher, done = std::move(done)] {
        watcher->deleteLater();
        done(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run(storeReadPool(), [url, work = std::move(work)] {
        OwnConnection connection(url);
        auto store = connection.get();
        if (!store)
            return PreferencesMoved{store.error(), {}, 0};
        return work(*store.value());
    }));
}

} // namespace

void MainWindow::importPreferences()
{
    if (m_movingPreferences) {
        statusBar()->showMessage(tr("Preferences are still being imported or exported…"), 8000);
        return;
    }
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Import preferences"), {}, tr("JSON Lines (*.jsonl);;All files (*)"));
    if (path.isEmpty())
        return;
    // The sequences are read as one task's: the task of a model the user picks. A team store's
    // models are read off the window's thread first.
    if (!m_store->isTeamStore())
        return importPreferencesAs(path, ModelListReader::readNow(*m_store));
    auto* reader = new ModelListReader(m_store->path(), this);
    connect(reader, &ModelListReader::ready, this, [this, reader, path](const ModelList& list) {
        reader->deleteLater();
        importPreferencesAs(path, list);
    });
    statusBar()->showMessage(tr("Reading the models from the team store…"));
    reader->read();
}

void MainWindow::importPreferencesAs(const QString& path, const ModelList& list)
{
    if (!list.ok) {
        QMessageBox::warning(this, tr("Import failed"), QString::fromStdString(list.error));
        return;
    }
    QStringList names;
    std::vector<ModelRecord> models;
    for (const ModelRecord& m : list.models)
        if (!m.taskKey.empty()) {
            names << QStringLiteral("%1 (%2)").arg(QString::fromStdString(m.name), QString::fromStdString(m.id));
            models.push_back(m);
        }
    if (names.isEmpty()) {
        QMessageBox::warning(this, tr("Import failed"),
                             tr("The imported sequences are read as a model's task: add a model first (generate "
                                "pairs from it in the Label view)."));
        return;
    }
    bool ok = false;
    const QString picked = QInputDialog::getItem(this, tr("Import preferences"),
                                                 tr("The sequences are of the task of the model:"), names, 0, false, &ok);
    refocus();
    if (!ok)
        return;
    m_movingPreferences = true;
    statusBar()->showMessage(tr("Importing the preferences of %1…").arg(path));
    const ModelRecord model = models[size_t(names.indexOf(picked))];
    moveInBackground(
        this, m_store->path(),
        [model, file = path.toStdString()](PreferenceStore& store) {
            auto task = TaskInfo::ofModel(store, model);
            if (!task)
                return PreferencesMoved{task.error(), {}, 0};
            const TaskInfo info = task.value();
            const JsonlRules rules{info.key(), [info](const std::string& text) { return info.check(text); }};
            auto imported = importPreferencesJsonl(store, file, rules);
            return imported ? PreferencesMoved{{}, imported.value(), 0} : PreferencesMoved{imported.error(), {}, 0};
        },
        [this](const PreferencesMoved& moved) {
            m_movingPreferences = false;
            if (!moved.error.empty()) {
                statusBar()->clearMessage();
                QMessageBox::warning(this, tr("Import failed"), QString::fromStdString(moved.error));
                return;
            }
            m_labelView->reload();
            m_trainView->reload();
            const ImportOutcome& outcome = moved.imported;
            statusBar()->showMessage(outcome.duplicates == 0
                                         ? tr("Imported %1 preferences").arg(outcome.imported)
                                         : tr("Imported %1 preferences; %2 already in the store were left out")
                                               .arg(outcome.imported)
                                               .arg(outcome.duplicates),
                                     8000);
        });
}

void MainWindow::exportPreferences()
{
    if (m_movingPreferences) {
        statusBar()->showMessage(tr("Preferences are still being imported or exported…"), 8000);
        return;
    }
    const QString path = QFileDialog::getSaveFileName(this, tr("Export preferences"),
                                                      QStringLiteral("preferences.jsonl"), tr("JSON Lines (*.jsonl)"));
    if (path.isEmpty()) {
        refocus();
        return;
    }
    // The DPO convention carries only "chosen over rejected": ties, skips and both-bad go in only
    // when asked for, with a shape of their own.
    const auto answer = QMessageBox::question(
        this, tr("Export preferences"),
        tr("Also export ties, skips and “both bad” labels?\n\nThe DPO format ({\"chosen\", \"rejected\"}) has no "
           "place for them: they are written as {\"sequence_a\", \"sequence_b\", \"choice\"} lines, which DPO "
           "readers skip. Choose No for a plain DPO file."),
        QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
    refocus();
    const bool withUndecided = answer == QMessageBox::Yes;
    m_movingPreferences = true;
    statusBar()->showMessage(tr("Exporting the preferences to %1…").arg(path));
    moveInBackground(
        this, m_store->path(),
        [file = path.toStdString(), withUndecided](PreferenceStore& store) {
            auto written = exportPreferencesJsonl(store, file, withUndecided);
            return written ? PreferencesMoved{{}, {}, written.value()} : PreferencesMoved{written.error(), {}, 0};
        },
        [this, path, withUndecided](const PreferencesMoved& moved) {
            m_movingPreferences = false;
            if (!moved.error.empty()) {
                statusBar()->clearMessage();
                QMessageBox::warning(this, tr("Export failed"), QString::fromStdString(moved.error));
                return;
            }
            statusBar()->showMessage(withUndecided ? tr("Exported %1 labels to %2").arg(moved.exported).arg(path)
                                                   : tr("Exported %1 preferences (ties and skips left out) to %2")
                                                         .arg(moved.exported)
                                                         .arg(path),
                                     8000);
        });
}

} // namespace d2dpo::ui
