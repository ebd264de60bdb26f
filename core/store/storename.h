// SPDX-License-Identifier: GPL-3.0-or-later
// A store's name as messages, logs and window titles show it: never with a password. A team
// store is named by a postgresql:// URL that may carry one (user:PASSWORD@ or ?password=), and a
// libpq key=value string given by mistake may too; both are printed without it.
#pragma once

#include <string>

namespace d2dpo {

/// `name` without any password: a URL loses `:PASSWORD` before its `@` and its `password=`
/// parameter, a key=value string its `password=VALUE` (quoted or not); a file path is kept as is.
std::string storeNameForMessages(const std::string& name);

/// Whether `name` reads as libpq's key=value connection string ("host=db dbname=team ...")
/// rather than a file: a store is a file or a postgresql:// URL, so such a name is refused with
/// a sentence instead of creating a file of that name.
bool looksLikeConnectionString(const std::string& name);

/// The password a postgresql:// URL carries (user:PASSWORD@ or ?password=), percent-decoded; ""
/// when it has none.
std::string storePassword(const std::string& url);

/// `url` (one without a password) with `password` added as its ?password= parameter, encoded.
std::string storeUrlWithPassword(const std::string& url, const std::string& password);

} // namespace d2dpo
