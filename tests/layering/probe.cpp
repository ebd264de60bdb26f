// SPDX-License-Identifier: GPL-3.0-or-later
// A layering probe: includes D2DPO_PROBE_HEADER from a target that links one layer (see
// CMakeLists.txt). The build is expected to fail for the refused probes and succeed for the
// allowed ones.
#include D2DPO_PROBE_HEADER

int d2dpoLayeringProbe() { return 0; }
