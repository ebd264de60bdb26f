// SPDX-License-Identifier: GPL-3.0-or-later
// The preference store's schema as forward migrations: migration k takes a database from
// schema version k-1 to k (PRAGMA user_version). A new version appends a migration; an
// existing one is never edited, so every older file upgrades the same way.
#pragma once

#include <vector>

namespace d2dpo {

/// SQL of each migration, in order; index 0 creates version 1.
const std::vector<const char*>& storeMigrations();

} // namespace d2dpo
