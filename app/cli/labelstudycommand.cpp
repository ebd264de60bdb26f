// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo labelstudy`: how many labels "informative pairs first" saves, measured. From one
// pretrained reference, each selection (random, least-sure, surest) and seed runs research/labelstudy.h's
// loop with the task's rule as the labeler, several runs at once in threads of one torch thread
// each; then it prints the table (labels needed to reach the goal) and writes rounds.csv,
// table.md and rule_share.png (the rule share against the labels spent, mean and a band of one
// standard deviation over seeds).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "base/safeoutput.h"
#include "cli/common.h"
#include "cli/stopsignals.h"
#include "cli/studyplot.h"
#include "research/labelstudy.h"

namespace d2dpo::cli {

namespace {

namespace fs = std::filesystem;

struct LabelStudyOptions {
    RuntimeOptions runtime;
    LabelStudyConfig config;
    std::vector<std::string> selections{"random", "least-sure", "surest"};
    int seeds = 5;
    int jobs = 0;
    std::string out;
};

/// The selections named, each once, in the order given.
Result<std::vector<PairSelection>> selectionsOf(const std::vector<std::string>& names)
{
    std::vector<PairSelection> selections;
    for (const std::string& name : names) {
        auto selection = pairSelectionFromString(name);
        if (!selection)
            return makeError("unknown selection '" + name + "': random, least-sure or surest");
        if (std::find(selections.begin(), selections.end(), *selection) == selections.end())
            selections.push_back(*selection);
    }
    return selections;
}

/// The study's folder, made and written to before any work (a study never ends in a folder it
/// cannot fill). True when this call made it: a study that stops or fails removes it again.
Result<bool> prepareFolder(const std::string& out, const LabelStudyConfig& config)
{
    if (out.empty())
        return false;
    if (Status s = checkOutputFolder(out, {config.referenceCheckpoint}, "the study folder"); !s)
        return makeError(s.error());
    std::error_code ec;
    const bool made = fs::create_directories(out, ec);
    if (ec)
        return makeError("cannot create '" + out + "': " + ec.message());
    const std::string probe = (fs::path(out) / "table.md").string();
    if (Status s = AtomicFile::write(probe, "(the study is running)\n"); !s)
        return makeError(s.error());
    fs::remove(probe, ec);
    return made;
}

struct LabelStudyJob {
    LabelStudyConfig config;
    Result<LabelStudyRun> result = makeError("not run");
};

/// Every selection and seed, `parallel` at once in threads, each printing its rounds as they end.
void runJobs(std::vector<LabelStudyJob>& jobs, int parallel, const std::string& device, const StopToken& stop)
{
    std::mutex printing;
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < std::min<int>(parallel, int(jobs.size())); ++w)
        workers.emplace_back([&] {
            for (size_t i = next++; i < jobs.size() && !stop.stopRequested(); i = next++) {
                LabelStudyJob& job = jobs[i];
                const std::string name = std::string(toString(job.config.selection)) + " seed " +
                                         std::to_string(job.config.seed);
                job.result = runLabelStudy(job.config, device, stop, [&](const LabelStudyRound& r) {
                    std::lock_guard lock(printing);
                    std::printf("  %s: %lld labels (%lld decisive), rule share %.3f, vsr %.3f, mean |margin| %.4f, %.0f s\n",
                                name.c_str(), (long long)r.labels, (long long)r.decisive, r.ruleShare, r.vsr,
                                r.meanAbsMargin, r.seconds);
                    std::fflush(stdout);
                });
                if (!job.result) {
                    std::lock_guard lock(printing);
                    std::fprintf(stderr, "  %s: %s\n", name.c_str(), job.result.error().c_str());
                }
            }
        });
    for (std::thread& worker : workers)
        worker.join();
}

/// rounds.csv, table.md and the rule share's figure in the study's folder.
int writeStudyFolder(const std::string& out, const std::vector<LabelStudyRun>& runs,
                     const std::vector<PairSelection>& selections, const std::string& table)
{
    for (const auto& [name, text] : {std::pair<std::string, std::string>{"rounds.csv", labelStudyCsv(runs)},
                                     {"table.md", table}})
        if (Status s = AtomicFile::write((fs::path(out) / name).string(), text); !s)
            return fail("labelstudy", s.error());
    StudyResults curves;
    for (PairSelection selection : selections) {
        const LabelStudyCurve c = labelStudyCurve(runs, selection);
        curves.settingOrder.push_back(toString(selection));
        curves.curves["rule_share"][toString(selection)] = StudyCurve{c.labels, c.mean, c.spread};
    }
    auto figures = plotStudy(curves, {"rule_share"}, out, "labels spent (simulated labeler: the task's rule)");
    if (figures)
        for (const std::string& path : figures.value())
            std::printf("  figure: %s\n", path.c_str());
    else
        std::printf("  no figure: %s\n", figures.error().c_str());
    std::printf("  every round: %s/rounds.csv; the table: %s/table.md\n", out.c_str(), out.c_str());
    return 0;
}

int run(LabelStudyOptions& o)
{
    const auto selections = selectionsOf(o.selections);
    if (!selections)
        return fail("labelstudy", selections.error());
    if (Status s = validate(o.config); !s)
        return fail("labelstudy", s.error());
    const auto madeFolder = prepareFolder(o.out, o.config);
    if (!madeFolder)
        return fail("labelstudy", madeFolder.error());
    const auto discardFolder = [&] {
        std::error_code ec;
        if (madeFolder.value())
            fs::remove_all(o.out, ec);
    };
    const int parallel = std::max(1, o.jobs > 0 ? o.jobs : int(std::max(1u, std::thread::hardware_concurrency())));
    if (parallel > 1)
        o.runtime.threads = 1; // the runs share the cores: one torch thread each
    // Heard from the runtime's line on: a Ctrl-C at any moment after it stops the study cleanly.
    const StopToken& stop = stopOnSignals(SignalStops::LabelStudy);
    if (Status s = setUpRuntime(o.runtime); !s)
        return fail("labelstudy", s.error());

    std::vector<LabelStudyJob> jobs;
    for (int seed = 1; seed <= o.seeds; ++seed)
        for (PairSelection selection : selections.value()) {
            LabelStudyJob job;
            job.config = o.config;
            job.config.selection = selection;
            job.config.seed = o.runtime.seed + uint64_t(seed);
            jobs.push_back(std::move(job));
        }
    std::printf("d2dpo labelstudy: %zu selections x %d seeds, %d at once; %lld labels a round from %lld candidate "
                "pairs, %d D2-DPO steps a round, up to %lld labels, goal rule share %.2f\n",
                selections->size(), o.seeds, parallel, (long long)o.config.labelsPerRound,
                (long long)o.config.candidatesPerRound, o.config.dpo.steps, (long long)o.config.maxLabels,
                o.config.goal);
    std::fflush(stdout);
    runJobs(jobs, parallel, o.runtime.device, stop);
    if (stop.stopRequested()) {
        discardFolder();
        return exitCodeAfterStop(fail("labelstudy", "stopped; nothing was written"));
    }
    std::vector<LabelStudyRun> runs;
    for (LabelStudyJob& job : jobs) {
        if (!job.result) {
            discardFolder();
            return fail("labelstudy", job.result.error());
        }
        runs.push_back(job.result.value());
        const int64_t spent = runs.back().rounds.back().labels;
        if (spent < o.config.maxLabels)
            std::printf("  %s seed %llu ended at %lld labels: the model draws one sequence only, no pair to ask about\n",
                        toString(runs.back().selection), (unsigned long long)runs.back().seed, (long long)spent);
    }
    const std::string table = labelStudyTable(summarizeLabelStudy(runs), o.config.goal, o.config.maxLabels);
    std::printf("\n%s", table.c_str());
    return o.out.empty() ? 0 : writeStudyFolder(o.out, runs, selections.value(), table);
}

} // namespace

void registerLabelStudy(CLI::App& app, int& exitCode)
{
    auto o = std::make_shared<LabelStudyOptions>();
    o->config.dpo.steps = 150;
    o->config.dpo.learningRate = 1e-3;
    CLI::App* c = app.add_subcommand(
        "labelstudy", "Measure how many labels random, least-sure-first and surest-first pairs need to reach a rule "
                      "share, with the task's rule as a simulated labeler");
    c->add_option("--checkpoint,-c", o->config.referenceCheckpoint, "The pretrained reference")->required()->check(CLI::ExistingFile);
    addRuleOption(c, o->config.rule, "The simulated labeler's rule (default: the task's own)");
    c->add_option("--selections", o->selections, "Ways of choosing pairs: random, least-sure, surest")
        ->delimiter(',')
        ->capture_default_str();
    c->add_option("--seeds", o->seeds, "Seeds per selection")->check(CLI::Range(1, 100))->capture_default_str();
    c->add_option("--jobs,-j", o->jobs, "Runs at once (default: one per core)")->check(CLI::Range(0, 256));
    c->add_option("--labels-per-round", o->config.labelsPerRound, "Labels between two fine-tunings")
        ->check(CLI::Range(1, 100000))->capture_default_str();
    c->add_option("--candidates", o->config.candidatesPerRound, "Candidate pairs drawn from the current model each round")
        ->check(CLI::Range(1, 1000000))->capture_default_str();
    c->add_option("--max-labels", o->config.maxLabels, "The label budget of a run")->check(CLI::Range(1, 10000000))->capture_default_str();
    c->add_option("--goal", o->config.goal, "The rule share a run waits for")->check(CLI::Range(0.0, 1.0))->capture_default_str();
    c->add_option("--eval-samples", o->config.evalSamples, "Samples per measurement")->check(CLI::Range(1, 1000000))->capture_default_str();
    c->add_option("--margin-draws", o->config.marginDraws, "Draws of each pair's implicit reward margin")
        ->check(CLI::Range(1, 4096))->capture_default_str();
    c->add_option("--out,-o", o->out, "Folder for rounds.csv, table.md and rule_share.png");
    c->add_option("--steps", o->config.dpo.steps, "D2-DPO steps of each round's fine-tuning (from the reference, on every "
                                                  "decisive label so far)")
        ->check(atLeast(1))
        ->capture_default_str();
    c->add_option("--beta", o->config.dpo.beta, "D2-DPO beta")->check(finitePositive())->capture_default_str();
    c->add_option("--lr", o->config.dpo.learningRate, "D2-DPO learning rate (Adam)")->check(finitePositive())->capture_default_str();
    c->add_option("--batch", o->config.dpo.batch, "Preference pairs per step")->check(atLeast(1))->capture_default_str();
    addSamplingOptions(c, o->config.sampling);
    addRuntimeOptions(c, o->runtime);
    c->callback([o, &exitCode] { exitCode = run(*o); });
}

} // namespace d2dpo::cli
