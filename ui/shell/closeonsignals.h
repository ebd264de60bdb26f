// SPDX-License-Identifier: GPL-3.0-or-later
// SIGINT and SIGTERM (Ctrl-C in the terminal that started the application, a logout, `kill`)
// close the main window as its own Quit does, minus the question: a run in progress stops after
// its current step, its checkpoint is written and recorded, and the window's state is saved. The
// handler only writes a byte to a pipe; a socket notifier in the GUI thread does the closing. A
// second signal ends the process at once.
#pragma once

#include <QObject>

#include <functional>

class QSocketNotifier;
class QWidget;

namespace d2dpo::ui {

class CloseOnSignals final : public QObject {
    Q_OBJECT

public:
    /// Installs the handlers; on a signal, `window` is closed through `closeForSignal`.
    CloseOnSignals(QWidget* window, std::function<void()> closeForSignal);
    ~CloseOnSignals() override;

private:
    std::function<void()> m_close;
    QSocketNotifier* m_notifier = nullptr;
};

} // namespace d2dpo::ui
