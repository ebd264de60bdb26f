// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo store init|copy|progress`: a store as a whole. `init` makes a store (a team's on a
// PostgreSQL server: its schema, roles and row security), `copy` moves every record between
// engines in one transaction, `progress` shows who has labelled how much and holds which pairs.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "base/untrustedtext.h"
#include "cli/common.h"
#include "jobs/runending.h"
#include "jobs/runowner.h"
#include "store/preferencestore.h"

namespace d2dpo::cli {

namespace {

int runInit(const std::string& name)
{
    auto store = PreferenceStore::open(name);
    if (!store)
        return fail("store init", store.error());
    PreferenceStore& s = *store.value();
    std::cout << "Store ready: " << s.displayName() << " (schema " << s.schemaVersion() << ")\n";
    if (s.isTeamStore()) {
        std::cout
            << "Connected as " << excerpt(s.teamIdentity(), 200) << (s.canMaintain() ? ", a maintainer" : ", a labeler")
            << ".\nGive each labeler a login role of their own and then:  GRANT d2dpo_labeler TO <role>;\n"
               "and each maintainer (generates pairs, trains, manages models):  GRANT d2dpo_maintainer TO <role>;\n";
    }
    return 0;
}

struct CopyOptions {
    std::string from;
    std::string to;
};

int runCopy(const CopyOptions& o)
{
    if (o.from == o.to)
        return fail("store copy", "--from and --to name the same store");
    auto from = PreferenceStore::open(o.from, PreferenceStore::OpenMode::MustExist);
    if (!from)
        return fail("store copy", from.error());
    std::error_code ec;
    const bool newFile = !o.to.empty() && o.to.find("://") == std::string::npos && !std::filesystem::exists(o.to, ec);
    auto to = PreferenceStore::open(o.to);
    if (!to)
        return fail("store copy", to.error());
    auto copied = PreferenceStore::copyAll(*from.value(), *to.value());
    if (!copied) {
        to.value().reset();
        if (newFile) // all or nothing: the empty file this command made goes too
            for (const char* suffix : {"", "-wal", "-shm"})
                std::filesystem::remove(o.to + suffix, ec);
        return fail("store copy", copied.error());
    }
    std::cout << "Copied " << from.value()->displayName() << " to " << to.value()->displayName() << ":\n";
    for (const auto& [table, count] : copied.value())
        std::printf("  %-12s %lld\n", table.c_str(), static_cast<long long>(count));
    return 0;
}

int runProgress(const std::string& name)
{
    auto store = PreferenceStore::open(name, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("store progress", store.error());
    PreferenceStore& s = *store.value();
    const std::string me = s.teamIdentity();
    auto counts = s.counts(me);
    if (!counts)
        return fail("store progress", counts.error());
    auto team = s.teamProgress();
    if (!team)
        return fail("store progress", team.error());
    std::cout << s.displayName() << ": " << counts->labelled << " labels, " << counts->pending
              << " pairs still to label" << (me.empty() ? "" : " for " + excerpt(me, 200)) << "\n";
    std::printf("  %-24s %8s %8s\n", "labeler", "labels", "holding");
    for (const LabelerProgress& p : team.value())
        // Names are data: a role named with a line break prints as one escaped line, not two.
        std::printf("  %-24s %8lld %8lld\n", excerpt(p.labeler, 200).c_str(), static_cast<long long>(p.labels),
                    static_cast<long long>(p.leased));
    return 0;
}

struct RecordRunOptions {
    std::string db;
    int64_t run = 0;
    std::string status = "completed";
    std::string checkpoint;
};

int runRecordRun(const RecordRunOptions& o)
{
    auto store = PreferenceStore::open(o.db, PreferenceStore::OpenMode::MustExist); // marks dead runs interrupted
    if (!store)
        return fail("store record-run", store.error());
    auto runs = store.value()->runs();
    if (!runs)
        return fail("store record-run", runs.error());
    const auto run = std::find_if(runs->begin(), runs->end(), [&](const RunRecord& r) { return r.id == o.run; });
    if (run == runs->end())
        return fail("store record-run",
                    "there is no run " + std::to_string(o.run) + " in " + store.value()->displayName());
    if (run->status != RunStatus::Interrupted)
        return fail("store record-run", "run " + std::to_string(o.run) + " is " + toString(run->status) +
                                            (runsInAnotherProcess(*run, "") ? " (its process lives)" : "") +
                                            "; only an interrupted run's end is recorded; nothing was changed");
    const RunStatus status = runStatusFromString(o.status).value_or(RunStatus::Completed);
    if (Status s = recordRunEnd(*store.value(), o.run, status, "", o.checkpoint); !s)
        return fail("store record-run", s.error());
    std::cout << "run " << o.run << " recorded as " << toString(status)
              << (o.checkpoint.empty() ? std::string() : ", its result the checkpoint " + o.checkpoint) << "\n";
    return 0;
}

} // namespace

void registerTeamStoreCommands(CLI::App& app, int& exitCode)
{
    CLI::App* store = app.add_subcommand("store", "A store as a whole: make one, copy one, see a team's progress");
    store->require_subcommand(1);
    auto initName = std::make_shared<std::string>();
    CLI::App* init = store->add_subcommand(
        "init", "Make a store: an SQLite file, or a team store in an empty PostgreSQL database "
                "(postgresql://USER@HOST/DB; its schema, the d2dpo_labeler and d2dpo_maintainer roles, row security)");
    init->add_option("store", *initName, "The file or postgresql:// URL")->required()->check(storePath());
    init->callback([initName, &exitCode] { exitCode = runInit(*initName); });
    auto c = std::make_shared<CopyOptions>();
    CLI::App* copy = store->add_subcommand(
        "copy", "Copy every record into a new store (SQLite to PostgreSQL or back): all or nothing, ids kept");
    copy->add_option("--from", c->from, "The store to copy")->required()->check(storePath());
    copy->add_option("--to", c->to, "A new or empty store")->required()->check(storePath());
    copy->callback([c, &exitCode] { exitCode = runCopy(*c); });
    auto progressName = std::make_shared<std::string>(PreferenceStore::defaultPath());
    CLI::App* progress = store->add_subcommand("progress", "Labels and held pairs by labeler");
    progress->add_option("--db", *progressName, "Preference store: an SQLite file or a postgresql:// URL")
        ->check(storePath())
        ->capture_default_str();
    progress->callback([progressName, &exitCode] { exitCode = runProgress(*progressName); });
    auto r = std::make_shared<RecordRunOptions>();
    CLI::App* record = store->add_subcommand(
        "record-run", "Record the end of a run that could not reach its store when it ended (it said this command)");
    record->add_option("--db", r->db, "The run's store")->required()->check(storePath());
    record->add_option("--run", r->run, "The run")->required()->check(atLeast(1));
    record->add_option("--status", r->status, "How it ended")
        ->check(CLI::IsMember({"completed", "stopped", "failed"}))
        ->capture_default_str();
    record->add_option("--checkpoint", r->checkpoint, "Its last checkpoint: recorded as its result");
    record->callback([r, &exitCode] { exitCode = runRecordRun(*r); });
}

} // namespace d2dpo::cli
