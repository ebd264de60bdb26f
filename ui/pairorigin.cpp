// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/pairorigin.h"

#include <QCoreApplication>

namespace d2dpo::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("PairOrigin", text); }

QString describeModel(PreferenceStore& store, const std::string& modelId)
{
    auto model = store.model(modelId);
    if (!model || !model->has_value())
        return tr("model %1 (not in this store)").arg(QString::fromStdString(modelId));
    const ModelRecord& m = *model.value();
    QString text = tr("“%1” (%2, %3)").arg(QString::fromStdString(m.name), QString::fromStdString(m.kind),
                                          QString::fromStdString(m.id));
    if (!m.parentId.empty()) {
        auto parent = store.model(m.parentId);
        const QString parentName = parent && parent->has_value() ? QString::fromStdString(parent.value()->name)
                                                                 : QString::fromStdString(m.parentId);
        text += tr(", fine-tuned from “%1”").arg(parentName);
    }
    return text;
}

} // namespace

QString pairOrigin(PreferenceStore& store, const ShownPair& pair)
{
    if (pair.blind) // which model drew which side is what the comparison measures: never shown
        return tr("Pair #%1 · a blind comparison of models").arg(pair.id);
    if (pair.leftModelId.empty() && pair.rightModelId.empty())
        return tr("Pair #%1 · imported (no model of this store made it)").arg(pair.id);
    if (pair.leftModelId == pair.rightModelId)
        return tr("Pair #%1 · both sequences from %2").arg(pair.id).arg(describeModel(store, pair.leftModelId));
    return tr("Pair #%1 · left from %2 · right from %3")
        .arg(pair.id)
        .arg(describeModel(store, pair.leftModelId), describeModel(store, pair.rightModelId));
}

} // namespace d2dpo::ui
