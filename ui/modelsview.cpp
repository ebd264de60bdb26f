#include "modelsview.h"

#include <QDir>
#include <QFileDialog>
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

#include "binaryintegertext.h"
#include "qcustomplotinclude.h"

namespace d2dpo::ui {

namespace {

constexpr uint64_t kSummarySeed = 7; // the same draws for every model: histograms compare models
constexpr int kSummarySteps = 64;
constexpr int kShownSamples = 40;

enum Column { kName, kKind, kOdd, kVsr, kCreated };

QJsonObject parseObject(const std::string& json)
{
    return QJsonDocument::fromJson(QByteArray::fromStdString(json)).object();
}

QString ratio(const QJsonObject& metrics, const char* key)
{
    return metrics.contains(QLatin1String(key)) ? QString::number(metrics.value(QLatin1String(key)).toDouble(), 'f', 4)
                                                : QStringLiteral("–");
}

} // namespace

ModelsView::ModelsView(PreferenceStore& store, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_sampler(new QFutureWatcher<std::vector<DrawnSamples>>(this))
    , m_exporter(new QFutureWatcher<Status>(this))
{
    m_tree = new QTreeWidget(this);
    m_tree->setObjectName(QStringLiteral("models"));
    m_tree->setHeaderLabels({tr("Model"), tr("Kind"), tr("Odd ratio"), tr("VSR"), tr("Created (UTC)")});
    m_tree->setRootIsDecorated(true);
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);

    m_details = new QLabel(this);
    m_details->setObjectName(QStringLiteral("details"));
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    m_histogram = new QCustomPlot(this);
    m_histogram->setMinimumHeight(220);
    m_histogram->plotLayout()->insertRow(0);
    m_histogram->plotLayout()->addElement(
        0, 0, new QCPTextElement(m_histogram, tr("Samples over the integer i (%1 each)").arg(kSummarySamples),
                                 QFont(font().family(), font().pointSize() + 1, QFont::Bold)));
    m_histogram->xAxis->setLabel(tr("decoded integer i"));
    m_histogram->yAxis->setLabel(tr("share of samples"));
    m_histogram->legend->setVisible(true);
    m_histogram->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);

    m_samples = new QPlainTextEdit(this);
    m_samples->setObjectName(QStringLiteral("samples"));
    m_samples->setReadOnly(true);
    m_samples->setFont(QFont(QStringLiteral("monospace")));
    m_samples->setPlaceholderText(tr("Samples of the selected model appear here."));

    m_export = new QPushButton(tr("Export…"), this);
    m_export->setToolTip(tr("Write weights.pt (Python: torch.load), model_card.json and samples.txt to a folder"));
    m_label = new QPushButton(tr("Label pairs from this model"), this);
    m_train = new QPushButton(tr("Train from this model"), this);

    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(m_details);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_export);
    buttons->addWidget(m_label);
    buttons->addWidget(m_train);
    buttons->addStretch(1);
    rightLayout->addLayout(buttons);
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
    connect(m_exporter, &QFutureWatcherBase::finished, this, [this] {
        m_export->setEnabled(true);
        const Status s = m_exporter->result();
        Q_EMIT statusMessage(s ? tr("Exported to %1").arg(m_exportFolder)
                               : tr("Export failed: %1").arg(QString::fromStdString(s.error())));
    });
    reload();
}

ModelsView::~ModelsView()
{
    m_sampler->waitForFinished();
    m_exporter->waitForFinished();
}

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
            item->setText(kOdd, ratio(metrics, "odd_ratio"));
            item->setText(kVsr, ratio(metrics, "vsr"));
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
    m_export->setEnabled(model.has_value() && !m_exporter->isRunning());
    m_label->setEnabled(model.has_value());
    m_train->setEnabled(model.has_value());
    if (!model) {
        m_details->setText(tr("No model yet. The first launch installs the shipped reference model; "
                              "fine-tuned models appear here after training."));
        m_samples->clear();
        drawHistogram();
        return;
    }
    const auto reference = referenceOf(*model);
    const QJsonObject metrics = parseObject(model->metricsJson);
    QStringList lines;
    lines << tr("<b>%1</b> &nbsp; <code>%2</code> (%3)")
                 .arg(QString::fromStdString(model->name).toHtmlEscaped(), QString::fromStdString(model->id),
                      QString::fromStdString(model->kind));
    lines << tr("Trained from: %1")
                 .arg(reference ? QStringLiteral("%1 <code>%2</code>")
                                      .arg(QString::fromStdString(reference->name).toHtmlEscaped(),
                                           QString::fromStdString(reference->id))
                                : model->parentId.empty() ? tr("— (a pretrained root)")
                                                          : QString::fromStdString(model->parentId));
    if (model->runId) {
        auto run = m_store.run(*model->runId);
        if (run && run.value()) {
            const QJsonObject config = parseObject(run.value()->configJson);
            const QJsonObject prefs = config.value(QStringLiteral("preferences")).toObject();
            const QJsonObject dpo = config.value(QStringLiteral("dpo")).toObject();
            const QString source = prefs.value(QStringLiteral("source")).toString();
            lines << tr("Run #%1 (%2, %3): %L4 %5; beta %6, lr %7, %8 steps of %9 pairs")
                         .arg(*model->runId)
                         .arg(QString::fromStdString(run.value()->status), QString::fromStdString(run.value()->device))
                         .arg(prefs.value(QStringLiteral("pairs")).toInteger())
                         .arg(source == QLatin1String("store-labels") ? tr("expert-labelled pairs") : tr("rule-made pairs"))
                         .arg(dpo.value(QStringLiteral("beta")).toDouble())
                         .arg(dpo.value(QStringLiteral("learning_rate")).toDouble())
                         .arg(dpo.value(QStringLiteral("steps")).toInteger())
                         .arg(dpo.value(QStringLiteral("batch")).toInteger());
        }
    }
    if (!metrics.isEmpty())
        lines << tr("Last evaluation: odd ratio %1, VSR %2, odd among valid %3 (%4 samples)")
                     .arg(ratio(metrics, "odd_ratio"), ratio(metrics, "vsr"), ratio(metrics, "odd_share_valid"))
                     .arg(metrics.value(QStringLiteral("samples")).toInteger());
    lines << tr("File: <code>%1</code>").arg(QString::fromStdString(model->path).toHtmlEscaped());
    if (!QFileInfo::exists(QString::fromStdString(model->path)))
        lines << tr("<span style='color:#b3261e'>The checkpoint file is missing.</span>");
    m_details->setText(lines.join(QStringLiteral("<br>")));

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
            const int64_t value = mine->decoded[size_t(i)];
            text << QStringLiteral("%1   %2").arg(QString::fromStdString(mine->samples[size_t(i)]),
                                                  value < 0 ? tr("invalid") : tr("i = %1 (%2)").arg(value).arg(value % 2 ? tr("odd") : tr("even")));
        }
        m_samples->setPlainText(tr("The first %1 of %2 samples (seed %3):\n").arg(text.size()).arg(mine->samples.size()).arg(kSummarySeed) +
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
            auto drawn = summarizeCheckpoint(path, kSummarySamples, kSummarySteps, kSummarySeed);
            out.push_back({id, drawn ? std::optional(drawn.value()) : std::nullopt,
                           drawn ? QString() : QString::fromStdString(drawn.error())});
        }
        return out;
    }));
}

void ModelsView::drawHistogram()
{
    m_histogram->clearPlottables();
    const auto model = selected();
    if (!model) {
        m_histogram->replot();
        return;
    }
    const auto reference = referenceOf(*model);
    auto* group = new QCPBarsGroup(m_histogram);
    double maxShare = 0.05;
    int bins = 0;
    auto addBars = [&](const ModelRecord& m, const QString& label, const QColor& color) {
        const auto drawn = summary(QString::fromStdString(m.id));
        if (!drawn)
            return;
        const SampleMetrics& metrics = drawn->metrics;
        auto* bars = new QCPBars(m_histogram->xAxis, m_histogram->yAxis);
        bars->setName(label);
        bars->setPen(QPen(color.darker(130)));
        bars->setBrush(color);
        bars->setWidth(0.4);
        bars->setBarsGroup(group);
        const double total = std::max<int64_t>(1, metrics.samples);
        QVector<double> keys, values;
        for (size_t i = 0; i < metrics.histogram.size(); ++i) {
            keys << double(i);
            values << double(metrics.histogram[i]) / total;
        }
        keys << double(metrics.histogram.size());
        values << double(metrics.invalid) / total;
        for (double v : values)
            maxShare = std::max(maxShare, v);
        bins = std::max(bins, int(keys.size()));
        bars->setData(keys, values, true);
    };
    if (reference)
        addBars(*reference, tr("reference: %1").arg(QString::fromStdString(reference->name)), QColor(160, 160, 160));
    addBars(*model, tr("this model: %1").arg(QString::fromStdString(model->name)), QColor(255, 127, 14));
    // Integer ticks, and the last bin named for what it holds.
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    const int every = bins > 24 ? (bins + 15) / 16 : 1;
    for (int i = 0; i + 1 < bins; i += every)
        ticker->addTick(i, QString::number(i));
    if (bins > 0)
        ticker->addTick(bins - 1, tr("invalid"));
    m_histogram->xAxis->setTicker(ticker);
    m_histogram->xAxis->setRange(-0.7, std::max(1, bins) - 0.3);
    m_histogram->yAxis->setRange(0, maxShare * 1.35); // headroom for the legend
    m_histogram->replot();
}

ExportOptions ModelsView::exportOptionsFor(const ModelRecord& model) const
{
    ExportOptions options;
    if (!model.runId)
        return options;
    auto run = m_store.run(*model.runId);
    if (!run || !run.value())
        return options;
    const RunRecord& r = *run.value();
    const QJsonObject config = parseObject(r.configJson);
    const QJsonObject prefs = config.value(QStringLiteral("preferences")).toObject();
    options.preferenceCountsJson = QJsonDocument(prefs).toJson(QJsonDocument::Compact).toStdString();
    const QJsonObject json{{QStringLiteral("run_id"), qint64(r.id)},
                           {QStringLiteral("status"), QString::fromStdString(r.status)},
                           {QStringLiteral("device"), QString::fromStdString(r.device)},
                           {QStringLiteral("reference_model_id"), QString::fromStdString(r.referenceModelId)},
                           {QStringLiteral("started_at"), QString::fromStdString(r.startedAt)},
                           {QStringLiteral("finished_at"), QString::fromStdString(r.finishedAt)},
                           {QStringLiteral("config"), config}};
    options.runJson = QJsonDocument(json).toJson(QJsonDocument::Compact).toStdString();
    return options;
}

Status ModelsView::exportSelected(const QString& folder)
{
    const auto model = selected();
    if (!model)
        return makeError("no model is selected");
    return exportCheckpointFile(model->path, folder.toStdString(), exportOptionsFor(*model));
}

void ModelsView::exportWithDialog()
{
    const auto model = selected();
    if (!model || m_exporter->isRunning())
        return;
    const QString parent = QFileDialog::getExistingDirectory(this, tr("Export the model into a new folder inside…"),
                                                             QDir::homePath());
    if (parent.isEmpty())
        return;
    const QString folder = QDir(parent).filePath(QStringLiteral("d2dpo-%1").arg(QString::fromStdString(model->id)));
    const ExportOptions options = exportOptionsFor(*model);
    const std::string path = model->path;
    m_export->setEnabled(false);
    m_exportFolder = folder;
    Q_EMIT statusMessage(tr("Exporting to %1…").arg(folder));
    m_exporter->setFuture(QtConcurrent::run(
        [path, options, target = folder.toStdString()] { return exportCheckpointFile(path, target, options); }));
}

} // namespace d2dpo::ui
