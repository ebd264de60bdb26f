// SPDX-License-Identifier: GPL-3.0-or-later
// d2dpo-store-latency-bench: how long a label takes to commit, from the call to its commit, with 1
// and with 8 labelers at once (each in a process of its own, taking pairs under leases), on an
// SQLite file and on a private PostgreSQL server (the test suites' server over its Unix socket,
// with fsync and synchronous commit on). Prints a Markdown table: p50, p99 and labels per second for each.
#include <QCoreApplication>
#include <QTemporaryDir>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include "support/pgserver.h"
#include "support/storerecords.h"
#include "support/teamlabeler.h"

using namespace d2dpo;
using namespace d2dpo::test;

namespace {

constexpr int kEach = 300; // labels per labeler
const std::string kPassword = "bench-secret";

struct Figures {
    double p50 = 0, p99 = 0, perSecond = 0;
    bool ok = true;
};

/// `labelers` processes label kEach pairs each on the store `name` (labeler i's store is
/// `nameOf(i)`); the commit latencies of all of them together.
template <typename NameOf>
Figures measure(int labelers, NameOf nameOf, const QTemporaryDir& dir)
{
    std::vector<pid_t> children;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 1; i <= labelers; ++i) {
        const std::string out = dir.filePath(QStringLiteral("lat%1").arg(i)).toStdString();
        const pid_t child = ::fork();
        if (child == 0) {
            const LabelerRun run = labelAs(nameOf(i), "labeler" + std::to_string(i), kEach);
            std::ofstream file(out);
            for (double ms : run.commitMs)
                file << ms << '\n';
            file.close(); // _exit runs no destructor: flush before it
            if (!run.error.empty())
                std::fprintf(stderr, "labeler%d: %s\n", i, run.error.c_str());
            ::_exit(run.error.empty() && run.labels == kEach ? 0 : 1);
        }
        children.push_back(child);
    }
    Figures figures;
    for (pid_t child : children) {
        int status = 0;
        ::waitpid(child, &status, 0);
        figures.ok = figures.ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<double> all;
    for (int i = 1; i <= labelers; ++i) {
        std::ifstream file(dir.filePath(QStringLiteral("lat%1").arg(i)).toStdString());
        for (double ms; file >> ms;)
            all.push_back(ms);
    }
    figures.p50 = quantile(all, 0.5);
    figures.p99 = quantile(all, 0.99);
    figures.perSecond = double(all.size()) / seconds;
    return figures;
}

bool prepare(const std::string& name, int labelers)
{
    auto store = PreferenceStore::open(name);
    return store && store.value()->addPairs(somePairs(labelers * kEach), "generated");
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    ::setenv("D2DPO_PG_DURABLE", "1", 1); // the server commits as a real one does (fsync on)
    QTemporaryDir dir;
    std::printf("| engine | labelers | labels | commit p50 | commit p99 | labels/s (all labelers) |\n|---|---|---|---|---|---|\n");
    for (int labelers : {1, 8}) {
        const std::string file = dir.filePath(QStringLiteral("bench%1.sqlite").arg(labelers)).toStdString();
        if (!prepare(file, labelers))
            return 1;
        const Figures f = measure(labelers, [&](int) { return file; }, dir);
        std::printf("| SQLite (WAL, synchronous=FULL) | %d | %d | %.2f ms | %.2f ms | %.0f |%s\n", labelers,
                    labelers * kEach, f.p50, f.p99, f.perSecond, f.ok ? "" : " (a labeler failed)");
    }
    PostgresServer* server = PostgresServer::shared();
    if (!server) {
        std::printf("PostgreSQL: %s\n", PostgresServer::unavailableReason().c_str());
        return 0;
    }
    for (int labelers : {1, 8}) {
        const std::string database = server->createDatabase("bench");
        if (!prepare(server->superuserUrl(database), labelers))
            return 1;
        for (int i = 1; i <= labelers; ++i) {
            server->createLoginRole("labeler" + std::to_string(i), kPassword);
            server->exec("postgres", "GRANT d2dpo_labeler TO labeler" + std::to_string(i));
        }
        const Figures f = measure(
            labelers, [&](int i) { return server->url("labeler" + std::to_string(i), kPassword, database); }, dir);
        std::printf("| PostgreSQL 15 (Unix socket, fsync on) | %d | %d | %.2f ms | %.2f ms | %.0f |%s\n", labelers,
                    labelers * kEach, f.p50, f.p99, f.perSecond, f.ok ? "" : " (a labeler failed)");
    }
    return 0;
}
