// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/offscreenapp.h"

#include <QApplication>

namespace d2dpo::cli {

std::unique_ptr<QApplication> offscreenApplication()
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    if (QCoreApplication::instance())
        return nullptr;
    static int argc = 1;
    static char name[] = "d2dpo";
    static char* argv[] = {name, nullptr};
    return std::make_unique<QApplication>(argc, argv);
}

} // namespace d2dpo::cli
