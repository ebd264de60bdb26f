// SPDX-License-Identifier: GPL-3.0-or-later
// One labeler at work on a shared store, as the load test and the latency benchmark run it in
// processes of their own: take pairs from the queue under a lease, label each, time each commit.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "store/preferencestore.h"

namespace d2dpo::test {

struct LabelerRun {
    int64_t labels = 0;
    int64_t refused = 0;          ///< addLabel refusals (a pair past its overlap, or labelled twice)
    std::vector<double> commitMs; ///< each addLabel, from the call to its commit
    std::string error;            ///< why it stopped early, if it did
};

/// Labels up to `count` pairs on the store `name` as `labeler`, taking `batch` pairs at a time with
/// claimPairs; stops when the queue stays empty for `patienceMs` (others hold the rest).
inline LabelerRun labelAs(const std::string& name, const std::string& labeler, int64_t count, int64_t batch = 4,
                          int patienceMs = 3000)
{
    using Clock = std::chrono::steady_clock;
    LabelerRun run;
    auto opened = PreferenceStore::open(name, PreferenceStore::OpenMode::MustExist);
    if (!opened) {
        run.error = opened.error();
        return run;
    }
    PreferenceStore& store = *opened.value();
    auto idleSince = Clock::now();
    while (run.labels < count) {
        auto claimed = store.claimPairs(labeler, std::min(batch, count - run.labels));
        if (!claimed) {
            run.error = claimed.error();
            return run;
        }
        if (claimed->empty()) {
            if (Clock::now() - idleSince > std::chrono::milliseconds(patienceMs))
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            continue;
        }
        idleSince = Clock::now();
        for (const ShownPair& pair : claimed.value()) {
            const auto start = Clock::now();
            auto label = store.addLabel(pair.id, pair.id % 2 ? Choice::Left : Choice::Right, labeler, 700);
            run.commitMs.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
            if (label)
                ++run.labels;
            else if (label.errorCode() == ErrorCode::AlreadyLabelled)
                ++run.refused;
            else {
                run.error = label.error();
                return run;
            }
        }
    }
    return run;
}

/// The q-quantile (0..1) of `values`, nearest rank.
inline double quantile(std::vector<double> values, double q)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const size_t rank = size_t(std::max(0.0, q * double(values.size()) - 1e-9));
    return values[std::min(rank, values.size() - 1)];
}

} // namespace d2dpo::test
