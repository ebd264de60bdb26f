// SPDX-License-Identifier: GPL-3.0-or-later
// exp and the normal distribution's tail written so that a loop over them vectorizes: no branch,
// no library call, only multiply-adds (contracted to FMA in the clones that have it), min/max,
// selects and integer shifts.
//
// Why: LibTorch 1.13 from Debian spends ~0.6 ns per float in exp and ~0.8 ns in GELU (oneDNN's
// eltwise), 5-10x a multiply's cost, and GELU alone was 12% of a small D2-DPO step
// (bench/NOTES.md, change 7). Inlined into the kernels' target_clones bodies these compile to
// AVX-512 or AVX2 code and run near memory speed.
//
// Accuracy (float): expf within 2 ulp on [-87, 88]; the tail within 1.5e-7 absolute
// (Abramowitz & Stegun 7.1.26, the same approximation as LibTorch's vectorized erf).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace d2dpo::vectormath {

/// e^x for float: Cephes' range reduction x = n ln 2 + r and degree-6 polynomial for e^r, then
/// 2^n put into the exponent bits. 0 below -87.3 (where e^x leaves the normal range), +inf above
/// 88.3, NaN stays NaN.
[[gnu::always_inline]] inline float exp(float x)
{
    const float clamped = std::min(std::max(x, -87.3f), 88.3f);
    // Round x log2(e) to the nearest integer n: adding 1.5 * 2^23 leaves n in the low mantissa bits.
    const float shifted = clamped * 1.44269504088896341f + 12582912.0f;
    const float n = shifted - 12582912.0f;
    const int32_t ni = std::bit_cast<int32_t>(shifted) - 0x4B400000;
    // r = x - n ln 2, with ln 2 split in two so that n * ln2Hi is exact.
    const float r = (clamped - n * 0.693359375f) + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float er = p * (r * r) + r + 1.0f;
    const float result = er * std::bit_cast<float>((ni + 127) << 23);
    const float low = x < -87.3f ? 0.0f : result;
    return x > 88.3f ? INFINITY : low;
}

/// erfc(|z|), the tail 1 - erf(|z|), computed directly (no cancellation for large |z|), given
/// e^{-z^2}: Abramowitz & Stegun 7.1.26, t (a1 + t (a2 + ...)) e^{-z^2} with t = 1 / (1 + p |z|).
[[gnu::always_inline]] inline float erfcAbs(float z, float expMinusZSquared)
{
    const float t = 1.0f / (0.3275911f * std::fabs(z) + 1.0f);
    float poly = 1.061405429f;
    poly = poly * t - 1.453152027f;
    poly = poly * t + 1.421413741f;
    poly = poly * t - 0.284496736f;
    poly = poly * t + 0.254829592f;
    return poly * t * expMinusZSquared;
}

/// The standard normal CDF Phi(x) = (1 + erf(x / sqrt 2)) / 2 given g = e^{-x^2 / 2}, from the
/// tail on the side where it is small: for a negative x it is never 1 minus a number close to 1.
[[gnu::always_inline]] inline float normalCdf(float x, float g)
{
    const float half = 0.5f * erfcAbs(x * 0.70710678118654752f, g);
    return x >= 0 ? 1.0f - half : half;
}

/// Phi(x).
[[gnu::always_inline]] inline float normalCdf(float x) { return normalCdf(x, exp(-0.5f * x * x)); }

// Double versions for the double-precision paths (tests, gradient checks): the C library's.
inline double exp(double x) { return std::exp(x); }
inline double normalCdf(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752); }
inline double normalCdf(double x, double) { return normalCdf(x); }

/// Values per block held in one register: one AVX-512 vector of floats.
constexpr int64_t kLanes = 16;

template <typename T>
struct LaneVector {
    typedef T type __attribute__((vector_size(kLanes * sizeof(T))));
};
/// kLanes values as one GCC vector, lowered to whatever vector width the clone has. Accumulating
/// in one of these keeps a running sum in a register where the compiler would not vectorize a
/// reduction (it may not reorder a floating-point sum on its own).
template <typename T>
using Lanes = typename LaneVector<T>::type;

// The helpers take vectors by reference: by value, a 64-byte vector's calling convention differs
// between the clones (GCC warns, -Wpsabi), although every call is inlined.

/// v = p[0:kLanes].
template <typename T>
[[gnu::always_inline]] inline void loadLanes(Lanes<T>& v, const T* p)
{
    std::memcpy(&v, p, sizeof v);
}

/// p[0:kLanes] = v.
template <typename T>
[[gnu::always_inline]] inline void storeLanes(T* p, const Lanes<T>& v)
{
    std::memcpy(p, &v, sizeof v);
}

/// The sum of a vector's lanes, pairwise.
template <typename T>
[[gnu::always_inline]] inline T sumLanes(const Lanes<T>& v)
{
    T lanes[kLanes];
    std::memcpy(lanes, &v, sizeof v);
    for (int64_t half = kLanes / 2; half > 0; half /= 2)
        for (int64_t k = 0; k < half; ++k)
            lanes[k] += lanes[k + half];
    return lanes[0];
}

/// sum of row[0:n], in kLanes lanes where n is a multiple of kLanes.
template <typename T>
[[gnu::always_inline]] inline T rowSum(const T* row, int64_t n)
{
    if (n % kLanes != 0) {
        T sum = 0;
        for (int64_t j = 0; j < n; ++j)
            sum += row[j];
        return sum;
    }
    Lanes<T> acc = {};
    for (int64_t j = 0; j < n; j += kLanes) {
        Lanes<T> v;
        loadLanes(v, row + j);
        acc += v;
    }
    return sumLanes<T>(acc);
}

} // namespace d2dpo::vectormath
