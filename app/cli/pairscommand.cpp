// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo pairs`: pairs of sequences drawn from a model for experts to label, added to a store
// file or a team's server; drawn as they come, or chosen by the model's margin (--least-sure,
// --surest). In several processes (--nproc N, or torchrun's variables on one machine or several)
// each draws its share of --count from a seed of its own, and rank 0 alone stores them all (the
// pairs in one transaction), merged so that no pair is stored twice (jobs/pairsgroup.h,
// labeling/rankpairs.h).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/common.h"
#include "facades/runtimeinfo.h"
#include "cli/leastsure.h"
#include "cli/progressbar.h"
#include "cli/ranklauncher.h"
#include "jobs/pairgenerator.h"
#include "jobs/pairscorer.h"
#include "jobs/pairsgroup.h"
#include "labeling/generatedpairs.h"
#include "store/preferencestore.h"

namespace d2dpo::cli {

namespace {

struct PairsOptions {
    RuntimeOptions runtime;
    std::string db = PreferenceStore::defaultPath();
    std::string checkpoint;
    int64_t count = 50;
    SamplingConfig sampling;
    bool leastSure = false;
    bool surest = false;
    int64_t candidatesPerPair = 4;
    bool candidatesGiven = false;
    std::string reference;
    int nproc = 1;          ///< > 1: draw in this many local processes (ranklauncher.h)
    int groupTimeout = 300; ///< seconds rank 0 waits for the slowest rank once its own share is drawn

    bool byMargin() const { return leastSure || surest; }
};

/// Bars once a phase lasts over a second: a large model's pairs take minutes to draw and to score.
/// A model that repeats itself is drawn from again, with a larger total: a bar of its own.
struct DrawBars {
    std::function<void(double, int64_t)> drawBar;
    int64_t drawTotal = 0;
    std::function<void(double, int64_t)> scoreBar; // made at the first pass scored: its clock starts there

    void drawn(int64_t done, int64_t total)
    {
        if (total != drawTotal) {
            drawBar = samplingProgress(drawTotal == 0 ? "draw" : "draw again");
            drawTotal = total;
        }
        drawBar(double(done), total);
    }
    void scored(int64_t done, int64_t total)
    {
        if (!scoreBar)
            scoreBar = samplingProgress("score");
        scoreBar(double(done), total);
    }
};

/// `count` pairs drawn from `seed`, as they come or chosen by margin (the scorer's reference is
/// found in `store`). Bars only where `bars` is given (rank 0, or one process).
Result<RankDraw> drawPairs(const PairsOptions& o, PairGenerator& generator, PreferenceStore* store, int64_t count,
                           uint64_t seed, DrawBars* bars)
{
    const auto drawn = [bars](int64_t done, int64_t total) {
        if (bars)
            bars->drawn(done, total);
    };
    RankDraw draw;
    if (o.byMargin()) {
        if (!store)
            return makeError("choosing pairs by margin needs the store that knows the model's reference");
        auto scorer = loadScorer(*store, o.checkpoint, o.reference, o.runtime.device);
        if (!scorer)
            return makeError(scorer.error());
        const auto scored = [bars](int64_t done, int64_t total) {
            if (bars)
                bars->scored(done, total);
        };
        auto chosen = generateByMargin(generator, *scorer.value(), o.surest ? PairPick::Surest : PairPick::LeastSure,
                                       count, o.candidatesPerPair, seed, o.sampling, 16, drawn, scored);
        if (!chosen)
            return makeError(chosen.error());
        draw.pairs = std::move(chosen->pairs);
        draw.margins = std::move(chosen->margins);
        draw.scoredBy = chosen->scoredBy;
        draw.candidates = chosen->candidates;
        draw.candidatesMeanAbs = chosen->candidatesMeanAbs;
        return draw;
    }
    auto batch = generator.generate(count, seed, o.sampling, drawn);
    if (!batch)
        return makeError(batch.error());
    draw.pairs = std::move(batch->pairs);
    draw.candidates = batch->candidates;
    return draw;
}

/// What was added, as one line: the pick and its margins, or the pairs as drawn.
void sayAdded(const PairsOptions& o, const ModelRecord& model, const std::string& storeName, size_t added,
              int64_t candidates, const std::vector<double>& margins, double candidatesMeanAbs, double keptMeanAbs,
              const std::string& drawnBy, bool sayShortfall = true)
{
    if (o.byMargin() && margins.empty()) {
        std::cout << "added " << added << " pairs as drawn from model " << model.id << " to " << storeName
                  << ": it is pretrained (its own reference), sure of nothing, so no margins were recorded\n";
    } else if (o.byMargin()) {
        std::cout << "added the " << added << (o.surest ? " surest" : " least sure") << " of " << candidates
                  << " candidate pairs from model " << model.id << drawnBy << " to " << storeName
                  << ": mean |margin| " << keptMeanAbs << " against " << candidatesMeanAbs << " over all candidates\n";
    } else {
        std::cout << "added " << added << " pairs from model " << model.id << " (" << candidates << " sequences drawn"
                  << drawnBy << ") to " << storeName << "\n";
    }
    if (sayShortfall && int64_t(added) < o.count && !o.byMargin())
        std::cout << "the model repeats itself: only " << added << " pairs of distinct sequences\n";
}

int runOneProcess(const PairsOptions& o)
{
    auto store = PreferenceStore::open(o.db);
    if (!store)
        return fail("pairs", store.error());
    auto generator = PairGenerator::load(o.checkpoint, o.runtime.device);
    if (!generator)
        return fail("pairs", generator.error());
    DrawBars bars;
    auto draw = drawPairs(o, *generator.value(), store.value().get(), o.count, o.runtime.seed, &bars);
    if (!draw)
        return fail("pairs", draw.error());
    // A model the store knows (a fine-tuned one) keeps its name, path and metrics.
    auto stored = storeGeneratedPairs(*store.value(), generator.value()->model(), draw->pairs,
                                      {draw->margins, draw->scoredBy});
    if (!stored)
        return fail("pairs", stored.error());
    double keptMeanAbs = 0;
    for (double margin : draw->margins)
        keptMeanAbs += std::abs(margin) / double(draw->margins.size());
    sayAdded(o, generator.value()->model(), store.value()->displayName(), stored->pairs.size(), draw->candidates,
             draw->margins, draw->candidatesMeanAbs, keptMeanAbs, "");
    return 0;
}

/// The device a rank draws on: on CUDA, the GPU its LOCAL_RANK names (as the training job's ranks).
std::string rankDevice(const std::string& device, const LaunchEnvironment& launch)
{
    const bool cuda = device.rfind("cuda", 0) == 0 || (device == "auto" && cudaAvailable());
    return cuda && device.find(':') == std::string::npos ? "cuda:" + std::to_string(launch.localRank) : device;
}

/// One rank of a parallel draw. Rank 0 opens the store and loads the model, then says go (or why
/// not); every rank then draws its share; rank 0 alone gathers the others' pairs and stores them.
int runRank(const PairsOptions& o, const LaunchEnvironment& launch)
{
    auto group = PairsGroup::join(launch, std::chrono::seconds(o.groupTimeout));
    if (!group)
        return fail("pairs", group.error());
    PairsGroup& g = *group.value();
    const std::string device = rankDevice(o.runtime.device, launch);
    std::unique_ptr<PreferenceStore> store;
    std::string failure;
    if (g.isMain()) { // a store it cannot reach fails the run before anyone draws
        auto opened = PreferenceStore::open(o.db);
        if (opened)
            store = std::move(opened.value());
        else
            failure = opened.error();
    }
    std::unique_ptr<PairGenerator> generator;
    if (failure.empty()) {
        if (auto loaded = PairGenerator::load(o.checkpoint, device); loaded)
            generator = std::move(loaded.value());
        else
            failure = loaded.error();
    }
    if (g.isMain()) {
        if (Status told = g.startFromMain(failure); !failure.empty() || !told)
            return fail("pairs", (failure.empty() ? told.error() : failure) + "; nothing was stored");
    } else if (Status go = g.startFromMain(""); !go) {
        return fail("pairs", "rank " + std::to_string(g.rank()) + ": " + go.error());
    }
    // The others read the store only for a margin's reference model, once rank 0 has made sure it is there.
    if (!g.isMain() && failure.empty() && o.byMargin()) {
        if (auto opened = PreferenceStore::open(o.db, PreferenceStore::OpenMode::MustExist); opened)
            store = std::move(opened.value());
        else
            failure = opened.error();
    }
    RankDraw mine;
    mine.error = failure;
    if (const int64_t share = g.shareOf(o.count); failure.empty() && share > 0) {
        DrawBars bars;
        auto draw = drawPairs(o, *generator, store.get(), share, g.seedOf(o.runtime.seed), g.isMain() ? &bars : nullptr);
        if (draw)
            mine = std::move(draw.value());
        else
            mine.error = draw.error();
    }
    if (g.isMain() && !mine.error.empty())
        return fail("pairs", mine.error + "; nothing was stored");
    auto draws = g.gather(mine);
    if (!draws)
        return fail("pairs", draws.error());
    if (!g.isMain()) // its pairs are rank 0's to store; its own failure is said here and by rank 0
        return mine.error.empty() ? 0 : fail("pairs", "rank " + std::to_string(g.rank()) + ": " + mine.error);
    const MergedDraws merged = mergeRankDraws(draws.value());
    auto stored = storeGeneratedPairs(*store, generator->model(), merged.pairs, {merged.margins, merged.scoredBy});
    if (!stored)
        return fail("pairs", stored.error());
    sayAdded(o, generator->model(), store->displayName(), stored->pairs.size(), merged.candidates, merged.margins,
             merged.candidatesMeanAbs, merged.keptMeanAbs, " by " + std::to_string(g.size()) + " processes",
             merged.failures.empty() && merged.repeated == 0);
    if (merged.repeated > 0)
        std::cout << merged.repeated << (merged.repeated == 1 ? " pair" : " pairs")
                  << " drawn twice (by two ranks, or twice by one) " << (merged.repeated == 1 ? "was" : "were")
                  << " stored once\n";
    for (const std::string& rankFailure : merged.failures)
        fail("pairs", rankFailure);
    if (!merged.failures.empty())
        return fail("pairs", "the pairs the other ranks drew are stored; run again for the rest");
    return 0;
}

int runPairs(const PairsOptions& o)
{
    if (o.count < 1 || o.count > 1'000'000)
        return fail("pairs", "--count must be in 1..1000000");
    if (!o.byMargin() && (o.candidatesGiven || !o.reference.empty()))
        return fail("pairs", "--candidates and --reference choose pairs by margin: add --least-sure or --surest");
    auto launch = launchOf(o.nproc);
    if (!launch)
        return fail("pairs", launch.error());
    if (o.nproc > 1) {
        LocalRanks ranks;
        ranks.groupTimeoutSeconds = o.groupTimeout;
        ranks.command = "pairs";
        ranks.mainOutlivesFailures = true;
        return runAsLocalRanks(o.nproc, ranks);
    }
    if (Status s = setCpuThreads(o.runtime.threads); !s)
        return fail("pairs", s.error());
    if (launch.value() && launch.value()->worldSize > 1)
        return runRank(o, *launch.value());
    return runOneProcess(o);
}

} // namespace

void registerPairsCommand(CLI::App& app, int& exitCode)
{
    auto o = std::make_shared<PairsOptions>();
    CLI::App* c = app.add_subcommand("pairs", "Generate pairs of sequences from a model for experts to label");
    addRuntimeOptions(c, o->runtime);
    addDbOption(c, o->db);
    c->add_option("--checkpoint,-c", o->checkpoint, "Model to draw sequences from")->required();
    c->add_option("--count,-n", o->count, "Pairs to add")
        ->check(CLI::Range(int64_t(1), int64_t(1'000'000)))
        ->capture_default_str();
    addSamplingOptions(c, o->sampling);
    CLI::Option* leastSure = c->add_flag(
        "--least-sure", o->leastSure,
        "Keep the pairs the model is least sure about (implicit reward margin nearest 0, against the model it "
        "was fine-tuned from) of --candidates times as many drawn");
    c->add_flag("--surest", o->surest,
                "Keep the pairs the model is surest about (margin farthest from 0): those a labeler most often "
                "decides rather than ties")
        ->excludes(leastSure);
    c->add_option("--candidates", o->candidatesPerPair,
                  "With --least-sure or --surest: candidate pairs drawn per "
                  "pair kept")
        ->check(CLI::Range(int64_t(1), int64_t(1000)))
        ->capture_default_str();
    c->add_option("--reference", o->reference,
                  "With --least-sure or --surest: the model it was fine-tuned from "
                  "(default: its parent in the store)");
    addLaunchOptions(c, o->nproc, o->groupTimeout,
                     "Draw in this many processes on this machine, each its share of --count (as torchrun "
                     "--nproc-per-node starts them; or start each rank yourself with RANK, WORLD_SIZE, "
                     "MASTER_ADDR and MASTER_PORT set, on one machine or several): rank 0 stores them all, no "
                     "pair twice",
                     "With several processes: seconds rank 0 waits for the slowest rank once its own share is "
                     "drawn (a rank that died is given up then)");
    c->callback([o, c, &exitCode] {
        o->candidatesGiven = c->get_option("--candidates")->count() > 0;
        exitCode = runPairs(*o);
    });
}

} // namespace d2dpo::cli
