// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow: opening another store, a file or a team's PostgreSQL store. The views hold this
// store for their lifetime, so the other one opens in a new window (the same program with --db,
// never with a password: ui/shell/storelaunch.h) and this one closes as Quit does.
#include "ui/shell/mainwindow.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>

#include "jobs/runfolder.h"
#include "ui/shell/storelaunch.h"
#include "ui/team/teamstoredialog.h"

namespace d2dpo::ui {

void MainWindow::openStore()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a preference store"),
                                                      QString::fromStdString(storeFolder(m_store->path())),
                                                      tr("Preference stores (*.sqlite *.db);;All files (*)"));
    refocus();
    if (!path.isEmpty())
        reopenOn(path);
}

void MainWindow::openTeamStore()
{
    TeamStoreDialog dialog(this); // connects in the background before anything closes
    const bool chosen = dialog.exec() == QDialog::Accepted;
    refocus();
    if (chosen)
        reopenOn(dialog.url());
}

void MainWindow::reopenOn(const QString& store)
{
    const StoreLaunch launch = storeLaunch(store); // the password, if any, not on its command line
    if (!startStoreWindow(launch)) {
        QMessageBox::warning(this, tr("Open store"), tr("Could not start a window for %1.").arg(launch.arguments.last()));
        return;
    }
    close();
}

} // namespace d2dpo::ui
