// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/experts/labelerspanel.h"
#include "ui/common/longjobs.h"

#include <cmath>
#include <set>
#include <utility>

#include <QComboBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QTime>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "ui/common/reportfigures.h"

namespace d2dpo::ui {

namespace {

QLabel* smallPrint(const QString& text, QWidget* parent)
{
    auto* label = new QLabel(text, parent);
    label->setWordWrap(true);
    QFont font = label->font();
    font.setPointSizeF(font.pointSizeF() * 0.85);
    label->setFont(font);
    return label;
}

QString shareOf(double share, int64_t of)
{
    return QCoreApplication::translate("LabelersPanel", "%1 of %2").arg(figure(share)).arg(of);
}

} // namespace

LabelersPanel::LabelersPanel(PreferenceStore& store, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_watcher(new QFutureWatcher<Measured>(this))
    , m_reader(std::make_shared<OwnConnection>(store.path()))
{
    setWindowTitle(tr("Labelers: how far the experts agree"));
    m_task = new QComboBox(this);
    m_task->setObjectName(QStringLiteral("task"));
    m_task->setAccessibleName(tr("Only the pairs of this task"));
    m_task->addItem(tr("All tasks"), QString());
    m_refresh = new QPushButton(tr("&Refresh"), this);
    m_busy = new QProgressBar(this);
    m_busy->setRange(0, 0);
    m_busy->setMaximumWidth(100);
    m_busy->setTextVisible(false);
    m_busy->hide();
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("status"));
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Task:"), this));
    top->addWidget(m_task);
    top->addWidget(m_refresh);
    top->addWidget(m_busy);
    top->addWidget(m_status, 1);

    m_alpha = new QLabel(this);
    m_alpha->setObjectName(QStringLiteral("alpha"));
    m_alpha->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_items = new QLabel(this); // its own line: a wrapped label beside stretching tables lost its second line
    m_items->setObjectName(QStringLiteral("items"));

    m_kappas = makeReportTable({tr("Labeler"), tr("Labeler"), tr("Pairs both judged"), tr("Cohen's kappa"),
                                tr("95% interval")},
                               {{}, {}, tr("Showings of a pair of sequences that both labelers judged"),
                                tr("1: full agreement; 0: what chance gives; below 0: less than chance")},
                               this);
    m_kappas->setObjectName(QStringLiteral("kappas"));
    m_noKappa = new QLabel(tr("No two labelers judged the same pair yet: kappa needs shared pairs. An overlap of 2 "
                              "or more hands each pair to that many labelers (d2dpo prefs queue --overlap 2)."),
                           this);
    m_noKappa->setObjectName(QStringLiteral("noKappa"));
    m_noKappa->setWordWrap(true);

    m_profiles = makeReportTable(
        {tr("Labeler"), tr("Labels"), tr("Judged"), tr("With the majority"), tr("Left picks"), tr("Median time"),
         tr("Gold accuracy")},
        {{}, tr("Active labels of every kind, skips included"),
         tr("Judgements of training and comparison pairs (skips and gold pairs left out)"),
         tr("The share of pairs, judged by at least two others who mostly agree, where this labeler sides with them"),
         tr("The share of left picks among left and right picks: about 0.5 when sides are random and the labeler "
            "has no position bias"),
         tr("The median time from a pair on screen to its label"),
         tr("The share of gold pairs (known answer) labelled right; a tie or both bad counts as wrong")},
        this);
    m_profiles->setObjectName(QStringLiteral("profiles"));

    auto* conventions = smallPrint(QString::fromUtf8(kAgreementConventions) +
                                       tr(" Intervals: 95%, percentile bootstrap over the pairs (%1 resamples).")
                                           .arg(kResamples),
                                   this);
    conventions->setObjectName(QStringLiteral("conventions"));

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_alpha);
    layout->addWidget(m_items);
    layout->addWidget(new QLabel(tr("<b>Cohen's kappa</b> for each two labelers"), this));
    layout->addWidget(m_kappas, 2);
    layout->addWidget(m_noKappa);
    layout->addWidget(new QLabel(tr("<b>Each labeler</b>"), this));
    layout->addWidget(m_profiles, 3);
    layout->addWidget(conventions);
    resize(860, 560);

    connect(m_refresh, &QPushButton::clicked, this, &LabelersPanel::refresh);
    connect(m_task, &QComboBox::currentIndexChanged, this, &LabelersPanel::refresh);
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        m_busy->hide();
        const Measured measured = m_watcher->result();
        if (!measured.error.empty()) {
            m_status->setText(tr("Cannot read the labels: %1").arg(QString::fromStdString(measured.error)));
            m_again = false;
            return;
        }
        listTasks(measured.tasks);
        m_labelCount = measured.labels;
        showReport(measured.report);
        if (std::exchange(m_again, false))
            refresh();
        else
            Q_EMIT refreshed();
    });
}

void LabelersPanel::setTask(const QString& taskKey)
{
    if (const int index = m_task->findData(taskKey); index >= 0)
        m_task->setCurrentIndex(index);
}

void LabelersPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale)
        refresh();
}

void LabelersPanel::refresh()
{
    if (!isVisible()) { // nobody looks: measure when shown
        m_stale = true;
        return;
    }
    if (busy()) {
        m_again = true;
        return;
    }
    m_stale = false;
    const std::string task = m_task->currentData().toString().toStdString();
    m_busy->show();
    if (m_store.isTeamStore()) {
        m_status->setText(tr("Reading the labels…"));
        m_watcher->setFuture(QtConcurrent::run(longJobPool(), [reader = m_reader, task] {
            auto store = reader->get();
            if (!store)
                return Measured{{}, {}, 0, store.error()};
            auto labels = store.value()->judgedLabels();
            return labels ? measure(labels.value(), task) : Measured{{}, {}, 0, labels.error()};
        }));
        return;
    }
    auto labels = m_store.judgedLabels();
    if (!labels) {
        m_busy->hide();
        m_status->setText(tr("Cannot read the labels: %1").arg(QString::fromStdString(labels.error())));
        return;
    }
    m_status->setText(tr("Measuring %1 labels…").arg(labels->size()));
    // The bootstrap takes a while on a large store: never in the GUI thread. The labels go by value.
    m_watcher->setFuture(QtConcurrent::run(longJobPool(), [labels = std::move(labels.value()), task] { return measure(labels, task); }));
}

LabelersPanel::Measured LabelersPanel::measure(const std::vector<JudgedLabel>& labels, const std::string& task)
{
    Measured measured;
    for (const JudgedLabel& l : labels)
        measured.tasks.insert(l.task);
    measured.labels = int64_t(labels.size());
    measured.report = measureAgreement(labels, task, kResamples, 1);
    return measured;
}

void LabelersPanel::listTasks(const std::set<std::string>& tasks)
{
    const QSignalBlocker block(m_task);
    const QString chosen = m_task->currentData().toString();
    while (m_task->count() > 1)
        m_task->removeItem(1);
    for (const std::string& t : tasks)
        m_task->addItem(QString::fromStdString(t), QString::fromStdString(t));
    m_task->setCurrentIndex(std::max(0, m_task->findData(chosen)));
}

void LabelersPanel::showReport(const TeamAgreement& report)
{
    m_report = report;
    m_status->setText(tr("%1 labels, measured at %2").arg(m_labelCount).arg(QTime::currentTime().toString()));
    showAlpha(report);
    showKappas(report);
    showProfiles(report);
}

void LabelersPanel::showAlpha(const TeamAgreement& r)
{
    QString text = tr("<b>Krippendorff's alpha</b> (nominal, everyone): <b>%1</b>").arg(figure(r.alpha));
    if (!std::isnan(r.alpha))
        text += QStringLiteral(" %1").arg(interval(r.alphaInterval));
    else if (r.sharedItems == 0)
        text += tr(": no pair was judged by two labelers or more yet");
    else
        text += tr(": every judgement of the shared pairs is the same one, so there is no variation to agree on");
    m_alpha->setText(text);
    m_items->setText(tr("%1 pairs judged, %2 of them by two labelers or more").arg(r.items).arg(r.sharedItems));
}

void LabelersPanel::showKappas(const TeamAgreement& r)
{
    m_kappas->setRowCount(int(r.pairs.size()));
    const QString undefinedWhy = tr("Undefined: both put every shared pair in one and the same category, so chance "
                                    "alone agrees fully (kappa is 0/0)");
    for (int row = 0; row < int(r.pairs.size()); ++row) {
        const LabelerPairAgreement& p = r.pairs[size_t(row)];
        setCell(m_kappas, row, 0, QString::fromStdString(p.first));
        setCell(m_kappas, row, 1, QString::fromStdString(p.second));
        setCell(m_kappas, row, 2, QString::number(p.shared));
        setCell(m_kappas, row, 3, figure(p.kappa), std::isnan(p.kappa) ? undefinedWhy : QString());
        setCell(m_kappas, row, 4, interval(p.interval),
                std::isnan(p.interval.low) ? tr("Too few shared pairs for the bootstrap") : QString());
    }
    m_kappas->setVisible(!r.pairs.empty());
    m_noKappa->setVisible(r.pairs.empty());
}

void LabelersPanel::showProfiles(const TeamAgreement& r)
{
    m_profiles->setRowCount(int(r.labelers.size()));
    for (int row = 0; row < int(r.labelers.size()); ++row) {
        const LabelerProfile& p = r.labelers[size_t(row)];
        setCell(m_profiles, row, 0, QString::fromStdString(p.labeler));
        setCell(m_profiles, row, 1, QString::number(p.labels));
        setCell(m_profiles, row, 2, QString::number(p.judged));
        setCell(m_profiles, row, 3,
                p.majorityItems > 0 ? shareOf(p.majorityAgreement, p.majorityItems) : tr("undefined"),
                p.majorityItems > 0 ? QString()
                                    : tr("Undefined: no pair this labeler judged was judged by two others who mostly "
                                         "agree"));
        setCell(m_profiles, row, 4, p.sided > 0 ? shareOf(p.leftShare, p.sided) : tr("undefined"),
                p.sided > 0 ? QString() : tr("Undefined: no left or right pick yet"));
        setCell(m_profiles, row, 5,
                std::isnan(p.medianDecideMs) ? tr("undefined") : tr("%1 s").arg(p.medianDecideMs / 1000, 0, 'f', 1));
        setCell(m_profiles, row, 6,
                p.goldJudged > 0 ? tr("%1 (%2/%3)").arg(figure(p.goldAccuracy)).arg(p.goldCorrect).arg(p.goldJudged)
                                 : tr("–"),
                p.goldJudged > 0 ? QString()
                                 : tr("No gold pair labelled (d2dpo prefs gold adds pairs with a known answer)"));
    }
}

} // namespace d2dpo::ui
