// SPDX-License-Identifier: GPL-3.0-or-later
#include "assays/measuredsequences.h"

#include <cmath>
#include <map>

namespace d2dpo {

std::vector<MeasuredSequence> summariseMeasurements(const std::vector<Measurement>& measurements)
{
    std::map<std::string, std::vector<const Measurement*>> bySequence;
    for (const Measurement& m : measurements)
        bySequence[m.sequence].push_back(&m);
    std::vector<MeasuredSequence> out;
    out.reserve(bySequence.size());
    for (const auto& [sequence, values] : bySequence) {
        MeasuredSequence s{sequence, 0, 0, int(values.size())};
        for (const Measurement* m : values)
            s.mean += m->value;
        s.mean /= double(values.size());
        if (values.size() >= 2) {
            double squares = 0;
            for (const Measurement* m : values)
                squares += (m->value - s.mean) * (m->value - s.mean);
            s.spread = std::sqrt(squares / double(values.size() - 1)) / std::sqrt(double(values.size()));
        } else if (values.front()->sd) {
            s.spread = *values.front()->sd / std::sqrt(double(std::max(1, values.front()->replicates)));
        }
        out.push_back(std::move(s));
    }
    return out;
}

} // namespace d2dpo
