// SPDX-License-Identifier: GPL-3.0-or-later
// The new-model dialog's fields as the last Create left them (QSettings): a dialog opened again,
// after a Cancel or a model too weak to label, starts from what the user chose.
#include "ui/models/newmodel/datamodeldialog.h"

#include <QComboBox>
#include <QFileInfo>
#include <QLineEdit>
#include <QSettings>
#include <QSpinBox>

#include <utility>

namespace d2dpo::ui {

void DataModelDialog::restoreFields()
{
    const QSettings settings;
    // A file since moved or deleted is not brought back: the field starts empty, as on a first use.
    if (const QString file = settings.value(QStringLiteral("newModel/file")).toString(); QFileInfo::exists(file))
        m_file->setText(file);
    for (auto [box, key] : {std::pair{m_vocabulary, "newModel/vocabulary"}, std::pair{m_validity, "newModel/validity"},
                            std::pair{m_size, "newModel/size"}})
        if (const int i = box->findData(settings.value(QLatin1String(key))); i >= 0)
            box->setCurrentIndex(i);
    m_rule->setText(settings.value(QStringLiteral("newModel/rule")).toString());
    m_steps->setValue(settings.value(QStringLiteral("newModel/steps"), m_steps->value()).toInt());
}

void DataModelDialog::saveFields() const
{
    QSettings settings;
    settings.setValue(QStringLiteral("newModel/file"), m_file->text());
    settings.setValue(QStringLiteral("newModel/vocabulary"), m_vocabulary->currentData());
    settings.setValue(QStringLiteral("newModel/validity"), m_validity->currentData());
    settings.setValue(QStringLiteral("newModel/size"), m_size->currentData());
    settings.setValue(QStringLiteral("newModel/rule"), m_rule->text());
    settings.setValue(QStringLiteral("newModel/steps"), m_steps->value());
}

} // namespace d2dpo::ui
