// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo compare`: a blind comparison of models. With two or more --checkpoint it queues pairs of
// one sample of each of two models, sides random, for the labelers (whose queues never say which
// model drew which sequence); with --results it reports the win rates and Bradley-Terry scores
// over the pairs labelled so far.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/common.h"
#include "cli/progressbar.h"
#include "cli/stopsignals.h"
#include "store/storename.h"
#include "experts/comparisonreport.h"
#include "jobs/comparisonpairs.h"
#include "store/preferencestore.h"

namespace d2dpo::cli {

namespace {

struct CompareOptions {
    RuntimeOptions runtime;
    std::string db = PreferenceStore::defaultPath();
    std::vector<std::string> checkpoints;
    int64_t count = 100;
    SamplingConfig sampling;
    int64_t results = -1; ///< -1: create; 0: the latest comparison's results; N: comparison N's
    bool list = false;
    bool json = false;
    int resamples = 1000;
};

std::string figure(double value)
{
    if (std::isnan(value))
        return "undefined";
    std::ostringstream text;
    text << std::fixed << std::setprecision(3) << value;
    return text.str();
}

std::string interval(const Interval& i)
{
    return std::isnan(i.low) ? "[no interval]" : "[" + figure(i.low) + ", " + figure(i.high) + "]";
}

int createComparison(PreferenceStore& store, const CompareOptions& o)
{
    const StopToken& stop = stopOnSignals(SignalStops::Comparison);
    auto prepared = prepareComparison(o.checkpoints, o.runtime.device, o.count, o.runtime.seed, o.sampling, &stop,
                                      samplingProgress("compare"));
    if (!prepared)
        return exitCodeAfterStop(fail("compare", prepared.error()));
    if (stop.stopRequested())
        return exitCodeAfterStop(fail("compare", "stopped before the draw ended; nothing was stored"));
    auto id = storeComparison(store, prepared.value());
    if (!id)
        return fail("compare", id.error());
    const ComparisonDraw& draw = prepared->draw;
    std::cout << "comparison " << id.value() << ": " << draw.pairs.size() << " pairs of " << prepared->models.size()
              << " models queued for labeling, models hidden and sides random";
    if (draw.sameSequence > 0)
        std::cout << " (" << draw.sameSequence << " draws where both models gave the same sequence were left out)";
    std::cout << "\nlabel them in the desktop application or with `d2dpo label`; then `d2dpo compare --results "
              << id.value() << " --db " << storeNameForMessages(o.db) << "`\n";
    return 0;
}

void printReport(const ComparisonReport& report, const std::map<std::string, std::string>& names)
{
    auto nameOf = [&](const std::string& id) {
        auto found = names.find(id);
        return found == names.end() ? id : found->second + " (" + id + ")";
    };
    std::cout << "comparison " << report.comparisonId << ": " << report.games << " games from the labels of "
              << report.pairs << " pairs (" << report.skips << " skips)\n";
    for (const ModelStanding& s : report.models)
        std::cout << "  " << nameOf(s.modelId) << ": win rate " << figure(s.winRate) << " " << interval(s.winRateInterval)
                  << " over " << s.games << " games; Bradley-Terry score " << figure(s.score) << " "
                  << interval(s.scoreInterval) << "\n";
    for (const HeadToHead& h : report.headToHead)
        std::cout << "  " << nameOf(h.second) << " beats " << nameOf(h.first) << " with P = "
                  << figure(1 - h.firstBeatsSecond) << " " << interval({1 - h.interval.high, 1 - h.interval.low})
                  << " (" << h.secondWins << " wins, " << h.firstWins << " losses, " << h.ties << " ties of which "
                  << h.bothBad << " both bad)\n";
    std::cout << kComparisonConventions << "\n";
}

int runCompare(const CompareOptions& o)
{
    const bool creating = o.results < 0 && !o.list;
    auto store = PreferenceStore::open(o.db, creating ? PreferenceStore::OpenMode::CreateIfMissing
                                                      : PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("compare", store.error());
    if (creating) {
        if (Status s = setUpRuntime(o.runtime); !s)
            return fail("compare", s.error());
        return createComparison(*store.value(), o);
    }
    auto comparisons = store.value()->comparisons();
    if (!comparisons)
        return fail("compare", comparisons.error());
    if (o.list) {
        for (const ComparisonRecord& c : comparisons.value())
            std::cout << c.id << ": " << c.modelIds.size() << " models of " << c.task << ", " << c.pairs << " pairs, "
                      << c.labels << " labels, " << c.createdAt << "\n";
        return 0;
    }
    if (comparisons->empty())
        return fail("compare", "there is no comparison in " + storeNameForMessages(o.db) + " (start one: d2dpo compare -c A -c B)");
    const ComparisonRecord* chosen = o.results == 0 ? &comparisons->back() : nullptr;
    for (const ComparisonRecord& c : comparisons.value())
        if (c.id == o.results)
            chosen = &c;
    if (!chosen)
        return fail("compare", "there is no comparison " + std::to_string(o.results) + " in " + storeNameForMessages(o.db) +
                                   " (`d2dpo compare --list` lists them)");
    auto labels = store.value()->judgedLabels(chosen->id);
    if (!labels)
        return fail("compare", labels.error());
    const ComparisonReport report = measureComparison(*chosen, labels.value(), o.resamples, o.runtime.seed + 1);
    if (o.json) {
        std::cout << toJson(report).dump(2) << "\n";
        return 0;
    }
    std::map<std::string, std::string> names;
    for (const std::string& id : chosen->modelIds)
        if (auto model = store.value()->model(id); model && model->has_value())
            names[id] = model.value()->name;
    printReport(report, names);
    return 0;
}

} // namespace

void registerCompare(CLI::App& app, int& exitCode)
{
    auto o = std::make_shared<CompareOptions>();
    CLI::App* c = app.add_subcommand(
        "compare", "Blind comparison of models: queue pairs of their samples for the labelers, then report win rates "
                   "and Bradley-Terry scores");
    addRuntimeOptions(c, o->runtime);
    c->add_option("--db", o->db, "Preference store: an SQLite file, or a team store's postgresql:// URL")->check(storePath())->capture_default_str();
    c->add_option("--checkpoint,-c", o->checkpoints, "A model to compare (two or more)");
    c->add_option("--count,-n", o->count, "Pairs for each two models")
        ->check(CLI::Range(int64_t(1), int64_t(100'000)))
        ->capture_default_str();
    addSamplingOptions(c, o->sampling);
    c->add_option("--results", o->results, "Report comparison N (0: the latest) over the labels so far")
        ->expected(0, 1)
        ->default_str("0")
        ->check(atLeast(0));
    c->add_flag("--list", o->list, "List the store's comparisons");
    c->add_flag("--json", o->json, "With --results: write the report as JSON");
    c->add_option("--resamples", o->resamples, "Bootstrap resamples of the 95% intervals")
        ->check(CLI::Range(100, 100'000))
        ->capture_default_str();
    c->callback([o, &exitCode] {
        // A wrong command line (exit 2), said before a store is opened or created.
        if (o->results < 0 && !o->list && o->checkpoints.size() < 2)
            throw CLI::ValidationError("--checkpoint", "name two models or more (-c A -c B), or ask for --results or --list");
        exitCode = runCompare(*o);
    });
}

} // namespace d2dpo::cli
