// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/mainwindow.h"

#include <QFileInfo>
#include <QInputDialog>

#include "jobs/taskinfo.h"
#include "ui/datamodeldialog.h"

#include <QAction>
#include <QCloseEvent>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

#include "ui/labelview.h"
#include "ui/modelsview.h"
#include "ui/trainview.h"
#include "store/preferencejsonl.h"

namespace d2dpo::ui {

MainWindow::MainWindow(std::unique_ptr<PreferenceStore> store, QWidget* parent)
    : QMainWindow(parent)
    , m_store(std::move(store))
{
    setWindowTitle(tr("d2dpo-studio — %1").arg(QString::fromStdString(m_store->path())));
    setWindowIcon(QIcon(QStringLiteral(":/icons/d2dpo-studio.png")));
    m_tabs = new QTabWidget(this);
    m_labelView = new LabelView(*m_store, m_tabs);
    m_trainView = new TrainView(*m_store, m_tabs);
    m_modelsView = new ModelsView(*m_store, m_tabs);
    m_tabs->addTab(m_labelView, tr("&Label"));
    m_tabs->addTab(m_trainView, tr("&Train"));
    m_tabs->addTab(m_modelsView, tr("&Models"));
    m_tabs->setDocumentMode(true);
    setCentralWidget(m_tabs);

    const auto showMessage = [this](const QString& m) { statusBar()->showMessage(m, 8000); };
    connect(m_labelView, &LabelView::statusMessage, this, showMessage);
    connect(m_trainView, &TrainView::statusMessage, this, showMessage);
    connect(m_modelsView, &ModelsView::statusMessage, this, showMessage);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this](int index) {
        if (index == 0)
            m_labelView->setFocus();
        else if (index == 1 && !m_trainView->training())
            m_trainView->reload();
        else if (index == 2)
            m_modelsView->reload();
    });
    connect(m_trainView, &TrainView::runFinished, this, [this] {
        m_modelsView->reload();
        m_labelView->reload();
    });
    connect(m_modelsView, &ModelsView::labelPairsFrom, this, [this](const QString& path) {
        m_labelView->labelFrom(path);
        showView(0);
    });
    connect(m_modelsView, &ModelsView::trainFrom, this, [this](const QString& id) {
        if (m_trainView->training()) {
            statusBar()->showMessage(tr("A run is in progress; stop it first."), 8000);
            return;
        }
        showView(1);
        m_trainView->selectReference(id);
    });
    buildMenus();

    QSettings settings;
    if (!restoreGeometry(settings.value("window/geometry").toByteArray()))
        resize(1280, 800);
    m_labelView->setHintsVisible(settings.value("label/hints", true).toBool());
    showView(settings.value("window/view", 0).toInt());
    m_labelView->setFocus();
}

void MainWindow::showView(int index)
{
    if (index >= 0 && index < m_tabs->count())
        m_tabs->setCurrentIndex(index);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New model from a data file…"), this, &MainWindow::newModelFromDataFile);
    file->addSeparator();
    file->addAction(tr("&Import preferences (JSONL)…"), this, &MainWindow::importPreferences);
    file->addAction(tr("&Export preferences (JSONL)…"), this, &MainWindow::exportPreferences);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
}

void MainWindow::newModelFromDataFile()
{
    const QString folder = QFileInfo(QString::fromStdString(m_store->path())).absolutePath() + QStringLiteral("/models");
    auto* dialog = new DataModelDialog(QString::fromStdString(m_store->path()), folder, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &DataModelDialog::modelCreated, this, [this](const QString& path) {
        m_labelView->reload();
        m_trainView->reload();
        m_modelsView->reload();
        statusBar()->showMessage(tr("New model %1 added to the store").arg(path), 8000);
    });
    dialog->open();
}

void MainWindow::importPreferences()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Import preferences"), {},
                                                      tr("JSON Lines (*.jsonl);;All files (*)"));
    if (path.isEmpty())
        return;
    // The sequences are read as one task's: the task of a model the user picks.
    QStringList names;
    std::vector<std::string> keys;
    if (auto models = m_store->models())
        for (const ModelRecord& m : models.value())
            if (auto spec = modelSpecFromJson(m.specJson)) {
                names << QStringLiteral("%1 (%2)").arg(QString::fromStdString(m.name), QString::fromStdString(m.id));
                keys.push_back(taskKey(spec->task));
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
    if (!ok)
        return;
    auto task = TaskInfo::fromStore(*m_store, keys[size_t(names.indexOf(picked))]);
    if (!task) {
        QMessageBox::warning(this, tr("Import failed"), QString::fromStdString(task.error()));
        return;
    }
    const TaskInfo info = task.value();
    const JsonlRules rules{info.key(), [info](const std::string& text) { return info.check(text); }};
    auto imported = importPreferencesJsonl(*m_store, path.toStdString(), rules);
    if (!imported) {
        QMessageBox::warning(this, tr("Import failed"), QString::fromStdString(imported.error()));
        return;
    }
    m_labelView->reload();
    m_trainView->reload();
    const ImportOutcome& outcome = imported.value();
    statusBar()->showMessage(outcome.duplicates == 0
                                 ? tr("Imported %1 preferences").arg(outcome.imported)
                                 : tr("Imported %1 preferences; %2 already in the store were left out")
                                       .arg(outcome.imported)
                                       .arg(outcome.duplicates),
                             8000);
}

void MainWindow::exportPreferences()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Export preferences"), QStringLiteral("preferences.jsonl"),
                                                      tr("JSON Lines (*.jsonl)"));
    if (path.isEmpty())
        return;
    auto written = exportPreferencesJsonl(*m_store, path.toStdString());
    if (!written) {
        QMessageBox::warning(this, tr("Export failed"), QString::fromStdString(written.error()));
        return;
    }
    statusBar()->showMessage(tr("Exported %1 preferences to %2").arg(written.value()).arg(path), 8000);
}

void MainWindow::closeWithoutAsking()
{
    m_askBeforeClosing = false;
    close();
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (m_trainView->training() && !m_askBeforeClosing) {
        m_trainView->shutdown();
    } else if (m_trainView->training()) {
        const auto answer = QMessageBox::question(
            this, tr("Training in progress"),
            tr("A D2-DPO run is in progress. Stop it (its last checkpoint is kept) and quit?"));
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
        m_trainView->shutdown();
    }
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/view", m_tabs->currentIndex());
    settings.setValue("label/hints", m_labelView->hintsVisible());
    event->accept();
}

} // namespace d2dpo::ui
