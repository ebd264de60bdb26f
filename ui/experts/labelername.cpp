// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/experts/labelername.h"

#include <QCoreApplication>
#include <QInputDialog>
#include <QSettings>

namespace d2dpo::ui {

namespace {
const char* const kSettingsKey = "labeler/name";
}

QString rememberedLabeler() { return QSettings().value(QString::fromLatin1(kSettingsKey)).toString(); }

void rememberLabeler(const QString& name) { QSettings().setValue(QString::fromLatin1(kSettingsKey), name.trimmed()); }

QString askLabelerName(QWidget* parent, const QString& title, const QString& current)
{
    bool ok = false;
    const QString name =
        QInputDialog::getText(parent, title,
                              QCoreApplication::translate("d2dpo::ui::LabelerName",
                                                          "Your name (recorded with each label from now on):"),
                              QLineEdit::Normal, current, &ok)
            .trimmed();
    return ok ? name : QString();
}

} // namespace d2dpo::ui
