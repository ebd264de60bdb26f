// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/shell/mainwindow.h"

#include <QAction>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>

#include "jobs/runfolder.h"
#include "ui/models/comparemodelsdialog.h"
#include "ui/models/comparisonresults.h"
#include "ui/models/newmodel/datamodeldialog.h"
#include "ui/models/newmodel/importmodeldialog.h"
#include "ui/shell/helptexts.h"
#include "ui/shell/screenfit.h"
#include "ui/label/keysdialog.h"
#include "ui/experts/labelername.h"
#include "ui/experts/labelerspanel.h"
#include "ui/label/labelkeys.h"
#include "ui/label/labelview.h"
#include "ui/measurements/measurementsview.h"
#include "ui/models/modelsview.h"
#include "ui/label/queuesettingsdialog.h"
#include "ui/train/trainview.h"

namespace d2dpo::ui {

MainWindow::MainWindow(std::unique_ptr<PreferenceStore> store, QWidget* parent)
    : QMainWindow(parent)
    , m_store(std::move(store))
{
    setWindowTitle(tr("d2dpo-studio — %1").arg(QString::fromStdString(m_store->displayName())));
    setWindowIcon(QIcon(QStringLiteral(":/icons/d2dpo-studio.png")));
    m_tabs = new QTabWidget(this);
    m_labelView = new LabelView(*m_store, m_tabs);
    m_trainView = new TrainView(*m_store, m_tabs);
    m_modelsView = new ModelsView(*m_store, m_tabs);
    m_measurementsView = new MeasurementsView(*m_store, m_tabs);
    m_tabs->addTab(m_labelView, tr("&Label"));
    m_tabs->addTab(m_trainView, tr("&Train"));
    m_tabs->addTab(m_modelsView, tr("&Models"));
    m_tabs->addTab(m_measurementsView, tr("Mea&surements"));
    // A team's labeler neither trains, manages models nor reads assays: the database would refuse all three.
    for (int maintainersOnly : {1, 2, 3})
        m_tabs->setTabVisible(maintainersOnly, m_store->canMaintain());
    m_tabs->setDocumentMode(true);
    setCentralWidget(m_tabs);

    const auto showMessage = [this](const QString& m) { statusBar()->showMessage(m, 8000); };
    connect(m_labelView, &LabelView::statusMessage, this, showMessage);
    connect(m_labelView, &LabelView::labelersWanted, this, &MainWindow::showLabelers);
    connect(m_trainView, &TrainView::statusMessage, this, showMessage);
    connect(m_modelsView, &ModelsView::statusMessage, this, showMessage);
    connect(m_measurementsView, &MeasurementsView::statusMessage, this, showMessage);
    connect(m_measurementsView, &MeasurementsView::measurementsChanged, this, [this] {
        if (!m_trainView->training())
            m_trainView->reload();
    });
    connect(m_tabs, &QTabWidget::currentChanged, this, [this](int index) {
        statusBar()->clearMessage(); // a message speaks of the view it came from ("Label undone")
        if (index == 0)
            refocus();
        else if (index == 1 && !m_trainView->training())
            m_trainView->reload();
        else if (index == 2)
            m_modelsView->reload();
        else if (index == 3)
            m_measurementsView->reload();
    });
    connect(m_trainView, &TrainView::runFinished, this, [this] {
        m_modelsView->reload();
        m_labelView->reload();
    });
    connect(m_modelsView, &ModelsView::modelsChanged, this, [this] {
        m_labelView->reload();
        if (!m_trainView->training())
            m_trainView->reload();
    });
    connect(m_modelsView, &ModelsView::labelPairsFrom, this, [this](const QString& path) {
        m_labelView->labelFrom(path);
        showView(0);
    });
    connect(m_modelsView, &ModelsView::compareModels, this, [this](const QString& id) { compareModels(id); });
    connect(m_modelsView, &ModelsView::comparisonResultsRequested, this, [this] { showComparisonResults(); });
    // The reports read the labels again when this window labels; the results also poll the store.
    connect(m_labelView, &LabelView::labelsChanged, this, [this] {
        if (m_labelers)
            m_labelers->refresh();
        if (m_results)
            m_results->refresh(true);
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
    // A first window fits the screen it opens on with its frame (1280x800 was cut off on a
    // 1024x640 laptop, and so was a window the size of the screen once framed), and so does one
    // restored from a larger screen.
    if (!restoreGeometry(settings.value("window/geometry").toByteArray()))
        sizeWithinScreen(this, QSize(1280, 800));
    else
        sizeWithinScreen(this, size());
    keepFrameOnScreen(this);
    m_labelView->setHintsVisible(settings.value("label/hints", true).toBool());
    const QString pick = settings.value("label/newPairs").toString();
    m_labelView->setNewPairPick(pick == u"surest" ? std::optional(PairPick::Surest)
                                : pick == u"least-sure" ? std::optional(PairPick::LeastSure)
                                                       : std::nullopt);
    showView(settings.value("window/view", 0).toInt());
    m_labelView->setFocus();
}

void MainWindow::showView(int index)
{
    if (index >= 0 && index < m_tabs->count() && m_tabs->isTabVisible(index))
        m_tabs->setCurrentIndex(index);
}

// The views hold the store: they go first (the Label view's session gives its pairs back on the way).
MainWindow::~MainWindow() { delete m_tabs; }

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    const bool maintainer = m_store->canMaintain(); // on a team store, a labeler role only labels
    file->addAction(tr("&New model from a data file…"), this, &MainWindow::newModelFromDataFile)->setEnabled(maintainer);
    file->addAction(tr("Import &model (ESM2/DPLM/MDLM weights or TorchScript)…"), this, &MainWindow::importModel)->setEnabled(maintainer);
    file->addSeparator();
    file->addAction(tr("&Import preferences (JSONL)…"), this, &MainWindow::importPreferences)->setEnabled(maintainer);
    file->addAction(tr("Import m&easurements (assay values)…"), this, [this] {
        showView(3);
        m_measurementsView->chooseAndImport();
    })->setEnabled(maintainer);
    file->addAction(tr("&Export preferences (JSONL)…"), this, &MainWindow::exportPreferences);
    file->addSeparator();
    file->addAction(tr("&Open store…"), this, &MainWindow::openStore);
    file->addAction(tr("Open &team store…"), this, &MainWindow::openTeamStore);
    file->addAction(tr("Change &labeler…"), this, &MainWindow::changeLabeler)->setEnabled(!m_store->isTeamStore()); // a team store's labeler is the database role
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    const QString names[] = {tr("&Label"), tr("&Train"), tr("&Models"), tr("Mea&surements")};
    for (int i = 0; i < 4; ++i) {
        QAction* show = view->addAction(names[i], this, [this, i] { showView(i); });
        show->setEnabled(i == 0 || maintainer);
        show->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
    }
    view->addSeparator();
    view->addAction(tr("La&belers…"), this, &MainWindow::showLabelers);
    view->addAction(tr("&Comparison results…"), this, [this] { showComparisonResults(); });

    // A maintainer's gold pairs: the pair on screen, its answer known (d2dpo prefs gold --mark).
    QMenu* pair = menuBar()->addMenu(tr("&Pair"));
    pair->setEnabled(maintainer);
    pair->addAction(tr("Make this pair gold: &left is better"), this,
                    [this] { m_labelView->markGold(Choice::Left); });
    pair->addAction(tr("Make this pair gold: &right is better"), this,
                    [this] { m_labelView->markGold(Choice::Right); });

    QMenu* settingsMenu = menuBar()->addMenu(tr("&Settings"));
    settingsMenu->addAction(tr("Label &keys…"), this, [this] {
        KeysDialog dialog(m_labelView->keyBindings(), this);
        if (dialog.exec() == QDialog::Accepted) {
            dialog.bindings().save();
            m_labelView->setKeyBindings(dialog.bindings());
            statusBar()->showMessage(tr("Label keys saved"), 8000);
        }
        refocus();
    });
    settingsMenu->addAction(tr("Labeling &queue…"), this, [this] { editQueueSettings(); })->setEnabled(maintainer);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* keys = help->addAction(tr("&Keyboard shortcuts"), this, [this] {
        QMessageBox::information(this, tr("Keyboard shortcuts"), m_labelView->keyBindings().sheet());
        refocus();
    });
    keys->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("The &workflow"), this, [this] { QMessageBox::information(this, tr("The workflow"), workflowText()); });
    help->addAction(tr("&About d2dpo-studio"), this, [this] {
        QMessageBox::about(this, tr("About d2dpo-studio"), aboutText(QString::fromStdString(m_store->displayName())));
    });

    // Keys go back to the Label view whenever a menu closes (also with Esc), so labelling goes on.
    for (QMenu* menu : {file, view, settingsMenu, help})
        connect(menu, &QMenu::aboutToHide, this, &MainWindow::refocus);
}

void MainWindow::refocus()
{
    QTimer::singleShot(0, this, [this] {
        if (m_tabs->currentWidget() == m_labelView && isActiveWindow())
            m_labelView->setFocus(Qt::OtherFocusReason);
    });
}

void MainWindow::changeLabeler()
{
    const QString name = askLabelerName(this, tr("Change labeler"), m_labelView->labeler());
    refocus();
    if (name.isEmpty())
        return;
    m_labelView->setLabeler(name);
    rememberLabeler(name);
    statusBar()->showMessage(tr("Labelling as %1").arg(name), 8000);
}

void MainWindow::showLabelers()
{
    if (!m_labelers) {
        m_labelers = new LabelersPanel(*m_store, this);
        m_labelers->setWindowFlag(Qt::Window); // beside the Label view, not modal
    }
    m_labelers->show();
    m_labelers->raise();
    m_labelers->activateWindow();
}

void MainWindow::showComparisonResults(qint64 comparisonId)
{
    if (!m_results) {
        m_results = new ComparisonResults(*m_store, this);
        m_results->setWindowFlag(Qt::Window);
    }
    m_results->show();
    m_results->raise();
    if (comparisonId > 0)
        m_results->showComparison(comparisonId);
}

CompareModelsDialog* MainWindow::compareModels(const QString& modelId)
{
    auto* dialog = new CompareModelsDialog(*m_store, modelId, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &CompareModelsDialog::comparisonCreated, this, [this, modelId](qint64 id) {
        m_labelView->requeueForModel(modelId); // its pairs lead every labeler's queue of its task
        showComparisonResults(id);
        statusBar()->showMessage(tr("Comparison #%1 is in the labelers' queues; the Label view never says which "
                                    "model drew which sequence")
                                     .arg(id),
                                 8000);
    });
    dialog->open();
    return dialog;
}

QueueSettingsDialog* MainWindow::editQueueSettings()
{
    auto* dialog = new QueueSettingsDialog(*m_store, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QueueSettingsDialog::queueChanged, this, [this] {
        m_labelView->requeue(); // the pairs after the one on screen come in the new order
        statusBar()->showMessage(tr("Labeling queue saved; the next pair follows it"), 8000);
    });
    connect(dialog, &QDialog::finished, this, &MainWindow::refocus);
    dialog->open();
    return dialog;
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
    const auto pick = m_labelView->newPairPick();
    settings.setValue("label/newPairs", pick ? QString::fromLatin1(toString(*pick)) : QStringLiteral("drawn"));
    event->accept();
}

} // namespace d2dpo::ui
