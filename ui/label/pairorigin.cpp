// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/pairorigin.h"

#include <QCoreApplication>

namespace d2dpo::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("PairOrigin", text); }

QString describeModel(const ModelLookup& lookup, const std::string& modelId, const QString& unknown)
{
    const std::optional<ModelRecord> model = lookup(modelId);
    if (!model)
        return unknown.arg(QString::fromStdString(modelId));
    const ModelRecord& m = *model;
    QString text = tr("“%1” (%2, %3)").arg(QString::fromStdString(m.name), QString::fromStdString(m.kind),
                                          QString::fromStdString(m.id));
    if (!m.parentId.empty()) {
        const std::optional<ModelRecord> parent = lookup(m.parentId);
        const QString parentName = parent ? QString::fromStdString(parent->name) : QString::fromStdString(m.parentId);
        text += tr(", fine-tuned from “%1”").arg(parentName);
    }
    return text;
}

QString origin(const ModelLookup& lookup, const ShownPair& pair, const QString& unknown)
{
    if (pair.blind) // which model drew which side is what the comparison measures: never shown
        return tr("Pair #%1 · a blind comparison of models").arg(pair.id);
    if (pair.leftModelId.empty() && pair.rightModelId.empty())
        return tr("Pair #%1 · imported (no model of this store made it)").arg(pair.id);
    if (pair.leftModelId == pair.rightModelId)
        return tr("Pair #%1 · both sequences from %2").arg(pair.id).arg(describeModel(lookup, pair.leftModelId, unknown));
    return tr("Pair #%1 · left from %2 · right from %3")
        .arg(pair.id)
        .arg(describeModel(lookup, pair.leftModelId, unknown), describeModel(lookup, pair.rightModelId, unknown));
}

} // namespace

QString pairOrigin(ModelCatalog& store, const ShownPair& pair)
{
    const ModelLookup lookup = [&store](const std::string& id) -> std::optional<ModelRecord> {
        auto model = store.model(id);
        return model && model->has_value() ? std::optional(*model.value()) : std::nullopt;
    };
    return origin(lookup, pair, tr("model %1 (not in this store)"));
}

QString pairOrigin(const ModelLookup& lookup, const ShownPair& pair)
{
    return origin(lookup, pair, tr("model %1"));
}

} // namespace d2dpo::ui
