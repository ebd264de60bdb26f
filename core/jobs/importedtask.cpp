// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/importedtask.h"

#include "io/publishedweights.h"
#include "model/publishedarchitectures.h"
#include "tasks/sequencefile.h"

namespace d2dpo {

namespace {

/// A sequences task without training sequences: the vocabulary's symbols, the lengths the user
/// gives, valid = well-formed. What needs the data (in-data, pretraining, rule-made pairs) is refused.
Result<TaskConfig> datalessTask(const ImportJobSpec& spec, const ModelVocabulary& vocabulary)
{
    if (spec.data.maxLength < 1)
        return makeError("without a data file the task's lengths come from you: give the longest sequence "
                         "(--max-length N), and the shortest (--min-length M) if the vocabulary has a pad");
    if (spec.data.crop)
        return makeError("--crop crops the data file's sequences, and there is no data file");
    if (spec.data.validity == "in-data")
        return makeError("'one of the training sequences' (--valid in-data) needs the data file (--data FILE)");
    if (spec.data.rule == "in-data")
        return makeError("the in-data rule ranks by the training sequences: it needs the data file (--data FILE)");
    TaskConfig task;
    task.name = "sequences";
    task.symbols = vocabulary.symbols;
    task.length = spec.data.maxLength;
    task.padded = vocabulary.padded();
    task.minLength = spec.minLength > 0 ? spec.minLength : (task.padded ? 1 : task.length);
    if (task.minLength > task.length)
        return makeError("the shortest length (" + std::to_string(task.minLength) + ") is above the longest (" +
                         std::to_string(task.length) + ")");
    if (task.minLength < task.length && !task.padded)
        return makeError("lengths " + std::to_string(task.minLength) + ".." + std::to_string(task.length) +
                         " vary, but the vocabulary names no pad id (\"pad\": ID)");
    task.validity = "symbols";
    task.rule = spec.data.rule;
    return task;
}

} // namespace

Result<TaskConfig> importedTask(const ImportJobSpec& spec, const ModelVocabulary& vocabulary)
{
    if (spec.task == "binary-integers") {
        if (!spec.dataPath.empty())
            return makeError("the binary-integers task makes its own data; a data file is for --task sequences");
        if (vocabulary.symbols != "01" || vocabulary.padded())
            return makeError("the binary-integers task needs a vocabulary of exactly the symbols \"0\" and \"1\" "
                             "and no pad (this one has '" + vocabulary.symbols + "'" +
                             (vocabulary.padded() ? " and a pad)" : ")"));
        TaskConfig task;
        task.length = spec.length;
        task.rule = spec.data.rule;
        return task;
    }
    if (spec.task != "sequences")
        return makeError("the task must be 'sequences' or 'binary-integers' (got '" + spec.task + "')");
    if (spec.dataPath.empty())
        return datalessTask(spec, vocabulary);
    if (spec.minLength > 0)
        return makeError("with a data file the lengths are the data's: --min-length is for a task without one");
    SequenceFileOptions options = spec.data;
    options.vocabulary = "symbols:" + vocabulary.symbols;
    auto read = readSequenceFile(spec.dataPath, options);
    if (!read)
        return makeError(read.error());
    TaskConfig task = read->task;
    if (task.padded && !vocabulary.padded())
        return makeError("the data's lengths vary (" + std::to_string(task.minLength) + ".." +
                         std::to_string(task.length) + ") but the vocabulary names no pad id (\"pad\": ID)");
    task.padded = vocabulary.padded();
    return task;
}

Result<std::pair<ModelVocabulary, TaskConfig>> weightsVocabulary(const ImportJobSpec& spec, const PublishedWeights& weights)
{
    if (!spec.vocabularyPath.empty()) {
        auto vocabulary = readModelVocabulary(spec.vocabularyPath);
        if (!vocabulary)
            return makeError(vocabulary.error());
        auto task = importedTask(spec, vocabulary.value());
        if (!task)
            return makeError(task.error());
        return std::pair{vocabulary.value(), task.value()};
    }
    // The task decides whether the pad is one of its tokens; a vocabulary without a pad still
    // serves a task whose sequences fill the length.
    auto padded = publishedVocabulary(weights.architecture, weights.configJson, weights.tokens, true);
    auto fixed = publishedVocabulary(weights.architecture, weights.configJson, weights.tokens, false);
    if (!fixed)
        return makeError("weights '" + spec.weightsPath + "': " + fixed.error());
    auto task = importedTask(spec, padded ? padded.value() : fixed.value());
    if (!task)
        return makeError(task.error());
    if (task->name == "sequences" && task->minLength < task->length) {
        if (!padded)
            return makeError("weights '" + spec.weightsPath + "': " + padded.error());
        return std::pair{padded.value(), task.value()};
    }
    TaskConfig fixedTask = task.value();
    fixedTask.padded = false;
    return std::pair{fixed.value(), fixedTask};
}

} // namespace d2dpo
