// SPDX-License-Identifier: GPL-3.0-or-later
// What the experts think, from the command line: `d2dpo prefs agreement` (kappa, alpha and each
// labeler's profile), `d2dpo prefs queue` (overlap and gold rate), `d2dpo prefs gold` (pairs with
// a known answer, made by the task's rule or marked by hand).
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/choice.h"
#include "cli/common.h"
#include "experts/teamagreement.h"
#include "jobs/pairgenerator.h"
#include "labeling/generatedpairs.h"
#include "labeling/taskcatalog.h"
#include "store/preferencestore.h"

namespace d2dpo::cli {

namespace {

/// A figure with three decimals, or "undefined".
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

struct AgreementOptions {
    std::string db = PreferenceStore::defaultPath();
    std::string task;
    bool json = false;
    int resamples = 1000;
    uint64_t seed = 1;
};

int runAgreement(const AgreementOptions& o)
{
    auto store = PreferenceStore::open(o.db, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("prefs agreement", store.error());
    auto labels = store.value()->judgedLabels();
    if (!labels)
        return fail("prefs agreement", labels.error());
    const TeamAgreement report = measureAgreement(labels.value(), o.task, o.resamples, o.seed);
    if (o.json) {
        std::cout << toJson(report).dump(2) << "\n";
        return 0;
    }
    std::cout << report.items << " pairs judged, " << report.sharedItems
              << " of them by two labelers or more\n";
    std::cout << "Krippendorff's alpha (nominal, everyone): " << figure(report.alpha) << " "
              << interval(report.alphaInterval) << "\n";
    if (report.pairs.empty())
        std::cout << "Cohen's kappa: no two labelers judged the same pair\n";
    else
        std::cout << "Cohen's kappa, each two labelers (pairs both judged):\n";
    for (const LabelerPairAgreement& p : report.pairs)
        std::cout << "  " << p.first << " / " << p.second << ": " << figure(p.kappa) << " " << interval(p.interval)
                  << " over " << p.shared << "\n";
    std::cout << "labelers:\n";
    for (const LabelerProfile& p : report.labelers) {
        std::cout << "  " << p.labeler << ": " << p.labels << " labels, " << p.judged << " judged";
        std::cout << "; with the others' majority " << figure(p.majorityAgreement) << " of " << p.majorityItems;
        std::cout << "; left picks " << figure(p.leftShare) << " of " << p.sided;
        std::cout << "; median " << figure(p.medianDecideMs / 1000) << " s per decision";
        std::cout << "; gold " << (p.goldJudged ? figure(p.goldAccuracy) : std::string("-")) << " ("
                  << p.goldCorrect << "/" << p.goldJudged << ")\n";
    }
    std::cout << kAgreementConventions << "\n";
    return 0;
}

struct QueueOptions {
    std::string db = PreferenceStore::defaultPath();
    int overlap = 0;        ///< 0: unchanged
    double goldRate = -1;   ///< < 0: unchanged
    std::string order;      ///< "": unchanged
    int leaseSeconds = 0;   ///< 0: unchanged
};

int runQueue(const QueueOptions& o)
{
    const bool changing = o.overlap > 0 || o.goldRate >= 0 || !o.order.empty() || o.leaseSeconds > 0;
    auto store = PreferenceStore::open(o.db, changing ? PreferenceStore::OpenMode::CreateIfMissing
                                                      : PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("prefs queue", store.error());
    auto settings = store.value()->queueSettings();
    if (!settings)
        return fail("prefs queue", settings.error());
    QueueSettings next = settings.value();
    if (o.overlap > 0)
        next.overlap = o.overlap;
    if (o.goldRate >= 0)
        next.goldRate = o.goldRate;
    if (!o.order.empty())
        next.order = queueOrderFromString(o.order).value_or(QueueOrder::Oldest);
    if (o.leaseSeconds > 0)
        next.leaseSeconds = o.leaseSeconds;
    if (changing)
        if (Status s = store.value()->setQueueSettings(next); !s)
            return fail("prefs queue", s.error());
    std::cout << "overlap " << next.overlap << " (each pair labelled by up to " << next.overlap
              << " different labelers), gold rate " << next.goldRate << " (the share of gold pairs in each named "
              << "labeler's queue), order " << toString(next.order)
              << (next.order == QueueOrder::Oldest ? " (as stored)"
                                                   : std::string(next.order == QueueOrder::LeastSure ? " (smallest"
                                                                                                     : " (largest") +
                                                         " |margin| first: `d2dpo prefs score -c MODEL` records the "
                                                         "latest model's margins)")
              << ", lease " << next.leaseSeconds << " s (how long a pair handed to a labeler of a team store is "
              << "kept from others)\n";
    return 0;
}

struct GoldOptions {
    RuntimeOptions runtime;
    std::string db = PreferenceStore::defaultPath();
    std::string checkpoint;
    int64_t count = 20;
    SamplingConfig sampling;
    int64_t markPair = 0;
    std::string answer;
};

/// Gold pairs from a model's samples: pairs the task's rule decides (left or right) only.
int runGoldFromModel(PreferenceStore& store, const GoldOptions& o)
{
    auto generator = PairGenerator::load(o.checkpoint, o.runtime.device);
    if (!generator)
        return fail("prefs gold", generator.error());
    auto name = recordModel(store, generator.value()->model());
    if (!name)
        return fail("prefs gold", name.error());
    auto batch = generator.value()->generate(4 * o.count, o.runtime.seed, o.sampling);
    if (!batch)
        return fail("prefs gold", batch.error());
    TaskCatalog tasks(store);
    std::vector<GoldPair> gold;
    for (const ShownPair& p : batch->pairs) {
        if (int64_t(gold.size()) >= o.count)
            break;
        const std::optional<Choice> choice = tasks.ruleChoice(p);
        if (choice == Choice::Left || choice == Choice::Right)
            gold.push_back({p, *choice});
    }
    if (gold.empty())
        return fail("prefs gold", "the task's rule decided none of the " + std::to_string(batch->pairs.size()) +
                                      " pairs drawn (a task without a rule needs --mark)");
    auto ids = store.addGoldPairs(gold, "gold");
    if (!ids)
        return fail("prefs gold", ids.error());
    std::cout << "added " << ids->size() << " gold pairs from " << name.value() << ", answered by the task's rule";
    if (int64_t(ids->size()) < o.count)
        std::cout << " (only " << ids->size() << " of the pairs drawn had a decisive answer)";
    std::cout << "\n";
    return 0;
}

int runGold(const GoldOptions& o)
{
    auto store = PreferenceStore::open(o.db, o.markPair > 0 ? PreferenceStore::OpenMode::MustExist
                                                            : PreferenceStore::OpenMode::CreateIfMissing);
    if (!store)
        return fail("prefs gold", store.error());
    if (o.markPair <= 0)
        return runGoldFromModel(*store.value(), o);
    const Choice answer = o.answer == "left" ? Choice::Left : Choice::Right; // --answer is checked: left or right
    if (Status s = store.value()->markGold(o.markPair, answer); !s)
        return fail("prefs gold", s.error());
    std::cout << "pair " << o.markPair << " is a gold pair now; its answer: " << o.answer << "\n";
    return 0;
}

} // namespace

void registerExpertCommands(CLI::App& app, int& exitCode)
{
    CLI::App* prefs = app.get_subcommand("prefs");
    {
        auto o = std::make_shared<AgreementOptions>();
        CLI::App* c = prefs->add_subcommand(
            "agreement", "How far the labelers agree: Cohen's kappa, Krippendorff's alpha, each labeler's profile");
        addDbOption(c, o->db);
        c->add_option("--task", o->task, "Only this task's pairs (its key, as `d2dpo prefs list` shows it)");
        c->add_flag("--json", o->json, "Write the report as JSON");
        c->add_option("--resamples", o->resamples, "Bootstrap resamples of the 95% intervals")
            ->check(CLI::Range(100, 100'000))
            ->capture_default_str();
        c->add_option("--seed", o->seed, "Seed of the bootstrap")->check(seedRange())->capture_default_str();
        c->callback([o, &exitCode] { exitCode = runAgreement(*o); });
    }
    {
        auto o = std::make_shared<QueueOptions>();
        CLI::App* c = prefs->add_subcommand("queue", "Show or set how pairs are handed out: overlap, gold rate, order and lease");
        addDbOption(c, o->db);
        c->add_option("--overlap", o->overlap, "Different labelers per pair")
            ->check(CLI::Range(1, QueueSettings::kMaxOverlap));
        c->add_option("--gold-rate", o->goldRate, "Share of gold pairs mixed into each labeler's queue, 0..0.5")
            ->check(CLI::Range(0.0, QueueSettings::kMaxGoldRate));
        c->add_option("--order", o->order,
                      "oldest (as stored), least-sure (smallest recorded margin first) or surest (largest first)")
            ->check(CLI::IsMember({"oldest", "least-sure", "surest"}));
        c->add_option("--lease-seconds", o->leaseSeconds,
                      "How long a pair handed to a team store's labeler is kept from others, " +
                          std::to_string(QueueSettings::kMinLeaseSeconds) + ".." +
                          std::to_string(QueueSettings::kMaxLeaseSeconds) + " s (an abandoned one expires after it)")
            ->check(CLI::Range(QueueSettings::kMinLeaseSeconds, QueueSettings::kMaxLeaseSeconds));
        c->callback([o, &exitCode] { exitCode = runQueue(*o); });
    }
    {
        auto o = std::make_shared<GoldOptions>();
        CLI::App* c = prefs->add_subcommand(
            "gold", "Add gold pairs (a known answer; they measure labelers and train nothing): drawn from a model "
                    "and answered by its task's rule, or a pending pair marked by hand");
        addRuntimeOptions(c, o->runtime);
        addDbOption(c, o->db);
        CLI::Option* model = c->add_option("--checkpoint,-c", o->checkpoint, "Model to draw gold pairs from");
        c->add_option("--count,-n", o->count, "Gold pairs to add")
            ->check(CLI::Range(int64_t(1), int64_t(100'000)))
            ->capture_default_str();
        addSamplingOptions(c, o->sampling);
        CLI::Option* mark = c->add_option("--mark", o->markPair, "Make this unlabelled pair a gold pair")
                                ->check(atLeast(1))
                                ->excludes(model);
        CLI::Option* answer = c->add_option("--answer", o->answer, "With --mark: its answer, left or right")
                                  ->check(CLI::IsMember({"left", "right"}))
                                  ->needs(mark);
        mark->needs(answer);
        c->callback([o, &exitCode] {
            if (o->markPair <= 0 && o->checkpoint.empty()) // a wrong command line: exit 2, no store touched
                throw CLI::ValidationError("--checkpoint",
                                           "name a model to draw gold pairs from (--checkpoint) or a pair to --mark");
            exitCode = runGold(*o);
        });
    }
}

} // namespace d2dpo::cli
