#include "mainwindow.h"

#include <QAction>
#include <QCloseEvent>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>

#include "labelview.h"
#include "preferencejsonl.h"

namespace d2dpo::ui {

MainWindow::MainWindow(std::unique_ptr<PreferenceStore> store, QWidget* parent)
    : QMainWindow(parent)
    , m_store(std::move(store))
{
    setWindowTitle(tr("d2dpo-studio — %1").arg(QString::fromStdString(m_store->path())));
    m_labelView = new LabelView(*m_store, this);
    setCentralWidget(m_labelView);
    connect(m_labelView, &LabelView::statusMessage, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
    buildMenus();

    QSettings settings;
    if (!restoreGeometry(settings.value("window/geometry").toByteArray()))
        resize(1180, 440);
    m_labelView->setHintsVisible(settings.value("label/hints", true).toBool());
    m_labelView->setFocus();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Import preferences (JSONL)…"), this, &MainWindow::importPreferences);
    file->addAction(tr("&Export preferences (JSONL)…"), this, &MainWindow::exportPreferences);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
}

void MainWindow::importPreferences()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Import preferences"), {},
                                                      tr("JSON Lines (*.jsonl);;All files (*)"));
    if (path.isEmpty())
        return;
    auto imported = importPreferencesJsonl(*m_store, path.toStdString(), {0, 2});
    if (!imported) {
        QMessageBox::warning(this, tr("Import failed"), QString::fromStdString(imported.error()));
        return;
    }
    m_labelView->reload();
    statusBar()->showMessage(tr("Imported %1 preferences").arg(imported.value()), 8000);
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

void MainWindow::closeEvent(QCloseEvent* event)
{
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("label/hints", m_labelView->hintsVisible());
    event->accept();
}

} // namespace d2dpo::ui
