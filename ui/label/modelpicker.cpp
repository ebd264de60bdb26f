// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/modelpicker.h"

namespace d2dpo::ui {

ModelPicker::ModelPicker(QWidget* parent) : QComboBox(parent)
{
    setFocusPolicy(Qt::NoFocus); // keys go to the Label view
    // Sized to 24 characters, not to the longest model's name: the Label view's top bar fits 1024 px.
    setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    setMinimumContentsLength(24);
    setAccessibleName(tr("Model new pairs come from"));
    setPlaceholderText(tr("(no model is named during a blind comparison)"));
}

namespace {
constexpr int kTaskRole = Qt::UserRole + 1;
}

QString ModelPicker::reload(PreferenceStore& store, TaskCatalog& tasks)
{
    auto models = store.models();
    if (!models) // the list on screen stays as it was
        return QString::fromStdString(models.error());
    showModels(models.value(), tasks);
    return {};
}

void ModelPicker::showModels(const std::vector<ModelRecord>& models, TaskCatalog& tasks)
{
    const QString chosen = checkpointPath();
    const QSignalBlocker block(this);
    clear();
    for (const ModelRecord& m : models) {
        const TaskInfo* task = tasks.find(m.taskKey);
        const QString title = task ? QString::fromStdString(taskTitle(task->config())) : tr("unknown task");
        addItem(QStringLiteral("%1 · %2 · %3 · %4")
                    .arg(QString::fromStdString(m.name), title, QString::fromStdString(m.kind),
                         QString::fromStdString(m.id)),
                QString::fromStdString(m.path));
        setItemData(count() - 1, QString::fromStdString(m.taskKey), kTaskRole);
    }
    const int index = chosen.isEmpty() ? -1 : findData(chosen);
    setCurrentIndex(index >= 0 ? index : count() - 1); // else the newest model
    if (m_masked) {
        m_kept = currentData().toString();
        m_keptTask = currentData(kTaskRole).toString();
        setCurrentIndex(-1);
    }
}

bool ModelPicker::select(const QString& checkpointPath)
{
    const int index = checkpointPath.isEmpty() ? -1 : findData(checkpointPath);
    if (index < 0)
        return false;
    if (m_masked) {
        m_kept = checkpointPath;
        m_keptTask = itemData(index, kTaskRole).toString();
    } else
        setCurrentIndex(index);
    return true;
}

QString ModelPicker::checkpointPath() const { return m_masked ? m_kept : currentData().toString(); }

QString ModelPicker::taskKey() const { return m_masked ? m_keptTask : currentData(kTaskRole).toString(); }

void ModelPicker::setMasked(bool masked)
{
    if (masked == m_masked)
        return;
    if (masked) {
        m_kept = currentData().toString();
        m_keptTask = currentData(kTaskRole).toString();
        setCurrentIndex(-1);
    } else {
        setCurrentIndex(findData(m_kept));
        if (currentIndex() < 0 && count() > 0)
            setCurrentIndex(count() - 1);
    }
    m_masked = masked;
    setEnabled(!masked);
}

} // namespace d2dpo::ui
