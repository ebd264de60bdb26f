// SPDX-License-Identifier: GPL-3.0-or-later
// Debian's qcustomplot.h says `signals:` and `foreach`, which QT_NO_KEYWORDS (needed because Qt's
// `slots` breaks the LibTorch headers) turns off. Include it only through this header, which
// maps the two words for the length of the include.
#pragma once

#define signals Q_SIGNALS
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef foreach
