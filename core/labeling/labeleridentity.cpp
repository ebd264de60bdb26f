// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/labeleridentity.h"

#include "store/preferencestore.h"

namespace d2dpo {

namespace {

std::string trimmed(const std::string& text)
{
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        return {};
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

} // namespace

Result<std::string> resolveLabeler(const PreferenceStore& store, const std::string& given, const std::string& remembered)
{
    const std::string name = trimmed(given);
    if (store.isTeamStore()) {
        const std::string& role = store.teamIdentity();
        if (!name.empty() && name != role)
            return makeError("on a team store you label as your database role, " + role + ", not as " + name +
                             " (leave the labeler out, or connect as " + name + ")");
        return role;
    }
    return name.empty() ? trimmed(remembered) : name;
}

} // namespace d2dpo
