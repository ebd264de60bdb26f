// SPDX-License-Identifier: GPL-3.0-or-later
// Precompiled once per build (see D2DPO_USE_PCH): every torch translation unit includes it.
#pragma once
#include <torch/torch.h>
