// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/comparisonresults.h"
#include "ui/common/longjobs.h"

#include <cmath>
#include <utility>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "ui/common/reportfigures.h"

namespace d2dpo::ui {

namespace {

constexpr int kPollMs = 3000; // a label elsewhere shows within seconds; a poll is one small query

QLabel* wrapped(const QString& text, QWidget* parent, const QString& objectName = {})
{
    auto* label = new QLabel(text, parent);
    label->setWordWrap(true);
    label->setObjectName(objectName);
    return label;
}

} // namespace

ComparisonResults::ComparisonResults(PreferenceStore& store, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_poll(new QTimer(this))
    , m_watcher(new QFutureWatcher<Measured>(this))
    , m_reader(std::make_shared<OwnConnection>(store.path()))
{
    setWindowTitle(tr("Comparison results"));
    m_comparisons = new QComboBox(this);
    m_comparisons->setObjectName(QStringLiteral("comparisons"));
    m_comparisons->setAccessibleName(tr("Comparison"));
    m_comparisons->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_refresh = new QPushButton(tr("&Refresh"), this);
    m_busy = new QProgressBar(this);
    m_busy->setRange(0, 0);
    m_busy->setMaximumWidth(100);
    m_busy->setTextVisible(false);
    m_busy->hide();
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Comparison:"), this));
    top->addWidget(m_comparisons, 1);
    top->addWidget(m_refresh);
    top->addWidget(m_busy);

    m_summary = wrapped({}, this, QStringLiteral("summary"));
    m_standings = makeReportTable(
        {tr("Model"), tr("Games"), tr("Win rate"), tr("95% interval"), tr("Bradley-Terry score"), tr("95% interval")},
        {{}, tr("Labels of pairs with one of its samples (skips left out)"),
         tr("Wins over games; a tie or both bad is half a win"), {},
         tr("Log-strength, centred on 0 over the models: a model 1 above another beats it with P = 0.73")},
        this);
    m_standings->setObjectName(QStringLiteral("standings"));
    m_headToHead = makeReportTable({tr("Model"), tr("Against"), tr("Wins"), tr("Losses"), tr("Ties (both bad)"),
                                    tr("P(wins)"), tr("95% interval")},
                                   {{}, {}, {}, {}, tr("Ties and both-bad labels; in brackets, the both-bad ones"),
                                    tr("The Bradley-Terry probability that the model beats the other")},
                                   this);
    m_headToHead->setObjectName(QStringLiteral("headToHead"));
    auto* conventions = wrapped(QString::fromUtf8(kComparisonConventions) +
                                    tr(" %1 resamples. Whoever labels this comparison should not watch this window: "
                                       "it shows who won each pair as the labels come in.")
                                        .arg(kResamples),
                                this, QStringLiteral("conventions"));
    QFont small = conventions->font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    conventions->setFont(small);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_summary);
    layout->addWidget(new QLabel(tr("<b>Each model</b>"), this));
    layout->addWidget(m_standings, 2);
    layout->addWidget(new QLabel(tr("<b>Head to head</b>"), this));
    layout->addWidget(m_headToHead, 2);
    layout->addWidget(conventions);
    resize(860, 520);

    m_poll->setInterval(kPollMs);
    if (store.isTeamStore()) {
        m_look = new QFutureWatcher<Looked>(this);
        m_lookout = std::make_shared<OwnConnection>(store.path());
        connect(m_poll, &QTimer::timeout, this, &ComparisonResults::look);
        connect(m_look, &QFutureWatcherBase::finished, this, &ComparisonResults::onLooked);
    } else {
        connect(m_poll, &QTimer::timeout, this, [this] { refresh(); });
    }
    connect(m_refresh, &QPushButton::clicked, this, [this] { refresh(true); });
    connect(m_comparisons, &QComboBox::currentIndexChanged, this, [this] { refresh(true); });
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        m_busy->hide();
        const Measured measured = m_watcher->result();
        for (const auto& [id, name] : measured.names)
            m_names.insert(QString::fromStdString(id), QString::fromStdString(name));
        if (measured.report) {
            m_measuredId = m_measuring->id;
            m_measuredLabels = m_measuring->labels;
            showReport(*measured.report);
        } else {
            m_summary->setText(tr("Cannot read the labels: %1").arg(QString::fromStdString(measured.error)));
        }
        if (std::exchange(m_again, false))
            refresh(true);
        else
            Q_EMIT refreshed();
    });
}

void ComparisonResults::look()
{
    if (m_look->isRunning())
        return; // a refresh asked meanwhile looks again when this one lands (m_lookAgain)
    m_look->setFuture(QtConcurrent::run(storeReadPool(), [lookout = m_lookout]() -> Looked {
        Looked looked;
        auto store = lookout->get();
        if (!store)
            return looked; // the next look tries again
        auto comparisons = store.value()->comparisons();
        if (!comparisons)
            return looked;
        looked.ok = true;
        looked.comparisons = std::move(comparisons.value());
        return looked;
    }));
}

void ComparisonResults::onLooked()
{
    const Looked looked = m_look->result();
    if (std::exchange(m_lookAgain, false)) // asked for after this look began: it may miss what was asked
        return look();
    if (!looked.ok) { // a forced refresh stays asked for: the next look that reads answers it
        if (m_forceNext)
            m_summary->setText(tr("Cannot reach the team store to read the comparisons; looking again…"));
        return;
    }
    std::string seen;
    for (const ComparisonRecord& c : looked.comparisons)
        seen += std::to_string(c.id) + ":" + std::to_string(c.labels) + ";";
    const bool changed = seen != std::exchange(m_looked, seen);
    if (!changed && !m_forceNext)
        return;
    if (busy()) { // measured again when the measurement on its way ends
        m_again = true;
        return;
    }
    refreshWith(looked.comparisons, std::exchange(m_forceNext, false));
}

void ComparisonResults::setPollInterval(int milliseconds) { m_poll->setInterval(milliseconds); }

void ComparisonResults::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    m_poll->start();
    refresh(true);
}

void ComparisonResults::hideEvent(QHideEvent* event)
{
    m_poll->stop(); // nobody looks: no polling, no bootstrap
    QWidget::hideEvent(event);
}

qint64 ComparisonResults::shownComparison() const { return m_comparisons->currentData().toLongLong(); }

bool ComparisonResults::showComparison(qint64 id)
{
    if (m_look) { // a team store: chosen when the look asked for here lands
        m_wanted = id;
        refresh(true);
        return true;
    }
    auto comparisons = m_store.comparisons();
    if (!comparisons) {
        m_summary->setText(tr("Cannot read the comparisons: %1").arg(QString::fromStdString(comparisons.error())));
        return false;
    }
    listComparisons(comparisons.value());
    const int index = m_comparisons->findData(id);
    if (index < 0)
        return false;
    {
        const QSignalBlocker block(m_comparisons);
        m_comparisons->setCurrentIndex(index);
    }
    refresh(true);
    return true;
}

std::optional<ComparisonRecord> ComparisonResults::listComparisons(const std::vector<ComparisonRecord>& comparisons)
{
    const QSignalBlocker block(m_comparisons);
    // The look that lists began after the comparison was asked for (m_lookAgain): not there, not wanted.
    const qint64 chosen = m_wanted ? std::exchange(m_wanted, 0) : shownComparison();
    m_comparisons->clear();
    std::optional<ComparisonRecord> current;
    for (const ComparisonRecord& c : comparisons) {
        m_comparisons->addItem(tr("#%1 · %2 models of %3 · %4 pairs · %5 labels · %6")
                                   .arg(c.id)
                                   .arg(c.modelIds.size())
                                   .arg(QString::fromStdString(c.task))
                                   .arg(c.pairs)
                                   .arg(c.labels)
                                   .arg(QString::fromStdString(c.createdAt).left(16).replace(QLatin1Char('T'),
                                                                                             QLatin1Char(' '))),
                               qint64(c.id));
    }
    const int index = m_comparisons->findData(chosen);
    m_comparisons->setCurrentIndex(index >= 0 ? index : m_comparisons->count() - 1); // else the newest
    for (const ComparisonRecord& c : comparisons)
        if (c.id == shownComparison())
            current = c;
    return current;
}

void ComparisonResults::refresh(bool force)
{
    if (!isVisible())
        return; // measured when shown
    if (busy()) {
        m_again = m_again || force;
        return;
    }
    if (m_look) { // a team store: listed when a look off the window's thread lands
        m_forceNext = m_forceNext || force;
        if (m_look->isRunning())
            m_lookAgain = true;
        else
            look();
        return;
    }
    auto comparisons = m_store.comparisons();
    if (!comparisons) {
        m_summary->setText(tr("Cannot read the comparisons: %1").arg(QString::fromStdString(comparisons.error())));
        return;
    }
    refreshWith(comparisons.value(), force);
}

void ComparisonResults::refreshWith(const std::vector<ComparisonRecord>& comparisons, bool force)
{
    const std::optional<ComparisonRecord> chosen = listComparisons(comparisons);
    if (!chosen) {
        if (m_comparisons->count() == 0) {
            m_report.reset();
            m_summary->setText(tr("No comparison yet: Models ▸ Compare models… starts one."));
            m_standings->setRowCount(0);
            m_headToHead->setRowCount(0);
            Q_EMIT refreshed();
        }
        return;
    }
    if (!force && chosen->id == m_measuredId && chosen->labels == m_measuredLabels)
        return; // nothing new since the report on screen
    measure(*chosen);
}

void ComparisonResults::measure(const ComparisonRecord& comparison)
{
    m_measuring = comparison;
    m_busy->show();
    // The labels (all of them, a round trip on a team store) and the bootstrap, which refits
    // Bradley-Terry a thousand times: never in the GUI thread.
    m_watcher->setFuture(QtConcurrent::run(longJobPool(), [comparison, reader = m_reader]() -> Measured {
        Measured measured;
        auto store = reader->get();
        if (!store) {
            measured.error = store.error();
            return measured;
        }
        auto labels = store.value()->judgedLabels(comparison.id);
        if (!labels) {
            measured.error = labels.error();
            return measured;
        }
        for (const std::string& id : comparison.modelIds)
            if (auto model = store.value()->model(id); model && model->has_value())
                measured.names[id] = model.value()->name;
        measured.report = measureComparison(comparison, labels.value(), kResamples, 2);
        return measured;
    }));
}

QString ComparisonResults::modelName(const std::string& id) const
{
    const QString key = QString::fromStdString(id);
    return m_names.contains(key) ? m_names.value(key) : key;
}

void ComparisonResults::showReport(const ComparisonReport& report)
{
    m_report = report;
    m_summary->setText(tr("Comparison #%1 of %2: <b>%3 games</b> from the labels so far on its %4 pairs (%5 skips "
                          "left out).")
                           .arg(report.comparisonId)
                           .arg(QString::fromStdString(m_measuring->task))
                           .arg(report.games)
                           .arg(report.pairs)
                           .arg(report.skips));
    showStandings(report);
    showHeadToHead(report);
}

void ComparisonResults::showStandings(const ComparisonReport& report)
{
    m_standings->setRowCount(int(report.models.size()));
    for (int row = 0; row < int(report.models.size()); ++row) {
        const ModelStanding& s = report.models[size_t(row)];
        setCell(m_standings, row, 0, modelName(s.modelId), QString::fromStdString(s.modelId));
        setCell(m_standings, row, 1, QString::number(s.games));
        setCell(m_standings, row, 2, figure(s.winRate),
                std::isnan(s.winRate) ? tr("Undefined: no game yet") : QString());
        setCell(m_standings, row, 3, interval(s.winRateInterval));
        setCell(m_standings, row, 4, figure(s.score),
                std::isnan(s.score) ? tr("Undefined: no game links this model to the others yet") : QString());
        setCell(m_standings, row, 5, interval(s.scoreInterval));
    }
}

void ComparisonResults::showHeadToHead(const ComparisonReport& report)
{
    m_headToHead->setRowCount(int(report.headToHead.size()));
    for (int row = 0; row < int(report.headToHead.size()); ++row) {
        const HeadToHead& h = report.headToHead[size_t(row)];
        setCell(m_headToHead, row, 0, modelName(h.first), QString::fromStdString(h.first));
        setCell(m_headToHead, row, 1, modelName(h.second), QString::fromStdString(h.second));
        setCell(m_headToHead, row, 2, QString::number(h.firstWins));
        setCell(m_headToHead, row, 3, QString::number(h.secondWins));
        setCell(m_headToHead, row, 4, tr("%1 (%2)").arg(h.ties).arg(h.bothBad));
        setCell(m_headToHead, row, 5, figure(h.firstBeatsSecond),
                std::isnan(h.firstBeatsSecond) ? tr("Undefined: these two met in no game yet") : QString());
        setCell(m_headToHead, row, 6, interval(h.interval));
    }
}

} // namespace d2dpo::ui
