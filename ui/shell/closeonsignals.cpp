// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/shell/closeonsignals.h"

#include <QSocketNotifier>
#include <QWidget>

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <unistd.h>

#include "base/stopsignalhandler.h"

namespace d2dpo::ui {

namespace {

int g_pipe[2] = {-1, -1};

extern "C" void onCloseSignal(int signal)
{
    const int savedErrno = errno;
    const char byte = char(signal);
    [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1); // async-signal-safe
    restoreDefaultStopSignals(); // a second signal ends the application at once
    errno = savedErrno;
}

} // namespace

CloseOnSignals::CloseOnSignals(QWidget* window, std::function<void()> closeForSignal)
    : QObject(window)
    , m_close(std::move(closeForSignal))
{
    if (g_pipe[0] < 0 && ::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return;
    m_notifier = new QSocketNotifier(g_pipe[0], QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, [this] {
        char byte = 0;
        while (::read(g_pipe[0], &byte, 1) == 1) {
        }
        if (m_close)
            m_close();
    });
    installStopSignalHandler(onCloseSignal);
}

CloseOnSignals::~CloseOnSignals() { restoreDefaultStopSignals(); }

} // namespace d2dpo::ui
