// SPDX-License-Identifier: GPL-3.0-or-later
// Informative pairs first, from the command line (jobs/pairscorer.h):
//   d2dpo pairs --least-sure ...   (storecommands.cpp) keeps the pairs the model is least sure
//                                  about of several times as many candidates, margins recorded;
//   d2dpo prefs score -c MODEL     records MODEL's margin on every pending training pair of its task,
//                                  so that a queue in least-sure order hands those out first;
//   d2dpo prefs queue --order ...  (expertscommands.cpp) chooses the queue's order.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/common.h"
#include "cli/leastsure.h"
#include "cli/progressbar.h"
#include "jobs/pairscorer.h"
#include "labeling/generatedpairs.h"
#include "store/preferencestore.h"

namespace d2dpo::cli {

namespace {

double meanAbs(const std::vector<double>& values)
{
    double sum = 0;
    for (double v : values)
        sum += std::abs(v);
    return values.empty() ? 0 : sum / double(values.size());
}

struct ScoreOptions {
    RuntimeOptions runtime;
    std::string db = PreferenceStore::defaultPath();
    std::string checkpoint;
    std::string reference;
    int draws = 16;
};

int runScore(const ScoreOptions& o)
{
    if (Status s = setUpRuntime(o.runtime); !s)
        return fail("prefs score", s.error());
    auto store = PreferenceStore::open(o.db, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("prefs score", store.error());
    auto scorer = loadScorer(*store.value(), o.checkpoint, o.reference, o.runtime.device);
    if (!scorer)
        return fail("prefs score", scorer.error());
    if (scorer.value()->selfReferenced())
        return fail("prefs score", o.checkpoint + " is pretrained (its own reference): it is sure of nothing and every "
                                                  "margin would be 0; score with a model fine-tuned from it");
    auto pending = store.value()->pendingPairs(10'000'000, scorer.value()->taskKey());
    if (!pending)
        return fail("prefs score", pending.error());
    if (pending->empty()) {
        std::cout << "no pending pairs of task " << scorer.value()->taskKey() << " to score\n";
        return 0;
    }
    std::vector<ShownPair> training;
    for (const ShownPair& p : pending.value())
        if (!p.blind)
            training.push_back(p);
    const auto scoreBar = samplingProgress("score"); // a bar once the scoring lasts over a second
    auto margins = scorer.value()->margins(training, o.runtime.seed, o.draws, [&scoreBar](int64_t done, int64_t total) {
        scoreBar(double(done), total);
    });
    if (!margins)
        return fail("prefs score", margins.error());
    std::vector<PairMargin> records;
    for (size_t i = 0; i < training.size(); ++i)
        records.push_back({training[i].id, margins.value()[i]});
    if (Status s = store.value()->setPairMargins(records, scorer.value()->policy().id); !s)
        return fail("prefs score", s.error());
    std::cout << "scored " << records.size() << " pending pairs with model " << scorer.value()->policy().id
              << ": mean |margin| " << meanAbs(margins.value()) << "\n";
    auto settings = store.value()->queueSettings();
    if (settings && settings->order == QueueOrder::Oldest)
        std::cout << "the queue hands pairs out oldest first: `d2dpo prefs queue --order least-sure` (or surest) "
                     "orders it by these margins\n";
    return 0;
}

} // namespace

Result<std::unique_ptr<PairScorer>> loadScorer(PreferenceStore& store, const std::string& checkpoint,
                                               const std::string& reference, const std::string& device)
{
    return PairScorer::load(
        checkpoint,
        [&](const ModelRecord& policy) -> Result<std::string> {
            return reference.empty() ? referencePathOf(store, policy) : Result<std::string>(reference);
        },
        device);
}

void registerLeastSureCommands(CLI::App& app, int& exitCode)
{
    CLI::App* prefs = app.get_subcommand("prefs");
    auto o = std::make_shared<ScoreOptions>();
    CLI::App* c = prefs->add_subcommand(
        "score", "Record a model's implicit reward margin on every pending pair of its task, so that the queue's "
                 "least-sure (or surest) order hands out first the pairs it is least (or most) sure about");
    addRuntimeOptions(c, o->runtime);
    c->add_option("--db", o->db, "Preference store: an SQLite file, or a team store's postgresql:// URL")->check(storePath())->capture_default_str();
    c->add_option("--checkpoint,-c", o->checkpoint, "The model (the latest fine-tuned one)")->required();
    c->add_option("--reference", o->reference,
                  "The model it was fine-tuned from (default: its parent in the store; a pretrained model is its own)");
    c->add_option("--draws", o->draws, "Draws of each margin")->check(CLI::Range(1, 4096))->capture_default_str();
    c->callback([o, &exitCode] { exitCode = runScore(*o); });
}

} // namespace d2dpo::cli
