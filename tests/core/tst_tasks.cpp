// SPDX-License-Identifier: GPL-3.0-or-later
// The contract every task keeps (data-driven over the tasks): text round-trips, training data is
// all valid, each rule is antisymmetric and puts invalid below valid, the spec survives a
// checkpoint; and sequence files read as a user writes them, each bad input named by its line.
#include <QTemporaryDir>

#include "support/testsupport.h"
#include "support/tinycheckpoint.h"

#include "base/taskconfig.h"
#include "io/checkpoint.h"
#include "facades/openmodel.h"
#include "facades/taskinfo.h"
#include "model/device.h"
#include "tasks/sequencefile.h"
#include "tasks/task.h"

using namespace d2dpo;

namespace {

const char* kWords = "cat\ndog\napple\nemu\nowl\nbanana\nice\nkiwi\nant\nyak\neel\norca\n";

TaskConfig binaryTask(int length, const std::string& rule = "")
{
    TaskConfig config;
    config.length = length;
    config.rule = rule;
    return config;
}

} // namespace

class TestTasks final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string path(const std::string& name) const { return m_dir.filePath(QString::fromStdString(name)).toStdString(); }

    TaskConfig fileTask(const std::string& text, SequenceFileOptions options = {}, const std::string& name = "f.txt")
    {
        test::writeAll(path(name), text);
        auto read = readSequenceFile(path(name), options);
        if (!read)
            qWarning("%s", read.error().c_str());
        return read ? read->task : TaskConfig{};
    }
    /// The error reading `text` gives.
    std::string fileError(const std::string& text, SequenceFileOptions options = {})
    {
        test::writeAll(path("bad.txt"), text);
        auto read = readSequenceFile(path("bad.txt"), options);
        return read ? std::string("(read)") : read.error();
    }

    void addTasks()
    {
        QTest::addColumn<QString>("which");
        QTest::newRow("binary-integers N=8, odd") << "binary";
        QTest::newRow("words, motif:^[aeiou]") << "motif";
        QTest::newRow("words, composition:aeiou") << "composition";
        QTest::newRow("words in-data, in-data") << "in-data";
        QTest::newRow("protein FASTA, motif:^M") << "protein";
    }
    TaskConfig taskFor(const QString& which)
    {
        if (which == "binary")
            return binaryTask(8, "odd");
        SequenceFileOptions options;
        if (which == "protein") {
            options.vocabulary = "protein";
            options.rule = "motif:^M";
            return fileTask(">a\nMKVL\nAG*\n>b\nmkw\n>c\nGAVLIK\n>d\nMAAA\n", options, "p.fasta");
        }
        options.rule = which == "motif" ? "motif:^[aeiou]" : which == "composition" ? "composition:aeiou" : "in-data";
        options.validity = which == "in-data" ? "in-data" : "symbols";
        return fileTask(kWords, options);
    }

private Q_SLOTS:
    void formatThenParseIsTheIdentity_data() { addTasks(); }
    void formatThenParseIsTheIdentity()
    {
        QFETCH(QString, which);
        auto made = makeTask(taskFor(which));
        QVERIFY2(made.ok(), made.ok() ? "" : made.error().c_str());
        const std::unique_ptr<Task> task = std::move(made.value());
        auto generator = makeGenerator(3, torch::kCPU);
        // Any token rows, valid or not (pads anywhere, masks too): text and back gives them again.
        const auto random = torch::randint(0, task->vocabSize() + 1, {200, task->length()}, generator,
                                           torch::kLong);
        const std::vector<int64_t> rows = rowsToHost(random);
        const std::vector<std::string> texts = formatRows(*task, random);
        for (size_t i = 0; i < texts.size(); ++i) {
            const std::vector<int64_t> row(rows.begin() + int64_t(i) * task->length(),
                                           rows.begin() + int64_t(i + 1) * task->length());
            const bool hasMask = std::find(row.begin(), row.end(), task->maskToken()) != row.end();
            auto back = task->parse(texts[i]);
            QCOMPARE(back.ok(), !hasMask); // a mask is never accepted as text
            if (!hasMask)
                QCOMPARE(back.value(), row);
        }
    }

    void trainingDataIsAllValid_data() { addTasks(); }
    void trainingDataIsAllValid()
    {
        QFETCH(QString, which);
        auto task = makeTask(taskFor(which)).value();
        auto generator = makeGenerator(4, torch::kCPU);
        const SampleMetrics m = task->measure(task->sampleData(500, generator, torch::kCPU));
        QCOMPARE(m.vsr(), 1.0);
        QCOMPARE(m.histogram.invalid, int64_t(0));
        QVERIFY(!m.ruleMetric.empty());
        for (const MetricValue& v : m.values)
            QVERIFY2(!v.description.empty(), v.name.c_str());
    }

    void rulesAreAntisymmetricAndPutInvalidLast_data() { addTasks(); }
    void rulesAreAntisymmetricAndPutInvalidLast()
    {
        QFETCH(QString, which);
        auto task = makeTask(taskFor(which)).value();
        auto generator = makeGenerator(5, torch::kCPU);
        const auto data = formatRows(*task, task->sampleData(40, generator, torch::kCPU));
        const auto noise = formatRows(*task, torch::randint(0, task->vocabSize(), {40, task->length()}, generator,
                                                            torch::kLong));
        std::vector<std::string> all = data;
        all.insert(all.end(), noise.begin(), noise.end());
        for (const std::string& a : all)
            for (const std::string& b : all) {
                const Choice ab = task->ruleChoice(a, b).value();
                const Choice ba = task->ruleChoice(b, a).value();
                const Choice mirrored = ab == Choice::Left ? Choice::Right : ab == Choice::Right ? Choice::Left : ab;
                QCOMPARE(ba, mirrored);
                if (a == b)
                    QCOMPARE(ab, Choice::Tie);
            }
        // A valid sequence beats every invalid one.
        for (const std::string& valid : data)
            for (const std::string& other : noise) {
                const auto tokens = task->parse(other).value();
                if (!task->isValid(tokens.data()))
                    QCOMPARE(task->ruleChoice(valid, other).value(), Choice::Left);
            }
        // Rule-made pairs: each winner ranks above its loser.
        const auto [winners, losers] = task->rulePairs(300, generator, torch::kCPU).value();
        const auto w = rowsToHost(winners), l = rowsToHost(losers);
        for (int64_t i = 0; i < 300; ++i)
            QVERIFY(task->rank(w.data() + i * task->length()) > task->rank(l.data() + i * task->length()));
    }

    void specRoundTripsThroughACheckpoint_data() { addTasks(); }
    void specRoundTripsThroughACheckpoint()
    {
        QFETCH(QString, which);
        auto task = makeTask(taskFor(which)).value();
        test::TinyCheckpointOptions tiny;
        tiny.spec = test::tinySpec(int(task->length()));
        tiny.spec->task = task->config();
        tiny.vocabSize = task->vocabSize();
        tiny.seed = 1;
        tiny.createdAt = "2026-01-01T00:00:00Z";
        const std::string file = path("task-" + which.toStdString() + ".d2dpo");
        QVERIFY(test::writeTinyCheckpoint(file, tiny).ok());
        auto opened = openModel(file, torch::Device(torch::kCPU));
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().c_str());
        const TaskConfig& back = opened->task->config();
        QCOMPARE(back.symbols, task->config().symbols);
        QCOMPARE(back.data, task->config().data);
        QCOMPARE(back.rule, task->config().rule);
        QCOMPARE(opened->task->key(), task->key());
        QCOMPARE(opened->task->vocabulary().symbols(), task->vocabulary().symbols());
        // A checkpoint of this task is refused where another task's data is expected.
        const std::string other = which == "binary" ? "binary-integers:9" : "binary-integers:8";
        const Status refused = requireTask(*opened->task, other, "the checkpoint");
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().find(other) != std::string::npos, refused.error().c_str());
        QVERIFY(requireTask(*opened->task, task->key(), "the checkpoint").ok());
    }

    void fastaOverSeveralLinesWithStopMarksAndLowerCaseIsRead()
    {
        const TaskConfig t = fileTask(">sp|P1 first\r\nMKV\r\nLLa*\r\n\r\n>second\nmkw\n>third\nMKVLLA\n", {}, "x.fasta");
        QCOMPARE(t.data, (std::vector<std::string>{"MKVLLA", "MKW", "MKVLLA"}));
        QCOMPARE(t.symbols, std::string("AKLMVW"));
        QVERIFY(t.padded);
        QCOMPARE(t.length, 6);
        QCOMPARE(t.minLength, 3);
        test::writeAll(path("dup.fasta"), ">a\nMKV\n>b\nMKV\n>c\nMKW\n");
        const auto read = readSequenceFile(path("dup.fasta"), {});
        QCOMPARE(read->report.duplicates, int64_t(1));
        QCOMPARE(read->report.format, std::string("fasta"));
        QVERIFY(!t.padded || makeTask(t).ok());
    }

    void linesKeepTheirCaseAndSkipBlankLines()
    {
        const TaskConfig t = fileTask("  Cat \n\ndog\r\n\n");
        QCOMPARE(t.data, (std::vector<std::string>{"Cat", "dog"}));
        QCOMPARE(t.symbols, std::string("Cadgot"));
    }

    void badInputsNameTheirLine()
    {
        QVERIFY(fileError("").find("holds no sequences") != std::string::npos);
        QVERIFY(fileError("\n\n  \n").find("holds no sequences") != std::string::npos);
        SequenceFileOptions protein;
        protein.vocabulary = "protein";
        const std::string outside = fileError(">a\nMKV\n>b\nMKJL\n", protein);
        QVERIFY2(outside.find(":4:") != std::string::npos && outside.find("'J' at position 3") != std::string::npos,
                 outside.c_str());
        const std::string mask = fileError("abc\nab_c\n");
        QVERIFY2(mask.find(":2:") != std::string::npos, mask.c_str());
        const std::string empty = fileError(">a\n>b\nMK\n");
        QVERIFY2(empty.find(":1:") != std::string::npos && empty.find("without a sequence") != std::string::npos,
                 empty.c_str());
        QVERIFY(readSequenceFile(path("missing.txt"), {}).error().find("does not exist") != std::string::npos);
        QVERIFY(readSequenceFile(m_dir.path().toStdString(), {}).error().find("folder") != std::string::npos);
        QVERIFY(readSequenceFile("/dev/zero", {}).error().find("not a regular file") != std::string::npos);
        SequenceFileOptions noSymbols;
        noSymbols.vocabulary = "symbols:";
        QVERIFY(fileError("abc\n", noSymbols).find("needs the symbols") != std::string::npos);
        SequenceFileOptions unknown;
        unknown.vocabulary = "klingon";
        QVERIFY(fileError("abc\n", unknown).find("known: protein, dna, rna") != std::string::npos);
    }

    void overLongSequencesAreRefusedOrCropped()
    {
        SequenceFileOptions options;
        options.maxLength = 4;
        const std::string refused = fileError("abc\nabcdef\nab\nabcdefgh\n", options);
        QVERIFY2(refused.find("2 sequences are longer than 4") != std::string::npos &&
                     refused.find(":2,") != std::string::npos && refused.find("has 6") != std::string::npos,
                 refused.c_str());
        options.crop = true;
        test::writeAll(path("long.txt"), "abc\nabcdef\nab\nabcdefgh\n");
        const auto read = readSequenceFile(path("long.txt"), options).value();
        QCOMPARE(read.report.cropped, int64_t(2));
        QCOMPARE(read.task.data, (std::vector<std::string>{"abc", "abcd", "ab", "abcd"}));
        QCOMPARE(read.task.length, 4);
    }

    void sequenceMetricsMatchTheirHandCountedValues()
    {
        SequenceFileOptions options;
        options.rule = "motif:^[aeiou]";
        auto task = makeTask(fileTask(kWords, options)).value();
        // "apple" (in the data, a vowel first), "zzz" ('z' is no symbol of these words: "a.a", a pad
        // inside, stands in), "emu" twice, "a.b" (a pad inside: invalid).
        std::vector<int64_t> rows;
        for (const char* text : {"apple", "zzz", "emu", "emu", "a.b"}) {
            auto tokens = task->parse(text);
            if (!tokens) { // 'z' is not in the words' symbols: an invalid row of pads after "a"
                tokens = task->parse("a.a");
            }
            rows.insert(rows.end(), tokens->begin(), tokens->end());
        }
        const SampleMetrics m = task->measureRows(rows, 5);
        QCOMPARE(m.vsr(), 3.0 / 5);                   // apple, emu, emu
        QCOMPARE(m.valueOr0("rule_share"), 3.0 / 5);  // all three start with a vowel
        QCOMPARE(m.valueOr0("novel_share"), 0.0);
        QCOMPARE(m.valueOr0("unique_share"), 2.0 / 5);
        QCOMPARE(m.histogram.axis, std::string("length"));
        QCOMPARE(m.histogram.labels.front(), std::string("3"));
        QCOMPARE(m.histogram.counts[0], int64_t(2)); // emu, emu
        QCOMPARE(m.histogram.counts[2], int64_t(1)); // apple
        QCOMPARE(task->hint(task->parse("apple").value()).value, std::string("length 5, in the data"));
        QCOMPARE(task->hint(task->parse("owl").value()).rule, std::string("matches ^[aeiou]"));
        QVERIFY(!task->hint(task->parse("a.a").value()).valid);
    }

    void motifMatchesAreTheSpansAViewMarks()
    {
        // Every match, left to right and disjoint; ^ only at the start of the whole text; rules
        // about the whole sequence mark nothing.
        SequenceFileOptions options;
        options.vocabulary = "protein";
        options.rule = "motif:H.{3}H";
        test::writeAll(path("m.fasta"), ">a\nMHAAAHKHCCCHH\n");
        const auto read = readSequenceFile(path("m.fasta"), options);
        QVERIFY(read);
        const TaskInfo task = TaskInfo::fromConfig(read->task).value();
        using Spans = std::vector<std::pair<int, int>>;
        QCOMPARE(task.ruleMatches("MHAAAHKHCCCHH"), (Spans{{1, 6}, {7, 12}}));
        QCOMPARE(task.ruleMatches("MKV"), Spans{});
        QCOMPARE(TaskInfo::fromConfig(read->task, "motif:^M").value().ruleMatches("MMKM"), (Spans{{0, 1}}));
        QCOMPARE(TaskInfo::fromConfig(read->task, "motif:K*").value().ruleMatches("MKKVK"), (Spans{{1, 3}, {4, 5}}));
        QCOMPARE(TaskInfo::fromConfig(read->task, "composition:HK").value().ruleMatches("MHAAAH"), Spans{});
        QCOMPARE(TaskInfo::fromConfig(binaryTask(8, "odd")).value().ruleMatches("00000001"), Spans{});
    }

    void theProteinVocabularyHasXOnlyWhenTheDataHasIt()
    {
        // A model given a symbol the data never shows learns to write it now and then.
        SequenceFileOptions options;
        options.vocabulary = "protein";
        test::writeAll(path("nox.fasta"), ">a\nMKVLAH\n>b\nMKWLH\n");
        const auto without = readSequenceFile(path("nox.fasta"), options);
        QVERIFY(without);
        QCOMPARE(without->task.symbols, std::string("ACDEFGHIKLMNPQRSTVWY"));
        test::writeAll(path("x.fasta"), ">a\nMKVXAH\n>b\nMKWLH\n");
        const auto with = readSequenceFile(path("x.fasta"), options);
        QVERIFY(with);
        QCOMPARE(with->task.symbols, std::string("ACDEFGHIKLMNPQRSTVWYX"));
        QCOMPARE(TaskInfo::fromConfig(without->task).value().alphabet(), std::string("protein"));
    }

    void unknownRulesAreRefused()
    {
        SequenceFileOptions options;
        for (const char* rule : {"odd", "motif:[", "composition:XYZ", "motif:"}) {
            options.rule = rule;
            const auto task = makeTask(fileTask(kWords, options));
            QVERIFY2(!task.ok(), rule);
        }
    }

    void aTaskIsTitledByTheLengthsItAdmits()
    {
        TaskConfig imported;
        imported.name = "sequences";
        imported.length = 150;
        imported.minLength = 140; // an import at 140-150
        QCOMPARE(taskTitle(imported), std::string("sequences, length 140-150"));
        imported.minLength = 150;
        QCOMPARE(taskTitle(imported), std::string("sequences, length 150"));
        QCOMPARE(taskTitle(binaryTask(16)), std::string("binary integers, N=16"));
    }
};

QTEST_GUILESS_MAIN(TestTasks)
#include "tst_tasks.moc"
