// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/modelsview.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "base/metricnames.h"
#include "ui/modelactions.h"
#include "ui/modeldetails.h"
#include "ui/modelexporter.h"
#include "ui/samplehistogram.h"
#include "facades/taskinfo.h"

namespace d2dpo::ui {

namespace {

constexpr int kShownSamples = 40;

enum Column { kName, kKind, kRule, kVsr, kCreated };

QJsonObject parseObject(const std::string& json)
{
    return QJsonDocument::fromJson(QByteArray::fromStdString(json)).object();
}

QString ratio(const QJsonObject& metrics, const QString& key)
{
    return metrics.contains(key) ? QString::number(metrics.value(key).toDouble(), 'f', 4) : QStringLiteral("–");
}

/// The name of the metric that is the rule's share, as the stored metrics say (older stores too).
QString ruleMetricOf(const QJsonObject& metrics)
{
    auto stored = sampleMetricsFromJson(QJsonDocument(metrics).toJson(QJsonDocument::Compact).toStdString());
    return stored ? QString::fromStdString(stored->ruleMetric) : QString();
}

} // namespace

ModelsView::ModelsView(PreferenceStore& store, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_sampler(new QFutureWatcher<std::vector<DrawnSamples>>(this))
    , m_exporter(new ModelExporter(store, this))
{
    m_tree = new QTreeWidget(this);
    m_tree->setObjectName(QStringLiteral("models"));
    m_tree->setHeaderLabels({tr("Model"), tr("Kind"), tr("Rule share"), tr("VSR"), tr("Created (UTC)")});
    m_tree->headerItem()->setToolTip(kRule, tr("The share of samples the model's task's rule prefers; each cell's "
                                               "tooltip names the rule's metric"));
    m_tree->headerItem()->setToolTip(kVsr, QString::fromStdString(metric::describe(metric::kVsr)));
    m_tree->setRootIsDecorated(true);
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);

    m_details = new QLabel(this);
    m_details->setObjectName(QStringLiteral("details"));
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    m_histogram = new SampleHistogram(kSummarySamples, this);

    m_samples = new QPlainTextEdit(this);
    m_samples->setObjectName(QStringLiteral("samples"));
    m_samples->setReadOnly(true);
    m_samples->setFont(QFont(QStringLiteral("monospace")));
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
    rightLayout->addWidget(m_histogram, 2);
    rightLayout->addWidget(m_samples, 1);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_tree);
    splitter->addWidget(right);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({520, 700});
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(splitter);

    connect(m_tree, &QTreeWidget::currentItemChanged, this, &ModelsView::showSelected);
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
    connect(m_sampler, &QFutureWatcherBase::finished, this, [this] {
        for (const DrawnSamples& drawn : m_sampler->result()) {
            if (drawn.summary) {
                m_summaries.insert(drawn.modelId, *drawn.summary);
                Q_EMIT summaryReady(drawn.modelId);
            } else {
                Q_EMIT statusMessage(tr("Cannot sample model %1: %2").arg(drawn.modelId, drawn.error));
            }
        }
        showSelected();
    });
    connect(m_exporter, &ModelExporter::finished, this, [this](const QString& folder, bool ok, const QString& error) {
        m_export->setEnabled(true);
        Q_EMIT statusMessage(ok ? tr("Exported to %1").arg(folder) : tr("Export failed: %1").arg(error));
    });
    reload();
}

ModelsView::~ModelsView() { m_sampler->waitForFinished(); } // the exporter waits for itself

void ModelsView::reload()
{
    const QString current = selectedModelId();
    const QSignalBlocker block(m_tree);
    m_tree->clear();
    m_pathById.clear();
    auto models = m_store.models();
    if (!models) {
        m_details->setText(tr("Cannot read the models: %1").arg(QString::fromStdString(models.error())));
        return;
    }
    // Parents before children: a model whose parent is not in the store is a root.
    QHash<QString, QTreeWidgetItem*> items;
    std::vector<ModelRecord> pending = models.value();
    QString newestId, newestCreated;
    for (const ModelRecord& m : pending) {
        m_pathById.insert(QString::fromStdString(m.id), QString::fromStdString(m.path));
        if (newestId.isEmpty() || QString::fromStdString(m.createdAt) >= newestCreated) {
            newestId = QString::fromStdString(m.id);
            newestCreated = QString::fromStdString(m.createdAt);
        }
    }
    while (!pending.empty()) {
        std::vector<ModelRecord> later;
        for (const ModelRecord& m : pending) {
            const QString parentId = QString::fromStdString(m.parentId);
            QTreeWidgetItem* parent = items.value(parentId);
            if (!parent && m_pathById.contains(parentId) && parentId != QString::fromStdString(m.id)) {
                later.push_back(m);
                continue;
            }
            auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_tree);
            const QJsonObject metrics = parseObject(m.metricsJson);
            item->setText(kName, QString::fromStdString(m.name));
            item->setText(kKind, QString::fromStdString(m.kind));
            item->setText(kRule, ratio(metrics, ruleMetricOf(metrics)));
            item->setToolTip(kRule, ruleMetricOf(metrics));
            item->setText(kVsr, ratio(metrics, QLatin1String(metric::kVsr)));
            item->setText(kCreated, QString::fromStdString(m.createdAt).left(16).replace(QLatin1Char('T'), QLatin1Char(' ')));
            item->setData(kName, Qt::UserRole, QString::fromStdString(m.id));
            item->setToolTip(kName, QString::fromStdString(m.id));
            items.insert(QString::fromStdString(m.id), item);
        }
        if (later.size() == pending.size()) { // a cycle: show the rest as roots
            for (const ModelRecord& m : later)
                (new QTreeWidgetItem(m_tree))->setText(kName, QString::fromStdString(m.name));
            break;
        }
        pending = std::move(later);
    }
    m_tree->expandAll();
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
    if (id.isEmpty())
        return std::nullopt;
    auto model = m_store.model(id.toStdString());
    return model ? model.value() : std::nullopt;
}

std::optional<ModelRecord> ModelsView::referenceOf(const ModelRecord& model) const
{
    if (model.parentId.empty())
        return std::nullopt;
    auto parent = m_store.model(model.parentId);
    return parent ? parent.value() : std::nullopt;
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
    m_details->setText(modelDetails(m_store, *model, reference));


    std::vector<ModelRecord> needed;
    for (const auto& m : {std::optional(*model), reference})
        if (m && !m_summaries.contains(QString::fromStdString(m->id)) && QFileInfo::exists(QString::fromStdString(m->path)))
            needed.push_back(*m);
    if (!needed.empty() && isVisible()) // hidden: drawn when the view is first shown
        requestSummaries(needed);

    m_samples->clear();
    if (const auto mine = summary(QString::fromStdString(model->id))) {
        QStringList text;
        for (int i = 0; i < std::min<int>(kShownSamples, int(mine->samples.size())); ++i) {
            const SequenceHint& hint = mine->hints[size_t(i)];
            text << QStringLiteral("%1   %2%3").arg(QString::fromStdString(mine->samples[size_t(i)]),
                                                    QString::fromStdString(hint.value),
                                                    hint.rule.empty() ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(hint.rule)));
        }
        // The figures of these samples, with where they come from: the same sampler, count and seed
        // as a Train run's reference evaluation with the default settings, so the two agree.
        QStringList figures;
        for (const MetricValue& v : mine->metrics.values)
            figures << QStringLiteral("%1 %2").arg(QString::fromStdString(v.name)).arg(v.value, 0, 'f', 4);
        m_samples->setPlainText(tr("Measured on these samples: %1\n(%2; a Train run with seed 0 and %3 evaluation "
                                   "samples measures its reference the same way)\n\nThe first %4 of %5 samples:\n")
                                    .arg(figures.join(QStringLiteral(", ")),
                                         QString::fromStdString(mine->metrics.provenance()))
                                    .arg(kSummarySamples)
                                    .arg(text.size())
                                    .arg(mine->samples.size()) +
                                text.join(QLatin1Char('\n')));
    } else {
        m_samples->setPlainText(tr("Drawing samples…"));
    }
    drawHistogram();
}

void ModelsView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    showSelected();
}

void ModelsView::requestSummaries(const std::vector<ModelRecord>& models)
{
    if (m_sampler->isRunning())
        return; // the finished handler shows the selection again and asks for what is missing
    std::vector<std::pair<QString, std::string>> jobs;
    for (const ModelRecord& m : models)
        jobs.emplace_back(QString::fromStdString(m.id), m.path);
    m_sampler->setFuture(QtConcurrent::run([jobs] {
        std::vector<DrawnSamples> out;
        for (const auto& [id, path] : jobs) {
            // The same draws for every model, so histograms compare models; and a default run's,
            // so a reference's figures here are the ones its runs log and plot as their baseline.
            auto drawn = measureCheckpoint(path, standardMeasurement());
            out.push_back({id, drawn ? std::optional(drawn.value()) : std::nullopt,
                           drawn ? QString() : QString::fromStdString(drawn.error())});
        }
        return out;
    }));
}

void ModelsView::drawHistogram()
{
    const auto model = selected();
    if (!model) {
        m_histogram->clear();
        return;
    }
    const auto reference = referenceOf(*model);
    m_histogram->draw(summary(QString::fromStdString(model->id)), QString::fromStdString(model->name),
                      reference ? summary(QString::fromStdString(reference->id)) : std::nullopt,
                      reference ? QString::fromStdString(reference->name) : QString());
}

Status ModelsView::exportSelected(const QString& folder)
{
    const auto model = selected();
    if (!model)
        return makeError("no model is selected");
    return m_exporter->exportModel(*model, folder);
}

void ModelsView::exportWithDialog()
{
    const auto model = selected();
    if (!model || m_exporter->running())
        return;
    const QString folder = exportFolderWithDialog(this, *model);
    if (folder.isEmpty())
        return;
    m_export->setEnabled(false);
    Q_EMIT statusMessage(tr("Exporting to %1…").arg(folder));
    m_exporter->start(*model, folder);
}

} // namespace d2dpo::ui
