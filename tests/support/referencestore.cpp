// SPDX-License-Identifier: GPL-3.0-or-later
// A store holding one tiny reference model (referencestore.h).
#include "support/referencestore.h"

namespace d2dpo::test {

std::unique_ptr<PreferenceStore> storeWithReference(const std::string& file, const TinyCheckpoint& reference)
{
    auto store = PreferenceStore::open(file);
    if (!store)
        return nullptr;
    ModelRecord record;
    record.id = reference.id;
    record.kind = "pretrained";
    record.name = "tiny reference";
    record.path = reference.path;
    record.specJson = toJson(reference.spec);
    if (!store.value()->addModel(record).ok())
        return nullptr;
    return std::move(store.value());
}

} // namespace d2dpo::test
