// SPDX-License-Identifier: GPL-3.0-or-later
// Every background job of the desktop (drawing samples, generating pairs, measuring, exporting
// and comparing models, reading a team's labels) runs on this pool, never on Qt's global one:
// the window's thread itself waits on the global pool at times (Qt's own widgets use it), and
// with two long jobs holding both of a small machine's threads the window froze for minutes.
#pragma once

class QThreadPool;

namespace d2dpo::ui {

/// The pool (made on first use, as many threads as the machine has cores, at least two).
QThreadPool* longJobPool();

/// The pool the views' store reads run on (lists of models and runs, a run's curves, a
/// comparison's labels): apart from the long jobs, so that a read waiting on a team store's server
/// that stopped answering never holds back a draw or an export, nor waits behind one.
QThreadPool* storeReadPool();

} // namespace d2dpo::ui
