// SPDX-License-Identifier: GPL-3.0-or-later
// Text that comes from a file someone else made (a vocabulary, a model's ids, a JSON line) is
// quoted in messages only as a short, printable excerpt: control characters would let it forge
// lines or move the cursor on the user's terminal, and a 180 KB value is not a message. And JSON
// from such files is checked for depth before it is parsed: the parser recurses, so 100,000
// nested brackets would overflow the stack.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace d2dpo {

/// At most `limit` bytes of `text`, control characters (and DEL) written as \xNN, "..." when cut.
std::string excerpt(std::string_view text, size_t limit = 60);

/// Whether `text` holds a control character (below 0x20, or DEL).
bool hasControlCharacter(std::string_view text);

/// JSON nested at most `maxDepth` arrays and objects deep (brackets inside strings not counted),
/// or an error saying how deep it goes.
Status checkJsonDepth(std::string_view text, int maxDepth = 64);

/// The first key that appears twice in one object of the JSON `text` ("" when none, or when the
/// text is not JSON): nlohmann keeps the last of two equal keys without a word, and a file that
/// says a thing twice is a mistake its author must hear about.
std::string firstDuplicateKey(const std::string& text);

/// Whether `text` is a time as ISO 8601 (or PostgreSQL) writes one: 2026-11-21T13:40:12.345Z,
/// 2026-11-21 13:40:12+00, ... (date and time of day in range; fraction and zone optional).
bool isTimestamp(std::string_view text);

/// Whether `text` can name a record (a model, a checkpoint) where it is shown and stored: 1-64
/// letters, digits or '-_.:+' (this program writes 16 hex digits); never an escape sequence or a
/// hundred thousand characters from a file someone else wrote.
bool isPlainId(std::string_view text);

/// The bytes of a regular file of at most `maxBytes`, or why not, in a sentence: a device, a
/// pipe or a folder is refused before anything is read from it (it may never end, or never start).
Result<std::string> readBoundedRegularFile(const std::string& path, uint64_t maxBytes);

} // namespace d2dpo
