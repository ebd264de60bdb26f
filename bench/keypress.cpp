// SPDX-License-Identifier: GPL-3.0-or-later
// d2dpo-keypress-bench: what a key press costs the window's thread on a team store, against the
// way it was before the outbox. Before: the label committed on the window's connection, then the
// counters read (what updateStatistics did), so each press waited on the server; now: the choice
// written to the outbox (one fsync), a writer thread with its own connection sending it, as the
// Label view's worker does. Then the same with every server process of the labeler stopped
// (SIGSTOP: a hung server or network), where the old way waits until the server answers. A private
// PostgreSQL server with fsync on (the test suites' server over its Unix socket). Prints Markdown.
#include <QCoreApplication>
#include <QTemporaryDir>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "labeling/labeloutbox.h"
#include "labeling/labelsession.h"
#include "labeling/outboxsender.h"
#include "support/pgbackends.h"
#include "support/pgserver.h"
#include "support/storerecords.h"
#include "support/teamlabeler.h"

using namespace d2dpo;
using namespace d2dpo::test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kPresses = 300;
constexpr int kPaceMs = 50; ///< between presses: a fast labeler (the key tests press 80 ms apart)
const std::string kPassword = "bench-secret";

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

void row(const char* what, std::vector<double> ms)
{
    std::printf("| %s | %zu | %.2f ms | %.2f ms | %.2f ms |\n", what, ms.size(), quantile(ms, 0.5), quantile(ms, 0.99),
                ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()));
}

/// A fresh store with kPresses pairs and its URL as `role`.
std::string freshStore(PostgresServer& server, const std::string& role)
{
    const std::string database = server.createDatabase("keys");
    auto owner = PreferenceStore::open(server.superuserUrl(database));
    if (!owner || !owner.value()->addPairs(somePairs(kPresses), "generated"))
        return {};
    return server.url(role, kPassword, database);
}

/// Presses on the window's thread with an outbox; returns each press's time, and (in `toServer`)
/// each choice's time from its press to its commit on the server. `stop`: the labeler's server
/// processes are stopped for the presses and let go after them.
std::vector<double> withOutbox(PostgresServer& server, const std::string& url, const std::string& journal,
                               bool stop, std::vector<double>& toServer)
{
    auto window = PreferenceStore::open(url, PreferenceStore::OpenMode::MustExist);
    auto writer = PreferenceStore::open(url, PreferenceStore::OpenMode::MustExist);
    auto outbox = LabelOutbox::open(journal);
    if (!window || !writer || !outbox)
        return {};
    LabelSession session(*window.value(), "");
    session.useOutbox(outbox.value().get());
    session.addClaimed(writer.value()->claimPairs(session.labeler(), kPresses).value());
    std::mutex mutex;
    std::map<int64_t, Clock::time_point> pressed;
    std::atomic<bool> done = false;
    std::thread sender([&] { // the Label view's worker, sending as entries come
        while (!done || outbox.value()->pendingCount() > 0) {
            const OutboxReport report = sendOutbox(*outbox.value(), *writer.value(), session.labeler());
            std::lock_guard lock(mutex);
            for (const auto& [seq, id] : report.written)
                toServer.push_back(msSince(pressed[seq]));
            if (report.written.empty())
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    std::unique_ptr<StoppedBackends> stopped;
    if (stop) // let go after the presses, or after a minute at the latest
        stopped = std::make_unique<StoppedBackends>(backendsOf(server, session.labeler()), std::chrono::seconds(60));
    std::vector<double> ms;
    for (int i = 0; i < kPresses && session.current(); ++i) {
        const auto t0 = Clock::now();
        std::unique_lock lock(mutex, std::defer_lock);
        auto labelled = session.label(i % 2 ? Choice::Right : Choice::Left, 500);
        ms.push_back(msSince(t0));
        if (!labelled)
            break;
        lock.lock();
        pressed[labelled->outboxSeq] = t0;
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::milliseconds(kPaceMs));
    }
    if (stopped)
        stopped->resume();
    done = true;
    sender.join();
    return ms;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    ::setenv("D2DPO_PG_DURABLE", "1", 1); // the server commits as a real one does (fsync on)
    PostgresServer* server = PostgresServer::shared();
    if (!server) {
        std::printf("PostgreSQL: %s\n", PostgresServer::unavailableReason().c_str());
        return 1;
    }
    QTemporaryDir dir;
    const std::string role = "presser";
    const std::string first = freshStore(*server, role); // makes the group roles too
    server->createLoginRole(role, kPassword);
    server->exec("postgres", "GRANT d2dpo_labeler TO " + role);
    // Before: each press commits on the window's connection, then the counters are read there.
    std::vector<double> before;
    {
        auto window = PreferenceStore::open(first, PreferenceStore::OpenMode::MustExist);
        LabelSession session(*window.value(), "");
        (void)session.advance();
        for (int i = 0; i < kPresses && session.current(); ++i) {
            const auto t0 = Clock::now();
            if (!session.label(i % 2 ? Choice::Right : Choice::Left, 500))
                break;
            (void)window.value()->counts(session.labeler());
            (void)window.value()->labelledPairs(session.labeler());
            before.push_back(msSince(t0));
            std::this_thread::sleep_for(std::chrono::milliseconds(kPaceMs));
        }
    }
    std::vector<double> sentNow, sentStopped;
    const auto now = withOutbox(*server, freshStore(*server, role), dir.filePath("a.jsonl").toStdString(), false, sentNow);
    const auto stopped =
        withOutbox(*server, freshStore(*server, role), dir.filePath("b.jsonl").toStdString(), true, sentStopped);
    std::printf("%d presses %d ms apart; the outbox in %s\n\n", kPresses, kPaceMs, qPrintable(dir.path()));
    std::printf("| the window's thread per key press (PostgreSQL 15, Unix socket, fsync on) | presses | p50 | p99 | max |\n"
                "|---|---|---|---|---|\n");
    row("before: label committed, then the counters read, on the window's connection", before);
    row("now: the choice written to the outbox (fsync); a worker sends it", now);
    row("now, every server process of the labeler stopped (the old way: waits until it answers)", stopped);
    row("now: from the key press to its commit on the server", sentNow);
    std::printf("\nwritten after the stopped server went on: %zu of %zu\n", sentStopped.size(), stopped.size());
    return 0;
}
