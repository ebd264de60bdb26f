// SPDX-License-Identifier: GPL-3.0-or-later
// A team store's schema on PostgreSQL: the same tables, columns, constraints and views as the
// SQLite store at the same version (storeschema.cpp), and what only a shared server needs: the
// labeler and maintainer roles, their grants and the row-level security on labels and leases.
#pragma once

#include <vector>

namespace d2dpo {

/// The schema version postgresSchema() creates (team stores began at it).
constexpr int kPostgresBaseVersion = 9;

/// Creates every table and view at kPostgresBaseVersion in an empty database, with store_meta.
const char* postgresSchema();

/// The version of postgresAccessScript(), kept in store_meta as 'access_version' (a store without
/// it is at 1): a store behind it is upgraded by its owner and refused to everyone else, since a
/// labeler's client calls functions that an older store lacks. Version 5: an undo hands its pair
/// back under the lease cap.
constexpr int kPostgresAccessVersion = 5;

/// The roles (d2dpo_labeler, d2dpo_maintainer; made when missing), the grants, the policies and
/// the functions through which a labeler labels and holds pairs (postgresaccess.cpp). Run again
/// after each migration, so new tables are covered.
const char* postgresAccessScript();

/// A labeler's queue built by the server (postgresqueue.cpp): the functions that hand a labeler
/// its pairs and counts, gold pairs mixed in unseen; run after postgresAccessScript().
const char* postgresQueueScript();

/// The migrations after kPostgresBaseVersion, in order: entry k takes version
/// kPostgresBaseVersion + k to the next; each new SQLite migration appends its PostgreSQL twin here.
const std::vector<const char*>& postgresMigrations();

} // namespace d2dpo
