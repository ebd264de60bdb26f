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

int run(const StudyOptions& o)
{
    auto settings = studySettings(o.groups);
    if (!settings)
        return fail("study", settings.error());
    std::error_code ec;
    const fs::path root(o.out);
    const fs::path planFile = root / "plan.txt";
    if (fs::exists(planFile, ec)) {
        std::ifstream in(planFile);
        const std::string earlier((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (earlier != planOf(o))
            return fail("study", "'" + o.out + "' holds a study with other settings (" + planFile.string() +
                                     "); continue it with those, or choose a new folder");
    } else if (fs::exists(root, ec) && !fs::is_empty(root, ec)) {
        return fail("study", "'" + o.out + "' is not empty and holds no study; choose a new folder");
    }
    for (const char* sub : {"references", "runs", "logs"}) {
        fs::create_directories(root / sub, ec);
        if (ec)
            return fail("study", "cannot create '" + (root / sub).string() + "': " + ec.message());
    }
    if (Status s = AtomicFile::write(planFile.string(), planOf(o)); !s)
        return fail("study", s.error());
    const int parallel = o.jobs > 0 ? o.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
    const StopToken& stop = stopOnSignals();
    std::vector<std::string> taskArgs{"--length", std::to_string(o.length)};
    if (!o.data.empty())
        taskArgs = {"--data", o.data};
    if (!o.rule.empty())
        taskArgs.insert(taskArgs.end(), {"--rule", o.rule});

    // 1. One reference per noise process and seed (kept when already there).
    std::set<std::string> noises;
    for (const StudySetting& s : settings.value())
        noises.insert(s.noise);
    const auto referencePath = [&](const std::string& noise, uint64_t seed) {
        return (root / "references" / (noise + "-" + seedName(seed) + ".d2dpo")).string();
    };
    // A reference is written beside its name and renamed when its pretraining completed: a
    // stopped one (which writes the steps it did) is never taken for a finished one.
    std::vector<ChildJob> pretraining;
    std::map<std::string, std::string> finalPathOf;
    for (const std::string& noise : noises)
        for (uint64_t seed = 0; seed < uint64_t(o.seeds); ++seed) {
            const std::string path = referencePath(noise, seed);
            if (fs::exists(path, ec))
                continue;
            const std::string partial = path + ".part";
            fs::remove(partial, ec);
            ChildJob job{"pretrain " + noise + " " + seedName(seed),
                         {"pretrain", "--threads", "1", "--seed", std::to_string(seed), "--noise", noise, "--steps",
                          std::to_string(o.pretrainSteps), "--eval-samples", "500", "-o", partial},
                         (root / "logs" / ("pretrain-" + noise + "-" + seedName(seed) + ".log")).string()};
            job.args.insert(job.args.end(), taskArgs.begin(), taskArgs.end());
            finalPathOf[job.name] = path;
            pretraining.push_back(job);
        }
    std::printf("d2dpo study: %zu settings x %d seeds, %d processes at once; %zu references to pretrain\n",
                settings->size(), o.seeds, parallel, pretraining.size());
    PoolOutcome outcome = runChildren(pretraining, parallel, stop);
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

    // 2. Every setting and seed from its reference.
    std::vector<ChildJob> runs;
    const auto runFolder = [&](const StudySetting& s, uint64_t seed) {
        return (root / "runs" / (s.name + "-" + seedName(seed))).string();
    };
    for (const StudySetting& s : settings.value())
        for (uint64_t seed = 0; seed < uint64_t(o.seeds); ++seed) {
            const std::string folder = runFolder(s, seed);
            if (readStudyRun((fs::path(folder) / "report.json").string(), s.name, seed))
                continue; // completed before (a stopped run's report does not count)
            ChildJob job{s.name + " " + seedName(seed),
                         {"reproduce", "--threads", "1", "--seed", std::to_string(seed), "--reference",
                          referencePath(s.noise, seed), "--steps", std::to_string(o.steps), "--eval-every",
                          std::to_string(o.evalEvery), "--eval-samples", std::to_string(o.evalSamples),
                          "--gradient-draws", std::to_string(o.gradientDraws), "--goal", std::to_string(o.goal),
                          "--force", "-o", folder},
                         (root / "logs" / (s.name + "-" + seedName(seed) + ".log")).string()};
            if (!o.rule.empty())
                job.args.insert(job.args.end(), {"--rule", o.rule});
            job.args.insert(job.args.end(), s.flags.begin(), s.flags.end());
            runs.push_back(job);
        }
    outcome = runChildren(runs, parallel, stop);
    if (outcome.stopped)
        return exitCodeAfterStop(fail("study", "stopped; run the same command again to continue"));
    for (const std::string& failure : outcome.failed)
        std::fprintf(stderr, "d2dpo study: a run failed: %s\n", failure.c_str());

    // 3. What the runs show.
    std::vector<StudyRun> finished;
    std::vector<std::string> order;
    for (const StudySetting& s : settings.value()) {
        order.push_back(s.name);
        for (uint64_t seed = 0; seed < uint64_t(o.seeds); ++seed) {
            auto read = readStudyRun((fs::path(runFolder(s, seed)) / "report.json").string(), s.name, seed);
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
        if (Status s = AtomicFile::write((root / name).string(), text); !s)
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
    return outcome.failed.empty() ? 0 : 1;
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
