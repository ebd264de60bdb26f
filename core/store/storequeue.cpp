// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore: how pairs are handed out. Each pair is labelled by up to `overlap` different
// labelers; a named labeler's queue holds the pairs it has not labelled, with gold pairs (a known
// answer, training nothing) mixed in at the gold rate so that they look like any other pair.
#include "store/preferencestore.h"

#include <cmath>
#include <climits>
#include <functional>
#include <map>
#include <random>

#include "store/storeimpl.h"

namespace d2dpo {

namespace {

constexpr int kMaxOverlap = QueueSettings::kMaxOverlap;
constexpr double kMaxGoldRate = QueueSettings::kMaxGoldRate;


/// The pending pairs' ORDER BY for a queue order. By margin: a blind comparison's pairs (never
/// scored) first, as they come, so that scored pairs never hold a comparison back; then the scored
/// training pairs; those without a margin last.
const char* orderBy(QueueOrder order)
{
    switch (order) {
    case QueueOrder::LeastSure:
        return "p.purpose <> 'compare', p.margin IS NULL, abs(p.margin), p.id";
    case QueueOrder::Surest:
        return "p.purpose <> 'compare', p.margin IS NULL, abs(p.margin) DESC, p.id";
    case QueueOrder::Oldest:
        break;
    }
    return "p.id";
}

} // namespace

const char* toString(QueueOrder order)
{
    switch (order) {
    case QueueOrder::LeastSure:
        return "least-sure";
    case QueueOrder::Surest:
        return "surest";
    case QueueOrder::Oldest:
        break;
    }
    return "oldest";
}

std::optional<QueueOrder> queueOrderFromString(const std::string& text)
{
    if (text == "oldest")
        return QueueOrder::Oldest;
    if (text == "least-sure")
        return QueueOrder::LeastSure;
    if (text == "surest")
        return QueueOrder::Surest;
    return std::nullopt;
}

Result<QueueSettings> LabelQueue::queueSettings()
{
    return m_impl->guard<QueueSettings>("reading the queue settings", [&] {
        QueueSettings settings;
        sql::Statement q(m_impl->db,
                            "SELECT key, value FROM settings WHERE key IN ('overlap', 'gold_rate', 'order', "
                                     "'lease_seconds')");
        while (q.executeStep()) {
            const std::string key = q.getColumn(0).getString();
            if (key == "overlap")
                settings.overlap = q.getColumn(1).getInt();
            else if (key == "gold_rate")
                settings.goldRate = q.getColumn(1).getDouble();
            else if (key == "lease_seconds")
                settings.leaseSeconds = q.getColumn(1).getInt();
            else
                settings.order = queueOrderFromString(q.getColumn(1).getString()).value_or(QueueOrder::Oldest);
        }
        return settings;
    });
}

Status LabelQueue::setQueueSettings(const QueueSettings& settings)
{
    if (settings.overlap < 1 || settings.overlap > kMaxOverlap)
        return makeError("the overlap (labelers per pair) must be in 1.." + std::to_string(kMaxOverlap));
    if (!(settings.goldRate >= 0 && settings.goldRate <= kMaxGoldRate))
        return makeError("the gold rate must be in 0..0.5 (a share of each labeler's queue)");
    if (settings.leaseSeconds < QueueSettings::kMinLeaseSeconds || settings.leaseSeconds > QueueSettings::kMaxLeaseSeconds)
        return makeError("the lease must be 1 second to 24 hours (" + std::to_string(QueueSettings::kMaxLeaseSeconds) +
                         " s)");
    auto written = m_impl->guard<bool>("writing the queue settings", [&] {
        sql::WriteTransaction transaction(m_impl->db);
        sql::Statement q(m_impl->db, "INSERT INTO settings (key, value) VALUES (?, ?) "
                                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
        q.bind(1, "overlap");
        q.bind(2, std::to_string(settings.overlap));
        q.exec();
        q.reset();
        q.bind(1, "gold_rate");
        q.bind(2, std::to_string(settings.goldRate));
        q.exec();
        q.reset();
        q.bind(1, "order");
        q.bind(2, toString(settings.order));
        q.exec();
        q.reset();
        q.bind(1, "lease_seconds");
        q.bind(2, std::to_string(settings.leaseSeconds));
        q.exec();
        transaction.commit();
        return true;
    });
    if (!written)
        return makeError(written.errorCode(), written.error());
    return Ok{};
}

std::vector<ShownPair> readPending(sql::Database& db, const QueueSettings& settings, int64_t limit,
                                  const std::string& task, const std::string& labeler, bool heedLeases)
{
    auto read = [&](bool gold) {
        // With leases heeded, a pair counts the unexpired leases others hold as labels to come, and
        // one this labeler holds is left to claimPairs (it hands those back first).
        sql::Statement q(db, pairSelectSql(true) + R"sql(
            WHERE (?1 = 1) = (p.purpose = 'gold')
              AND (?1 = 1 OR )sql" + kActiveLabelsSql + R"sql(
                             + (CASE WHEN ?5 = 1 THEN (SELECT count(*) FROM active_leases a
                                                       WHERE a.pair_id = p.id AND a.labeler <> ?2) ELSE 0 END) < )sql" +
                                 kOverlapSql + R"sql()
              AND (?2 IS NULL OR NOT EXISTS (SELECT 1 FROM labels l
                                             WHERE l.pair_id = p.id AND l.undone_at IS NULL AND l.labeler = ?2))
              AND (?5 = 0 OR NOT EXISTS (SELECT 1 FROM active_leases a WHERE a.pair_id = p.id AND a.labeler = ?2))
              AND (?3 = '' OR ls.task = ?3)
            ORDER BY )sql" + std::string(orderBy(settings.order)) + " LIMIT ?4");
        q.bind(1, gold ? 1 : 0);
        bindOptionalText(q, 2, labeler);
        q.bind(3, task);
        q.bind(4, limit);
        q.bind(5, heedLeases ? 1 : 0);
        std::vector<ShownPair> out;
        while (q.executeStep())
            out.push_back(readPair(q));
        return out;
    };
    std::vector<ShownPair> ordinary = read(false);
    if (labeler.empty() || settings.goldRate <= 0)
        return ordinary;
    const std::vector<ShownPair> gold = read(true);
    // Each position is gold with probability goldRate: a labeler cannot tell gold pairs by their
    // place. Seeded by the labeler and the queue's head, so a queue read again is the same queue.
    std::mt19937_64 random(std::hash<std::string>{}(labeler) ^ uint64_t(ordinary.empty() ? 0 : ordinary[0].id));
    std::bernoulli_distribution isGold(settings.goldRate);
    std::vector<ShownPair> mixed;
    size_t nextOrdinary = 0, nextGold = 0;
    while (nextOrdinary < ordinary.size() && int64_t(mixed.size()) < limit) {
        if (nextGold < gold.size() && nextGold < nextOrdinary + 1 && isGold(random))
            mixed.push_back(gold[nextGold++]);
        else
            mixed.push_back(ordinary[nextOrdinary++]);
    }
    return mixed;
}

std::vector<ShownPair> serverQueuePairs(sql::Database& db, const std::string& call,
                                        const std::function<void(sql::Statement&)>& bind)
{
    std::vector<int64_t> ids;
    {
        sql::Statement q(db, call);
        bind(q);
        while (q.executeStep())
            ids.push_back(q.getColumn(0).getInt64());
    }
    if (ids.empty())
        return {};
    std::string array = "{"; // a bigint[] literal, {1,2,3}
    for (int64_t id : ids) {
        if (array.size() > 1)
            array += ',';
        array += std::to_string(id);
    }
    array += '}';
    sql::Statement read(db, pairSelectSql(false) + " WHERE p.id = ANY(CAST(? AS BIGINT[]))");
    read.bind(1, array);
    std::map<int64_t, ShownPair> byId;
    while (read.executeStep()) {
        ShownPair pair = readPair(read);
        byId.emplace(pair.id, std::move(pair));
    }
    std::vector<ShownPair> out;
    for (int64_t id : ids)
        if (auto found = byId.find(id); found != byId.end())
            out.push_back(found->second);
    return out;
}

Result<std::vector<ShownPair>> LabelQueue::pendingPairs(int64_t limit, const std::string& task, const std::string& labeler)
{
    if (m_impl->labelerOnly()) {
        // A labeler's queue is the server's to build: it alone reads which pairs are gold.
        if (const std::string problem = labeler.empty() ? "" : m_impl->actingForOthersProblem(labeler);
            !problem.empty())
            return makeError(ErrorCode::Denied, problem);
        return m_impl->guard<std::vector<ShownPair>>("reading pending pairs", [&] {
            return serverQueuePairs(m_impl->db, "SELECT d2dpo_pending_pairs(CAST(? AS INTEGER), ?)",
                                    [&](sql::Statement& q) {
                                        q.bind(1, std::min<int64_t>(limit, INT32_MAX));
                                        q.bind(2, task);
                                    });
        });
    }
    auto settings = queueSettings();
    if (!settings)
        return makeError(settings.errorCode(), settings.error());
    return m_impl->guard<std::vector<ShownPair>>("reading pending pairs", [&] {
        return readPending(m_impl->db, settings.value(), limit, task, labeler, false);
    });
}

Status LabelQueue::setPairMargins(const std::vector<PairMargin>& margins, const std::string& modelId)
{
    auto written = m_impl->guard<Status>("recording pair margins", [&]() -> Status {
        WriteTransaction transaction(m_impl->db);
        sql::Statement q(m_impl->db, "UPDATE pairs SET margin = ?, margin_model = ? WHERE id = ?");
        for (const PairMargin& m : margins) {
            if (!std::isfinite(m.margin))
                return makeError("pair " + std::to_string(m.pairId) + " has no finite margin; nothing was recorded");
            q.bind(1, m.margin);
            bindOptionalText(q, 2, modelId);
            q.bind(3, m.pairId);
            if (q.exec() != 1)
                return makeError(ErrorCode::NotFound,
                                 "pair " + std::to_string(m.pairId) + " does not exist; nothing was recorded");
            q.reset();
        }
        transaction.commit();
        return Ok{};
    });
    if (!written)
        return makeError(written.errorCode(), written.error());
    return written.value();
}

Result<std::optional<std::pair<double, std::string>>> LabelQueue::pairMargin(int64_t pairId)
{
    return m_impl->guard<std::optional<std::pair<double, std::string>>>("reading a pair's margin", [&] {
        sql::Statement q(m_impl->db, "SELECT margin, margin_model FROM pairs WHERE id = ? AND margin IS NOT NULL");
        q.bind(1, pairId);
        std::optional<std::pair<double, std::string>> out;
        if (q.executeStep())
            out = std::pair{q.getColumn(0).getDouble(), nullableText(q.getColumn(1))};
        return out;
    });
}

Result<PendingMargins> LabelQueue::pendingMargins()
{
    if (const std::string problem = m_impl->maintainersOnlyProblem("counting the pairs' margins"); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    return m_impl->guard<PendingMargins>("counting the pending pairs' margins", [&] {
        // readPending's rule with no labeler, task or lease: a pair that is not gold and has fewer
        // active labels than the overlap asks for.
        sql::Statement q(m_impl->db, std::string("SELECT count(*), count(p.margin) FROM pairs p "
                                                 "WHERE p.purpose <> 'gold' AND ") +
                                         kActiveLabelsSql + " < " + kOverlapSql);
        q.executeStep();
        return PendingMargins{q.getColumn(0).getInt64(), q.getColumn(1).getInt64()};
    });
}

Result<std::vector<int64_t>> LabelQueue::addGoldPairs(const std::vector<GoldPair>& pairs, const std::string& source)
{
    std::vector<ShownPair> shown;
    PairExtras extras;
    extras.purpose = "gold";
    for (const GoldPair& g : pairs) {
        if (g.answer != Choice::Left && g.answer != Choice::Right)
            return makeError("a gold pair's answer is left or right");
        shown.push_back(g.pair);
        extras.goldAnswers.push_back(toString(g.answer));
    }
    if (const std::string problem = pairsProblem(shown); !problem.empty())
        return makeError(problem);
    return m_impl->guard<std::vector<int64_t>>("storing gold pairs", [&] {
        sql::WriteTransaction transaction(m_impl->db);
        std::vector<int64_t> ids = insertPairs(m_impl->db, shown, source, extras);
        transaction.commit();
        return ids;
    });
}

Status LabelQueue::markGold(int64_t pairId, Choice answer)
{
    if (answer != Choice::Left && answer != Choice::Right)
        return makeError("a gold pair's answer is left or right");
    auto marked = m_impl->guard<Status>("marking a gold pair", [&]() -> Status {
        WriteTransaction transaction(m_impl->db);
        sql::Statement q(m_impl->db, R"sql(
            SELECT p.purpose, EXISTS (SELECT 1 FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL)
            FROM pairs p WHERE p.id = ?)sql");
        q.bind(1, pairId);
        const std::string name = "pair " + std::to_string(pairId);
        if (!q.executeStep())
            return makeError(ErrorCode::NotFound, name + " does not exist");
        if (q.getColumn(0).getString() != "train")
            return makeError(name + " is a " + q.getColumn(0).getString() + " pair, not a training pair");
        if (q.getColumn(1).getInt() != 0)
            return makeError(name + " has labels already: a gold pair must look new to every labeler");
        q.reset();
        sql::Statement mark(m_impl->db, "UPDATE pairs SET purpose = 'gold', gold_choice = ? WHERE id = ?");
        mark.bind(1, toString(answer));
        mark.bind(2, pairId);
        mark.exec();
        // Its leases were for a training pair's labels: a gold pair is handed out afresh, at the
        // gold rate (and the maintainer who marked it from the Label view no longer holds it).
        sql::Statement unlease(m_impl->db, "DELETE FROM leases WHERE pair_id = ?");
        unlease.bind(1, pairId);
        unlease.exec();
        transaction.commit();
        return Ok{};
    });
    if (!marked)
        return makeError(marked.errorCode(), marked.error());
    return marked.value();
}

} // namespace d2dpo
