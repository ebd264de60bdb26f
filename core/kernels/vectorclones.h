// SPDX-License-Identifier: GPL-3.0-or-later
// D2DPO_VECTOR_CLONES marks a kernel's entry point to be compiled for AVX-512, AVX2+FMA and
// baseline x86-64, the best picked at load time: the package runs on any x86-64 and uses the
// wide units where they exist. Everything a marked function calls must be inlined into it
// (always_inline templates or macros, no lambdas), or it runs as baseline code.
// -DD2DPO_VECTOR_CLONES= builds each kernel once, for the compiler's target.
#pragma once

#if !defined(D2DPO_VECTOR_CLONES) // a build may define it empty: one plain build, e.g. to test
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define D2DPO_VECTOR_CLONES [[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
#else
#define D2DPO_VECTOR_CLONES
#endif
#endif
