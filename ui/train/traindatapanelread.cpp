// SPDX-License-Identifier: GPL-3.0-or-later
// TrainDataPanel: reading the models to train from, and the counts of the labels, on any thread
// (a reload in the background reads them on the long-job pool through a connection of its own).
#include "ui/train/traindatapanel.h"

#include <QComboBox>
#include <QRadioButton>

#include <utility>
#include <QSettings>
#include <QtConcurrent/QtConcurrentRun>

#include "facades/taskinfo.h"
#include "ui/common/longjobs.h"
#include "ui/common/ownconnection.h"

namespace d2dpo::ui {

TrainDataPanel::Choices TrainDataPanel::readChoices(PreferenceStore& store, const QHash<QString, bool>& ticked,
                                                    bool countPairs)
{
    Choices choices;
    // Two reads, whatever the count of models (each is a round trip on a team store): the
    // models, and the runs that made them (a run read per model made it 1 + N).
    auto models = store.models();
    if (!models) {
        choices.problems << tr("error: %1").arg(QString::fromStdString(models.error()));
        return choices;
    }
    auto runs = store.runs();
    if (!runs)
        choices.problems << tr("error: %1").arg(QString::fromStdString(runs.error()));
    QHash<qint64, RunStatus> runStatus;
    if (runs)
        for (const RunRecord& r : runs.value())
            runStatus.insert(r.id, r.status);
    choices.ok = true;
    for (const ModelRecord& m : models.value()) {
        // Named with its task: "d2dpo run 2 step 300" alone does not say globins or words.
        const auto task = TaskInfo::ofModel(store, m);
        const auto status = m.runId ? runStatus.constFind(*m.runId) : runStatus.constEnd();
        choices.references.push_back(
            {m,
             QStringLiteral("%1 · %2 · %3")
                 .arg(QString::fromStdString(m.name),
                      task ? QString::fromStdString(taskTitle(task->config())) : tr("unknown task"),
                      QString::fromStdString(m.id)),
             status == runStatus.constEnd() || endedCleanly(*status)});
        if (!countPairs || choices.countsByTask.count(m.taskKey))
            continue;
        // The counts the first count after this reload asks for, with the ticks as they were.
        choices.countsByTask[m.taskKey] = readCounts(store, m.taskKey, ticked);
    }
    return choices;
}

std::vector<std::string> TrainDataPanel::chosenOf(const std::vector<LabelerCount>& labelers,
                                                  const QHash<QString, bool>& ticked)
{
    std::vector<std::string> chosen;
    for (const LabelerCount& l : labelers)
        if (ticked.value(QString::fromStdString(l.labeler), !l.simulated)) // people are ticked at first
            chosen.push_back(l.labeler);
    return chosen;
}

TrainDataPanel::Choices::Counts TrainDataPanel::readCounts(PreferenceStore& store, const std::string& task,
                                                           const QHash<QString, bool>& ticked)
{
    Choices::Counts counts;
    counts.labelers = store.labelersOf(task);
    if (!counts.labelers)
        return counts;
    counts.chosen = chosenOf(counts.labelers.value(), ticked);
    // Nobody ticked: none usable (an empty list would mean everyone's).
    counts.usable =
        store.usablePairs(task, counts.chosen.empty() ? std::vector<std::string>{std::string()} : counts.chosen);
    return counts;
}

bool TrainDataPanel::countedAhead(const std::string& task) const
{
    const auto ahead = m_readAhead.find(task);
    return ahead != m_readAhead.end() &&
           (!ahead->second.labelers || chosenOf(ahead->second.labelers.value(), m_ticked) == ahead->second.chosen);
}

void TrainDataPanel::countInBackground(const std::string& task)
{
    if (!m_counting) {
        m_counter = std::make_shared<OwnConnection>(m_store.path());
        m_counting = new QFutureWatcher<Choices::Counts>(this);
        connect(m_counting, &QFutureWatcherBase::finished, this, [this] {
            // Shown when it still answers the question on screen; else counted again (ticks or
            // the reference changed meanwhile).
            const auto model = selectedModel();
            if (!model || m_fromRule->isChecked())
                return;
            m_readAhead[m_countedTask] = m_counting->result();
            updatePairCount();
            m_readAhead.clear();
        });
    }
    if (m_counting->isRunning()) {
        if (task != m_countedTask) // what lands is another task's: the landing counts again
            m_countedTask.clear(); // (changed ticks are told apart by countedAhead)
        return;
    }
    m_countedTask = task;
    m_counting->setFuture(QtConcurrent::run(storeReadPool(), [counter = m_counter, task, ticked = m_ticked] {
        auto store = counter->get();
        if (!store) {
            Choices::Counts failed;
            failed.labelers = makeError(store.errorCode(), store.error());
            return failed;
        }
        return readCounts(*store.value(), task, ticked);
    }));
}

void TrainDataPanel::reload() { showChoices(readChoices(m_store, m_ticked, false)); }

void TrainDataPanel::reloadInBackground()
{
    if (!m_choices) {
        m_reader = std::make_shared<OwnConnection>(m_store.path());
        m_choices = new QFutureWatcher<Choices>(this);
        connect(m_choices, &QFutureWatcherBase::finished, this, [this] {
            const Choices choices = m_choices->result();
            if (!m_editable) { // a run started meanwhile: its reference and labels stay as chosen
                m_again = false;
                m_reloadWhenEditable = true;
                return;
            }
            if (std::exchange(m_again, false))
                reloadInBackground();
            showChoices(choices);
        });
    }
    if (m_choices->isRunning()) {
        m_again = true; // the models may change meanwhile: read once more after this one
        return;
    }
    m_choices->setFuture(QtConcurrent::run(storeReadPool(), [reader = m_reader, ticked = m_ticked]() -> Choices {
        auto store = reader->get();
        if (!store) {
            Choices failed;
            failed.problems << tr("error: %1").arg(QString::fromStdString(store.error()));
            return failed;
        }
        return readChoices(*store.value(), ticked, true);
    }));
}

void TrainDataPanel::showChoices(const Choices& choices)
{
    for (const QString& problem : choices.problems)
        Q_EMIT logLine(problem);
    if (!choices.ok && m_reference->count() > 0)
        return; // the list on screen stays
    // Keep the selection; else the reference of the last run started here; else the newest model
    // that is not the stub of an unfinished (interrupted, failed or running) run.
    QString selected = std::exchange(m_pendingReference, QString());
    if (selected.isEmpty())
        selected = m_reference->currentData().toString();
    if (selected.isEmpty())
        selected = QSettings().value(QStringLiteral("train/reference")).toString();
    {
        const QSignalBlocker block(m_reference);
        m_reference->clear();
        m_models.clear();
        QString newestFinished;
        for (const Choices::Reference& r : choices.references) {
            const QString id = QString::fromStdString(r.model.id);
            m_models.insert(id, r.model);
            m_reference->addItem(r.label, id);
            if (r.finished)
                newestFinished = id;
        }
        int index = m_reference->findData(selected);
        if (index < 0)
            index = m_reference->findData(newestFinished);
        m_reference->setCurrentIndex(index >= 0 ? index : m_reference->count() - 1);
    }
    m_readAhead = choices.countsByTask; // for the count below only: later ones read what is then
    Q_EMIT referenceChanged();
    updatePairCount();
    m_readAhead.clear();
}

Result<std::vector<LabelerCount>> TrainDataPanel::labelersOf(const std::string& task)
{
    const auto ahead = m_readAhead.find(task);
    return ahead != m_readAhead.end() ? ahead->second.labelers : m_store.labelersOf(task);
}

Result<UsablePairs> TrainDataPanel::usablePairs(const std::string& task, const std::vector<std::string>& chosen)
{
    const auto ahead = m_readAhead.find(task);
    if (ahead != m_readAhead.end() && ahead->second.chosen == chosen)
        return ahead->second.usable;
    return m_store.usablePairs(task, chosen.empty() ? std::vector<std::string>{std::string()} : chosen);
}

} // namespace d2dpo::ui
