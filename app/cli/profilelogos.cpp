// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/profilelogos.h"

#ifdef D2DPO_PROFILE_LOGOS
#include <QApplication>

#include <memory>

#include "ui/positionprofilepanel.h"
#endif

namespace d2dpo::cli {

#ifdef D2DPO_PROFILE_LOGOS
Result<bool> writeProfileWithLogos(ProfileFigures figures, const std::string& folder)
{
    // Drawing into files needs no screen: the offscreen platform, whatever DISPLAY says.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    std::unique_ptr<QApplication> app;
    if (!QCoreApplication::instance()) {
        static int argc = 1;
        static char name[] = "d2dpo";
        static char* argv[] = {name, nullptr};
        app = std::make_unique<QApplication>(argc, argv);
    }
    ui::PositionProfileInputs inputs;
    inputs.training = figures.training.sequences;
    inputs.symbols = figures.symbols;
    inputs.alphabet = QString::fromStdString(figures.alphabet);
    inputs.modelName = QString::fromStdString(figures.modelName);
    inputs.referenceName = QString::fromStdString(figures.referenceName);
    inputs.length = int(figures.length);
    ui::PositionProfilePanel panel;
    panel.showProfiles({std::move(figures.training), std::move(figures.reference), std::move(figures.model),
                        figures.length},
                       inputs);
    if (Status s = panel.exportTo(QString::fromStdString(folder)); !s)
        return makeError(s.error());
    return true;
}
#else
Result<bool> writeProfileWithLogos(ProfileFigures, const std::string&) { return false; }
#endif

} // namespace d2dpo::cli
