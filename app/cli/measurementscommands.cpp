// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo measurements import|list|pairs|eval|delete`: a lab's assay values in the store, checked
// against a model's task on the way in (jobs/assayimport.h), and the preference pairs a strategy
// makes of them (jobs/assaypairs.h): what `train --source measurements` trains on.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/common.h"
#include "jobs/assayeval.h"
#include "jobs/assayimport.h"
#include "jobs/assaypairs.h"
#include "store/preferencestore.h"
#include "store/storename.h"

namespace d2dpo::cli {

namespace {

struct ImportOptions {
    AssayImportSpec spec;
    std::string format = "auto";
};

struct PairsOptions {
    std::string db = PreferenceStore::defaultPath();
    AssayPairsSpec spec;
    int64_t show = 5;
};

struct EvalOptions {
    AssayEvalSpec spec;
};

struct DeleteOptions {
    std::string db = PreferenceStore::defaultPath();
    int64_t importId = 0;
    bool dryRun = false;
};

int runImport(ImportOptions o)
{
    const auto format = assayFileFormatNamed(o.format);
    if (!format)
        return fail("measurements import", format.error());
    o.spec.read.format = format.value();
    const auto imported = importAssayFile(o.spec);
    if (!imported)
        return fail("measurements import", imported.error());
    const AssayImportResult& r = imported.value();
    if (r.stored.alreadyImported) {
        std::cout << "this file is already in " << storeNameForMessages(o.spec.storePath) << " as import "
                  << r.stored.importId << " of the assay '" << o.spec.read.assay << "': nothing was added\n";
        return 0;
    }
    std::cout << "imported " << r.rows << " measurements of " << r.sequences << " sequences (" << r.format
              << ") into the assay '" << o.spec.read.assay << "' (" << o.spec.direction << " is better, task "
              << r.task << ") of " << storeNameForMessages(o.spec.storePath) << " as import " << r.stored.importId
              << "\n";
    return 0;
}

int runList(const std::string& db)
{
    auto store = PreferenceStore::open(db, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("measurements list", store.error());
    const auto assays = store.value()->assays();
    const auto imports = store.value()->assayImports();
    if (!assays || !imports)
        return fail("measurements list", assays ? imports.error() : assays.error());
    if (assays->empty()) {
        std::cout << "no measurements in " << storeNameForMessages(db) << " (d2dpo measurements import)\n";
        return 0;
    }
    std::printf("%-24s %-7s %12s %10s %8s  %s\n", "assay", "better", "measurements", "sequences", "imports", "task");
    for (const AssayRecord& a : assays.value())
        std::printf("%-24s %-7s %12lld %10lld %8lld  %s\n", a.name.c_str(), a.direction.c_str(),
                    static_cast<long long>(a.measurements), static_cast<long long>(a.sequences),
                    static_cast<long long>(a.imports), a.task.c_str());
    std::printf("\n%6s %-24s %12s  %-20s  %s\n", "import", "assay", "measurements", "when", "file");
    for (const AssayImportRecord& i : imports.value())
        std::printf("%6lld %-24s %12lld  %-20s  %s\n", static_cast<long long>(i.id), i.assay.c_str(),
                    static_cast<long long>(i.measurements), i.createdAt.c_str(), i.file.c_str());
    return 0;
}

int runPairs(const PairsOptions& o)
{
    auto store = PreferenceStore::open(o.db, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("measurements pairs", store.error());
    const auto made = assayPairs(*store.value(), o.spec);
    if (!made)
        return fail("measurements pairs", made.error());
    const MeasuredPairSet& pairs = made->pairs;
    std::cout << "strategy " << o.spec.strategy << ": " << pairs.pairs.size() << " pairs from "
              << pairs.sequencesUsed << " of " << made->sequences.size() << " measured sequences of the assay '"
              << o.spec.assay << "' (" << pairs.description << ")\n";
    for (int64_t i = 0; i < o.show && size_t(i) < pairs.pairs.size(); ++i) {
        const MeasuredSequence& w = made->sequences[pairs.pairs[size_t(i)].winner];
        const MeasuredSequence& l = made->sequences[pairs.pairs[size_t(i)].loser];
        std::printf("  %s (%.4g ± %.2g)  over  %s (%.4g ± %.2g)\n", w.sequence.c_str(), w.mean, w.spread,
                    l.sequence.c_str(), l.mean, l.spread);
    }
    return 0;
}

int runEval(const EvalOptions& o)
{
    const auto result = evaluateOnHeldOut(o.spec);
    if (!result)
        return fail("measurements eval", result.error());
    const AssayEvalResult& r = result.value();
    std::cout << "held out: " << r.heldOut << " sequences of the assay '" << r.split.assay << "' (" << r.split.split
              << " split, share " << r.split.heldOut << ", split seed " << r.split.splitSeed
              << (r.splitFromRun ? ", as its run trained" : "") << "); " << r.pairs
              << " pairs of different values\n";
    if (r.selfReferenced)
        std::cout << "the model is its own reference (a pretrained model): its implicit reward is 0 for every "
                     "sequence, so only its likelihood ranks them\n";
    std::printf("%-40s %-11s %9s %14s\n", "score", "model", "spearman", "pair_accuracy");
    for (const HeldOutFigure& f : r.figures)
        std::printf("%-40s %-11s %9.4f %14.4f\n", scoreInWords(f.score).c_str(), f.model.c_str(), f.spearman,
                    f.pairAccuracy);
    if (!r.note.empty())
        std::cout << "no likelihood figures: " << r.note << "\n";
    std::cout << "each score from " << o.spec.draws << " noise draws per sequence (seed " << o.spec.seed << ")\n";
    return 0;
}

int runDelete(const DeleteOptions& o)
{
    auto store = PreferenceStore::open(o.db, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("measurements delete", store.error());
    const auto removed = store.value()->deleteAssayImport(o.importId, o.dryRun);
    if (!removed)
        return fail("measurements delete", removed.error());
    std::cout << (o.dryRun ? "would delete " : "deleted ") << removed.value() << " measurements of import "
              << o.importId << "\n";
    return 0;
}

/// --held-out, --split and --split-seed: what `pairs`, `train` and `eval` share.
void addSplitOptions(CLI::App* c, AssayPairsSpec& spec)
{
    c->add_option("--held-out", spec.heldOut,
                  "The share kept out of the pairs, for `measurements eval` (the same --held-out, --split and "
                  "--split-seed give the same split)")
        ->check(CLI::Range(0.0, 0.95))
        ->capture_default_str();
    c->add_option("--split", spec.split,
                  "How the held-out sequences are chosen: random (a share of the sequences), position (those "
                  "mutating a share of the positions) or mutations (those with the most mutations), mutations "
                  "read against the assay's consensus")
        ->check(CLI::IsMember({"random", "position", "mutations"}))
        ->capture_default_str();
    c->add_option("--split-seed", spec.splitSeed, "The held-out split's seed")->capture_default_str();
}

void addPairOptions(CLI::App* c, AssayPairsSpec& spec, bool assayRequired)
{
    CLI::Option* assay = c->add_option("--assay", spec.assay, "The assay whose values make the pairs");
    if (assayRequired)
        assay->required();
    c->add_option("--strategy", spec.strategy,
                  "margin (random pairs whose values differ by more than the noise), clusters (g-DPO: pairs "
                  "within groups of sequences differing at few positions) or best (the best against the rest)")
        ->check(CLI::IsMember({"margin", "clusters", "best"}))
        ->capture_default_str();
    c->add_option("--k", spec.k, "A pair counts when its values differ by more than k times their combined spread")
        ->check(CLI::Range(0.0, 1e6))
        ->capture_default_str();
    c->add_option("--margin", spec.margin, "... and by more than this fixed margin")
        ->check(CLI::Range(0.0, 1e300))
        ->capture_default_str();
    c->add_option("--budget", spec.budget, "At most this many pairs")
        ->check(CLI::Range(int64_t(1), int64_t(100'000'000)))
        ->capture_default_str();
    c->add_option("--pair-seed", spec.seed, "Seed of the pairs' draws (same seed, same pairs)")->capture_default_str();
    c->add_option("--best-share", spec.bestShare, "With --strategy best: the top share paired against the rest")
        ->check(CLI::Range(1e-9, 1.0))
        ->capture_default_str();
    addSplitOptions(c, spec);
}

} // namespace

void addMeasuredPairOptions(CLI::App* command, AssayPairsSpec& spec) { addPairOptions(command, spec, false); }

void registerMeasurementsCommands(CLI::App& app, int& exitCode)
{
    CLI::App* m = app.add_subcommand("measurements",
                                     "Assay values as preferences: import, list, make pairs, evaluate on held-out values, delete");
    m->require_subcommand(1);
    {
        auto o = std::make_shared<ImportOptions>();
        o->spec.storePath = PreferenceStore::defaultPath();
        CLI::App* c = m->add_subcommand("import", "Check a file of measured values against a model's task, then store "
                                                  "all of it or none");
        addDbOption(c, o->spec.storePath);
        c->add_option("file", o->spec.file, "CSV/TSV with a header, a ProteinGym DMS file, or FASTA with values")
            ->required();
        c->add_option("--assay", o->spec.read.assay, "The assay's name (values of different assays are never compared)")
            ->required();
        c->add_option("--checkpoint,-c", o->spec.checkpoint, "The model whose task the sequences are of")->required();
        c->add_option("--direction", o->spec.direction, "Which value is better")
            ->check(CLI::IsMember({"higher", "lower"}))
            ->capture_default_str();
        c->add_option("--format", o->format, "auto, table, proteingym or fasta")
            ->check(CLI::IsMember({"auto", "table", "proteingym", "fasta"}))
            ->capture_default_str();
        c->add_option("--sequence-column", o->spec.read.sequenceColumn, "Table: the sequences' column")
            ->capture_default_str();
        c->add_option("--value-column", o->spec.read.valueColumn, "Table: the values' column")->capture_default_str();
        c->add_option("--sd-column", o->spec.read.sdColumn, "Table: the values' standard deviations (optional)");
        c->add_option("--replicates-column", o->spec.read.replicatesColumn,
                      "Table: how many replicates each value is the mean of (optional)");
        c->add_option("--wild-type", o->spec.read.wildType,
                      "ProteinGym: the wild-type sequence the mutants (A23G:L45P, 1-based) are checked against");
        c->callback([o, &exitCode] { exitCode = runImport(*o); });
    }
    {
        auto db = std::make_shared<std::string>(PreferenceStore::defaultPath());
        CLI::App* c = m->add_subcommand("list", "The assays and their imports");
        addDbOption(c, *db);
        c->callback([db, &exitCode] { exitCode = runList(*db); });
    }
    {
        auto o = std::make_shared<PairsOptions>();
        CLI::App* c = m->add_subcommand("pairs", "The preference pairs a strategy makes of an assay's values");
        addDbOption(c, o->db);
        addPairOptions(c, o->spec, true);
        c->add_option("--show", o->show, "Print this many of the pairs")->check(CLI::Range(int64_t(0), int64_t(1000)));
        c->callback([o, &exitCode] { exitCode = runPairs(*o); });
    }
    {
        auto o = std::make_shared<EvalOptions>();
        o->spec.storePath = PreferenceStore::defaultPath();
        CLI::App* c = m->add_subcommand("eval", "How a model and its reference rank the held-out measurements: "
                                                "Spearman and the share of pairs ordered as measured, by the "
                                                "likelihood bound and the implicit reward");
        addDbOption(c, o->spec.storePath);
        c->add_option("--checkpoint,-c", o->spec.checkpoint, "The fine-tuned model (its reference is found in the store)")
            ->required();
        c->add_option("--assay", o->spec.split.assay,
                      "The assay (default: the one the model's run trained on, with its split)");
        addSplitOptions(c, o->spec.split);
        c->add_option("--draws", o->spec.draws, "Noise draws per sequence and score")
            ->check(CLI::Range(1, 4096))
            ->capture_default_str();
        c->add_option("--max-sequences", o->spec.maxSequences, "Score at most this many held-out sequences")
            ->check(CLI::Range(int64_t(2), int64_t(1'000'000)))
            ->capture_default_str();
        c->add_option("--seed", o->spec.seed, "Seed of the noise draws")->capture_default_str();
        c->add_option("--device", o->spec.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
        c->callback([o, c, &exitCode] {
            // A split stated on the command line is judged on as stated; none: the run's own.
            o->spec.splitFromRun = c->count("--held-out") + c->count("--split") + c->count("--split-seed") == 0;
            exitCode = runEval(*o);
        });
    }
    {
        auto o = std::make_shared<DeleteOptions>();
        CLI::App* c = m->add_subcommand("delete", "Take an import's measurements out of the store");
        addDbOption(c, o->db);
        c->add_option("--import", o->importId, "The import's number (d2dpo measurements list)")
            ->required()
            ->check(atLeast(1));
        c->add_flag("--dry-run", o->dryRun, "Only count what would be deleted");
        c->callback([o, &exitCode] { exitCode = runDelete(*o); });
    }
}

} // namespace d2dpo::cli
