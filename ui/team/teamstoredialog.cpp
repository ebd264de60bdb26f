// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/team/teamstoredialog.h"
#include "ui/common/longjobs.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "store/preferencestore.h"

namespace d2dpo::ui {

namespace {

TeamStoreProbe probe(const QString& url)
{
    if (!url.startsWith(QLatin1String("postgresql://")) && !url.startsWith(QLatin1String("postgres://")))
        return {false, QObject::tr("A team store's URL starts with postgresql://"), {}};
    auto store = PreferenceStore::open(url.toStdString(), PreferenceStore::OpenMode::MustExist);
    if (!store)
        return {false, QString::fromStdString(store.error()), {}};
    PreferenceStore& s = *store.value();
    auto counts = s.counts(s.teamIdentity());
    const QString pending = counts ? QObject::tr(", %1 pairs to label").arg(counts->pending) : QString();
    return {true,
            QObject::tr("Connected as %1, %2%3")
                .arg(QString::fromStdString(s.teamIdentity()),
                     s.canMaintain() ? QObject::tr("a maintainer") : QObject::tr("a labeler"), pending),
            QString::fromStdString(s.displayName())};
}

} // namespace

TeamStoreDialog::TeamStoreDialog(QWidget* parent)
    : QDialog(parent), m_url(new QLineEdit(this)), m_connect(new QPushButton(tr("Connect"), this)),
      m_status(new QLabel(this)), m_buttons(new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this)),
      m_watcher(new QFutureWatcher<TeamStoreProbe>(this))
{
    setWindowTitle(tr("Open team store"));
    auto* layout = new QVBoxLayout(this);
    auto* hint = new QLabel(tr("A PostgreSQL store shared by a team, as a libpq URL, such as\n"
                               "postgresql://you@server/d2dpo?sslmode=require\n"
                               "Keep the password in ~/.pgpass (or PGPASSFILE), not in the URL: you label as "
                               "your database role."),
                            this);
    hint->setWordWrap(true);
    layout->addWidget(hint);
    m_url->setPlaceholderText(QStringLiteral("postgresql://you@server/d2dpo"));
    m_url->setText(QSettings().value("store/teamUrl").toString());
    layout->addWidget(m_url);
    layout->addWidget(m_connect);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);
    layout->addWidget(m_buttons);
    m_buttons->button(QDialogButtonBox::Open)->setEnabled(false);
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
        QSettings().setValue("store/teamUrl", m_remembered); // without a password: ~/.pgpass supplies it
        accept();
    });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_connect, &QPushButton::clicked, this, &TeamStoreDialog::tryUrl);
    connect(m_url, &QLineEdit::returnPressed, this, &TeamStoreDialog::tryUrl);
    connect(m_url, &QLineEdit::textChanged, this, [this] {
        m_buttons->button(QDialogButtonBox::Open)->setEnabled(false); // tried again before it opens
    });
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        const TeamStoreProbe result = m_watcher->result();
        m_connect->setEnabled(true);
        m_status->setText(result.message);
        m_remembered = result.withoutPassword;
        m_buttons->button(QDialogButtonBox::Open)->setEnabled(result.ok && m_url->text() == m_tried);
    });
    resize(560, sizeHint().height());
}

QString TeamStoreDialog::url() const { return m_url->text().trimmed(); }
QString TeamStoreDialog::statusText() const { return m_status->text(); }
bool TeamStoreDialog::canOpen() const { return m_buttons->button(QDialogButtonBox::Open)->isEnabled(); }

void TeamStoreDialog::tryUrl()
{
    if (m_watcher->isRunning())
        return;
    m_tried = m_url->text();
    m_connect->setEnabled(false);
    m_status->setText(tr("Connecting…"));
    // On a worker thread: the GUI thread never waits on the network (connect_timeout is 10 s).
    m_watcher->setFuture(QtConcurrent::run(longJobPool(), probe, url()));
}

} // namespace d2dpo::ui
