// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/batchadvice.h"

#include <cstdio>

namespace d2dpo {

std::string batchLargerThanPairsWarning(int64_t batch, int64_t pairs)
{
    if (pairs <= 0 || batch <= pairs)
        return {};
    char text[320];
    std::snprintf(text, sizeof text,
                  "a batch of %lld pairs is more than the %lld at hand: a step draws them with replacement, each "
                  "about %.1f times; a batch of %lld or fewer costs less a step (its gradient a little noisier)",
                  static_cast<long long>(batch), static_cast<long long>(pairs), double(batch) / double(pairs),
                  static_cast<long long>(pairs));
    return text;
}

} // namespace d2dpo
