// SPDX-License-Identifier: GPL-3.0-or-later
// A store's name as messages, logs and window titles show it: never with a password. A team
// store is named by a postgresql:// URL that may carry one (user:PASSWORD@ or ?password=), and a
// libpq key=value string given by mistake may too; both are printed without it.
#pragma once

#include <string>

namespace d2dpo {

/// `name` without any secret: a URL is read as libpq reads it and loses `:PASSWORD` before its
/// `@` and every `password` and `sslpassword` parameter, however often given and however its key
/// is percent-encoded (libpq decodes keys and takes the last); a key=value string loses its
/// `password=VALUE` and `sslpassword=VALUE` (quoted or not); a file path is kept as is.
std::string storeNameForMessages(const std::string& name);

/// Whether `name` reads as libpq's key=value connection string ("host=db dbname=team ...")
/// rather than a file: a store is a file or a postgresql:// URL, so such a name is refused with
/// a sentence instead of creating a file of that name.
bool looksLikeConnectionString(const std::string& name);

/// The password libpq reads from a postgresql:// URL (user:PASSWORD@, then each ?password=, the
/// last winning), percent-decoded; "" when it has none.
std::string storePassword(const std::string& url);

/// `url` (one without a password) with `password` added as its ?password= parameter, encoded.
std::string storeUrlWithPassword(const std::string& url, const std::string& password);

/// The passphrase of the client's SSL key a URL carries (each ?sslpassword=, the last winning),
/// percent-decoded; "" when it has none. Messages never show it either.
std::string storeSslPassword(const std::string& url);
/// `url` with `sslPassword` added as its ?sslpassword= parameter, encoded.
std::string storeUrlWithSslPassword(const std::string& url, const std::string& sslPassword);

} // namespace d2dpo
