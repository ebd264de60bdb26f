// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/preferencejsonl.h"

#include <filesystem>
#include <map>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/boundedline.h"
#include "base/safeoutput.h"
#include "base/untrustedtext.h"
#include "store/storeimpl.h"

namespace d2dpo {

using nlohmann::json;

std::string toJsonLine(const PreferenceRecord& r)
{
    json line{{"chosen", r.chosen},
              {"rejected", r.rejected},
              {"labeler", r.labeler},
              {"labelled_at", r.labelledAt},
              {"decide_ms", r.decideMs},
              {"chosen_side", toString(r.choice)},
              {"chosen_model_id", r.chosenModelId},
              {"rejected_model_id", r.rejectedModelId},
              {"task", r.task}};
    if (!r.pairKey.empty()) // labels of one pair stay one pair when imported (agreement reads them so)
        line["pair"] = r.pairKey;
    return line.dump();
}

Result<std::string> preferencesJsonl(PreferenceStore& store, int64_t& count, bool withUndecided)
{
    auto records = store.preferences();
    if (!records)
        return makeError(records.errorCode(), records.error());
    std::string text;
    for (const PreferenceRecord& r : records.value())
        text += toJsonLine(r) + "\n";
    count = int64_t(records->size());
    if (withUndecided) {
        auto undecided = store.undecidedLabels();
        if (!undecided)
            return makeError(undecided.errorCode(), undecided.error());
        for (const auto& [pair, label] : undecided.value()) {
            text += json{{"sequence_a", pair.left},
                         {"sequence_b", pair.right},
                         {"choice", toString(label.choice)},
                         {"labeler", label.labeler},
                         {"labelled_at", label.createdAt},
                         {"decide_ms", label.decideMs},
                         {"sequence_a_model_id", pair.leftModelId},
                         {"sequence_b_model_id", pair.rightModelId},
                         {"task", pair.task},
                         {"pair", std::to_string(pair.id)}}
                        .dump();
            text += "\n";
            ++count;
        }
    }
    return text;
}

Result<int64_t> exportPreferencesJsonl(PreferenceStore& store, const std::string& path, bool withUndecided)
{
    int64_t count = 0;
    auto text = preferencesJsonl(store, count, withUndecided);
    if (!text)
        return makeError(text.errorCode(), text.error());
    if (Status s = AtomicFile::write(path, text.value(), storeFiles(store.path())); !s)
        return makeError(s.errorCode(), s.error());
    return count;
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
    if (Status s = checkJsonDepth(line, 4); !s) // a preference is one flat object
        return makeError(where + s.error());
    if (const std::string key = firstDuplicateKey(line); !key.empty())
        return makeError(where + "the key \"" + excerpt(key) + "\" appears twice (which one is meant?)");
    json object;
    try {
        object = json::parse(line);
    } catch (const json::exception& e) {
        return makeError(where + "not valid JSON (" + std::string(e.what()).substr(0, 160) + ")");
    }
    if (!object.is_object())
        return makeError(where + "expected a JSON object");
    PreferenceRecord r;
    std::string side; // "chosen_side": where the chosen one was shown, "" when the file does not say
    // An undecided label (`prefs export --with-undecided`): the pair as shown, and its choice.
    const bool undecided = object.contains("choice") && !object.contains("chosen");
    const char* first = undecided ? "sequence_a" : "chosen";
    const char* second = undecided ? "sequence_b" : "rejected";
    for (const char* key : {first, second}) {
        if (!object.contains(key))
            return makeError(where + "'" + key + "' is missing");
        if (!object.at(key).is_string())
            return makeError(where + "'" + key + "' must be a string of tokens");
    }
    r.task = rules.task;
    r.chosen = object.at(first).get<std::string>();
    r.rejected = object.at(second).get<std::string>();
    for (const auto& [tokens, name] : {std::pair{&r.chosen, first}, std::pair{&r.rejected, second}})
        if (Status s = checkTokens(*tokens, name, rules); !s)
            return makeError(where + s.error());
    if (r.chosen == r.rejected)
        return makeError(where + "'" + first + "' and '" + second + "' are the same sequence");
    if (undecided) {
        if (!object.at("choice").is_string())
            return makeError(where + "'choice' must be \"tie\", \"skip\" or \"both-bad\"");
        const std::string choice = object.at("choice").get<std::string>();
        const std::optional<Choice> parsed = choiceFromString(choice);
        if (!parsed || *parsed == Choice::Left || *parsed == Choice::Right)
            return makeError(where + "'choice' must be \"tie\", \"skip\" or \"both-bad\" (got \"" + excerpt(choice) +
                             "\")");
        r.choice = *parsed;
    }
    if (object.contains("pair") && !object.at("pair").is_null()) {
        const json& pair = object.at("pair");
        if (pair.is_number_integer())
            r.pairKey = std::to_string(pair.get<int64_t>());
        else if (pair.is_string() && !pair.get<std::string>().empty() && pair.get<std::string>().size() <= 64)
            r.pairKey = pair.get<std::string>();
        else
            return makeError(where + "'pair' must be a whole number or a short string");
    }
    for (Status s : {optionalField(object, "labeler", r.labeler, &json::is_string, "a string"),
                     optionalField(object, "labelled_at", r.labelledAt, &json::is_string, "a string"),
                     undecided ? Status(Ok{}) : optionalField(object, "chosen_side", side, &json::is_string, "a string"),
                     optionalField(object, undecided ? "sequence_a_model_id" : "chosen_model_id", r.chosenModelId,
                                   &json::is_string, "a string"),
                     optionalField(object, undecided ? "sequence_b_model_id" : "rejected_model_id", r.rejectedModelId,
                                   &json::is_string, "a string"),
                     optionalField(object, "decide_ms", r.decideMs, &json::is_number_integer, "an integer")})
        if (!s)
            return makeError(where + s.error());
    if (object.contains("task") && object.at("task").is_string() && !object.at("task").get<std::string>().empty() &&
        object.at("task").get<std::string>() != rules.task)
        return makeError(where + "a preference of the task " + object.at("task").get<std::string>() +
                         ", not of " + rules.task);
    if (!r.labeler.empty())
        if (const std::string problem = labelerNameProblem(r.labeler); !problem.empty())
            return makeError(where + problem);
    if (side == "right")
        r.choice = Choice::Right;
    else if (!side.empty() && side != "left")
        return makeError(where + "'chosen_side' must be \"left\" or \"right\"");
    if (r.decideMs < 0)
        return makeError(where + "'decide_ms' must be >= 0");
    if (!r.labelledAt.empty() && !isTimestamp(r.labelledAt))
        return makeError(where + "'labelled_at' is not a time (ISO 8601, e.g. 2026-11-21T13:40:12Z): \"" +
                         excerpt(r.labelledAt) + "\"");
    // Kept and written back (sequences.made_by): a model's id, not any text a file may hold.
    for (const std::string* id : {&r.chosenModelId, &r.rejectedModelId})
        if (!id->empty() && !isPlainId(*id))
            return makeError(where + "a model id must be 1-64 letters, digits or '-_.:+'");
    return r;
}

Result<std::vector<PreferenceRecord>> readPreferencesJsonl(const std::string& path, const JsonlRules& rules)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return makeError("'" + path + "' does not exist; nothing was imported");
    if (!std::filesystem::is_regular_file(path, ec)) // a device or a pipe may never end
        return makeError("'" + path + "' is not a regular file (a folder, device or pipe?); nothing was imported");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError("cannot read '" + path + "' (no permission?); nothing was imported");
    if (rules.task.empty())
        return makeError("an import needs the task its sequences belong to; nothing was imported");
    std::vector<PreferenceRecord> records;
    // A labeler labels a pair once: the first line of each (pair, labeler), to name both lines.
    std::map<std::pair<std::string, std::string>, std::pair<int64_t, std::string>> labelOf;
    std::string line;
    int64_t number = 0;
    for (LineRead read; (read = readBoundedLine(in, line)) != LineRead::End;) {
        ++number;
        if (read == LineRead::TooLong)
            return makeError("'" + path + "' line " + std::to_string(number) +
                             ": longer than 1 MB (is this a JSONL file?); nothing was imported");
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue; // blank lines are allowed
        auto record = parsePreferenceLine(line, number, rules);
        if (!record)
            return makeError("'" + path + "' " + record.error() + "; nothing was imported");
        if (const PreferenceRecord& r = record.value(); !r.pairKey.empty()) {
            // Keyed by the pair as shown too: lines that show other sequences under one pair key are
            // the store's to name (importPreferences).
            const bool chosenLeft = r.choice != Choice::Right;
            const std::string shown = (chosenLeft ? r.chosen : r.rejected) + '\x1f' + (chosenLeft ? r.rejected : r.chosen);
            const std::string labeler = r.labeler.empty() ? std::string("import") : r.labeler;
            const auto [first, fresh] = labelOf.try_emplace({r.pairKey + '\x1f' + shown, labeler}, number, toJsonLine(r));
            if (!fresh && first->second.second != toJsonLine(r)) // the same line twice is one label
                return makeError("'" + path + "' lines " + std::to_string(first->second.first) + " and " +
                                 std::to_string(number) + ": labeler '" + excerpt(labeler) + "' labels pair '" +
                                 excerpt(r.pairKey) + "' twice, differently (a labeler labels a pair once); nothing "
                                 "was imported");
        }
        records.push_back(std::move(record.value()));
    }
    if (in.bad())
        return makeError("reading '" + path + "' failed; nothing was imported");
    if (records.empty())
        return makeError("'" + path + "' holds no labels; nothing was imported");
    return records;
}

Result<ImportOutcome> importPreferenceRecords(PreferenceStore& store, const std::vector<PreferenceRecord>& records,
                                              const std::string& path)
{
    std::error_code ec;
    auto outcome = store.importPreferences(records, std::filesystem::absolute(path, ec).string());
    if (!outcome)
        return makeError(outcome.error() + "; nothing was imported");
    return outcome.value();
}

Result<ImportOutcome> importPreferencesJsonl(PreferenceStore& store, const std::string& path, const JsonlRules& rules)
{
    auto records = readPreferencesJsonl(path, rules);
    if (!records)
        return makeError(records.error());
    return importPreferenceRecords(store, records.value(), path);
}

} // namespace d2dpo
