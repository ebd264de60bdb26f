// SPDX-License-Identifier: GPL-3.0-or-later
// Blind comparisons of models, and the labels that judge them (or every judged label, for the
// labelers' agreement). One facet of PreferenceStore (store/preferencestore.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "store/records.h"
#include "store/storefacet.h"

namespace d2dpo {

class ComparisonBook : protected StoreFacet {
public:
    /// Records a blind comparison of `modelIds` (all in the store, one task) with its pairs, in one
    /// transaction; returns its id.
    Result<int64_t> addComparison(const std::string& task, const std::vector<std::string>& modelIds,
                                  const std::vector<ShownPair>& pairs);
    Result<std::vector<ComparisonRecord>> comparisons();
    /// Every active label with its pair, oldest first, or one comparison's (`comparisonId` > 0); a
    /// team store's labeler reads its own, without gold answers or model ids.
    Result<std::vector<JudgedLabel>> judgedLabels(int64_t comparisonId = 0);

protected:
    using StoreFacet::StoreFacet;
};

} // namespace d2dpo
