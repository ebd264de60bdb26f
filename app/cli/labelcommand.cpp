// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo label [--rule R]`: a simulated expert, each pending pair labelled by its task's rule. On
// a file store a named labeler's queue; on a team store the database role's, its pairs claimed
// under the same leases as the desktop's.
#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include "facades/runtimeinfo.h"
#include "cli/common.h"
#include "labeling/labeleridentity.h"
#include "labeling/rulelabeler.h"
#include "labeling/taskcatalog.h"
#include "store/preferencestore.h"

namespace d2dpo::cli {

namespace {

struct LabelOptions {
    std::string db = PreferenceStore::defaultPath();
    std::string rule; ///< "" = each task's own rule
    std::string labeler; ///< "" = "rule:<the rule>"
    int64_t limit = 1'000'000;
    double noise = 0; ///< the share of left/right answers flipped (a simulated expert who errs)
    uint64_t seed = 0;
    int threads = 0;
};

int runLabel(const LabelOptions& options)
{
    auto store = PreferenceStore::open(options.db, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("label", store.error());
    if (options.limit < 1)
        return fail("label", "--limit must be at least 1");
    if (Status s = setCpuThreads(options.threads); !s)
        return fail("label", s.error());
    // On a team store the labeler is the database role, as in the desktop.
    auto labelerName = resolveLabeler(*store.value(), options.labeler);
    if (!labelerName)
        return fail("label", labelerName.error());
    LabelOptions o = options;
    o.labeler = labelerName.value();
    // Each pair is labelled by the rule of its own task, read from the store (or by --rule).
    TaskCatalog tasks(*store.value(), o.rule);
    RuleLabeler labeler(tasks);
    RuleLabelOutcome outcome;
    // Labels one batch of pairs into `outcome`; a failure message, or "".
    auto labelBatch = [&](const std::vector<ShownPair>& pending, uint64_t batch) -> std::string {
        RuleLabelPlan plan = labeler.plan(pending, o.labeler);
        if (o.noise > 0)
            addLabelNoise(plan, o.noise, o.seed + batch);
        if (plan.unreadable > 0)
            return plan.firstUnreadable;
        if (plan.withoutRule > 0)
            return "the task " + plan.firstTaskWithoutRule + " has no rule; name one with --rule";
        const RuleLabelOutcome done = labeler.apply(*store.value(), plan);
        outcome.labelIds.insert(outcome.labelIds.end(), done.labelIds.begin(), done.labelIds.end());
        for (size_t c = 0; c < done.byChoice.size(); ++c)
            outcome.byChoice[c] += done.byChoice[c];
        for (const auto& [rule, count] : done.byRule)
            outcome.byRule[rule] += count;
        outcome.alreadyLabelled += done.alreadyLabelled;
        return done.error.empty() ? std::string()
                                  : done.error + " (the " + std::to_string(outcome.labelIds.size()) +
                                        " labels before it are committed)";
    };
    std::string error;
    if (store.value()->isTeamStore()) {
        // On a team store the pairs are claimed under a lease, as the desktop claims them, so that
        // no one is handed a pair another labeler holds; what is left unlabelled is given back.
        std::set<int64_t> tried;
        for (uint64_t batch = 0; error.empty() && int64_t(tried.size()) < o.limit; ++batch) {
            auto claimed = store.value()->claimPairs(o.labeler, std::min<int64_t>(o.limit - int64_t(tried.size()),
                                                                                  QueueSettings::kMaxLeasesPerLabeler));
            if (!claimed) {
                error = claimed.error();
                break;
            }
            std::vector<ShownPair> fresh;
            for (const ShownPair& pair : claimed.value())
                if (tried.insert(pair.id).second)
                    fresh.push_back(pair);
            if (fresh.empty())
                break;
            error = labelBatch(fresh, batch);
        }
        (void)store.value()->releaseLeases(o.labeler);
    } else {
        // A named labeler labels its own queue (its gold pairs too, never a pair it labelled).
        auto pending = store.value()->pendingPairs(o.limit, "", o.labeler);
        if (!pending)
            return fail("label", pending.error());
        error = labelBatch(pending.value(), 0);
    }
    if (!error.empty())
        return fail("label", error);
    std::string rules;
    for (const auto& [rule, count] : outcome.byRule)
        rules += (rules.empty() ? "" : ", ") + rule;
    const auto& counts = outcome.byChoice;
    std::cout << "labelled " << outcome.labelIds.size() << " pairs with the rule " << (rules.empty() ? "-" : rules)
              << ": " << counts[size_t(Choice::Left)] << " left, " << counts[size_t(Choice::Right)] << " right, "
              << counts[size_t(Choice::Tie)] << " tie\n";
    if (outcome.alreadyLabelled > 0)
        std::cout << outcome.alreadyLabelled << " pairs labelled meanwhile by someone else were left as they were\n";
    return 0;
}

} // namespace

void registerLabelCommand(CLI::App& app, int& exitCode)
{
    {
        auto o = std::make_shared<LabelOptions>();
        CLI::App* c = app.add_subcommand("label", "Label the pending pairs with a rule (a simulated expert); with "
                                                  "--labeler, that labeler's queue");
        addDbOption(c, o->db);
        addRuleOption(c, o->rule, ruleHelp() + " (default: each pair's task's own rule)");
        c->add_option(
            "--labeler",
            o->labeler, "Name recorded with the labels (default: rule:<the rule>; on a team store your database role, the only name it takes)");
        c->add_option("--limit", o->limit, "Label at most this many pairs")->check(atLeast(1))->capture_default_str();
        c->add_option("--noise", o->noise, "Flip this share of the rule's left/right answers (an expert who errs)")
            ->check(CLI::Range(0.0, 1.0));
        c->add_option("--seed", o->seed, "Seed of --noise")->check(seedRange())->capture_default_str();
        c->add_option("--threads", o->threads, "CPU threads (0 = the physical cores not busy with other work)")
            ->check(CLI::Range(0, 1024))
            ->capture_default_str();
        c->callback([o, &exitCode] { exitCode = runLabel(*o); });
    }
}

} // namespace d2dpo::cli
