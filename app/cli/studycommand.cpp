// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo study`: which D2-DPO settings align fastest with fewest labels and without collapsing
// diversity, measured. Pretrains one reference per noise process and seed, runs `reproduce` from
// it for every setting of the chosen groups and every seed (in parallel processes, one thread
// each), then writes study.csv (every point), summary.csv and table.md (the table it prints), and
// a PNG per metric with a band over seeds. Runs already finished in the folder are kept: a study
// that was stopped continues where it stopped.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "base/safeoutput.h"
#include "cli/common.h"
#include "cli/processpool.h"
#include "cli/stopsignals.h"
#include "cli/studyplot.h"
#include "research/study.h"

namespace d2dpo::cli {

namespace {

namespace fs = std::filesystem;

struct StudyOptions {
    std::string out;
    std::vector<std::string> groups{"estimator", "loss", "noise", "beta"};
    int seeds = 3;
    int jobs = 0; ///< 0: one per core
    int length = 16;
    std::string data;
    std::string rule;
    int pretrainSteps = 3000;
    int steps = 300;
    int evalEvery = 25;
    int evalSamples = 1000;
    int gradientDraws = 16;
    double goal = 0.9;
};

std::string seedName(uint64_t seed) { return "seed" + std::to_string(seed); }

/// What every run of a study shares: a folder continues only a study with the same plan.
std::string planOf(const StudyOptions& o)
{
    return "length " + std::to_string(o.length) + "\ndata " + o.data + "\nrule " + o.rule + "\npretrain-steps " +
           std::to_string(o.pretrainSteps) + "\nsteps " + std::to_string(o.steps) + "\neval-every " +
           std::to_string(o.evalEvery) + "\neval-samples " + std::to_string(o.evalSamples) + "\ngradient-draws " +
           std::to_string(o.gradientDraws) + "\n";
}

/// The folder a study writes: new (or empty), or one that holds a study with the same plan, which
/// then continues.
Status openStudyFolder(const StudyOptions& o, const fs::path& root)
{
    std::error_code ec;
    const fs::path planFile = root / "plan.txt";
    if (fs::exists(planFile, ec)) {
        std::ifstream in(planFile);
        const std::string earlier((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (earlier != planOf(o))
            return makeError("'" + o.out + "' holds a study with other settings (" + planFile.string() +
                             "); continue it with those, or choose a new folder");
    } else if (fs::exists(root, ec) && !fs::is_empty(root, ec)) {
        return makeError("'" + o.out + "' is not empty and holds no study; choose a new folder");
    }
    for (const char* sub : {"references", "runs", "logs"}) {
        fs::create_directories(root / sub, ec);
        if (ec)
            return makeError("cannot create '" + (root / sub).string() + "': " + ec.message());
    }
    return AtomicFile::write(planFile.string(), planOf(o));
}

/// What a study's children share: where they write, the task's arguments, how many run at once.
struct StudyPlan {
    fs::path root;
    std::vector<std::string> taskArgs;
    int parallel = 1;
    const StopToken& stop;

    std::string referencePath(const std::string& noise, uint64_t seed) const
    {
        return (root / "references" / (noise + "-" + seedName(seed) + ".d2dpo")).string();
    }
    std::string runFolder(const StudySetting& s, uint64_t seed) const
    {
        return (root / "runs" / (s.name + "-" + seedName(seed))).string();
    }
    std::string logPath(const std::string& name) const { return (root / "logs" / (name + ".log")).string(); }
};

/// Step 1: one reference per noise process and seed (kept when already there). A reference is
/// written beside its name and renamed when its pretraining completed: a stopped one (which writes
/// the steps it did) is never taken for a finished one. An exit code when the study cannot go on.
std::optional<int> pretrainReferences(const StudyOptions& o, const std::vector<StudySetting>& settings,
                                      const StudyPlan& plan)
{
    std::error_code ec;
    std::set<std::string> noises;
    for (const StudySetting& s : settings)
        noises.insert(s.noise);
    std::vector<ChildJob> pretraining;
    std::map<std::string, std::string> finalPathOf;
    for (const std::string& noise : noises)
        for (uint64_t seed = 0; seed < uint64_t(o.seeds); ++seed) {
            const std::string path = plan.referencePath(noise, seed);
            if (fs::exists(path, ec))
                continue;
            const std::string partial = path + ".part";
            fs::remove(partial, ec);
            ChildJob job{"pretrain " + noise + " " + seedName(seed),
                         {"pretrain", "--threads", "1", "--seed", std::to_string(seed), "--noise", noise, "--steps",
                          std::to_string(o.pretrainSteps), "--eval-samples", "500", "-o", partial},
                         plan.logPath("pretrain-" + noise + "-" + seedName(seed))};
            job.args.insert(job.args.end(), plan.taskArgs.begin(), plan.taskArgs.end());
            finalPathOf[job.name] = path;
            pretraining.push_back(job);
        }
    std::printf("d2dpo study: %zu settings x %d seeds, %d processes at once; %zu references to pretrain\n",
                settings.size(), o.seeds, plan.parallel, pretraining.size());
    const PoolOutcome outcome = runChildren(pretraining, plan.parallel, plan.stop);
    for (const std::string& name : outcome.succeeded) {
        const std::string& path = finalPathOf[name];
        fs::rename(path + ".part", path, ec);
        if (ec)
            return fail("study", "cannot move the reference into place at '" + path + "': " + ec.message());
    }
    if (outcome.stopped)
        return exitCodeAfterStop(fail("study", "stopped; run the same command again to continue"));
    if (!outcome.failed.empty())
        return fail("study", "pretraining failed: " + outcome.failed.front());
    return std::nullopt;
}

/// Step 2: every setting and seed from its reference (a run completed before is kept). The runs
/// that failed, or an exit code when the study was stopped.
Result<std::vector<std::string>> runSettings(const StudyOptions& o, const std::vector<StudySetting>& settings,
                                             const StudyPlan& plan)
{
    std::vector<ChildJob> runs;
    for (const StudySetting& s : settings)
        for (uint64_t seed = 0; seed < uint64_t(o.seeds); ++seed) {
            const std::string folder = plan.runFolder(s, seed);
            if (readStudyRun((fs::path(folder) / "report.json").string(), s.name, seed))
                continue; // completed before (a stopped run's report does not count)
            ChildJob job{s.name + " " + seedName(seed),
                         {"reproduce", "--threads", "1", "--seed", std::to_string(seed), "--reference",
                          plan.referencePath(s.noise, seed), "--steps", std::to_string(o.steps), "--eval-every",
                          std::to_string(o.evalEvery), "--eval-samples", std::to_string(o.evalSamples),
                          "--gradient-draws", std::to_string(o.gradientDraws), "--goal", std::to_string(o.goal),
                          "--force", "-o", folder},
                         plan.logPath(s.name + "-" + seedName(seed))};
            if (!o.rule.empty())
                job.args.insert(job.args.end(), {"--rule", o.rule});
            job.args.insert(job.args.end(), s.flags.begin(), s.flags.end());
            runs.push_back(job);
        }
    const PoolOutcome outcome = runChildren(runs, plan.parallel, plan.stop);
    if (outcome.stopped)
        return makeError("stopped; run the same command again to continue");
    for (const std::string& failure : outcome.failed)
        std::fprintf(stderr, "d2dpo study: a run failed: %s\n", failure.c_str());
    return outcome.failed;
}

/// Step 3: what the runs show: the table, the CSV files and a figure per metric.
int reportStudy(const StudyOptions& o, const std::vector<StudySetting>& settings, const StudyPlan& plan,
                bool someFailed)
{
    std::vector<StudyRun> finished;
    std::vector<std::string> order;
    for (const StudySetting& s : settings) {
        order.push_back(s.name);
        for (uint64_t seed = 0; seed < uint64_t(o.seeds); ++seed) {
            auto read = readStudyRun((fs::path(plan.runFolder(s, seed)) / "report.json").string(), s.name, seed);
            if (read)
                finished.push_back(std::move(read.value()));
        }
    }
    if (finished.empty())
        return fail("study", "no run finished");
    const StudyResults results = summarizeStudy(finished, order, o.goal);
    const std::string table = studyTable(results, o.goal);
    for (const auto& [name, text] : {std::pair{"study.csv", studyCsv(finished)},
                                     std::pair{"summary.csv", studySummaryCsv(results)},
                                     std::pair{"table.md", table}})
        if (Status s = AtomicFile::write((plan.root / name).string(), text); !s)
            return fail("study", s.error());
    std::printf("\n%s\n", table.c_str());
    std::vector<std::string> metrics{"loss", results.ruleMetric, "vsr"};
    for (const std::string& metric : {results.diversityMetric, results.tvMetric})
        if (!metric.empty())
            metrics.push_back(metric);
    auto figures = plotStudy(results, metrics, o.out);
    if (figures)
        for (const std::string& path : figures.value())
            std::printf("  figure: %s\n", path.c_str());
    else
        std::printf("  no figures: %s\n", figures.error().c_str());
    std::printf("  every point: %s/study.csv; the table: %s/summary.csv and table.md; logs: %s/logs/\n",
                o.out.c_str(), o.out.c_str(), o.out.c_str());
    return someFailed ? 1 : 0;
}

int run(const StudyOptions& o)
{
    auto settings = studySettings(o.groups);
    if (!settings)
        return fail("study", settings.error());
    const fs::path root(o.out);
    if (Status s = openStudyFolder(o, root); !s)
        return fail("study", s.error());
    StudyPlan plan{root, {"--length", std::to_string(o.length)},
                   o.jobs > 0 ? o.jobs : int(std::max(1u, std::thread::hardware_concurrency())), stopOnSignals()};
    if (!o.data.empty())
        plan.taskArgs = {"--data", o.data};
    if (!o.rule.empty())
        plan.taskArgs.insert(plan.taskArgs.end(), {"--rule", o.rule});
    if (auto exitCode = pretrainReferences(o, settings.value(), plan))
        return *exitCode;
    const auto failed = runSettings(o, settings.value(), plan);
    if (!failed)
        return exitCodeAfterStop(fail("study", failed.error()));
    return reportStudy(o, settings.value(), plan, !failed->empty());
}

} // namespace

void registerStudy(CLI::App& app, int& exitCode)
{
    auto o = std::make_shared<StudyOptions>();
    CLI::App* c = app.add_subcommand(
        "study", "Measure D2-DPO settings against each other: a grid of settings x seeds from shared references, "
                 "with a table, CSV files and a figure per metric");
    c->add_option("--out,-o", o->out, "Study folder (a stopped study continues in it)")->required();
    c->add_option("--groups", o->groups, "Setting groups: estimator, loss, noise, beta (the paper's settings always run)")
        ->delimiter(',')
        ->capture_default_str();
    c->add_option("--seeds", o->seeds, "Seeds per setting")->check(CLI::Range(1, 100))->capture_default_str();
    c->add_option("--jobs,-j", o->jobs, "Processes at once (default: one per core)")->check(CLI::Range(0, 256));
    c->add_option("--length,-N", o->length, "Sequence length of the binary-integers task")->check(CLI::Range(2, 512))->capture_default_str();
    c->add_option("--data", o->data, "Study a task from a sequence file instead (as pretrain --data)");
    c->add_option("--rule", o->rule, "The rule the pairs follow (default: the task's own)");
    c->add_option("--pretrain-steps", o->pretrainSteps, "Pretraining steps of each reference")->check(atLeast(1))->capture_default_str();
    c->add_option("--steps", o->steps, "D2-DPO steps of each run")->check(atLeast(1))->capture_default_str();
    c->add_option("--eval-every", o->evalEvery, "Steps between evaluations")->check(atLeast(1))->capture_default_str();
    c->add_option("--eval-samples", o->evalSamples, "Samples per evaluation")->check(atLeast(1))->capture_default_str();
    c->add_option("--gradient-draws", o->gradientDraws, "Draws for the gradient's spread at step 0")
        ->check(CLI::Range(2, 4096))->capture_default_str();
    c->add_option("--goal", o->goal, "The rule share 'steps to goal' waits for")->check(CLI::Range(0.0, 1.0))->capture_default_str();
    c->callback([o, &exitCode] { exitCode = run(*o); });
}

} // namespace d2dpo::cli
