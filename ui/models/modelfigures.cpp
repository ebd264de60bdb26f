// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/modelfigures.h"

#include <QScrollArea>
#include <QSettings>
#include <QtConcurrent/QtConcurrentRun>

#include "ui/common/longjobs.h"
#include "ui/models/heldoutpanel.h"
#include "ui/models/positionprofilepanel.h"
#include "ui/common/samplehistogram.h"

namespace d2dpo::ui {

ModelFigures::ModelFigures(PreferenceStore& store, QWidget* parent) : QTabWidget(parent)
{
    setObjectName(QStringLiteral("modelFigures"));
    setDocumentMode(true);
    m_histogram = new SampleHistogram(this);
    m_watcher = new QFutureWatcher<ProfiledInputs>(this);
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        if (m_watcher->future().resultCount() == 0)
            return;
        ProfiledInputs done = m_watcher->result();
        m_profile->showProfiles(std::move(done.profiles), done.inputs);
    });
    // Logos and figures are taller than the view at 1024x640: they scroll, the view does not grow.
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_profile = new PositionProfilePanel(scroll);
    scroll->setWidget(m_profile);
    addTab(m_histogram, tr("Histogram"));
    addTab(scroll, tr("Per position"));
    m_heldOut = new HeldOutPanel(store, this);
    addTab(m_heldOut, tr("Held-out measurements"));
    setCurrentIndex(QSettings().value(QStringLiteral("models/figures"), 0).toInt()); // as last left
    connect(this, &QTabWidget::currentChanged, this,
            [](int index) { QSettings().setValue(QStringLiteral("models/figures"), index); });
    setTabToolTip(1, tr("Per-position conservation and sequence logos of the model's and its reference's samples, "
                        "their composition and identity to the nearest training sequence; Export… writes PNG, SVG "
                        "and CSV"));
}

void ModelFigures::show(const NamedSummary& model, const NamedSummary& reference, const TaskInfo* task)
{
    m_histogram->draw(model.summary, model.name, reference.summary, reference.name);
    if (!model.summary || !task) {
        m_watcher->setFuture(QFuture<ProfiledInputs>());
        m_profile->clear();
        m_profiled.clear();
        return;
    }
    const QString key = QStringLiteral("%1:%2|%3:%4")
                            .arg(model.id)
                            .arg(model.summary->samples.size())
                            .arg(reference.id)
                            .arg(reference.summary ? reference.summary->samples.size() : 0);
    if (key == m_profiled)
        return; // about 60 ms at protein length: not again for the same samples
    m_profiled = key;
    // Off the window's thread: a binary task's training sequences are drawn with torch, and the
    // nearest identities take 30-60 ms at protein length. Only the latest request is shown.
    PositionProfileInputs inputs;
    inputs.samples = model.summary->samples;
    inputs.modelName = model.name;
    if (reference.summary) {
        inputs.referenceSamples = reference.summary->samples;
        inputs.referenceName = reference.name;
    }
    m_watcher->setFuture(QtConcurrent::run(longJobPool(), [inputs = std::move(inputs), task = *task]() mutable {
        PositionProfileInputs withTask = PositionProfileInputs::fromTask(task);
        withTask.samples = std::move(inputs.samples);
        withTask.referenceSamples = std::move(inputs.referenceSamples);
        withTask.modelName = inputs.modelName;
        withTask.referenceName = inputs.referenceName;
        ProfiledInputs out;
        out.profiles = PositionProfilePanel::profile(withTask);
        out.inputs = std::move(withTask);
        return out;
    }));
}

void ModelFigures::clear()
{
    m_watcher->setFuture(QFuture<ProfiledInputs>()); // a profile still being computed is not shown
    m_histogram->clear();
    m_profile->clear();
    m_profiled.clear();
}

void ModelFigures::showHeldOut(const ModelRecord& model) { m_heldOut->showModel(model); }

} // namespace d2dpo::ui
