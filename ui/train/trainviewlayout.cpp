// SPDX-License-Identifier: GPL-3.0-or-later
// TrainView's parts laid out: the settings column with the data panel, the run bar (Start, Stop,
// progress and rate), and the plots area (the notice strip, the plots and the run's log).
#include "ui/train/trainview.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>

#include "ui/train/measuredsourcebox.h"
#include "ui/train/runadvice.h"
#include "ui/train/runhistory.h"
#include "ui/train/traindatapanel.h"
#include "ui/train/trainplots.h"
#include "ui/train/trainsettingsform.h"

namespace d2dpo::ui {

QWidget* TrainView::buildControls()
{
    auto* panel = new QWidget;
    auto* column = new QVBoxLayout(panel);

    m_data = new TrainDataPanel(m_store, panel);
    column->addWidget(m_data);

    auto* settings = new QGroupBox(tr("D2-DPO settings"), panel);
    auto* settingsLayout = new QVBoxLayout(settings);
    m_form = new TrainSettingsForm(settings);
    settingsLayout->addWidget(m_form);
    column->addWidget(settings);

    m_runs = new RunHistory(m_store, panel);
    column->addWidget(m_runs, 1);

    connect(m_data, &TrainDataPanel::referenceChanged, this, [this] {
        m_form->setModelSpec(m_data->selectedSpec());
        forgetRunOfAnotherReference();
    });
    connect(m_data, &TrainDataPanel::pairCountChanged, this, &TrainView::updateStartEnabled);
    connect(m_data, &TrainDataPanel::logLine, this, &TrainView::appendLog);
    connect(m_form, &TrainSettingsForm::validityChanged, this, &TrainView::updateStartEnabled);
    connect(m_runs, &RunHistory::runSelected, this, [this](qint64 runId) {
        if (!training())
            showRun(runId);
    });
    connect(m_runs, &RunHistory::resumeRequested, this, &TrainView::resume);
    connect(m_runs, &RunHistory::storeFailed, this, &TrainView::appendLog);
    return panel;
}

QWidget* TrainView::buildRunBar(QWidget* parent)
{
    auto* bar = new QWidget(parent);
    auto* column = new QVBoxLayout(bar);
    column->setContentsMargins(9, 4, 9, 4);
    auto* buttons = new QHBoxLayout;
    m_start = new QPushButton(tr("Start training"), bar);
    m_start->setObjectName(QStringLiteral("start"));
    m_start->setDefault(true);
    m_stop = new QPushButton(tr("Stop"), bar);
    m_stop->setObjectName(QStringLiteral("stop"));
    buttons->addWidget(m_start);
    buttons->addWidget(m_stop);
    column->addLayout(buttons);
    m_progress = new QProgressBar(bar);
    m_progress->setFormat(QStringLiteral("%v / %m steps"));
    m_progress->setAccessibleName(tr("Training progress"));
    column->addWidget(m_progress);
    m_rate = new QLabel(bar);
    m_rate->setObjectName(QStringLiteral("rate"));
    m_rate->setWordWrap(true);
    column->addWidget(m_rate);
    connect(m_start, &QPushButton::clicked, this, &TrainView::start);
    connect(m_stop, &QPushButton::clicked, this, &TrainView::stop);
    return bar;
}

QWidget* TrainView::buildPlots()
{
    auto* area = new QWidget;
    auto* layout = new QVBoxLayout(area);
    layout->setContentsMargins(0, 0, 0, 0);
    // Above the plots, not among the settings: coming and going, they move no field; and in a strip
    // of a fixed three lines, so that they move no plot either (the plots jumped as advice came
    // and went with every change of the data). Each says its whole text in its tooltip.
    auto* notices = new QWidget(area);
    notices->setObjectName(QStringLiteral("notices"));
    notices->setFixedHeight(3 * fontMetrics().lineSpacing() + 12);
    auto* noticesLayout = new QVBoxLayout(notices);
    noticesLayout->setContentsMargins(0, 0, 0, 0);
    noticesLayout->setSpacing(2);
    m_banner = new QLabel(notices);
    m_banner->setObjectName(QStringLiteral("banner"));
    m_banner->setWordWrap(true);
    m_banner->setVisible(false);
    noticesLayout->addWidget(m_banner);
    m_advice = new RunAdvice(notices);
    noticesLayout->addWidget(m_advice);
    noticesLayout->addStretch();
    layout->addWidget(notices);

    m_plots = new TrainPlots(area);
    layout->addWidget(m_plots, 1);

    m_log = new QPlainTextEdit(area);
    m_log->setObjectName(QStringLiteral("log"));
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    m_log->setMaximumHeight(130);
    m_log->setPlaceholderText(tr("Events of the run appear here."));
    layout->addWidget(m_log);
    return area;
}

} // namespace d2dpo::ui
