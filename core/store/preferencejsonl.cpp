// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/preferencejsonl.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace d2dpo {

using nlohmann::json;

std::string toJsonLine(const PreferenceRecord& r)
{
    return json{{"chosen", r.chosen},
                {"rejected", r.rejected},
                {"labeler", r.labeler},
                {"labelled_at", r.labelledAt},
                {"decide_ms", r.decideMs},
                {"chosen_side", r.chosenSide},
                {"chosen_model_id", r.chosenModelId},
                {"rejected_model_id", r.rejectedModelId},
                {"task", r.task}}
        .dump();
}

Result<int64_t> exportPreferencesJsonl(PreferenceStore& store, const std::string& path)
{
    auto records = store.preferences();
    if (!records)
        return makeError(records.error());
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary, std::ios::trunc);
        for (const PreferenceRecord& r : records.value())
            out << toJsonLine(r) << "\n";
        out.flush();
        if (!out) {
            std::error_code ec;
            std::filesystem::remove(temporary, ec);
            return makeError("cannot write '" + path + "' (disk full or no permission?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec)
        return makeError("cannot move '" + temporary + "' to '" + path + "': " + ec.message());
    return int64_t(records->size());
}

namespace {

Status checkTokens(const std::string& tokens, const char* field, const JsonlRules& rules)
{
    if (tokens.empty())
        return makeError(std::string("'") + field + "' is empty");
    if (rules.check)
        if (Status s = rules.check(tokens); !s)
            return makeError(std::string("'") + field + "': " + s.error());
    return Ok{};
}

template <typename T>
Status optionalField(const json& object, const char* key, T& target, bool (json::*isType)() const noexcept,
                     const char* typeName)
{
    if (!object.contains(key) || object.at(key).is_null())
        return Ok{};
    if (!(object.at(key).*isType)())
        return makeError(std::string("'") + key + "' must be " + typeName);
    target = object.at(key).get<T>();
    return Ok{};
}

} // namespace

Result<PreferenceRecord> parsePreferenceLine(const std::string& line, int64_t lineNumber, const JsonlRules& rules)
{
    const std::string where = "line " + std::to_string(lineNumber) + ": ";
    json object;
    try {
        object = json::parse(line);
    } catch (const json::exception& e) {
        return makeError(where + "not valid JSON (" + std::string(e.what()).substr(0, 160) + ")");
    }
    if (!object.is_object())
        return makeError(where + "expected a JSON object");
    PreferenceRecord r;
    for (const char* key : {"chosen", "rejected"}) {
        if (!object.contains(key))
            return makeError(where + "'" + key + "' is missing");
        if (!object.at(key).is_string())
            return makeError(where + "'" + key + "' must be a string of tokens");
    }
    r.task = rules.task;
    r.chosen = object.at("chosen").get<std::string>();
    r.rejected = object.at("rejected").get<std::string>();
    for (const auto& [tokens, name] : {std::pair{&r.chosen, "chosen"}, std::pair{&r.rejected, "rejected"}})
        if (Status s = checkTokens(*tokens, name, rules); !s)
            return makeError(where + s.error());
    if (r.chosen == r.rejected)
        return makeError(where + "'chosen' and 'rejected' are the same sequence");
    for (Status s : {optionalField(object, "labeler", r.labeler, &json::is_string, "a string"),
                     optionalField(object, "labelled_at", r.labelledAt, &json::is_string, "a string"),
                     optionalField(object, "chosen_side", r.chosenSide, &json::is_string, "a string"),
                     optionalField(object, "chosen_model_id", r.chosenModelId, &json::is_string, "a string"),
                     optionalField(object, "rejected_model_id", r.rejectedModelId, &json::is_string, "a string"),
                     optionalField(object, "decide_ms", r.decideMs, &json::is_number_integer, "an integer")})
        if (!s)
            return makeError(where + s.error());
    if (object.contains("task") && object.at("task").is_string() && !object.at("task").get<std::string>().empty() &&
        object.at("task").get<std::string>() != rules.task)
        return makeError(where + "a preference of the task " + object.at("task").get<std::string>() +
                         ", not of " + rules.task);
    if (!r.chosenSide.empty() && r.chosenSide != "left" && r.chosenSide != "right")
        return makeError(where + "'chosen_side' must be \"left\" or \"right\"");
    if (r.decideMs < 0)
        return makeError(where + "'decide_ms' must be >= 0");
    return r;
}

Result<int64_t> importPreferencesJsonl(PreferenceStore& store, const std::string& path, const JsonlRules& rules)
{
    std::ifstream in(path);
    if (!in || std::filesystem::is_directory(path))
        return makeError("cannot read '" + path + "'");
    std::vector<PreferenceRecord> records;
    if (rules.task.empty())
        return makeError("an import needs the task its sequences belong to; nothing was imported");
    std::string line;
    int64_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue; // blank lines are allowed
        auto record = parsePreferenceLine(line, number, rules);
        if (!record)
            return makeError("'" + path + "' " + record.error() + "; nothing was imported");
        records.push_back(std::move(record.value()));
    }
    if (records.empty())
        return makeError("'" + path + "' holds no preferences; nothing was imported");
    if (Status s = store.importPreferences(records); !s)
        return makeError(s.error() + "; nothing was imported");
    return int64_t(records.size());
}

} // namespace d2dpo
