// SPDX-License-Identifier: GPL-3.0-or-later
// Records the preference-store suites write: a store opened or a warning, model records and
// binary-integers pairs (N = 8) that differ on each side.
#pragma once

#include <QtGlobal>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/preferencestore.h"

namespace d2dpo::test {

/// The store at `path`, or null with the reason printed.
inline std::unique_ptr<PreferenceStore> openOrFail(const std::string& path)
{
    auto store = PreferenceStore::open(path);
    if (!store) {
        qWarning("%s", store.error().c_str());
        return nullptr;
    }
    return std::move(store.value());
}

inline ModelRecord modelRecord(const std::string& id, const std::string& parent, const std::string& kind,
                               std::optional<int64_t> runId = std::nullopt)
{
    ModelRecord m;
    m.id = id;
    m.parentId = parent;
    m.kind = kind;
    m.name = id;
    m.path = "/models/" + id + ".d2dpo";
    m.runId = runId;
    return m;
}

/// `n` pairs of binary-integers:8 sequences, never the same sequence on both sides.
inline std::vector<ShownPair> somePairs(int n)
{
    std::vector<ShownPair> pairs;
    for (int i = 0; i < n; ++i) {
        std::string a(8, '0'), b(8, '0');
        for (int k = 0; k < i % 8; ++k)
            a[size_t(k)] = '1';
        for (int k = 0; k <= i % 7; ++k)
            b[size_t(k)] = '1';
        if (a == b)
            b[7] = '1';
        pairs.push_back({0, a, b, "", "", "binary-integers:8"});
    }
    return pairs;
}

} // namespace d2dpo::test
