// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/profilelogos.h"

#ifdef D2DPO_PROFILE_LOGOS
#include <QApplication>

#include <memory>

#include "cli/offscreenapp.h"
#include "ui/models/positionprofilepanel.h"
#endif

namespace d2dpo::cli {

#ifdef D2DPO_PROFILE_LOGOS
Result<bool> writeProfileWithLogos(ProfileFigures figures, const std::string& folder)
{
    const std::unique_ptr<QApplication> app = offscreenApplication();
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
