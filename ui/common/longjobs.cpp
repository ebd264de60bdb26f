// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/common/longjobs.h"

#include <QThread>
#include <QThreadPool>

#include <algorithm>

namespace d2dpo::ui {

QThreadPool* longJobPool()
{
    // Never destroyed: jobs still running at exit keep it (the application waits for its own).
    static QThreadPool* pool = [] {
        auto* made = new QThreadPool;
        made->setObjectName(QStringLiteral("d2dpo long jobs"));
        made->setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        made->setExpiryTimeout(-1); // a thread that loaded a model keeps its warm caches
        return made;
    }();
    return pool;
}

QThreadPool* storeReadPool()
{
    static QThreadPool* pool = [] {
        auto* made = new QThreadPool;
        made->setObjectName(QStringLiteral("d2dpo store reads"));
        made->setMaxThreadCount(6); // waits on the network, not on the cores: a few per window
        return made;
    }();
    return pool;
}

} // namespace d2dpo::ui
