// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo profile`'s logos: the desktop's per-position panel, on Qt's offscreen platform, draws the
// profiles and writes what its Export… writes (logos.png, logos.svg and the three CSVs), so the
// command and the desktop give the same files. Without the desktop build (no Qt widgets) it writes
// nothing and says so; the caller then writes the CSVs alone.
#pragma once

#include <string>

#include "analysis/profilecsv.h"
#include "base/result.h"

namespace d2dpo::cli {

struct ProfileFigures {
    ProfiledSet training;
    ProfiledSet reference; ///< empty: no reference logo
    ProfiledSet model;
    int64_t length = 0;
    std::string symbols;
    std::string alphabet; ///< TaskInfo::alphabet(): the letters' colours
    std::string modelName;
    std::string referenceName;
};

/// Writes the five files into `folder` (which exists); false when this build has no widgets to
/// draw with (nothing written).
Result<bool> writeProfileWithLogos(ProfileFigures figures, const std::string& folder);

} // namespace d2dpo::cli
