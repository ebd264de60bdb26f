// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo train`: D2-DPO fine-tuning of a checkpoint on rule-made preference pairs (pairs the
// checkpoint's task's rule ranks apart; the paper's dataset for its task) or on the experts' labels
// in a store. The same job the desktop application runs (core/dpojob.h).
#include <algorithm>
#include <iostream>
#include <limits>
#include <vector>
#include <memory>

#include "cli/common.h"
#include "store/storename.h"
#include "cli/consolelistener.h"
#include "cli/stopsignals.h"
#include "jobs/dporesume.h"
#include "facades/runtimeinfo.h"
#include "jobs/dpojob.h"
#include "jobs/assaypairs.h"
#include "base/launchenvironment.h"
#include "base/cputhreads.h"
#include "cli/ranklauncher.h"

namespace d2dpo::cli {

namespace {

struct TrainOptions {
    RuntimeOptions runtime;
    DpoConfig dpo;
    DpoScheduleConfig schedule;
    SamplingConfig sampling;
    std::string checkpoint;
    std::string rule;
    int64_t pairs = 20000;
    std::string out;
    std::string db; ///< train on the store's labels instead of rule-made pairs
    bool evaluateReference = false;
    int64_t resume = 0; ///< continue this run of the store
    std::vector<std::string> labelers; ///< with --db: only these labelers' labels
    std::string source = "labels";     ///< with --db: labels, measurements or labels,measurements
    AssayPairsSpec measured;
    double labelsWeight = 1.0, measurementsWeight = 1.0;
    bool grouped = false;
    int nproc = 1;            ///< > 1: start this many local workers (ranklauncher.h)
    int groupTimeout = 300;   ///< seconds a rank waits for the slowest in a step
};

/// A worker other than rank 0 says nothing while it trains (rank 0 speaks for the run), only why
/// it ended when it failed.
class QuietRank final : public PhaseListener {
};

/// --source as a PreferenceSource (with --db), or why not.
Result<PreferenceSource> sourceNamed(const std::string& source)
{
    if (source == "labels")
        return PreferenceSource::StoreLabels;
    if (source == "measurements")
        return PreferenceSource::Measurements;
    if (source == "labels,measurements" || source == "measurements,labels")
        return PreferenceSource::LabelsAndMeasurements;
    return makeError("--source is labels, measurements or labels,measurements, not '" + source + "'");
}

/// The outcome for the user: the checkpoint, and the exit code (128 + signal when a signal stopped it).
int report(const DpoJobOutcome& outcome, const std::string& db)
{
    const FinishedEvent& done = outcome.finished;
    if (done.status == RunStatus::Stopped && !done.error.empty()) // another rank was lost
        std::cerr << "d2dpo train: " << done.error << "\n";
    if (done.status == RunStatus::Failed)
        return fail("train", done.error + (done.lastCheckpointPath.empty()
                                               ? ""
                                               : " (last good checkpoint: " + done.lastCheckpointPath + ")"));
    if (!done.lastCheckpointPath.empty())
        std::cout << (done.status == RunStatus::Stopped ? "stopped; last checkpoint: " : "fine-tuned checkpoint: ")
                  << done.lastCheckpointPath << "\n";
    if (done.status == RunStatus::Stopped && outcome.runId > 0)
        std::cout << "continue it with: d2dpo train --resume " << outcome.runId << " --db " << storeNameForMessages(db) << "\n";
    if (done.status == RunStatus::Stopped && !done.error.empty())
        return 1;
    return done.status == RunStatus::Stopped ? exitCodeAfterStop(130) : 0;
}

/// Runs the job with the console for rank 0 (or one process) and silence for the other ranks.
int runJob(DpoJobSpec& job, const TrainOptions& o)
{
    auto launch = launchOf(o.nproc);
    if (!launch)
        return fail("train", launch.error());
    job.launch = launch.value();
    job.groupTimeoutSeconds = o.groupTimeout;
    ConsoleListener console;
    QuietRank quiet;
    PhaseListener& listener = !job.launch || job.launch->isMain() ? static_cast<PhaseListener&>(console) : quiet;
    listener.onPhase("d2dpo", job.dpo.steps);
    return report(runDpoJob(job, listener, stopOnSignals()), o.db);
}

/// `--nproc N`: this command again in N workers.
int runWorkers(const TrainOptions& o)
{
    if (auto launch = launchOf(o.nproc); !launch)
        return fail("train", launch.error());
    LocalRanks ranks;
    ranks.groupTimeoutSeconds = o.groupTimeout;
    return runAsLocalRanks(o.nproc, ranks);
}

int runResume(const TrainOptions& o)
{
    if (o.db.empty())
        return fail("train", "--resume needs the store that recorded the run: --db STORE");
    auto job = resumeJobSpec(o.db, o.resume);
    if (!job)
        return fail("train", job.error());
    if (!o.runtime.device.empty() && o.runtime.device != "auto")
        job->device = o.runtime.device;
    job->threads = o.runtime.threads;
    return runJob(job.value(), o);
}

int run(const TrainOptions& o)
{
    if (Status s = setCpuThreads(o.runtime.threads); !s)
        return fail("train", s.error());
    if (o.resume > 0)
        return o.nproc > 1 ? runWorkers(o) : runResume(o);
    if (o.checkpoint.empty() || o.out.empty())
        return fail("train", "name the reference (--checkpoint) and a new folder for the checkpoints (--out), or "
                             "continue a run with --resume RUN --db STORE");
    if (o.nproc > 1)
        return runWorkers(o);
    DpoJobSpec job;
    job.referencePath = o.checkpoint;
    job.storePath = o.db;
    job.source = PreferenceSource::RulePairs;
    if (!o.db.empty()) {
        const auto source = sourceNamed(o.source);
        if (!source)
            return fail("train", source.error());
        job.source = source.value();
    } else if (o.source != "labels") {
        return fail("train", "--source " + o.source + " reads the store: name it with --db STORE");
    }
    if (job.source == PreferenceSource::Measurements || job.source == PreferenceSource::LabelsAndMeasurements) {
        if (o.measured.assay.empty())
            return fail("train", "--source " + o.source + " needs the assay: --assay NAME (d2dpo measurements list)");
    } else if (!o.measured.assay.empty()) {
        return fail("train", "--assay is for --source measurements or labels,measurements");
    }
    job.measured = o.measured;
    job.labelsWeight = o.labelsWeight;
    job.grouped = o.grouped;
    job.measurementsWeight = o.measurementsWeight;
    job.rulePairs = o.pairs;
    job.labelers = o.labelers;
    job.rule = o.rule;
    job.dpo = o.dpo;
    job.schedule = o.schedule;
    job.sampling = o.sampling;
    job.device = o.runtime.device;
    job.threads = o.runtime.threads;
    job.seed = o.runtime.seed;
    job.outputFolder = o.out;
    job.evaluateReference = o.evaluateReference;
    return runJob(job, o);
}

} // namespace

void registerTrain(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<TrainOptions>();
    CLI::App* c = app.add_subcommand("train", "Fine-tune a checkpoint with D2-DPO on rule-made preference pairs or the store's labels");
    addRuntimeOptions(c, options->runtime);
    addDpoOptions(c, options->dpo, options->schedule);
    addSamplingOptions(c, options->sampling);
    c->add_option("--checkpoint,-c", options->checkpoint, "Reference checkpoint (the policy starts equal to it)");
    addRuleOption(c, options->rule,
                  ruleHelp() + "; the rule-made pairs and the rule share follow it (default: the "
                                           "checkpoint's task's rule)");
    c->add_option("--pairs", options->pairs, "Number of rule-made pairs")->check(atLeast(1))->capture_default_str();
    c->add_option("--db", options->db,
                  "Train on the labels in this preference store (ties and skips left out) instead of rule-made "
                  "pairs; the run and the fine-tuned model are recorded there")
        ->check(storePath());
    c->add_option("--labeler", options->labelers,
                  "With --db: train only on this labeler's labels (repeat for several; default: every labeler's, "
                  "simulated rule:* ones included; `d2dpo prefs list` shows them)");
    c->add_option("--source", options->source,
                  "With --db: what to train on: labels (the experts'), measurements (pairs made from an assay's "
                  "values, --assay) or labels,measurements (both, each at its --*-weight)")
        ->capture_default_str();
    addMeasuredPairOptions(c, options->measured);
    c->add_option("--labels-weight", options->labelsWeight,
                  "With --source labels,measurements: the labels' share of each batch, against --measurements-weight")
        ->check(finitePositive())
        ->capture_default_str();
    c->add_option("--measurements-weight", options->measurementsWeight, "The measured pairs' share, likewise")
        ->check(finitePositive())
        ->capture_default_str();
    c->add_flag("--grouped", options->grouped,
                "With --source measurements: score the pairs inside each group of sequences they link in one pass "
                "per group (g-DPO; groups of at most a quarter of the positions differing, as --strategy clusters "
                "makes them)");
    c->add_option("--out,-o", options->out, "New (or empty) folder for the run's checkpoints");
    c->add_option("--resume", options->resume,
                  "Continue this stopped or interrupted run of the --db store from its last checkpoint, with the "
                  "settings it started with")
        ->check(CLI::Range(int64_t(1), std::numeric_limits<int64_t>::max()))
        ->excludes("--checkpoint")
        ->excludes("--out");
    c->add_flag("--evaluate-reference", options->evaluateReference,
                "Measure the reference model first (the baselines of the curves)");
    addLaunchOptions(c, options->nproc, options->groupTimeout,
                     "Train in this many processes on this machine, data-parallel (as torchrun "
                     "--nproc-per-node starts them; or start each rank yourself with RANK, WORLD_SIZE, "
                     "MASTER_ADDR and MASTER_PORT set): each scores its share of --batch, which they must "
                     "divide; the result equals one process's",
                     "With several processes: seconds a rank waits for the slowest before the run ends stopped "
                     "on every rank (a rank that dies ends it at once)");
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
