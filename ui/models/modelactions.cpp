// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/modelactions.h"

#include <QCoreApplication>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QRegularExpression>

namespace d2dpo::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("ModelActions", text); }

} // namespace

bool renameModelWithDialog(QWidget* parent, PreferenceStore& store, const ModelRecord& model)
{
    bool ok = false;
    const QString name = QInputDialog::getText(parent, tr("Rename model"), tr("New name:"), QLineEdit::Normal,
                                               QString::fromStdString(model.name), &ok)
                             .trimmed();
    if (!ok || name.isEmpty() || name == QString::fromStdString(model.name))
        return false;
    if (Status s = store.renameModel(model.id, name.toStdString()); !s) {
        QMessageBox::warning(parent, tr("Rename model"), QString::fromStdString(s.error()));
        return false;
    }
    return true;
}

bool deleteModelWithDialog(QWidget* parent, PreferenceStore& store, const ModelRecord& model)
{
    const QString name = QString::fromStdString(model.name);
    auto children = store.modelChildren(model.id);
    if (children && children.value() > 0) {
        QMessageBox::information(parent, tr("Delete model"),
                                 tr("“%1” cannot be deleted: %2 models were fine-tuned from it. Delete those first, "
                                    "so no model's lineage points nowhere.")
                                     .arg(name)
                                     .arg(children.value()));
        return false;
    }
    const auto answer = QMessageBox::question(
        parent, tr("Delete model"),
        tr("Remove “%1” from this store?\n\nIts checkpoint file stays on disk (%2). Pairs generated from it and "
           "their labels stay too; they no longer name the model.")
            .arg(name, QString::fromStdString(model.path)));
    if (answer != QMessageBox::Yes)
        return false;
    if (Status s = store.deleteModel(model.id); !s) {
        QMessageBox::warning(parent, tr("Delete model"), QString::fromStdString(s.error()));
        return false;
    }
    return true;
}

QString suggestedExportName(const ModelRecord& model)
{
    QString name = QString::fromStdString(model.name).toLower();
    name.replace(QRegularExpression(QStringLiteral("[^a-z0-9._]+")), QStringLiteral("-"));
    name.remove(QRegularExpression(QStringLiteral("^[-.]+|-+$")));
    if (name.isEmpty())
        name = QString::fromStdString(model.id);
    return name.startsWith(QLatin1String("d2dpo")) ? name : QStringLiteral("d2dpo-") + name;
}

} // namespace d2dpo::ui
