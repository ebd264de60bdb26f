// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/samplebudget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/timeutil.h"

namespace d2dpo {

namespace {

/// The largest of 1, 2, 5, 10, 20, 50, ... not above `n` (n >= 1).
int64_t roundDownToOneTwoFive(int64_t n)
{
    int64_t best = 1;
    for (int64_t power = 1; power <= n; power *= 10)
        for (const int64_t mantissa : {1, 2, 5})
            if (mantissa * power <= n)
                best = mantissa * power;
    return best;
}

} // namespace

int64_t samplesWithin(double secondsPerSample, double seconds, int64_t most)
{
    most = std::max<int64_t>(most, 1);
    if (!(secondsPerSample > 0) || !std::isfinite(secondsPerSample))
        return most; // free as far as a clock can tell
    const double fits = seconds / secondsPerSample;
    const int64_t count = fits >= double(most) ? most : roundDownToOneTwoFive(std::max<int64_t>(1, int64_t(fits)));
    return std::min(most, std::max(count, kFewestFittedSamples));
}

std::string describeFittedCount(int64_t samples, double secondsPerSample)
{
    char perSample[32];
    if (secondsPerSample >= 10)
        std::snprintf(perSample, sizeof perSample, "%.0f s", secondsPerSample);
    else if (secondsPerSample >= 0.1)
        std::snprintf(perSample, sizeof perSample, "%.2g s", secondsPerSample);
    else
        std::snprintf(perSample, sizeof perSample, "%.2g ms", secondsPerSample * 1000);
    return std::to_string(samples) + " samples (about " + clockDuration(double(samples) * secondsPerSample) + ", " +
           perSample + " a sample)";
}

int64_t rowsPerPassWithin(double secondsPerRowPass, double passSeconds)
{
    if (!(secondsPerRowPass > 0) || !std::isfinite(secondsPerRowPass))
        return int64_t(1) << 20;
    const double fits = passSeconds / secondsPerRowPass;
    int64_t rows = 1;
    while (rows < (int64_t(1) << 20) && double(rows * 2) <= fits)
        rows *= 2;
    return rows;
}

int64_t passesWithin(double secondsPerPass, double secondsPerDraw, int64_t length)
{
    length = std::max<int64_t>(length, 1);
    if (!(secondsPerDraw >= 0)) // NaN or less than nothing: the fewest passes
        secondsPerDraw = 0;
    if (!(secondsPerPass > 0) || !std::isfinite(secondsPerPass) || secondsPerPass * double(length) <= secondsPerDraw)
        return length;
    const double fit = std::floor(secondsPerDraw / secondsPerPass);
    return int64_t(std::clamp<double>(fit, double(std::min<int64_t>(kFewestConfidentPasses, length)), double(length)));
}

int64_t evaluationBatchFor(int64_t samples) { return std::clamp<int64_t>(samples / 8, 50, 1000); }

} // namespace d2dpo
