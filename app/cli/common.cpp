// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/common.h"

#include <cstdio>
#include <iostream>

#include "base/samplemetrics.h"
#include "jobs/runtimeinfo.h"

namespace d2dpo::cli {

void addRuntimeOptions(CLI::App* c, RuntimeOptions& o)
{
    c->add_option("--seed", o.seed, "Random seed (same seed, same results on the same device)")->capture_default_str();
    c->add_option("--device", o.device, "auto (CUDA when available, else CPU), cpu, cuda or cuda:N")
        ->capture_default_str();
    c->add_option("--threads", o.threads, "CPU threads for LibTorch (0 = the physical cores not busy with other work)")
        ->check(CLI::Range(0, 1024))
        ->capture_default_str();
}

void addModelOptions(CLI::App* c, ModelSpec& s)
{
    c->add_option("--length,-N", s.task.length, "Sequence length N of the binary-integers task (2..512)")
        ->capture_default_str();
    c->add_option("--d-model", s.model.dModel, "Transformer width")->capture_default_str();
    c->add_option("--layers", s.model.layers, "Transformer layers")->capture_default_str();
    c->add_option("--heads", s.model.heads, "Attention heads (must divide --d-model)")->capture_default_str();
    c->add_flag("!--no-time", s.model.timeConditioning, "Drop the time conditioning of the denoiser");
    c->add_option("--eta", s.noise.eta, "Remasking coefficient eta of the reverse process (>= 0)")
        ->capture_default_str();
}

void addPretrainOptions(CLI::App* c, PretrainConfig& p)
{
    c->add_option("--pretrain-steps", p.steps, "Pretraining steps")->capture_default_str();
    c->add_option("--pretrain-batch", p.batch, "Pretraining batch size")->capture_default_str();
    c->add_option("--pretrain-lr", p.learningRate, "Pretraining learning rate (Adam)")->capture_default_str();
    c->add_flag("--elbo", p.elboWeighting, "Weight the pretraining loss by 1/(1-t)");
}

void addDpoOptions(CLI::App* c, DpoConfig& d)
{
    c->add_option("--beta", d.beta, "D2-DPO beta (> 0): smaller moves further from the reference")
        ->capture_default_str();
    c->add_option("--lr", d.learningRate, "D2-DPO learning rate (Adam)")->capture_default_str();
    c->add_option("--batch", d.batch, "Preference pairs per step")->capture_default_str();
    c->add_option("--steps", d.steps, "D2-DPO steps")->capture_default_str();
    c->add_option("--t-samples", d.tSamplesPerPair, "Draws of t per pair in each step")->capture_default_str();
    c->add_option("--eval-every", d.evalEvery, "Evaluate every k steps (0 = only at the end)")->capture_default_str();
    c->add_option("--eval-samples", d.evalSamples, "Samples per evaluation")->capture_default_str();
    c->add_option("--checkpoint-every", d.checkpointEvery, "Write a checkpoint every k steps (0 = only at the end)")
        ->capture_default_str();
}

void addSamplingOptions(CLI::App* c, SamplingConfig& s)
{
    c->add_option("--sampling-steps", s.steps, "Euler steps of the sampler")->capture_default_str();
    c->add_option("--sampling-batch", s.batch, "Sequences per sampler forward pass")->capture_default_str();
}

Status setUpRuntime(const RuntimeOptions& options)
{
    auto runtime = d2dpo::setUpRuntime(options.threads, options.device);
    if (!runtime)
        return makeError(runtime.error());
    std::cerr << "d2dpo: " << runtime.value() << "\n";
    return Ok{};
}

int fail(const std::string& command, const std::string& message)
{
    std::cerr << "d2dpo " << command << ": error: " << message << "\n";
    return 1;
}

std::string formatMetrics(const SampleMetrics& m)
{
    char buffer[200];
    std::snprintf(buffer, sizeof buffer, "VSR %.4f  odd %.4f  odd|valid %.4f  TV %.3f  entropy %.3f  (%lld samples)",
                  m.vsr, m.oddRatio, m.oddShareValid, m.tvFromOddUniform, m.entropy,
                  static_cast<long long>(m.samples));
    return buffer;
}

} // namespace d2dpo::cli
