// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo import --torchscript MODEL.pt --vocabulary VOCAB.json` or `d2dpo import --weights DIR`:
// bring in a masked-diffusion denoiser trained elsewhere (README, "Bring your own model") as a
// checkpoint every other command reads: sample, eval, pairs, train, export. --weights reads a
// published ESM2, DPLM or MDLM checkpoint as data and runs it natively (docs/published-weights.md).
#include <iostream>
#include <memory>

#include "base/configlimits.h"
#include "base/modelverdict.h"
#include "cli/common.h"
#include "cli/consolelistener.h"
#include "cli/progressbar.h"
#include "cli/stopsignals.h"
#include "jobs/importjob.h"

namespace d2dpo::cli {

namespace {

struct ImportOptions {
    RuntimeOptions runtime;
    ImportJobSpec job;
};

int run(ImportOptions o)
{
    if (Status s = setUpRuntime(o.runtime); !s)
        return fail("import", s.error());
    if (o.job.torchScriptPath.empty() == o.job.weightsPath.empty())
        return fail("import", "give the model as --torchscript MODEL.pt (with --vocabulary) or as --weights DIR "
                              "(a folder with model.safetensors, config.json and vocab.txt)");
    if (!o.job.torchScriptPath.empty() && isPublishedWeights(o.job.torchScriptPath))
        return fail("import", "'" + o.job.torchScriptPath + "' is published weights, not TorchScript: give it as --weights");
    if (!o.job.torchScriptPath.empty() && o.job.vocabularyPath.empty())
        return fail("import", "a TorchScript model needs its vocabulary file (--vocabulary VOCAB.json)");
    o.job.seed = o.runtime.seed;
    o.job.device = o.runtime.device;
    ConsoleListener listener;
    // keepWhenStopped: a Ctrl-C keeps a model that passed its checks, written unmeasured (the
    // load of a large model is the work worth keeping); the measurement is a later `d2dpo eval`.
    auto outcome = runImportJob(o.job, listener, stopOnSignals(SignalStops::Import),
                                samplingProgress("evaluate"));
    if (!outcome)
        return exitCodeAfterStop(fail("import", outcome.error()));
    const ModelSpec& spec = outcome->spec;
    if (!outcome->architecture.empty())
        std::cout << "recognised: " << outcome->architecture << " (published weights, read as data; run on d2dpo's kernels)\n";
    std::cout << "model: " << outcome->signature << ", " << outcome->parameters << " parameters, logits over "
              << outcome->modelVocabularySize << " ids\n";
    if (outcome->fusedAttention > 0)
        std::cout << "attention: " << outcome->fusedAttention
                  << " of its softmax(q k^T) v expressions run by d2dpo's fused kernel, to rounding the same\n";
    if (outcome->onednnLinears > 0)
        std::cout << "linear layers: " << outcome->onednnLinears << " run through oneDNN's sgemm, to rounding the same\n";
    const ModelVocabulary& v = spec.model.vocabulary;
    std::cout << "task: " << spec.task.name << ", symbols '" << v.symbols << "'" << (v.padded() ? " + pad" : "")
              << ", length " << spec.task.length << (v.begin.empty() && v.end.empty() ? "" : " (framed by ")
              << (v.begin.empty() && v.end.empty() ? "" : std::to_string(v.begin.size() + v.end.size()) + " fixed ids)")
              << "\n";
    if (outcome->abandoned) { // its thread may still be inside the model: nothing may write it
        std::cout << "stopped: the model's forward was still running " << kMeasurementGraceSeconds
                  << " s after the stop, so it was left behind and nothing was written\n";
        return exitCodeAfterStop(130);
    }
    if (outcome->measured)
        std::cout << "imported: " << formatMetrics(outcome->metrics) << "\n";
    if (const std::string advice = outcome->measured ? weakModelAdvice(outcome->metrics) : ""; !advice.empty())
        std::cout << "note: " << advice << "\n";
    if (outcome->stopped && !outcome->measured && o.job.evaluationSamples > 0) {
        std::cout << "stopped before the measurement ended; wrote " << o.job.outputPath << " (id "
                  << outcome->checkpointId << ", not measured: d2dpo eval -c " << o.job.outputPath << ")\n";
        return exitCodeAfterStop(130);
    }
    std::cout << "wrote " << o.job.outputPath << " (id " << outcome->checkpointId << ")\n";
    return exitCodeAfterStop(0); // a Ctrl-C after the measurement: written whole, and the exit says it came
}

} // namespace

void registerImport(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<ImportOptions>();
    ImportJobSpec& job = options->job;
    CLI::App* c = app.add_subcommand("import", "Bring in a masked-diffusion denoiser: published ESM2/DPLM/MDLM weights or "
                                               "TorchScript (README: Bring your own model)");
    addRuntimeOptions(c, options->runtime);
    c->add_option("--torchscript", job.torchScriptPath,
                  "The torch.jit.save file: forward(tokens: int64 [B, L], t: float [B]) -> float [B, L, V]");
    c->add_option("--weights", job.weightsPath,
                  "Published weights read as data: a folder (or its model.safetensors) with config.json and vocab.txt, "
                  "as transformers' save_pretrained writes ESM2 (and DPLM) checkpoints; MDLM's vocab.txt is optional "
                  "when --vocabulary names the ids");
    c->add_option("--vocabulary", job.vocabularyPath,
                  "The vocabulary file (JSON): {\"symbols\": {\"A\": 5, ...}, \"mask\": ID, \"pad\": ID, \"begin\": "
                  "[IDS], \"end\": [IDS]}; with --weights, made from vocab.txt when not given");
    c->add_option("--task", job.task,
                  "sequences (from --data, or without data from --max-length/--min-length) or binary-integers (the "
                  "paper's task)")
        ->check(CLI::IsMember({"sequences", "binary-integers"}))
        ->capture_default_str();
    c->add_option("--data", job.dataPath,
                  "The training sequences (FASTA or one per line) in the vocabulary's symbols: validity, in-data and "
                  "the length range");
    c->add_option("--length,-N", job.length, "binary-integers: the number of bits (" + std::to_string(limits::kMinLength) + ".." + std::to_string(limits::kMaxLength) + ")")
        ->check(CLI::Range(limits::kMinLength, limits::kMaxLength))
        ->capture_default_str();
    c->add_option("--max-length", job.data.maxLength,
                  "With --data: longer sequences are refused (or cropped with --crop); 0 = up to " +
                      std::to_string(limits::kMaxLength) + ". Without data: the longest valid sequence (required)")
        ->check(CLI::Range(0, limits::kMaxLength));
    c->add_option("--min-length", job.minLength,
                  "Without data: the shortest valid sequence (default 1 with a pad, else --max-length)")
        ->check(CLI::Range(1, limits::kMaxLength));
    c->add_flag("--crop", job.data.crop, "With --data: crop sequences longer than --max-length instead of refusing them");
    c->add_option("--valid", job.data.validity,
                  "With --data: what a valid sample is: symbols or in-data (one of the training sequences)")
        ->check(CLI::IsMember({"symbols", "in-data"}))
        ->capture_default_str();
    c->add_option("--rule", job.data.rule, ruleHelp() + "; what the checkpoint's rule metrics measure");
    addSamplingOptions(c, job.sampling);
    c->add_option("--eval-samples", job.evaluationSamples, "Samples measuring the imported model (0: not measured)")
        ->check(CLI::Range(int64_t(0), int64_t(1000000)))
        ->capture_default_str();
    c->add_option("--eval-seconds", job.evaluationSeconds,
                  "Measure on as many samples as fit in about this many seconds at the model's cost (one pass is "
                  "timed first; at most --eval-samples, at least 20); 0: exactly --eval-samples")
        ->check(CLI::Range(0.0, 86400.0));
    c->add_option("--probe-seconds", job.probeSeconds,
                  "How long the model's first calls may take before the import gives up on it (0: a minute, and "
                  "a second more per 10M parameters)")
        ->check(CLI::Range(0.0, 86400.0));
    c->add_option("--out,-o", job.outputPath, "Checkpoint file to write (it embeds a TorchScript module's code; weights are data)")->required();
    c->add_option("--db", job.storePath, "Also add the model (and its task) to this preference store")->check(storePath());
    c->add_option("--name", job.modelName, "Its name in the store (default: the checkpoint's file name)");
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
