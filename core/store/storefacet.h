// SPDX-License-Identifier: GPL-3.0-or-later
// What the preference store's facets (store/modelcatalog.h, labelqueue.h, runlog.h,
// comparisonbook.h, importlog.h) share: each is a view of the store's one connection, made only
// by PreferenceStore (store/preferencestore.h) around it, never copied and never deleted through.
#pragma once

namespace d2dpo {

struct StoreImpl;

class StoreFacet {
protected:
    explicit StoreFacet(StoreImpl& impl)
        : m_impl(&impl)
    {
    }
    ~StoreFacet() = default;
    StoreFacet(const StoreFacet&) = delete;
    StoreFacet& operator=(const StoreFacet&) = delete;

    StoreImpl* m_impl;
};

} // namespace d2dpo
