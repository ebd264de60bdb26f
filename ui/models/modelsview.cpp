// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/modelsview.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "base/metricnames.h"
#include "base/timeutil.h"
#include "ui/common/modellistreader.h"
#include "ui/models/modelactions.h"
#include "ui/models/modeldetails.h"
#include "ui/models/modelexporter.h"
#include "ui/models/modelmeasurer.h"
#include "ui/models/modeltree.h"
#include "ui/models/modelfigures.h"
#include "facades/taskinfo.h"

namespace d2dpo::ui {

namespace {
constexpr int kShownSamples = 40;
} // namespace

ModelsView::ModelsView(PreferenceStore& store, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_measurer(new ModelMeasurer(this))
    , m_exporter(new ModelExporter(store, this))
{
    m_tree = new QTreeWidget(this);
    m_tree->setObjectName(QStringLiteral("models"));
    setUpModelTree(m_tree);

    m_details = new QLabel(this);
    m_details->setObjectName(QStringLiteral("details"));
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    m_figures = new ModelFigures(m_store, this);
    m_sampleCount = new QSpinBox(this);
    m_sampleCount->setObjectName(QStringLiteral("sampleCount"));
    m_sampleCount->setRange(0, 100000);
    m_sampleCount->setSingleStep(100);
    m_sampleCount->setSpecialValueText(tr("Auto"));
    m_sampleCount->setToolTip(tr("Samples drawn from each model for its figures and histogram. Auto: as many as "
                                 "fit in about %1 s at the model's cost (one pass is timed first), at most %2; a model "
                                 "and its reference get the same count. Set a count to draw more.")
                                  .arg(kMeasurementSeconds)
                                  .arg(kMeasurementSamples));
    m_sampleCount->setValue(QSettings().value(QStringLiteral("models/samples"), 0).toInt());
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("samplingProgress"));
    m_progress->setTextVisible(true);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancelSampling"));
    m_cancel->setEnabled(false);

    m_samples = new QPlainTextEdit(this);
    m_samples->setObjectName(QStringLiteral("samples"));
    m_samples->setReadOnly(true);
    m_samples->setFont(QFont(QStringLiteral("monospace")));
    m_samples->setLineWrapMode(QPlainTextEdit::NoWrap); // what the task reads stays in its column
    m_samples->setPlaceholderText(tr("Samples of the selected model appear here."));

    m_export = new QPushButton(tr("Export…"), this);
    m_export->setToolTip(tr("Write weights.pt (Python: torch.load), model_card.json and samples.txt to a folder"));
    m_label = new QPushButton(tr("Label pairs from this model"), this);
    m_train = new QPushButton(tr("Train from this model"), this);
    m_rename = new QPushButton(tr("Rename…"), this);
    m_rename->setObjectName(QStringLiteral("renameModel"));
    m_delete = new QPushButton(tr("Delete…"), this);
    m_delete->setObjectName(QStringLiteral("deleteModel"));
    m_compare = new QPushButton(tr("Compare models…"), this);
    m_compare->setObjectName(QStringLiteral("compareModels"));
    m_compare->setToolTip(tr("A blind comparison: the experts label pairs of this model's and other models' samples "
                             "without knowing which is which"));
    auto* results = new QPushButton(tr("Comparison results…"), this);
    results->setObjectName(QStringLiteral("comparisonResults"));

    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(m_details);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_export);
    buttons->addWidget(m_label);
    buttons->addWidget(m_train);
    buttons->addWidget(m_rename);
    buttons->addWidget(m_delete);
    buttons->addStretch(1);
    rightLayout->addLayout(buttons);
    auto* comparing = new QHBoxLayout;
    comparing->addWidget(m_compare);
    comparing->addWidget(results);
    comparing->addStretch(1);
    rightLayout->addLayout(comparing);
    auto* sampling = new QHBoxLayout;
    sampling->addWidget(new QLabel(tr("Samples per model:"), this));
    sampling->addWidget(m_sampleCount);
    sampling->addWidget(m_progress, 1);
    sampling->addWidget(m_cancel);
    rightLayout->addLayout(sampling);
    // The figures over the sample list, the boundary the user's to move: at 1024x640 the logos
    // of the per-position tab need most of the height, the list a few lines (3:1 at first).
    auto* figuresOverSamples = new QSplitter(Qt::Vertical, right);
    figuresOverSamples->setObjectName(QStringLiteral("figuresOverSamples"));
    figuresOverSamples->addWidget(m_figures);
    figuresOverSamples->addWidget(m_samples);
    figuresOverSamples->setStretchFactor(0, 3);
    figuresOverSamples->setStretchFactor(1, 1);
    figuresOverSamples->setChildrenCollapsible(false);
    m_samples->setMinimumHeight(m_samples->fontMetrics().lineSpacing() * 3);
    rightLayout->addWidget(figuresOverSamples, 1);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_tree);
    splitter->addWidget(right);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({520, 700});
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(splitter);

    connect(m_tree, &QTreeWidget::currentItemChanged, this, [this] {
        m_samplingCancelled = false; // another model: drawn, whatever was cancelled before
        showSelected();
    });
    connect(m_export, &QPushButton::clicked, this, &ModelsView::exportWithDialog);
    connect(m_label, &QPushButton::clicked, this, [this] {
        if (const auto model = selected())
            Q_EMIT labelPairsFrom(QString::fromStdString(model->path));
    });
    connect(m_train, &QPushButton::clicked, this, [this] {
        if (const auto model = selected())
            Q_EMIT trainFrom(QString::fromStdString(model->id));
    });
    connect(m_compare, &QPushButton::clicked, this, [this] { Q_EMIT compareModels(selectedModelId()); });
    connect(results, &QPushButton::clicked, this, &ModelsView::comparisonResultsRequested);
    connect(m_rename, &QPushButton::clicked, this, [this] {
        if (const auto model = selected(); model && renameModelWithDialog(this, m_store, *model)) {
            reload();
            Q_EMIT modelsChanged();
        }
    });
    connect(m_delete, &QPushButton::clicked, this, [this] {
        if (const auto model = selected(); model && deleteModelWithDialog(this, m_store, *model)) {
            reload();
            Q_EMIT modelsChanged();
        }
    });
    connect(m_measurer, &ModelMeasurer::measured, this, &ModelsView::onMeasured);
    connect(m_measurer, &ModelMeasurer::progress, this, [this](const QString& name, qint64 done, qint64 total, double left) {
        m_progress->setRange(0, int(total));
        m_progress->setValue(int(done));
        // Short enough for a quarter of a 1024-wide window; the model's name is in the tooltip.
        m_progress->setFormat(total == 0 ? tr("timing one pass…")
                              : left < 0 ? tr("drawing %1 samples…").arg(total)
                                         : tr("%1 / %2 samples · %3 left").arg(done).arg(total)
                                               .arg(QString::fromStdString(clockDuration(left))));
        m_progress->setToolTip(tr("Drawing samples of %1").arg(name));
        m_cancel->setEnabled(true);
    });
    connect(m_measurer, &ModelMeasurer::idle, this, [this] {
        m_cancel->setEnabled(false);
        m_progress->setRange(0, 1);
        m_progress->setValue(0);
        m_progress->setFormat(QString());
    });
    connect(m_cancel, &QPushButton::clicked, this, &ModelsView::cancelSampling);
    connect(m_sampleCount, &QSpinBox::editingFinished, this, [this] { // also on leaving the box unchanged
        if (m_sampleCount->value() != QSettings().value(QStringLiteral("models/samples"), 0).toInt())
            setSampleCount(m_sampleCount->value());
    });
    connect(m_exporter, &ModelExporter::finished, this,
            [this](const QString& to, bool ok, const QString& error, bool cancelled, const QString& samples) {
                m_export->setEnabled(true);
                Q_EMIT statusMessage(ok          ? tr("Exported to %1 (%2)").arg(to, samples)
                                     : cancelled ? tr("Export cancelled; nothing was written to %1").arg(to)
                                                 : tr("Export failed: %1").arg(error));
            });
    m_listReader = new ModelListReader(store.path(), this);
    connect(m_listReader, &ModelListReader::ready, this, &ModelsView::showModels);
    reload();
}

ModelsView::~ModelsView() = default; // the measurer and the exporter wait for themselves

SampleBudget ModelsView::sampleBudget() const
{
    const int count = m_sampleCount->value(); // 0: Auto
    return count > 0 ? SampleBudget{count, 0} : SampleBudget{kMeasurementSamples, kMeasurementSeconds};
}

void ModelsView::setSampleCount(int count)
{
    m_sampleCount->setValue(count);
    QSettings().setValue(QStringLiteral("models/samples"), count);
    m_measurer->cancel(); // drawn again at the new count
    m_samplingCancelled = false;
    m_summaries.clear();
    showSelected();
}

void ModelsView::cancelSampling()
{
    m_samplingCancelled = true; // not drawn again until the count or the selection changes
    m_measurer->cancel();
    // The bar says so at once (the draw ends before its next pass; idle() resets it then).
    m_cancel->setEnabled(false);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_progress->setFormat(tr("stopped"));
    Q_EMIT statusMessage(tr("Stopped drawing samples"));
}

void ModelsView::onMeasured(const DrawnSamples& drawn)
{
    const SampleBudget now = sampleBudget();
    if (drawn.budget.most != now.most || drawn.budget.seconds != now.seconds)
        return; // drawn for a count since changed: drawn again at the new one
    if (drawn.summary) {
        m_summaries.insert(drawn.modelId, *drawn.summary);
        showFigures();
        Q_EMIT summaryReady(drawn.modelId);
    } else if (drawn.error != QLatin1String("stopped")) {
        Q_EMIT statusMessage(tr("Cannot sample model %1: %2").arg(drawn.modelId, drawn.error));
    }
    showSelected();
}

void ModelsView::showFigures()
{
    for (QTreeWidgetItemIterator it(m_tree); *it; ++it) {
        const QString id = (*it)->data(kName, Qt::UserRole).toString();
        std::optional<SampleMetrics> metrics;
        QString source;
        if (const auto drawn = summary(id)) {
            metrics = drawn->metrics;
            source = tr("drawn here");
        } else if (const auto model = m_modelsById.constFind(id); model != m_modelsById.constEnd()) {
            if (auto recorded = sampleMetricsFromJson(model->metricsJson))
                metrics = recorded.value();
            source = tr("recorded when it was made");
        }
        showModelFigures(*it, metrics, source);
    }
}

void ModelsView::reload()
{
    // The first list when the view is made (as the window opens), and every list of a file (a
    // local read); a team store's later lists off the window's thread, shown when they arrive.
    if (!m_listed || !m_store.isTeamStore()) {
        m_listed = true;
        // A team store's runs too, so that choosing a model never reads its run on this thread.
        showModels(ModelListReader::readNow(m_store, m_store.isTeamStore()));
    } else {
        m_listReader->read();
    }
}

void ModelsView::showModels(const ModelList& list)
{
    const QString current = selectedModelId();
    const QSignalBlocker block(m_tree);
    if (!list.ok) {
        m_details->setText(tr("Cannot read the models: %1").arg(QString::fromStdString(list.error)));
        return;
    }
    m_tree->clear();
    m_modelsById.clear();
    m_runBriefs = list.runs;
    for (const ModelRecord& m : list.models)
        m_modelsById.insert(QString::fromStdString(m.id), m);
    const QString newestId = fillModelTree(m_tree, list.models);
    showFigures();
    if (!selectModel(current) && !newestId.isEmpty())
        selectModel(newestId);
    showSelected();
}

bool ModelsView::selectModel(const QString& id)
{
    if (id.isEmpty())
        return false;
    for (QTreeWidgetItemIterator it(m_tree); *it; ++it) {
        if ((*it)->data(kName, Qt::UserRole).toString() == id) {
            m_tree->setCurrentItem(*it);
            return true;
        }
    }
    return false;
}

QString ModelsView::selectedModelId() const
{
    const QTreeWidgetItem* item = m_tree->currentItem();
    return item ? item->data(kName, Qt::UserRole).toString() : QString();
}

std::optional<ModelRecord> ModelsView::selected() const
{
    const QString id = selectedModelId();
    const auto model = m_modelsById.constFind(id);
    return model == m_modelsById.constEnd() ? std::nullopt : std::optional(*model);
}

std::optional<ModelRecord> ModelsView::referenceOf(const ModelRecord& model) const
{
    const auto parent = m_modelsById.constFind(QString::fromStdString(model.parentId));
    return parent == m_modelsById.constEnd() ? std::nullopt : std::optional(*parent);
}

std::optional<ModelSummary> ModelsView::summary(const QString& id) const
{
    const auto it = m_summaries.constFind(id);
    return it == m_summaries.constEnd() ? std::nullopt : std::optional(*it);
}

QString ModelsView::detailsText() const { return m_details->text(); }

void ModelsView::showSelected()
{
    const auto model = selected();
    m_export->setEnabled(model.has_value() && !m_exporter->running());
    m_label->setEnabled(model.has_value());
    m_train->setEnabled(model.has_value());
    m_rename->setEnabled(model.has_value());
    m_delete->setEnabled(model.has_value());
    m_compare->setEnabled(model.has_value());
    if (!model) {
        m_details->setText(tr("No model yet. The first launch installs the shipped reference model; "
                              "fine-tuned models appear here after training."));
        m_samples->clear();
        drawHistogram();
        return;
    }
    const auto reference = referenceOf(*model);
    const SampleBudget budget = sampleBudget();
    const auto mine = summary(QString::fromStdString(model->id));
    const auto brief = model->runId ? m_runBriefs.find(*model->runId) : m_runBriefs.end();
    m_details->setText(modelDetails(m_store, *model, reference, mine ? &mine->metrics : nullptr,
                                    brief == m_runBriefs.end() ? nullptr : &brief->second));

    // Drawn again at another count: the figures on screen are always of the count shown.
    std::vector<ModelRecord> needed;
    for (const auto& m : {std::optional(*model), reference}) {
        const auto drawn = m ? summary(QString::fromStdString(m->id)) : std::nullopt;
        if (m && (!drawn || (!budget.fitted() && drawn->metrics.samples != budget.most)) &&
            QFileInfo::exists(QString::fromStdString(m->path)))
            needed.push_back(*m);
    }
    if (!needed.empty() && isVisible() && !m_samplingCancelled) // hidden: drawn when the view is first shown
        requestSummaries(needed);

    m_samples->setPlainText(mine ? samplesText(*mine, kShownSamples) : tr("Drawing samples…"));
    drawHistogram();
}

void ModelsView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    showSelected();
}

void ModelsView::requestSummaries(const std::vector<ModelRecord>& models)
{
    m_measurer->measure(models, sampleBudget());
}

void ModelsView::drawHistogram()
{
    const auto model = selected();
    if (!model) {
        m_figures->clear();
        return;
    }
    const auto reference = referenceOf(*model);
    auto named = [this](const std::optional<ModelRecord>& m) {
        return m ? NamedSummary{QString::fromStdString(m->id), QString::fromStdString(m->name),
                                summary(QString::fromStdString(m->id))}
                 : NamedSummary{};
    };
    auto task = TaskInfo::ofModel(m_store, *model);
    m_figures->show(named(model), named(reference), task ? &task.value() : nullptr);
    m_figures->showHeldOut(*model);
}

} // namespace d2dpo::ui
