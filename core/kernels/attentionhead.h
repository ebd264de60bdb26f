// SPDX-License-Identifier: GPL-3.0-or-later
// The arithmetic of one attention head, forward and backward, as inline templates for the
// kernels in attention.cpp (which compile them once per target_clones clone and per head width).
//
// The loops keep every innermost loop a contiguous multiply-add, so the compiler vectorizes them
// without reassociating any sum (results do not depend on -ffast-math); where a sum must stay in
// a register it is a GCC vector (vectormath::Lanes). W > 0 is the head width known at compile
// time (the common 8, 16, 32, 64): the loops over it then unroll and their accumulators stay in
// vector registers. W = 0: any width.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/vectormath.h"

namespace d2dpo::attentionhead {

/// One head of one sequence: `queries` query rows (row i at q + i * qStride) attend over `keys`
/// key and value rows (row j at k + j * kvStride, v likewise); every row is `width` contiguous
/// values. Self-attention has every position as a query; attentionAt only some of them.
template <typename T>
struct Head {
    const T* q;
    int64_t qStride;
    int64_t queries;
    int64_t paddedQueries; ///< queries rounded up to whole vectors: the probabilities' row length
    const T* k;
    const T* v;
    int64_t kvStride;
    int64_t keys;
    int64_t width;
};

using vectormath::kLanes;
using vectormath::Lanes;

/// Outputs computed together in the blocked loops below: they share each load of the other
/// operand and run independent multiply-add chains. One chain alone would wait out every
/// multiply-add's latency (4 cycles) before the next: a quarter of the machine's throughput.
constexpr int64_t kGroup = 4;

/// out[0:width] = sum_r coeff[r * coeffStride] * rows[r * rowStride + 0:width], accumulated in
/// chunks of 64 values (in registers when W is known).
template <int W, typename T>
[[gnu::always_inline]] inline void weightedRowSum(int64_t width, int64_t count, const T* __restrict coeff,
                                                  int64_t coeffStride, const T* __restrict rows, int64_t rowStride,
                                                  T* __restrict out)
{
    constexpr int64_t kChunk = 64;
    const int64_t w = W > 0 ? W : width;
    for (int64_t e0 = 0; e0 < w; e0 += kChunk) {
        const int64_t cw = std::min(kChunk, w - e0);
        T acc[kChunk];
        for (int64_t e = 0; e < cw; ++e)
            acc[e] = 0;
        for (int64_t r = 0; r < count; ++r) {
            const T c = coeff[r * coeffStride];
            const T* __restrict row = rows + r * rowStride + e0;
            for (int64_t e = 0; e < cw; ++e)
                acc[e] += c * row[e];
        }
        for (int64_t e = 0; e < cw; ++e)
            out[e0 + e] = acc[e];
    }
}

/// For o in [0, outputs): out[o * outStride + 0:width] = sum_r c(o, r) rows[r * rowStride + 0:width]
/// with c(o, r) = coeff[o * coeffNext + r * coeffStride]; kGroup outputs at a time, in vector
/// registers, where the width is a multiple of kLanes.
template <int W, typename T>
[[gnu::always_inline]] inline void weightedRowSums(int64_t width, int64_t outputs, int64_t count,
                                                   const T* __restrict coeff, int64_t coeffStride, int64_t coeffNext,
                                                   const T* __restrict rows, int64_t rowStride, T* __restrict out,
                                                   int64_t outStride)
{
    constexpr int64_t kVectors = 4; // up to 64 values of the width per pass
    const int64_t w = W > 0 ? W : width;
    int64_t o = 0;
    if (w % kLanes == 0) {
        for (; o + kGroup <= outputs; o += kGroup) {
            for (int64_t e0 = 0; e0 < w; e0 += kVectors * kLanes) {
                const int64_t vectors = std::min(kVectors, (w - e0) / kLanes);
                Lanes<T> acc[kGroup][kVectors] = {};
                for (int64_t r = 0; r < count; ++r) {
                    Lanes<T> row[kVectors];
                    for (int64_t v = 0; v < vectors; ++v)
                        vectormath::loadLanes(row[v], rows + r * rowStride + e0 + v * kLanes);
                    for (int64_t g = 0; g < kGroup; ++g) {
                        const T c = coeff[(o + g) * coeffNext + r * coeffStride];
                        for (int64_t v = 0; v < vectors; ++v)
                            acc[g][v] += c * row[v];
                    }
                }
                for (int64_t g = 0; g < kGroup; ++g)
                    for (int64_t v = 0; v < vectors; ++v)
                        vectormath::storeLanes(out + (o + g) * outStride + e0 + v * kLanes, acc[g][v]);
            }
        }
    }
    for (; o < outputs; ++o)
        weightedRowSum<W>(width, count, coeff + o * coeffNext, coeffStride, rows, rowStride, out + o * outStride);
}

/// The number of query columns the per-head loops run over: whole vectors of kLanes, so that no
/// loop over queries has a scalar remainder (with few queries, say the masked positions of a
/// sequence of 16, the remainder would be most of the work).
inline int64_t paddedCount(int64_t count) { return (count + kLanes - 1) / kLanes * kLanes; }

/// out [na, nbPad] = a (b * scale)^T for the na rows of a and nb rows of b (strides aStride,
/// bStride, width w), with columns nb..nbPad (nbPad a multiple of kLanes) those of zero rows of b;
/// bt is a [w, nbPad] scratch for b transposed and scaled, so the innermost loop runs over the
/// columns. Columns go in blocks of kLanes accumulated in a register (accumulating in `out` would
/// make every multiply-add wait for the previous one's store). The scale goes into bt, once per
/// value of b: in the loop it cost a multiply and a broadcast beside every multiply-add, half of
/// the instructions there (`perf annotate`, ESM2-8M's D2-DPO step).
template <int W, typename T>
[[gnu::always_inline]] inline void scaledRowProducts(int64_t width, int64_t na, int64_t nb, int64_t nbPad,
                                                     const T* __restrict a, int64_t aStride, const T* __restrict b,
                                                     int64_t bStride, T scale, T* __restrict out, T* __restrict bt)
{
    const int64_t w = W > 0 ? W : width;
    for (int64_t e = 0; e < w; ++e) {
        for (int64_t j = 0; j < nb; ++j)
            bt[e * nbPad + j] = b[j * bStride + e] * scale;
        for (int64_t j = nb; j < nbPad; ++j)
            bt[e * nbPad + j] = 0;
    }
    int64_t i = 0;
    for (; i + kGroup <= na; i += kGroup) // kGroup rows at a time, sharing each column load
        for (int64_t j0 = 0; j0 < nbPad; j0 += kLanes) {
            Lanes<T> acc[kGroup] = {};
            for (int64_t e = 0; e < w; ++e) {
                Lanes<T> column;
                vectormath::loadLanes(column, bt + e * nbPad + j0);
                for (int64_t g = 0; g < kGroup; ++g)
                    acc[g] += a[(i + g) * aStride + e] * column;
            }
            for (int64_t g = 0; g < kGroup; ++g)
                vectormath::storeLanes(out + (i + g) * nbPad + j0, acc[g]);
        }
    for (; i < na; ++i)
        for (int64_t j0 = 0; j0 < nbPad; j0 += kLanes) {
            Lanes<T> acc = {};
            for (int64_t e = 0; e < w; ++e) {
                Lanes<T> column;
                vectormath::loadLanes(column, bt + e * nbPad + j0);
                acc += a[i * aStride + e] * column;
            }
            vectormath::storeLanes(out + i * nbPad + j0, acc);
        }
}

// Probabilities are stored key-major: pt[j * M + i] = P[i][j], the weight of key j for query i
// (M the padded query count; the padding columns hold the scores of zero queries, which nothing
// reads). Then the softmax over j for every query i is a column operation: the maxima, the
// sums and the backward's dot products accumulate elementwise over rows j, vectorized over i,
// with no horizontal reduction.

/// pt [n, m] (score of key j for query i at [j][i]) replaced by the softmax over j of each column.
/// Scratch: peak and sum, m each.
template <typename T>
[[gnu::always_inline]] inline void softmaxColumns(int64_t n, int64_t m, T* __restrict pt, T* __restrict peak,
                                                  T* __restrict sum)
{
    for (int64_t i = 0; i < m; ++i) {
        peak[i] = pt[i];
        sum[i] = 0;
    }
    for (int64_t j = 1; j < n; ++j)
        for (int64_t i = 0; i < m; ++i)
            peak[i] = peak[i] < pt[j * m + i] ? pt[j * m + i] : peak[i];
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            const T e = vectormath::exp(pt[j * m + i] - peak[i]);
            pt[j * m + i] = e;
            sum[i] += e;
        }
    for (int64_t i = 0; i < m; ++i)
        sum[i] = T(1) / sum[i];
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i)
            pt[j * m + i] *= sum[i];
}

/// pt [keys, padded queries] = softmax over keys of (q * scale) k^T, key-major. Scratch:
/// (width + 2) * padded queries.
template <int W, typename T>
[[gnu::always_inline]] inline void headProbabilities(const Head<T>& hd, T scale, T* pt, T* scratch)
{
    const int64_t n = hd.keys, m = hd.queries, mp = hd.paddedQueries;
    T* qt = scratch;
    T* columnScratch = scratch + hd.width * mp;
    scaledRowProducts<W>(hd.width, n, m, mp, hd.k, hd.kvStride, hd.q, hd.qStride, scale, pt, qt);
    softmaxColumns(n, mp, pt, columnScratch, columnScratch + mp);
}

/// Query rows of the output (stride outStride) = P v, from key-major pt.
template <int W, typename T>
[[gnu::always_inline]] inline void headOutput(const Head<T>& hd, const T* pt, T* out, int64_t outStride)
{
    const int64_t n = hd.keys, m = hd.queries, mp = hd.paddedQueries;
    weightedRowSums<W>(hd.width, m, n, pt, mp, 1, hd.v, hd.kvStride, out, outStride);
}

/// Gradients of one head from key-major pt. gradOut rows have stride outStride; dq rows have q's
/// stride, dk and dv rows k's. Scratch: (width + keys + 1) * padded queries.
template <int W, typename T>
[[gnu::always_inline]] inline void headBackward(const Head<T>& hd, T scale, const T* __restrict pt, const T* gradOut,
                                                int64_t outStride, T* dq, T* dk, T* dv, T* scratch)
{
    const int64_t n = hd.keys, m = hd.queries, mp = hd.paddedQueries, qs = hd.qStride, kvs = hd.kvStride;
    T* __restrict vt = scratch;
    T* __restrict dst = scratch + hd.width * mp;
    T* __restrict dot = dst + n * mp;
    // dP^T = v dO^T, then the softmax's backward, dS = P (dP - rowsum(P dP)) times the scale that
    // multiplied the scores, all key-major. Padding columns: dO is zero there, so dS is too.
    scaledRowProducts<W>(hd.width, n, m, mp, hd.v, kvs, gradOut, outStride, T(1), dst, vt);
    for (int64_t i = 0; i < mp; ++i)
        dot[i] = 0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < mp; ++i)
            dot[i] += pt[j * mp + i] * dst[j * mp + i];
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < mp; ++i)
            dst[j * mp + i] = pt[j * mp + i] * (dst[j * mp + i] - dot[i]) * scale;
    weightedRowSums<W>(hd.width, m, n, dst, mp, 1, hd.k, kvs, dq, qs);          // dQ = dS k
    weightedRowSums<W>(hd.width, n, m, dst, 1, mp, hd.q, qs, dk, kvs);          // dK = dS^T q
    weightedRowSums<W>(hd.width, n, m, pt, 1, mp, gradOut, outStride, dv, kvs); // dV = P^T dO
}

} // namespace d2dpo::attentionhead
