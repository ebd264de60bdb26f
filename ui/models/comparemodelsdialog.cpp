// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/comparemodelsdialog.h"
#include "ui/common/longjobs.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <optional>

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "jobs/comparisonpairs.h"
#include "ui/common/modellistreader.h"
#include "ui/common/ownconnection.h"
#include "ui/common/timeleft.h"

namespace d2dpo::ui {

struct ComparisonDrawProgress {
    std::atomic<double> done{0};
    std::atomic<int64_t> total{0}; ///< 0 while the models load
    /// kDrawing, then kStoring (a team store's comparison is being written: too late to cancel) or
    /// kCancelled; each side moves it with a compare-exchange, so a cancel and the store never cross.
    enum Phase { kDrawing, kStoring, kCancelled };
    std::atomic<int> phase{kDrawing};
    bool storing() const { return phase.load() == kStoring; }
};

namespace {

/// The comparison as `d2dpo compare` sets it up (jobs/comparisonpairs.h); a stop is heard before
/// each pass of a model, and a stopped draw's result is thrown away.
ComparisonDrawResult drawInBackground(const std::vector<std::string>& paths, int64_t perTwoModels, uint64_t seed,
                                      const std::shared_ptr<StopToken>& stop,
                                      const std::shared_ptr<ComparisonDrawProgress>& progress,
                                      const std::string& teamStore)
{
    ComparisonDrawResult result;
    auto prepared = prepareComparison(paths, "auto", perTwoModels, seed, {}, stop.get(),
                                      [progress](double done, int64_t total) {
                                          progress->total.store(total);
                                          progress->done.store(done);
                                      });
    if (!prepared) {
        result.error = QString::fromStdString(prepared.error());
        return result;
    }
    result.prepared = std::move(prepared.value());
    if (teamStore.empty())
        return result; // a file's comparison is stored on the window's thread (a local write)
    // A team store's, here: the window never waits on its server. Not once cancelled.
    int drawing = ComparisonDrawProgress::kDrawing;
    if (!progress->phase.compare_exchange_strong(drawing, ComparisonDrawProgress::kStoring))
        return result;
    OwnConnection connection(teamStore);
    auto store = connection.get();
    auto id = store ? storeComparison(*store.value(), result.prepared) : makeError(store.errorCode(), store.error());
    if (id)
        result.storedId = id.value();
    else
        result.error = QString::fromStdString(id.error());
    return result;
}

} // namespace

CompareModelsDialog::CompareModelsDialog(PreferenceStore& store, const QString& selectedModelId, QWidget* parent)
    : QDialog(parent)
    , m_store(store)
    , m_watcher(new QFutureWatcher<ComparisonDrawResult>(this))
{
    setWindowTitle(tr("Compare models (blind)"));
    auto* intro = new QLabel(tr("Pairs with one sample of each of two models, on random sides, go to every "
                                "labeler's queue. The Label view never says which model drew which sequence. "
                                "Results: Models ▸ Comparison results…"),
                             this);
    intro->setWordWrap(true);
    m_models = new QListWidget(this);
    m_models->setObjectName(QStringLiteral("models"));
    m_models->setAccessibleName(tr("Models to compare"));
    m_count = new QSpinBox(this);
    m_count->setObjectName(QStringLiteral("pairsPerTwoModels"));
    m_count->setRange(1, 10'000);
    m_count->setValue(50);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("summary"));
    m_summary->setWordWrap(true);
    m_busy = new QProgressBar(this);
    m_busy->setRange(0, 0);
    m_busy->setTextVisible(false);
    m_busy->hide();
    m_state = new QLabel(this);
    m_state->setObjectName(QStringLiteral("state"));
    m_state->setWordWrap(true);
    m_state->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Room for an error of three lines: a wrapped label under a stretching list kept only one.
    m_state->setMinimumHeight(3 * m_state->fontMetrics().lineSpacing());
    m_state->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    m_start = buttons->addButton(tr("&Start"), QDialogButtonBox::AcceptRole);
    m_start->setObjectName(QStringLiteral("start"));
    m_cancel = buttons->addButton(tr("Ca&ncel the draw"), QDialogButtonBox::ActionRole);
    m_cancel->setEnabled(false);

    auto* form = new QFormLayout;
    form->addRow(tr("Pairs for each two models:"), m_count);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(m_models, 1);
    layout->addLayout(form);
    layout->addWidget(m_summary);
    layout->addWidget(m_busy);
    layout->addWidget(m_state);
    layout->addWidget(buttons);
    resize(560, 440);

    // Start is an AcceptRole button: the box's accepted() would close the dialog, so it is wired alone.
    connect(m_start, &QPushButton::clicked, this, &CompareModelsDialog::start);
    connect(m_cancel, &QPushButton::clicked, this, &CompareModelsDialog::cancel);
    connect(buttons, &QDialogButtonBox::rejected, this, &CompareModelsDialog::reject);
    connect(m_models, &QListWidget::itemChanged, this, &CompareModelsDialog::updateSummary);
    connect(m_count, &QSpinBox::valueChanged, this, &CompareModelsDialog::updateSummary);
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        // A cancelled draw's result is thrown away; a new draw has a flag of its own.
        if (m_running && !m_stop->stopRequested())
            finishDraw(m_watcher->result());
    });
    m_poll = new QTimer(this);
    connect(m_poll, &QTimer::timeout, this, &CompareModelsDialog::showProgress);
    listModels(selectedModelId);
    updateSummary();
}

CompareModelsDialog::~CompareModelsDialog()
{
    // The draw owns everything it uses: it may finish after the dialog, unheard.
    if (m_stop)
        m_stop->requestStop();
}

void CompareModelsDialog::listModels(const QString& selectedModelId)
{
    if (m_store.isTeamStore()) { // read off the window's thread; listed when it lands
        auto* reader = new ModelListReader(m_store.path(), this);
        connect(reader, &ModelListReader::ready, this, [this, reader, selectedModelId](const ModelList& list) {
            reader->deleteLater();
            m_state->clear();
            if (!list.ok)
                return showError(QString::fromStdString(list.error));
            showModels(list.models, selectedModelId);
            updateSummary();
        });
        m_state->setText(tr("Reading the models from the team store…"));
        reader->read();
        return;
    }
    auto models = m_store.models();
    if (!models) {
        showError(QString::fromStdString(models.error()));
        return;
    }
    showModels(models.value(), selectedModelId);
}

void CompareModelsDialog::showModels(const std::vector<ModelRecord>& models, const QString& selectedModelId)
{
    std::optional<ModelRecord> selected;
    for (const ModelRecord& m : models)
        if (QString::fromStdString(m.id) == selectedModelId)
            selected = m;
    if (!selected && !models.empty())
        selected = models.back();
    if (!selected)
        return;
    m_task = QString::fromStdString(selected->taskKey);
    const QSignalBlocker block(m_models);
    m_models->clear();
    for (const ModelRecord& m : models) {
        if (m.taskKey != selected->taskKey)
            continue;
        const QString created =
            QString::fromStdString(m.createdAt).left(16).replace(QLatin1Char('T'), QLatin1Char(' '));
        const QString text = QStringLiteral("%1 · %2 · %3")
                                 .arg(QString::fromStdString(m.name), QString::fromStdString(m.kind), created);
        auto* item = new QListWidgetItem(text, m_models);
        item->setData(Qt::UserRole, QString::fromStdString(m.id));
        item->setData(Qt::UserRole + 1, QString::fromStdString(m.path));
        item->setToolTip(tr("%1\n%2").arg(QString::fromStdString(m.id), QString::fromStdString(m.path)));
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        const bool ticked = m.id == selected->id || m.id == selected->parentId;
        item->setCheckState(ticked ? Qt::Checked : Qt::Unchecked);
    }
}

QStringList CompareModelsDialog::tickedModels() const
{
    QStringList ids;
    for (int i = 0; i < m_models->count(); ++i)
        if (m_models->item(i)->checkState() == Qt::Checked)
            ids << m_models->item(i)->data(Qt::UserRole).toString();
    return ids;
}

void CompareModelsDialog::setTicked(const QString& modelId, bool ticked)
{
    for (int i = 0; i < m_models->count(); ++i)
        if (m_models->item(i)->data(Qt::UserRole).toString() == modelId)
            m_models->item(i)->setCheckState(ticked ? Qt::Checked : Qt::Unchecked);
}

void CompareModelsDialog::setPairsPerTwoModels(int count) { m_count->setValue(count); }

void CompareModelsDialog::updateSummary()
{
    const qint64 models = tickedModels().size();
    const qint64 twos = models * (models - 1) / 2;
    m_summary->setText(models < 2 ? tr("Tick two models or more (of the task %1).").arg(m_task)
                                  : tr("%1 models: %2 × %3 pairs for each two = up to %4 pairs to label.")
                                        .arg(models)
                                        .arg(twos)
                                        .arg(m_count->value())
                                        .arg(twos * m_count->value()));
    m_start->setEnabled(models >= 2 && !m_running);
}

void CompareModelsDialog::setRunning(bool running)
{
    m_running = running;
    if (!running)
        m_poll->stop();
    // Busy (no text) until the first pass of a draw is heard.
    m_busy->setRange(0, 0);
    m_busy->setTextVisible(false);
    m_busy->setVisible(running);
    m_cancel->setEnabled(running);
    m_models->setEnabled(!running);
    m_count->setEnabled(!running);
    updateSummary();
}

bool CompareModelsDialog::start()
{
    if (m_running)
        return false;
    m_error.clear();
    std::vector<std::string> paths;
    for (int i = 0; i < m_models->count(); ++i) {
        const QListWidgetItem* item = m_models->item(i);
        if (item->checkState() != Qt::Checked)
            continue;
        const QString path = item->data(Qt::UserRole + 1).toString();
        if (!QFileInfo::exists(path)) {
            showError(tr("The checkpoint of “%1” is missing: %2").arg(item->text(), path));
            return false;
        }
        paths.push_back(path.toStdString());
    }
    if (paths.size() < 2) {
        showError(tr("Tick two models or more."));
        return false;
    }
    m_stop = std::make_shared<StopToken>();
    m_progress = std::make_shared<ComparisonDrawProgress>();
    const int64_t count = m_count->value();
    const uint64_t seed = QRandomGenerator::global()->generate64();
    m_state->setStyleSheet({});
    m_state->setText(tr("Loading %1 models…").arg(paths.size()));
    setRunning(true);
    m_clock.start();
    m_poll->start(200);
    const std::string teamStore = m_store.isTeamStore() ? m_store.path() : std::string();
    m_watcher->setFuture(
        QtConcurrent::run(longJobPool(), [paths, count, seed, stop = m_stop, progress = m_progress, teamStore] {
            return drawInBackground(paths, count, seed, stop, progress, teamStore);
        }));
    return true;
}

void CompareModelsDialog::cancel()
{
    if (!m_running)
        return;
    int drawing = ComparisonDrawProgress::kDrawing;
    if (!m_progress->phase.compare_exchange_strong(drawing, ComparisonDrawProgress::kCancelled)) {
        // Drawn, and being written to the team store: it lands, and is said.
        m_state->setText(tr("Storing the comparison in the team store: too late to cancel…"));
        return;
    }
    m_stop->requestStop(); // heard before the draw's next pass
    setRunning(false);
    m_state->setText(tr("Cancelled: nothing was stored."));
}

void CompareModelsDialog::reject()
{
    cancel();
    if (m_running) // a team store's comparison being stored: the dialog stays to say how it ended
        return;
    QDialog::reject();
}

void CompareModelsDialog::finishDraw(const ComparisonDrawResult& result)
{
    setRunning(false);
    if (!result.error.isEmpty())
        return showError(result.error);
    if (result.storedId > 0) {
        m_created = result.storedId;
    } else {
        auto id = storeComparison(m_store, result.prepared);
        if (!id)
            return showError(QString::fromStdString(id.error()));
        m_created = id.value();
    }
    const ComparisonDraw& draw = result.prepared.draw;
    QString text = tr("Comparison %1: %2 pairs queued for every labeler, models hidden and sides random.")
                       .arg(m_created)
                       .arg(draw.pairs.size());
    if (draw.sameSequence > 0)
        text += tr(" %1 draws where both models gave the same sequence were left out.").arg(draw.sameSequence);
    m_state->setText(text);
    Q_EMIT comparisonCreated(m_created);
}

void CompareModelsDialog::showProgress()
{
    if (!m_running || !m_progress)
        return;
    if (m_progress->storing()) {
        m_state->setText(tr("Storing the comparison in the team store…"));
        return;
    }
    const int64_t total = m_progress->total.load();
    if (total <= 0)
        return; // loading the models: the bar stays busy
    const double done = m_progress->done.load();
    m_busy->setRange(0, int(std::min<int64_t>(total * 100, INT32_MAX)));
    m_busy->setValue(int(done * 100));
    m_busy->setTextVisible(true);
    m_busy->setFormat(tr("%1 / %2 samples · %3 left").arg(qint64(done)).arg(total).arg(clockLeft(m_clock, done, total)));
    m_state->setText(tr("Drawing the models' samples (one model after another)…"));
}

void CompareModelsDialog::showError(const QString& message)
{
    m_error = message;
    m_state->setStyleSheet(QStringLiteral("color: #b3261e;"));
    m_state->setText(tr("Error: %1").arg(message));
}

} // namespace d2dpo::ui
