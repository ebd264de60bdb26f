// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/modelpicker.h"

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

QString ModelPicker::reload(PreferenceStore& store)
{
    const QString chosen = checkpointPath();
    const QSignalBlocker block(this);
    clear();
    QString error;
    if (auto models = store.models()) {
        for (const ModelRecord& m : models.value())
            addItem(QStringLiteral("%1 · %2 · %3")
                        .arg(QString::fromStdString(m.name), QString::fromStdString(m.kind),
                             QString::fromStdString(m.id)),
                    QString::fromStdString(m.path));
    } else {
        error = QString::fromStdString(models.error());
    }
    const int index = chosen.isEmpty() ? -1 : findData(chosen);
    setCurrentIndex(index >= 0 ? index : count() - 1); // else the newest model
    if (m_masked) {
        m_kept = currentData().toString();
        setCurrentIndex(-1);
    }
    return error;
}

bool ModelPicker::select(const QString& checkpointPath)
{
    const int index = checkpointPath.isEmpty() ? -1 : findData(checkpointPath);
    if (index < 0)
        return false;
    if (m_masked)
        m_kept = checkpointPath;
    else
        setCurrentIndex(index);
    return true;
}

QString ModelPicker::checkpointPath() const { return m_masked ? m_kept : currentData().toString(); }

void ModelPicker::setMasked(bool masked)
{
    if (masked == m_masked)
        return;
    if (masked) {
        m_kept = currentData().toString();
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
