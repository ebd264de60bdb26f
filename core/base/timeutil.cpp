// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/timeutil.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace d2dpo {

std::string utcNow()
{
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char buffer[40];
    const size_t n = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &tm);
    std::snprintf(buffer + n, sizeof buffer - n, ".%03dZ", static_cast<int>(millis));
    return buffer;
}

double secondsLeft(double elapsedSeconds, double done, int64_t total)
{
    if (!(done > 0) || !std::isfinite(done) || !std::isfinite(elapsedSeconds) || elapsedSeconds < 0)
        return -1.0;
    return elapsedSeconds * std::max(double(total) - done, 0.0) / done;
}

std::string clockDuration(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0)
        return "–";
    const long long s = std::llround(seconds);
    char text[32];
    if (s >= 3600)
        std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else
        std::snprintf(text, sizeof text, "%lld:%02lld", s / 60, s % 60);
    return text;
}

} // namespace d2dpo
