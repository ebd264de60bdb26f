// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/modelvocabulary.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/untrustedtext.h"

namespace d2dpo {

using nlohmann::json;

namespace {

Result<int64_t> idField(const json& value, const std::string& what)
{
    if (!value.is_number_integer())
        return makeError(what + " must be a whole number (got " + excerpt(value.dump()) + ")");
    const int64_t id = value.get<int64_t>();
    if (id < 0)
        return makeError(what + " must be >= 0 (got " + std::to_string(id) + ")");
    return id;
}

Result<std::vector<int64_t>> idList(const json& object, const char* key)
{
    std::vector<int64_t> ids;
    if (!object.contains(key))
        return ids;
    const json& list = object.at(key);
    if (!list.is_array())
        return makeError(std::string("\"") + key + "\" must be a list of ids (got " + excerpt(list.dump()) + ")");
    for (size_t i = 0; i < list.size(); ++i) {
        auto id = idField(list[i], std::string("\"") + key + "\"[" + std::to_string(i) + "]");
        if (!id)
            return makeError(id.error());
        ids.push_back(id.value());
    }
    return ids;
}

std::string quoted(char symbol) { return std::string("'") + symbol + "'"; }

} // namespace

std::vector<int64_t> ModelVocabulary::realTokenIds() const
{
    std::vector<int64_t> ids = symbolIds;
    if (padded())
        ids.push_back(padId);
    return ids;
}

int64_t ModelVocabulary::largestId() const
{
    int64_t largest = std::max(maskId, padId);
    for (const auto* ids : {&symbolIds, &begin, &end})
        for (int64_t id : *ids)
            largest = std::max(largest, id);
    return largest;
}

Result<ModelVocabulary> parseModelVocabulary(const std::string& text)
{
    // The JSON parser stops at a NUL byte: what follows it would be left unread without a word.
    if (const size_t nul = text.find('\0'); nul != std::string::npos)
        return makeError("it holds a NUL byte at offset " + std::to_string(nul) + ": a vocabulary is JSON text");
    if (Status s = checkJsonDepth(text, 8); !s) // a vocabulary is two levels deep
        return makeError(s.error());
    const json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded())
        return makeError("not valid JSON");
    if (!object.is_object())
        return makeError("not a JSON object (expected {\"symbols\": {...}, \"mask\": ID, ...})");
    if (const std::string key = firstDuplicateKey(text); !key.empty())
        return makeError("the key \"" + excerpt(key) + "\" appears twice in one object");
    for (const auto& item : object.items())
        if (item.key() != "symbols" && item.key() != "mask" && item.key() != "pad" && item.key() != "begin" &&
            item.key() != "end" && item.key() != "size" && item.key() != "format")
            return makeError("unknown key \"" + excerpt(item.key()) + "\" (known: symbols, mask, pad, begin, end, size)");
    if (!object.contains("symbols") || !object.at("symbols").is_object())
        return makeError("\"symbols\" must be an object from each symbol to the model's token id, e.g. "
                         "{\"A\": 5, \"C\": 23}");
    ModelVocabulary v;
    std::map<char, int64_t> symbols;
    for (const auto& item : object.at("symbols").items()) {
        if (hasControlCharacter(item.key()))
            return makeError("symbol \"" + excerpt(item.key()) + "\" is a control character; symbols are shown, so "
                                                                 "each must be printable");
        if (item.key().size() != 1)
            return makeError("symbol \"" + excerpt(item.key()) + "\" is not one character (each symbol is shown as "
                                                                 "one character)");
        auto id = idField(item.value(), "the id of symbol \"" + item.key() + "\"");
        if (!id)
            return makeError(id.error());
        symbols[item.key()[0]] = id.value();
    }
    for (const auto& [symbol, id] : symbols) {
        v.symbols.push_back(symbol);
        v.symbolIds.push_back(id);
    }
    if (!object.contains("mask"))
        return makeError("no mask id: name the model's mask token as \"mask\": ID");
    auto mask = idField(object.at("mask"), "\"mask\"");
    if (!mask)
        return makeError(mask.error());
    v.maskId = mask.value();
    if (object.contains("pad") && !object.at("pad").is_null()) {
        auto pad = idField(object.at("pad"), "\"pad\"");
        if (!pad)
            return makeError(pad.error());
        v.padId = pad.value();
    }
    auto begin = idList(object, "begin");
    if (!begin)
        return makeError(begin.error());
    v.begin = begin.value();
    auto end = idList(object, "end");
    if (!end)
        return makeError(end.error());
    v.end = end.value();
    if (object.contains("size")) {
        auto size = idField(object.at("size"), "\"size\"");
        if (!size)
            return makeError(size.error());
        v.size = size.value();
    }
    if (Status s = validate(v); !s)
        return makeError(s.error());
    return v;
}

Result<ModelVocabulary> readModelVocabulary(const std::string& path)
{
    const auto text = readBoundedRegularFile(path, 1u << 20);
    if (!text)
        return makeError("vocabulary '" + path + "': " + text.error());
    auto vocabulary = parseModelVocabulary(text.value());
    if (!vocabulary)
        return makeError("vocabulary '" + path + "': " + vocabulary.error());
    return vocabulary;
}

Status validate(const ModelVocabulary& v)
{
    if (v.symbols.size() < 2 || v.symbols.size() != v.symbolIds.size())
        return makeError("a task needs at least 2 symbols (got " + std::to_string(v.symbols.size()) + ")");
    std::map<int64_t, std::string> owner; // id -> what names it, to say which two collide
    auto claim = [&](int64_t id, const std::string& what) -> Status {
        if (id < 0)
            return makeError(what + " has a negative id");
        if (v.size > 0 && id >= v.size)
            return makeError(what + " is id " + std::to_string(id) + ", outside the model's " + std::to_string(v.size) +
                             " token ids (0.." + std::to_string(v.size - 1) + ")");
        if (auto [at, fresh] = owner.emplace(id, what); !fresh)
            return makeError("ids collide: " + at->second + " and " + what + " are both id " + std::to_string(id));
        return Ok{};
    };
    for (size_t i = 0; i < v.symbols.size(); ++i) {
        const char s = v.symbols[i];
        if (s <= ' ' || s > '~' || s == '_' || s == '.')
            return makeError("symbol " + quoted(s) + " cannot be shown: symbols are printable ASCII other than '_' "
                             "(a masked position) and '.' (a pad)");
        if (i > 0 && v.symbols[i - 1] >= s)
            return makeError("symbols must be distinct and sorted");
        if (Status st = claim(v.symbolIds[i], "symbol " + quoted(s)); !st)
            return st;
    }
    if (v.maskId < 0)
        return makeError("no mask id: name the model's mask token as \"mask\": ID");
    if (Status st = claim(v.maskId, "the mask"); !st)
        return st;
    if (v.padded())
        if (Status st = claim(v.padId, "the pad"); !st)
            return st;
    // Frame tokens may repeat among themselves (ESM frames with <cls> ... <eos>, some models with
    // one id twice) but are never the mask, the pad or a symbol: they are never generated.
    std::set<int64_t> frame;
    for (const auto* ids : {&v.begin, &v.end})
        for (int64_t id : *ids) {
            if (frame.count(id))
                continue;
            if (owner.count(id))
                return makeError("ids collide: the frame token " + std::to_string(id) + " is also " + owner[id]);
            if (id < 0 || (v.size > 0 && id >= v.size))
                return makeError("the frame token " + std::to_string(id) + " is outside the model's token ids");
            frame.insert(id);
        }
    if (v.begin.size() + v.end.size() > 64)
        return makeError("more than 64 frame tokens");
    return Ok{};
}

json modelVocabularyToJson(const ModelVocabulary& v)
{
    json symbols = json::object();
    for (size_t i = 0; i < v.symbols.size(); ++i)
        symbols[std::string(1, v.symbols[i])] = v.symbolIds[i];
    json j{{"symbols", symbols}, {"mask", v.maskId}, {"begin", v.begin}, {"end", v.end}};
    if (v.padded())
        j["pad"] = v.padId;
    if (v.size > 0)
        j["size"] = v.size;
    return j;
}

ModelVocabulary modelVocabularyFromJson(const json& j)
{
    auto parsed = parseModelVocabulary(j.dump());
    if (!parsed)
        throw json::other_error::create(501, "model vocabulary: " + parsed.error(), &j);
    return parsed.value();
}

} // namespace d2dpo
