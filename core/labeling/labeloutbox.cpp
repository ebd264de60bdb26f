// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/labeloutbox.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace d2dpo {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json pairJson(const ShownPair& p)
{
    return {{"id", p.id},     {"left", p.left},       {"right", p.right}, {"leftModel", p.leftModelId},
            {"rightModel", p.rightModelId}, {"task", p.task}, {"blind", p.blind}};
}

ShownPair pairFromJson(const json& j)
{
    ShownPair p;
    p.id = j.at("id").get<int64_t>();
    p.left = j.at("left").get<std::string>();
    p.right = j.at("right").get<std::string>();
    p.leftModelId = j.at("leftModel").get<std::string>();
    p.rightModelId = j.at("rightModel").get<std::string>();
    p.task = j.at("task").get<std::string>();
    p.blind = j.at("blind").get<bool>();
    return p;
}

/// A file name from any text: letters, digits and . _ - kept, everything else as _.
std::string fileSafe(const std::string& text)
{
    std::string out;
    for (unsigned char c : text)
        out += std::isalnum(c) || c == '.' || c == '-' || c == '_' ? char(c) : '_';
    return out.substr(0, 180);
}

/// FNV-1a, 64 bits: the same on every build, so a journal's name never changes with the compiler.
std::string fnv1a(const std::string& text)
{
    uint64_t hash = 14695981039346656037ull;
    for (unsigned char c : text)
        hash = (hash ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return hex;
}

std::string systemError(const std::string& what) { return what + ": " + std::strerror(errno); }

} // namespace

std::string LabelOutbox::defaultPath(const std::string& storeName, const std::string& labeler)
{
    const std::string store = PreferenceStore::defaultPath();
    const fs::path data = store.empty() ? fs::temp_directory_path() : fs::path(store).parent_path();
    std::string name = storeName;
    if (const size_t scheme = name.find("://"); scheme != std::string::npos)
        name = name.substr(scheme + 3);
    // Readable, and told apart by a hash of the whole name (two stores whose names read alike).
    const std::string file = fileSafe(labeler) + "@" + fileSafe(name) + "-" + fnv1a(labeler + "\n" + storeName);
    return (data / "team" / "outbox" / (file + ".jsonl")).string();
}

Result<std::unique_ptr<LabelOutbox>> LabelOutbox::open(const std::string& path)
{
    std::error_code ec;
    if (const fs::path folder = fs::path(path).parent_path(); !folder.empty())
        fs::create_directories(folder, ec);
    if (ec)
        return makeError(ErrorCode::ReadOnly, "cannot make the folder of the label outbox '" + path + "': " + ec.message());
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return makeError(ErrorCode::ReadOnly, systemError("cannot open the label outbox '" + path + "'"));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return makeError(ErrorCode::Denied, "the label outbox '" + path + "' is in use by another d2dpo-studio "
                                           "labeling as the same role on this store");
    }
    if (!fs::is_regular_file(path, ec)) {
        ::close(fd);
        return makeError("the label outbox '" + path + "' is not a regular file");
    }
    std::unique_ptr<LabelOutbox> outbox(new LabelOutbox(path, fd));
    // Read it whole: what an earlier sitting could not send.
    std::string text;
    char buffer[65536];
    for (ssize_t n; (n = ::pread(fd, buffer, sizeof buffer, off_t(text.size()))) != 0;) {
        if (n < 0)
            return makeError(systemError("cannot read the label outbox '" + path + "'"));
        text.append(buffer, size_t(n));
    }
    size_t start = 0;
    int lineNumber = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        const bool last = end == std::string::npos || end + 1 == text.size();
        const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        ++lineNumber;
        try {
            outbox->apply(line, true);
        } catch (const std::exception& e) {
            if (!last) // only the line a crash may have cut short can be passed over
                return makeError("the label outbox '" + path + "' cannot be read at line " +
                                 std::to_string(lineNumber) + " (" + e.what() + "); it was left as it is");
            // Its write never returned, so nothing was confirmed by it: cut it off, so the lines
            // written from now on follow whole ones.
            if (::ftruncate(fd, off_t(start)) != 0 || ::fsync(fd) != 0)
                return makeError(systemError("cannot repair the label outbox '" + path + "'"));
            text.resize(start);
            break;
        }
        start = end == std::string::npos ? text.size() : end + 1;
    }
    // A whole last entry whose newline a crash cut off: the next line starts on a line of its own.
    if (!text.empty() && text.back() != '\n' && ::write(fd, "\n", 1) != 1)
        return makeError(systemError("cannot write the label outbox '" + path + "'"));
    outbox->m_inherited = outbox->m_pending.size();
    std::lock_guard lock(outbox->m_mutex);
    outbox->compactIfIdle();
    return outbox;
}

LabelOutbox::LabelOutbox(std::string path, int fd) : m_path(std::move(path)), m_fd(fd) {}

LabelOutbox::~LabelOutbox()
{
    if (m_fd >= 0)
        ::close(m_fd); // drops the lock too
}

void LabelOutbox::apply(const std::string& line, bool replaying)
{
    const json j = json::parse(line);
    const std::string op = j.at("op").get<std::string>();
    const int64_t seq = j.at("seq").get<int64_t>();
    if (replaying)
        m_nextSeq = std::max(m_nextSeq, seq + 1);
    if (op == "label" || op == "undo") {
        OutboxEntry entry;
        entry.seq = seq;
        if (op == "label") {
            entry.pair = pairFromJson(j.at("pair"));
            const auto choice = choiceFromString(j.at("choice").get<std::string>());
            if (!choice)
                throw std::runtime_error("unknown choice");
            entry.choice = *choice;
            entry.decideMs = j.at("ms").get<int64_t>();
            entry.inherited = replaying;
        } else {
            entry.kind = OutboxEntry::Kind::Undo;
            entry.undoes = j.at("of").get<int64_t>();
            entry.labelId = j.value("label", int64_t(0));
        }
        m_pending[seq] = entry;
    } else if (op == "done") {
        if (auto it = m_pending.find(seq); it != m_pending.end() && it->second.kind == OutboxEntry::Kind::Label)
            m_labelIds[seq] = j.at("label").get<int64_t>();
        m_pending.erase(seq);
    } else if (op == "refused" || op == "dropped") {
        m_pending.erase(seq);
    } else {
        throw std::runtime_error("unknown entry '" + op + "'");
    }
}

Status LabelOutbox::append(const std::string& line)
{
    const std::string text = line + "\n";
    struct stat before {};
    const bool sized = ::fstat(m_fd, &before) == 0;
    size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(m_fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const std::string error = systemError("cannot write the label outbox '" + m_path + "'");
            // A part of a line would make the journal unreadable: take it back, so the file ends
            // with the last whole line (a later open would cut it off all the same).
            if (written > 0 && sized)
                (void)!::ftruncate(m_fd, before.st_size);
            return makeError(ErrorCode::ReadOnly, error);
        }
        written += size_t(n);
    }
    if (::fsync(m_fd) != 0)
        return makeError(ErrorCode::ReadOnly, systemError("cannot flush the label outbox '" + m_path + "' to disk"));
    return Ok{};
}

void LabelOutbox::compactIfIdle()
{
    if (!m_pending.empty() || m_inFlight != 0)
        return;
    // Nothing left to send: the journal starts over (the label ids stay known in memory).
    if (::ftruncate(m_fd, 0) == 0)
        (void)::fsync(m_fd);
}

Result<int64_t> LabelOutbox::addLabel(const ShownPair& pair, Choice choice, int64_t decideMs)
{
    std::lock_guard lock(m_mutex);
    const int64_t seq = m_nextSeq;
    const json line = {{"op", "label"}, {"seq", seq}, {"pair", pairJson(pair)}, {"choice", toString(choice)},
                       {"ms", decideMs}};
    if (Status s = append(line.dump()); !s)
        return makeError(s.errorCode(), s.error());
    ++m_nextSeq;
    m_pending[seq] = OutboxEntry{seq, OutboxEntry::Kind::Label, pair, choice, decideMs, 0, 0};
    return seq;
}

Result<int64_t> LabelOutbox::undo(int64_t labelSeq)
{
    std::lock_guard lock(m_mutex);
    if (m_pending.count(labelSeq) && m_inFlight != labelSeq) { // never sent: nothing for the store to undo
        if (Status s = append(json{{"op", "dropped"}, {"seq", labelSeq}}.dump()); !s)
            return makeError(s.errorCode(), s.error());
        m_pending.erase(labelSeq);
        compactIfIdle();
        return int64_t(0);
    }
    const int64_t seq = m_nextSeq;
    const int64_t labelId = m_labelIds.count(labelSeq) ? m_labelIds.at(labelSeq) : 0;
    json line = {{"op", "undo"}, {"seq", seq}, {"of", labelSeq}};
    if (labelId > 0) // so a later sitting can send it whatever became of this journal
        line["label"] = labelId;
    if (Status s = append(line.dump()); !s)
        return makeError(s.errorCode(), s.error());
    ++m_nextSeq;
    OutboxEntry entry;
    entry.seq = seq;
    entry.kind = OutboxEntry::Kind::Undo;
    entry.undoes = labelSeq;
    entry.labelId = labelId;
    m_pending[seq] = entry;
    return seq;
}

size_t LabelOutbox::pendingCount() const
{
    std::lock_guard lock(m_mutex);
    return m_pending.size();
}

std::set<int64_t> LabelOutbox::pendingPairIds() const
{
    std::lock_guard lock(m_mutex);
    std::set<int64_t> ids;
    for (const auto& [seq, entry] : m_pending)
        if (entry.kind == OutboxEntry::Kind::Label)
            ids.insert(entry.pair.id);
    return ids;
}

std::optional<OutboxEntry> LabelOutbox::take()
{
    std::lock_guard lock(m_mutex);
    if (m_pending.empty() || m_inFlight != 0)
        return std::nullopt;
    OutboxEntry entry = m_pending.begin()->second;
    // The label's id as this sitting wrote it wins: a label sent again after a crash has a new one.
    if (entry.kind == OutboxEntry::Kind::Undo && m_labelIds.count(entry.undoes))
        entry.labelId = m_labelIds.at(entry.undoes);
    m_inFlight = entry.seq;
    return entry;
}

Status LabelOutbox::done(int64_t seq, int64_t labelId)
{
    std::lock_guard lock(m_mutex);
    if (m_inFlight == seq)
        m_inFlight = 0;
    const auto it = m_pending.find(seq);
    if (it == m_pending.end())
        return Ok{};
    Status s = append(json{{"op", "done"}, {"seq", seq}, {"label", labelId}}.dump());
    // Written to the store either way: a journal that cannot say so only means a later sitting
    // sends it again, and the writer tells an entry the store already holds from a new one.
    if (it->second.kind == OutboxEntry::Kind::Label)
        m_labelIds[seq] = labelId;
    m_pending.erase(it);
    compactIfIdle();
    return s;
}

Status LabelOutbox::refused(int64_t seq, const std::string& reason)
{
    std::lock_guard lock(m_mutex);
    if (m_inFlight == seq)
        m_inFlight = 0;
    Status s = append(json{{"op", "refused"}, {"seq", seq}, {"reason", reason}}.dump());
    m_pending.erase(seq);
    compactIfIdle();
    return s;
}

void LabelOutbox::putBack(int64_t seq)
{
    std::lock_guard lock(m_mutex);
    if (m_inFlight == seq)
        m_inFlight = 0;
}

int64_t LabelOutbox::labelIdOf(int64_t labelSeq) const
{
    std::lock_guard lock(m_mutex);
    const auto it = m_labelIds.find(labelSeq);
    return it == m_labelIds.end() ? 0 : it->second;
}

} // namespace d2dpo
