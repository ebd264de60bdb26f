// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/queuesettingsdialog.h"

#include <algorithm>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "ui/common/longjobs.h"
#include "ui/common/ownconnection.h"

namespace d2dpo::ui {

namespace {

// The ranges PreferenceStore::setQueueSettings accepts: the fields cannot hold a value the store
// would refuse.
constexpr int kMaxOverlap = QueueSettings::kMaxOverlap;
constexpr double kMaxGoldPercent = QueueSettings::kMaxGoldRate * 100;

} // namespace

QueueSettingsDialog::QueueSettingsDialog(PreferenceStore& store, QWidget* parent)
    : QDialog(parent)
    , m_store(store)
{
    setWindowTitle(tr("Labeling queue"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("How pairs are handed out to the labelers of this store."), this));
    auto* form = new QFormLayout;

    m_overlap = new QSpinBox(this);
    m_overlap->setObjectName(QStringLiteral("overlap"));
    m_overlap->setRange(1, kMaxOverlap);
    form->addRow(tr("&Labelers per pair:"), m_overlap);
    form->addRow(QString(), explanation(tr("Each pair stays in the queue until this many different labelers have "
                                           "labelled it (never one labeler twice). Two or more let View ▸ "
                                           "Labelers… measure how well they agree.")));

    m_goldPercent = new QDoubleSpinBox(this);
    m_goldPercent->setObjectName(QStringLiteral("goldPercent"));
    m_goldPercent->setRange(0, kMaxGoldPercent);
    m_goldPercent->setDecimals(1);
    m_goldPercent->setSingleStep(1);
    m_goldPercent->setSuffix(tr(" %"));
    form->addRow(tr("&Gold pairs:"), m_goldPercent);
    form->addRow(QString(), explanation(tr("The share of each labeler's queue given to gold pairs (a known "
                                           "answer; d2dpo prefs gold adds them). They are never marked on screen, "
                                           "so they measure labelers as they really label (gold accuracy in View ▸ "
                                           "Labelers…), and they train nothing.")));

    m_order = new QComboBox(this);
    m_order->setObjectName(QStringLiteral("order"));
    m_order->addItem(tr("Oldest first"), int(QueueOrder::Oldest));
    m_order->addItem(tr("Least sure first"), int(QueueOrder::LeastSure));
    m_order->addItem(tr("Surest first"), int(QueueOrder::Surest));
    form->addRow(tr("&Order:"), m_order);
    // A file is read here and now; a team store's read lands later (the fields wait for it). The
    // line is made with its text: a wrapped line that grows after the form measured it is cut.
    std::optional<StoreRead> readHere;
    if (!store.isTeamStore())
        readHere = readStore(m_store);
    m_margins = explanation(readHere ? marginsInWords(*readHere)
                                     : tr("Counting the pending pairs and their margins on the team store…"));
    m_margins->setObjectName(QStringLiteral("margins"));
    form->addRow(QString(), m_margins);

    m_lease = new QSpinBox(this);
    m_lease->setObjectName(QStringLiteral("leaseSeconds"));
    m_lease->setRange(QueueSettings::kMinLeaseSeconds, QueueSettings::kMaxLeaseSeconds);
    m_lease->setSuffix(tr(" s"));
    form->addRow(tr("L&ease:"), m_lease);
    form->addRow(QString(), explanation(tr("On a team store, how long a pair handed to a labeler is kept from the "
                                           "others; a pair left by a closed laptop goes back after it. Each "
                                           "labeler holds at most %1 pairs at once.")
                                            .arg(QueueSettings::kMaxLeasesPerLabeler)));
    layout->addLayout(form);

    // A wheel turned to scroll past a field must not change the queue: the fields take it only
    // when focused (a click or Tab first).
    for (QWidget* field : {static_cast<QWidget*>(m_overlap), static_cast<QWidget*>(m_goldPercent),
                           static_cast<QWidget*>(m_order), static_cast<QWidget*>(m_lease)}) {
        field->setFocusPolicy(Qt::StrongFocus);
        field->installEventFilter(this);
    }

    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("problem"));
    m_problem->setStyleSheet(QStringLiteral("color: #b00020"));
    m_problem->setWordWrap(true);
    layout->addWidget(m_problem);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_ok = buttons->button(QDialogButtonBox::Ok);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QueueSettingsDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    if (readHere) {
        showRead(*readHere);
        return;
    }
    // A team store is read and written on the pool: the dialog opens at once and waits, the
    // window never does.
    m_connection = std::make_shared<OwnConnection>(store.path());
    m_reading = new QFutureWatcher<StoreRead>(this);
    m_writing = new QFutureWatcher<std::string>(this);
    connect(m_reading, &QFutureWatcherBase::finished, this, [this] { showRead(m_reading->result()); });
    connect(m_writing, &QFutureWatcherBase::finished, this, [this] { written(m_writing->result(), m_writingSettings); });
    for (QWidget* field : {static_cast<QWidget*>(m_overlap), static_cast<QWidget*>(m_goldPercent),
                           static_cast<QWidget*>(m_order), static_cast<QWidget*>(m_lease), static_cast<QWidget*>(m_ok)})
        field->setEnabled(false);
    m_problem->setText(tr("Reading the queue settings from the team store…"));
    m_reading->setFuture(QtConcurrent::run(storeReadPool(), [connection = m_connection]() -> StoreRead {
        auto store = connection->get();
        if (!store) {
            StoreRead failed;
            failed.settingsError = failed.marginsError = store.error();
            return failed;
        }
        return readStore(*store.value());
    }));
}

QueueSettingsDialog::StoreRead QueueSettingsDialog::readStore(LabelQueue& store)
{
    StoreRead read;
    if (auto settings = store.queueSettings())
        read.settings = settings.value();
    else
        read.settingsError = settings.error();
    if (auto counted = store.pendingMargins()) // one query, whatever the queue's length
        read.margins = counted.value();
    else
        read.marginsError = counted.error();
    return read;
}

void QueueSettingsDialog::showRead(const StoreRead& read)
{
    m_margins->setText(marginsInWords(read));
    if (isVisible())
        fitHeight(); // a team store's read lands after the dialog was sized
    if (!read.settings) {
        // Defaults written over settings that could not be read would change them unseen.
        m_problem->setText(tr("Could not read the queue settings: %1").arg(QString::fromStdString(read.settingsError)));
        m_ok->setEnabled(false);
        return;
    }
    m_problem->clear();
    for (QWidget* field : {static_cast<QWidget*>(m_overlap), static_cast<QWidget*>(m_goldPercent),
                           static_cast<QWidget*>(m_order), static_cast<QWidget*>(m_lease), static_cast<QWidget*>(m_ok)})
        field->setEnabled(true);
    m_read = *read.settings;
    m_overlap->setValue(m_read.overlap);
    m_goldPercent->setValue(m_read.goldRate * 100);
    m_readGoldPercent = m_goldPercent->value();
    m_order->setCurrentIndex(m_order->findData(int(m_read.order)));
    m_lease->setValue(m_read.leaseSeconds);
}

QueueSettings QueueSettingsDialog::settings() const
{
    QueueSettings settings;
    settings.overlap = m_overlap->value();
    settings.goldRate = m_goldPercent->value() / 100;
    settings.order = QueueOrder(m_order->currentData().toInt());
    settings.leaseSeconds = m_lease->value();
    return settings;
}

void QueueSettingsDialog::accept()
{
    if (!m_ok->isEnabled()) // the settings are not read yet (or could not be), or are being written
        return;
    QueueSettings written = settings();
    // The percentage shows one decimal: a finer rate set with the CLI is kept unless it was edited.
    if (m_goldPercent->value() == m_readGoldPercent)
        written.goldRate = m_read.goldRate;
    if (written.overlap == m_read.overlap && written.goldRate == m_read.goldRate && written.order == m_read.order &&
        written.leaseSeconds == m_read.leaseSeconds) {
        QDialog::accept();
        return;
    }
    if (!m_connection) {
        const Status s = m_store.setQueueSettings(written);
        return this->written(s ? std::string() : s.error(), written);
    }
    if (m_writing->isRunning())
        return;
    m_ok->setEnabled(false);
    m_writingSettings = written;
    m_problem->setText(tr("Writing the queue settings to the team store…"));
    m_writing->setFuture(QtConcurrent::run(storeReadPool(), [connection = m_connection, written]() -> std::string {
        auto store = connection->get();
        if (!store)
            return store.error();
        const Status s = store.value()->setQueueSettings(written);
        return s ? std::string() : s.error();
    }));
}

void QueueSettingsDialog::reject()
{
    // A write on its way lands whatever the dialog does: it stays open to say how it ended.
    if (m_writing && m_writing->isRunning())
        return;
    QDialog::reject();
}

void QueueSettingsDialog::written(const std::string& error, const QueueSettings& settings)
{
    if (!error.empty()) {
        m_ok->setEnabled(true);
        m_problem->setText(tr("The queue settings were not changed: %1").arg(QString::fromStdString(error)));
        return;
    }
    m_read = settings;
    Q_EMIT queueChanged();
    QDialog::accept();
}

void QueueSettingsDialog::showEvent(QShowEvent* event)
{
    QDialog::showEvent(event);
    fitHeight();
}

void QueueSettingsDialog::fitHeight()
{
    // A dialog is sized from its layout's size hint, which does not ask how tall the wrapped
    // explanations are at the width it gets: the margins' six lines were cut to three.
    if (QLayout* form = layout(); form && form->hasHeightForWidth())
        resize(width(), std::max(height(), form->totalHeightForWidth(width())));
}

bool QueueSettingsDialog::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::Wheel)
        if (auto* field = qobject_cast<QWidget*>(watched); field && !field->hasFocus())
            return true;
    return QDialog::eventFilter(watched, event);
}

QLabel* QueueSettingsDialog::explanation(const QString& text)
{
    auto* label = new QLabel(text, this);
    label->setWordWrap(true);
    label->setForegroundRole(QPalette::PlaceholderText);
    return label;
}

QString QueueSettingsDialog::marginsInWords(const StoreRead& read)
{
    const QString how = tr("Least sure first hands out the pairs the latest model is least sure about (smallest "
                           "|margin|) first, surest first those it tells apart most clearly (largest |margin|: "
                           "decided more often than tied); margins come with pairs drawn least sure or surest first "
                           "in the Label view or scored with d2dpo prefs score -c MODEL, and pairs without one come "
                           "last, oldest first. The pair on screen stays; the new order starts with the next one.");
    if (!read.margins)
        return how + QLatin1Char(' ') +
               tr("(Could not count the pending pairs: %1)").arg(QString::fromStdString(read.marginsError));
    const auto [pending, withMargin] = *read.margins;
    QString said;
    if (pending == 0)
        said = tr("No pair is pending now.");
    else if (pending == 1)
        said = withMargin ? tr("The one pending pair has a margin.") : tr("The one pending pair has no margin.");
    else
        said = tr("%1 of the %2 pending pairs have a margin.").arg(withMargin).arg(pending);
    return how + QLatin1Char(' ') + said;
}

} // namespace d2dpo::ui
