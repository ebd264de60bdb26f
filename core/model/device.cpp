// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/device.h"
#include "base/cputhreads.h"
#include "base/hostmemory.h"

#include <cstdlib>
#include <fstream>

#include <dlfcn.h>
#include <omp.h>
#include <set>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>

namespace d2dpo {

Result<torch::Device> resolveDevice(const std::string& spec)
{
    if (spec == "auto")
        return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    if (spec == "cpu")
        return torch::Device(torch::kCPU);
    if (spec.rfind("cuda", 0) == 0) {
        if (!torch::cuda::is_available())
            return makeError("device '" + spec +
                             "' requested but CUDA is not available (this LibTorch build or machine has no GPU); "
                             "use --device cpu or auto");
        try {
            torch::Device device(spec);
            if (device.index() >= static_cast<int>(torch::cuda::device_count()))
                return makeError("device '" + spec + "' does not exist: " +
                                 std::to_string(torch::cuda::device_count()) + " CUDA device(s) visible");
            return device;
        } catch (const c10::Error&) {
            return makeError("cannot parse device '" + spec + "' (use auto, cpu, cuda or cuda:N)");
        }
    }
    return makeError("unknown device '" + spec + "' (use auto, cpu, cuda or cuda:N)");
}

Status configureThreads(int threads)
{
    if (threads < 0 || threads > 1024)
        return makeError("threads must be in 0..1024 (0 = the free physical cores), got " + std::to_string(threads));
    at::set_num_threads(threads > 0 ? threads : defaultThreadCount());
    // d2dpo's kernels run their parallel loops in this program's OpenMP runtime: the same as
    // LibTorch's on Debian, another copy where LibTorch brings its own (PyTorch's wheels). That
    // copy gets the count here, for the calling thread (OpenMP keeps it per thread).
    omp_set_num_threads(at::get_num_threads());
    return Ok{};
}

torch::Generator makeGenerator(uint64_t seed, torch::Device device)
{
    // Cloning the device's default generator gives a generator of the right kind for any
    // device without naming CUDA types (this build may have no CUDA headers).
    torch::Generator generator = at::globalContext().defaultGenerator(device).clone();
    generator.set_current_seed(seed);
    return generator;
}

namespace {

// The BLAS that libtorch_cpu actually resolved, read from this process's memory map.
std::string loadedBlas()
{
    std::ifstream maps("/proc/self/maps");
    std::set<std::string> found;
    std::string line;
    while (std::getline(maps, line)) {
        for (const char* name : {"openblas", "libblas", "mkl", "blis"}) {
            const auto pos = line.find(name);
            if (pos == std::string::npos)
                continue;
            const auto start = line.find('/');
            if (start != std::string::npos)
                found.insert(line.substr(start));
        }
    }
    if (found.empty())
        return "unknown";
    std::string out;
    for (const std::string& path : found)
        out += (out.empty() ? "" : ", ") + path;
    return out;
}

/// The CPU OpenBLAS picked its kernels for, where OpenBLAS is loaded: the same library runs its
/// matrix products about twice as fast with AVX-512 kernels as with AVX2 ones, and the environment
/// (OPENBLAS_CORETYPE) can choose for it.
std::string openBlasCore()
{
    using CoreName = char* (*)();
    const auto coreName = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
    if (!coreName)
        return "";
    std::string text = std::string(", OpenBLAS kernels for ") + coreName();
    if (const char* chosen = std::getenv("OPENBLAS_CORETYPE"); chosen && *chosen)
        text += " (set by OPENBLAS_CORETYPE)";
    return text;
}

} // namespace

std::string describeRuntime(torch::Device device)
{
    std::string text = "device " + device.str() + ", " + std::to_string(at::get_num_threads()) +
                       " intra-op thread(s), BLAS " + loadedBlas() + openBlasCore();
    if (device.is_cuda())
        text += ", " + std::to_string(torch::cuda::device_count()) + " CUDA device(s)";
    if (freedHostMemoryKept())
        text += ", freed host memory kept for reuse";
    return text;
}

} // namespace d2dpo
