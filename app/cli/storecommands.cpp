// SPDX-License-Identifier: GPL-3.0-or-later
// The preference store from the command line: `d2dpo prefs export|import` (JSONL, imported as one task's sequences), `prefs list|delete`.
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>

#include <algorithm>
#include <array>
#include <map>

#include "facades/runtimeinfo.h"
#include "facades/taskinfo.h"
#include "base/safeoutput.h"
#include "base/untrustedtext.h"
#include "cli/common.h"
#include "store/preferencejsonl.h"
#include "store/preferencestore.h"
#include "store/storename.h"

namespace d2dpo::cli {

namespace {


struct PrefsOptions {
    std::string db = PreferenceStore::defaultPath();
    std::string file;
    bool withUndecided = false; ///< export: ties, skips and both-bad labels too
    std::string checkpoint; ///< import: the sequences are this model's task's
    int length = 0; ///< import without a checkpoint: binary integers of this length
};

int runPrefsExport(const PrefsOptions& o)
{
    // The output is checked before the store is opened: nothing is read (or created) for nothing.
    const bool toStdout = o.file == "-";
    if (!toStdout)
        if (Status s = checkOutputFile(o.file, storeFiles(o.db)); !s)
            return fail("prefs export", s.error());
    auto store = PreferenceStore::open(o.db, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("prefs export", store.error());
    if (toStdout) {
        int64_t count = 0;
        auto text = preferencesJsonl(*store.value(), count, o.withUndecided);
        if (!text)
            return fail("prefs export", text.error());
        std::cout << text.value() << std::flush;
        if (!std::cout) // a full disk or a closed pipe: nothing was exported, and nothing claims it was
            return fail("prefs export", std::string("cannot write to standard output: ") + std::strerror(errno));
        std::cerr << "d2dpo: exported " << count
                  << (o.withUndecided ? " labels\n" : " preferences (ties and skips left out)\n");
        return 0;
    }
    auto written = exportPreferencesJsonl(*store.value(), o.file, o.withUndecided);
    if (!written)
        return fail("prefs export", written.error());
    std::cout << "exported " << written.value()
              << (o.withUndecided ? " labels (ties, skips and both-bad as {\"choice\": ...} lines) to "
                                  : " preferences (ties and skips left out; --with-undecided adds them) to ")
              << o.file << "\n";
    return 0;
}

struct DeleteOptions {
    std::string db = PreferenceStore::defaultPath();
    int64_t importId = 0;
    std::string labeler;
    std::string model;
    bool dryRun = false;
};

int runPrefsDelete(const DeleteOptions& o)
{
    auto store = PreferenceStore::open(o.db, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("prefs delete", store.error());
    LabelSelection selection;
    if (o.importId > 0) {
        auto imports = store.value()->imports();
        if (!imports)
            return fail("prefs delete", imports.error());
        if (std::none_of(imports->begin(), imports->end(), [&](const ImportRecord& i) { return i.id == o.importId; }))
            return fail("prefs delete", "there is no import " + std::to_string(o.importId) + " in " +
                                            storeNameForMessages(o.db) + " (`d2dpo prefs list` lists them)");
        selection.importId = o.importId;
    }
    selection.labeler = o.labeler;
    selection.modelId = o.model;
    auto deleted = store.value()->deleteLabels(selection, o.dryRun);
    if (!deleted)
        return fail("prefs delete", deleted.error());
    std::cout << (o.dryRun ? "would delete " : "deleted ") << deleted->labels << " labels";
    if (deleted->pairs > 0)
        std::cout << ", " << deleted->pairs << " pairs and " << deleted->sequences << " sequences";
    std::cout << " from " << storeNameForMessages(o.db) << (o.dryRun ? " (nothing was changed)" : "") << "\n";
    return 0;
}

int runPrefsList(const std::string& db)
{
    auto store = PreferenceStore::open(db, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return fail("prefs list", store.error());
    auto imports = store.value()->imports();
    auto labels = store.value()->labels(false);
    if (!imports || !labels)
        return fail("prefs list", imports ? labels.error() : imports.error());
    std::map<std::string, std::array<int64_t, kChoiceCount>> byLabeler;
    for (const LabelRecord& l : labels.value())
        ++byLabeler[l.labeler][size_t(l.choice)];
    std::cout << "labelers (left right tie skip both-bad):\n";
    for (const auto& [labeler, counts] : byLabeler)
        std::cout << "  " << excerpt(labeler, 200) << ": " << counts[0] << " " << counts[1] << " " << counts[2] << " "
                  << counts[3] << " " << counts[4] << "\n";
    std::cout << "imports:\n";
    for (const ImportRecord& i : imports.value())
        std::cout << "  " << i.id << ": " << i.pairs << " pairs of " << i.task << " from " << i.file << " at "
                  << i.createdAt << "\n";
    return 0;
}

int runPrefsImport(const PrefsOptions& o)
{
    Result<TaskInfo> task =
        makeError("name the sequences' task: --checkpoint MODEL, or --length N for binary integers");
    if (!o.checkpoint.empty())
        task = TaskInfo::fromCheckpoint(o.checkpoint);
    else if (o.length > 0) {
        TaskConfig binary;
        binary.length = o.length;
        task = TaskInfo::fromConfig(binary);
    }
    if (!task)
        return fail("prefs import", task.error());
    const TaskInfo info = task.value();
    JsonlRules rules{info.key(), [info](const std::string& text) { return info.check(text); }};
    // The whole file is read and checked first: a bad one leaves no store file behind.
    auto records = readPreferencesJsonl(o.file, rules);
    if (!records)
        return fail("prefs import", records.error());
    auto store = PreferenceStore::open(o.db);
    if (!store)
        return fail("prefs import", store.error());
    if (Status s = task->recordIn(*store.value()); !s)
        return fail("prefs import", s.error());
    auto imported = importPreferenceRecords(*store.value(), records.value(), o.file);
    if (!imported)
        return fail("prefs import", imported.error());
    std::cout << "imported " << imported->imported << " labels into " << storeNameForMessages(o.db);
    if (imported->importId > 0)
        std::cout << " as import " << imported->importId;
    if (imported->undecided > 0)
        std::cout << " (" << imported->imported - imported->undecided << " preferences, " << imported->undecided
                  << " ties, skips or both-bad: no preference to train on)";
    std::cout << "; " << imported->duplicates << " already there were left out\n";
    return 0;
}

} // namespace

void registerStoreCommands(CLI::App& app, int& exitCode)
{
    {
        CLI::App* prefs = app.add_subcommand(
            "prefs", "Export or import preferences as JSONL ({\"chosen\", \"rejected\"}), list or delete labels");
        prefs->require_subcommand(1);
        auto o = std::make_shared<PrefsOptions>();
        CLI::App* out = prefs->add_subcommand("export", "Write every decisive label as one JSON line");
        addDbOption(out, o->db);
        out->add_option("--out,-o", o->file, "JSONL file to write (- for standard output)")->required();
        out->add_flag(
            "--with-undecided", o->withUndecided,
            "Also write ties, skips and both-bad labels, as {\"sequence_a\", \"sequence_b\", \"choice\"} lines "
            "(the DPO convention has no chosen/rejected for them; DPO readers skip them)");
        out->callback([o, &exitCode] { exitCode = runPrefsExport(*o); });
        auto i = std::make_shared<PrefsOptions>();
        CLI::App* in = prefs->add_subcommand("import", "Validate every line, then import all of them or none");
        addDbOption(in, i->db);
        in->add_option("--in,-i", i->file, "JSONL file to read")->required();
        CLI::Option* model = in->add_option("--checkpoint,-c", i->checkpoint, "The sequences are of this model's task");
        in->add_option("--length", i->length, "Without --checkpoint: the sequences are binary integers of this length")
            ->check(CLI::Range(2, 512))
            ->excludes(model); // one task, named once: a length beside a model would be ignored
        in->callback([i, &exitCode] { exitCode = runPrefsImport(*i); });
        auto d = std::make_shared<DeleteOptions>();
        CLI::App* del = prefs->add_subcommand(
            "delete", "Delete labels: those of an import (with its pairs), of a labeler, or of pairs from a model");
        addDbOption(del, d->db);
        del->add_option("--import", d->importId, "The import's number (see `d2dpo prefs list`): its pairs go too")
            ->check(atLeast(1));
        del->add_option("--labeler", d->labeler, "The labeler's labels (the pairs stay, pending again)");
        del->add_option("--model", d->model, "The pairs with a sequence of this model id, with their labels");
        del->add_flag("--dry-run", d->dryRun, "Only count what would be deleted");
        del->callback([d, &exitCode] { exitCode = runPrefsDelete(*d); });
        auto l = std::make_shared<std::string>(PreferenceStore::defaultPath());
        CLI::App* list = prefs->add_subcommand("list", "Count the labels by labeler and list the imports");
        addDbOption(list, *l);
        list->callback([l, &exitCode] { exitCode = runPrefsList(*l); });
    }
}

} // namespace d2dpo::cli
