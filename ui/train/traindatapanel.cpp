// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/train/traindatapanel.h"

#include "facades/taskinfo.h"
#include "jobs/assaypairs.h"
#include "ui/train/measuredsourcebox.h"

#include <algorithm>
#include <utility>

#include <QButtonGroup>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QRadioButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace d2dpo::ui {

namespace {

/// Lines the pair summary keeps; a longer one (a very narrow column) pushes the settings down.
constexpr int kSummaryLines = 3;

std::optional<ModelSpec> specOf(const ModelRecord& model)
{
    auto spec = modelSpecFromJson(model.specJson);
    return spec ? std::optional(spec.value()) : std::nullopt;
}

} // namespace

TrainDataPanel::TrainDataPanel(PreferenceStore& store, QWidget* parent)
    : QGroupBox(tr("Model and preferences"), parent)
    , m_store(store)
{
    auto* dataLayout = new QVBoxLayout(this);
    dataLayout->addWidget(new QLabel(tr("Reference model (the policy starts equal to it):"), this));
    m_reference = new QComboBox(this);
    m_reference->setObjectName(QStringLiteral("reference"));
    m_reference->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_reference->setMinimumContentsLength(20);
    dataLayout->addWidget(m_reference);
    m_fromLabels = new QRadioButton(tr("The experts' labels in the store"), this);
    m_fromRule = new QRadioButton(tr("Rule-made pairs (ranked by the task's rule)"), this);
    m_fromMeasurements = new QRadioButton(tr("An assay's measured values"), this);
    m_fromMeasurements->setObjectName(QStringLiteral("fromMeasurements"));
    m_measured = new MeasuredSourceBox(this);
    auto* group = new QButtonGroup(this);
    group->addButton(m_fromLabels);
    group->addButton(m_fromRule);
    group->addButton(m_fromMeasurements);
    m_fromLabels->setChecked(true);
    dataLayout->addWidget(m_fromLabels);
    m_labelers = new QListWidget(this);
    m_labelers->setObjectName(QStringLiteral("labelers"));
    m_labelers->setAccessibleName(tr("Labelers whose labels train"));
    m_labelers->setToolTip(tr("Only ticked labelers' labels train. Simulated experts (rule:…) are unticked "
                              "unless you tick them."));
    dataLayout->addWidget(m_labelers);
    dataLayout->addWidget(m_fromMeasurements);
    dataLayout->addWidget(m_measured);
    auto* ruleRow = new QHBoxLayout;
    ruleRow->addWidget(m_fromRule);
    m_rulePairs = new QSpinBox(this);
    m_rulePairs->setRange(1, 10'000'000);
    m_rulePairs->setValue(20000);
    m_rulePairs->setGroupSeparatorShown(true);
    ruleRow->addWidget(m_rulePairs);
    dataLayout->addLayout(ruleRow);
    m_pairSummary = new QLabel(this);
    m_pairSummary->setObjectName(QStringLiteral("pairSummary"));
    m_pairSummary->setWordWrap(true);
    // What the summary says changes with every tick (one line to three: the pairs, those of
    // unticked labelers, those of other tasks); its lines are kept so the settings below it do not
    // move under the pointer.
    m_pairSummary->setMinimumHeight(kSummaryLines * m_pairSummary->fontMetrics().lineSpacing());
    m_pairSummary->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    dataLayout->addWidget(m_pairSummary);

    connect(m_reference, &QComboBox::currentIndexChanged, this, [this] {
        Q_EMIT referenceChanged();
        updatePairCount();
    });
    connect(m_fromLabels, &QRadioButton::toggled, this, &TrainDataPanel::updatePairCount);
    connect(m_fromMeasurements, &QRadioButton::toggled, this, &TrainDataPanel::updatePairCount);
    connect(m_measured, &MeasuredSourceBox::changed, this, &TrainDataPanel::updatePairCount);
    connect(m_labelers, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
        m_ticked[item->data(Qt::UserRole).toString()] = item->checkState() == Qt::Checked;
        updatePairCount();
    });
    connect(m_rulePairs, &QSpinBox::valueChanged, this, &TrainDataPanel::updatePairCount);
}

bool TrainDataPanel::selectReference(const QString& modelId)
{
    const int index = m_reference->findData(modelId);
    if (index >= 0)
        m_reference->setCurrentIndex(index);
    else if (m_choices && m_choices->isRunning())
        m_pendingReference = modelId; // a model the list on its way may have (one just made)
    return index >= 0;
}

void TrainDataPanel::useRulePairs(bool rulePairs, int count)
{
    (rulePairs ? m_fromRule : m_fromLabels)->setChecked(true);
    m_rulePairs->setValue(count);
    updatePairCount();
}

void TrainDataPanel::setEditable(bool editable)
{
    m_editable = editable;
    if (editable && std::exchange(m_reloadWhenEditable, false))
        reloadInBackground();
    m_reference->setEnabled(editable);
    m_fromLabels->setEnabled(editable);
    m_fromRule->setEnabled(editable);
    m_fromMeasurements->setEnabled(editable);
    m_measured->setEditable(editable);
    m_rulePairs->setEnabled(editable && m_fromRule->isChecked());
    m_labelers->setEnabled(editable && (m_fromLabels->isChecked() ||
                                        (m_fromMeasurements->isChecked() && m_measured->withLabels())));
}

std::vector<std::string> TrainDataPanel::chosenLabelers() const
{
    std::vector<std::string> chosen;
    for (int i = 0; i < m_labelers->count(); ++i)
        if (m_labelers->item(i)->checkState() == Qt::Checked)
            chosen.push_back(m_labelers->item(i)->data(Qt::UserRole).toString().toStdString());
    return chosen;
}

bool TrainDataPanel::setLabelerChosen(const QString& labeler, bool chosen)
{
    for (int i = 0; i < m_labelers->count(); ++i)
        if (m_labelers->item(i)->data(Qt::UserRole).toString() == labeler) {
            m_labelers->item(i)->setCheckState(chosen ? Qt::Checked : Qt::Unchecked);
            return true;
        }
    return false;
}

void TrainDataPanel::listLabelers(const std::vector<LabelerCount>& labelers)
{
    const QSignalBlocker block(m_labelers);
    m_labelers->clear();
    for (const LabelerCount& l : labelers) {
        const QString name = QString::fromStdString(l.labeler);
        auto* item = new QListWidgetItem(l.simulated ? tr("%1 · %L2 decisive labels (simulated expert)")
                                                           .arg(name)
                                                           .arg(qint64(l.decisive))
                                                     : tr("%1 · %L2 decisive labels").arg(name).arg(qint64(l.decisive)),
                                         m_labelers);
        item->setData(Qt::UserRole, name);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(m_ticked.value(name, !l.simulated) ? Qt::Checked : Qt::Unchecked);
    }
}

std::optional<ModelRecord> TrainDataPanel::selectedModel() const
{
    const QString id = m_reference->currentData().toString();
    if (id.isEmpty())
        return std::nullopt;
    // As the last reload read it: a selection costs the store nothing.
    const auto found = m_models.constFind(id);
    return found == m_models.constEnd() ? std::nullopt : std::optional(*found);
}

std::optional<ModelSpec> TrainDataPanel::selectedSpec() const
{
    const auto model = selectedModel();
    return model ? specOf(*model) : std::nullopt;
}

bool TrainDataPanel::rulePairs() const { return m_fromRule->isChecked(); }

PreferenceSource TrainDataPanel::source() const
{
    if (m_fromRule->isChecked())
        return PreferenceSource::RulePairs;
    if (m_fromMeasurements->isChecked())
        return m_measured->withLabels() ? PreferenceSource::LabelsAndMeasurements : PreferenceSource::Measurements;
    return PreferenceSource::StoreLabels;
}

void TrainDataPanel::useMeasurements(const QString& assay, bool withLabels, double labelsShare)
{
    m_fromMeasurements->setChecked(true);
    m_measured->setWithLabels(withLabels, labelsShare);
    updatePairCount(); // lists the assays
    m_measured->selectAssay(assay);
}

int TrainDataPanel::rulePairCount() const { return m_rulePairs->value(); }

QString TrainDataPanel::summary() const { return m_pairSummary->text(); }

QString TrainDataPanel::countLabelPairs(const ModelRecord& model, qint64& pairs, bool& pending)
{
    pairs = 0;
    pending = false;
    if (m_store.isTeamStore() && !countedAhead(model.taskKey)) {
        pending = true;
        countInBackground(model.taskKey); // the count is said when it lands
        return tr("Counting the labelled pairs on the team store…");
    }
    auto labelers = labelersOf(model.taskKey);
    if (!labelers)
        return tr("Cannot read the labels: %1").arg(QString::fromStdString(labelers.error()));
    listLabelers(labelers.value());
    // Nobody ticked: none usable (an empty list would mean everyone's).
    const auto usable = usablePairs(model.taskKey, chosenLabelers());
    if (!usable)
        return tr("Cannot read the labels: %1").arg(QString::fromStdString(usable.error()));
    const UsablePairs& counted = usable.value();
    pairs = counted.usable;
    QString text = pairs > 0 ? tr("%L1 labelled pairs to train on (ties and skips left out).").arg(pairs)
                   : m_labelers->count() > 0
                       ? tr("No decisive labels by the ticked labelers: tick one above.")
                       : tr("No decisive labels yet for this model's task: label some pairs first, or use "
                            "rule-made pairs.");
    if (counted.otherLabelers > 0 && pairs > 0)
        text += QLatin1Char(' ') + tr("%L1 by unticked labelers are left out.").arg(qint64(counted.otherLabelers));
    if (counted.otherTask > 0)
        text += QLatin1Char(' ') + tr("%L1 labels of other tasks' sequences are left out.").arg(qint64(counted.otherTask));
    return text;
}

QString TrainDataPanel::countMeasuredPairs(const ModelRecord& model, qint64& pairs)
{
    pairs = 0;
    auto assays = m_store.assays();
    if (!assays)
        return tr("Cannot read the measurements: %1").arg(QString::fromStdString(assays.error()));
    if (m_measured->listAssays(assays.value(), model.taskKey) == 0)
        return tr("No measurements of this model's task: import an assay's values in the Measurements view.");
    const auto made = assayPairs(m_store, m_measured->spec());
    if (!made)
        return QString::fromStdString(made.error());
    pairs = qint64(made->pairs.pairs.size());
    return tr("%L1 measured pairs from %L2 of %L3 sequences of '%4' (%5).")
        .arg(pairs)
        .arg(qint64(made->pairs.sequencesUsed))
        .arg(qint64(made->sequences.size()))
        .arg(QString::fromStdString(made->assay.name))
        .arg(QString::fromStdString(made->pairs.description));
}

void TrainDataPanel::updatePairCount()
{
    m_pairCount = 0;
    const auto model = selectedModel();
    const bool measured = m_fromMeasurements->isChecked();
    const bool labels = m_fromLabels->isChecked() || (measured && m_measured->withLabels());
    m_rulePairs->setEnabled(m_editable && m_fromRule->isChecked());
    m_labelers->setEnabled(m_editable && labels);
    m_measured->setVisible(measured);
    if (!model) {
        m_pairSummary->setText(tr("No model in the store yet: generate pairs in the Label view first."));
    } else if (m_fromRule->isChecked()) {
        m_pairCount = m_rulePairs->value();
        const auto task = TaskInfo::ofModel(m_store, *model);
        m_pairSummary->setText(task && task->hasRule()
                                   ? tr("%L1 rule-made pairs: %2.")
                                         .arg(m_pairCount)
                                         .arg(QString::fromStdString(task->ruleDescription()))
                                   : tr("%L1 rule-made pairs from the task's rule (the model's task has none: "
                                        "training will say so).")
                                         .arg(m_pairCount));
    } else {
        qint64 labelPairs = 0, measuredPairs = 0;
        bool pending = false;
        QStringList said;
        if (measured)
            said << countMeasuredPairs(*model, measuredPairs);
        if (labels)
            said << countLabelPairs(*model, labelPairs, pending);
        // Mixed, both sources must give pairs: a run that says it mixes draws from each.
        m_pairCount = pending ? 0
                      : measured && labels ? (measuredPairs > 0 && labelPairs > 0 ? measuredPairs + labelPairs : 0)
                                           : measuredPairs + labelPairs;
        if (measured && labels && m_pairCount > 0)
            said << tr("Each batch draws a labelled pair with probability %1.").arg(m_measured->labelsShare());
        m_pairSummary->setText(said.join(QLatin1Char(' ')));
    }
    if (!labels)
        m_labelers->clear();
    m_labelers->setVisible(m_labelers->count() > 0);
    if (m_labelers->count() > 0) // as tall as its rows, up to four
        m_labelers->setFixedHeight(std::min(4, m_labelers->count()) * m_labelers->sizeHintForRow(0) +
                                   2 * m_labelers->frameWidth() + 2);
    Q_EMIT pairCountChanged();
}

} // namespace d2dpo::ui
