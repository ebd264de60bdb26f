// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/common/measuredpairchoices.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>

namespace d2dpo::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("MeasuredPairChoices", text); }

} // namespace

QComboBox* makePairStrategyChoice(QWidget* parent)
{
    auto* box = new QComboBox(parent);
    box->setObjectName(QStringLiteral("strategy"));
    box->addItem(tr("Values apart by more than their noise"), QStringLiteral("margin"));
    box->addItem(tr("Within groups differing at few positions (g-DPO)"), QStringLiteral("clusters"));
    box->addItem(tr("The best tenth against the rest"), QStringLiteral("best"));
    return box;
}

HeldOutChoice makeHeldOutChoice(QWidget* parent, double lowest)
{
    HeldOutChoice out;
    out.share = new QDoubleSpinBox(parent);
    out.share->setObjectName(QStringLiteral("heldOut"));
    out.share->setRange(lowest, 0.9);
    out.share->setSingleStep(0.05);
    out.share->setValue(0.2);
    out.share->setToolTip(tr("The share of the measured sequences kept out of training, so that the Models view "
                             "can show how a model ranks values it never saw"));
    out.split = new QComboBox(parent);
    out.split->setObjectName(QStringLiteral("split"));
    out.split->addItem(tr("random sequences"), QStringLiteral("random"));
    out.split->addItem(tr("by mutated position"), QStringLiteral("position"));
    out.split->addItem(tr("the most mutated"), QStringLiteral("mutations"));
    return out;
}

} // namespace d2dpo::ui
