// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/train/measuredsourcebox.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QSignalBlocker>

#include "ui/common/measuredpairchoices.h"

namespace d2dpo::ui {

MeasuredSourceBox::MeasuredSourceBox(QWidget* parent)
    : QWidget(parent)
{
    auto* form = new QFormLayout(this);
    form->setContentsMargins(24, 0, 0, 0); // under its radio button, as the labelers' list is
    m_assay = new QComboBox(this);
    m_assay->setObjectName(QStringLiteral("assay"));
    m_assay->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_assay->setMinimumContentsLength(16);
    form->addRow(tr("Assay:"), m_assay);
    m_strategy = makePairStrategyChoice(this);
    form->addRow(tr("Pairs:"), m_strategy);
    auto* heldOutRow = new QHBoxLayout;
    const HeldOutChoice heldOut = makeHeldOutChoice(this);
    m_heldOut = heldOut.share;
    m_split = heldOut.split;
    heldOutRow->addWidget(m_heldOut);
    heldOutRow->addWidget(m_split, 1);
    form->addRow(tr("Held out:"), heldOutRow);
    auto* labelsRow = new QHBoxLayout;
    m_withLabels = new QCheckBox(tr("and the ticked labelers' labels, at a share of"), this);
    m_withLabels->setObjectName(QStringLiteral("withLabels"));
    labelsRow->addWidget(m_withLabels);
    m_labelsShare = new QDoubleSpinBox(this);
    m_labelsShare->setObjectName(QStringLiteral("labelsShare"));
    m_labelsShare->setRange(0.01, 0.99);
    m_labelsShare->setSingleStep(0.05);
    m_labelsShare->setValue(0.5);
    m_labelsShare->setToolTip(tr("Each batch draws a label pair with this probability, a measured pair otherwise"));
    labelsRow->addWidget(m_labelsShare);
    labelsRow->addStretch(1);
    form->addRow(labelsRow);
    m_grouped = new QCheckBox(tr("Score each group's pairs in one pass (g-DPO, about 3x faster)"), this);
    m_grouped->setObjectName(QStringLiteral("grouped"));
    m_grouped->setToolTip(tr("With pairs within groups and no labels: one corrupted sequence scores every member "
                             "of a group (bench/grouped.sh measures the speed-up and the held-out figures)"));
    form->addRow(m_grouped);

    for (QComboBox* box : {m_assay, m_strategy, m_split})
        connect(box, &QComboBox::currentIndexChanged, this, &MeasuredSourceBox::changed);
    for (QDoubleSpinBox* box : {m_heldOut, m_labelsShare})
        connect(box, &QDoubleSpinBox::valueChanged, this, &MeasuredSourceBox::changed);
    connect(m_strategy, &QComboBox::currentIndexChanged, this, &MeasuredSourceBox::updateEnabled);
    connect(m_grouped, &QCheckBox::toggled, this, &MeasuredSourceBox::changed);
    connect(m_withLabels, &QCheckBox::toggled, this, [this] {
        updateEnabled();
        Q_EMIT changed();
    });
    updateEnabled();
}

int MeasuredSourceBox::listAssays(const std::vector<AssayRecord>& assays, const std::string& task)
{
    const QSignalBlocker block(m_assay);
    const QString chosen = m_assay->currentData().toString();
    m_assay->clear();
    for (const AssayRecord& a : assays) {
        if (a.task != task)
            continue;
        const QString name = QString::fromStdString(a.name);
        m_assay->addItem(tr("%1 · %L2 sequences (%3 is better)")
                             .arg(name)
                             .arg(qint64(a.sequences))
                             .arg(a.direction == "lower" ? tr("lower") : tr("higher")),
                         name);
    }
    if (const int index = m_assay->findData(chosen); index >= 0)
        m_assay->setCurrentIndex(index);
    updateEnabled();
    return m_assay->count();
}

bool MeasuredSourceBox::hasAssay() const { return m_assay->count() > 0; }

bool MeasuredSourceBox::selectAssay(const QString& name)
{
    const int index = m_assay->findData(name);
    if (index >= 0)
        m_assay->setCurrentIndex(index);
    return index >= 0;
}

AssayPairsSpec MeasuredSourceBox::spec() const
{
    AssayPairsSpec spec;
    spec.assay = m_assay->currentData().toString().toStdString();
    spec.strategy = m_strategy->currentData().toString().toStdString();
    spec.heldOut = m_heldOut->value();
    spec.split = m_split->currentData().toString().toStdString();
    return spec;
}

bool MeasuredSourceBox::withLabels() const { return m_withLabels->isChecked(); }

bool MeasuredSourceBox::grouped() const
{
    return m_grouped->isChecked() && !m_withLabels->isChecked() &&
           m_strategy->currentData().toString() == QLatin1String("clusters");
}

void MeasuredSourceBox::setGrouped(bool grouped) { m_grouped->setChecked(grouped); }

double MeasuredSourceBox::labelsShare() const { return m_labelsShare->value(); }

void MeasuredSourceBox::setWithLabels(bool with, double share)
{
    m_labelsShare->setValue(share);
    m_withLabels->setChecked(with);
}

void MeasuredSourceBox::setEditable(bool editable)
{
    m_editable = editable;
    updateEnabled();
}

void MeasuredSourceBox::updateEnabled()
{
    for (QWidget* w : std::initializer_list<QWidget*>{m_assay, m_strategy, m_heldOut, m_split, m_withLabels})
        w->setEnabled(m_editable && hasAssay());
    m_labelsShare->setEnabled(m_editable && hasAssay() && m_withLabels->isChecked());
    m_grouped->setEnabled(m_editable && hasAssay() && !m_withLabels->isChecked() &&
                          m_strategy->currentData().toString() == QLatin1String("clusters"));
}

} // namespace d2dpo::ui
