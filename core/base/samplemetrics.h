// SPDX-License-Identifier: GPL-3.0-or-later
// What a batch of generated sequences says about a model: the task's declared metrics (names,
// descriptions and values, in the task's order) and the histogram the task shows. The task
// computes them (tasks/); this plain struct (no torch) carries them to the recorder, the curves,
// the store, the CLI and the views, none of which knows which task made them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace d2dpo {

struct MetricValue {
    std::string name;        ///< as the store and the curves files record it ("vsr", "rule_share")
    double value = 0;
    std::string description; ///< one line for people; empty when read back from JSON
    bool plotted = false;    ///< a share the Train view plots over steps, with the reference's as a baseline
};

/// Counts of the valid samples over the task's bins (values of i, lengths...) plus invalid ones.
struct Histogram {
    std::string axis;                ///< what the bins are ("i", "length")
    std::vector<std::string> labels; ///< one per bin
    std::vector<int64_t> counts;     ///< one per bin
    int64_t invalid = 0;
};

struct SampleMetrics {
    int64_t samples = 0;
    std::optional<uint64_t> seed; ///< the sampler's seed, when recorded: the same seed draws the same samples
    std::string sampler;          ///< how the samples were drawn ("exact sampler (one position per pass)"); "" when not recorded
    std::vector<MetricValue> values;
    std::string ruleMetric; ///< the value that is "the share the rule prefers"; empty without a rule
    Histogram histogram;

    std::optional<double> value(const std::string& name) const;
    /// value(name), or 0 when the task does not declare it.
    double valueOr0(const std::string& name) const;
    double vsr() const; ///< every task declares "vsr"
    void set(const std::string& name, double value, const std::string& description, bool plotted = false);

    /// "2000 samples, seed 1, exact sampler (...)" (the seed and sampler when recorded): where the figures come from.
    std::string provenance() const;
    /// {"samples": n, "seed": s, "<name>": value..., "rule_metric": ..., "plotted": [...], "histogram": {...}}
    std::string toJson() const;
};

/// Reads toJson()'s form back, and the older form ({"vsr": .., "odd_ratio": .., "histogram": [..],
/// "invalid": n}) that stores and checkpoints written before tasks declared their metrics hold.
Result<SampleMetrics> sampleMetricsFromJson(const std::string& json);

} // namespace d2dpo
