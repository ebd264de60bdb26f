// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/traininggroup.h"

#include <arpa/inet.h>
#include <cstdlib>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

namespace d2dpo {

struct TrainingGroup::Engine {
    c10::intrusive_ptr<c10d::Store> store; ///< the rendezvous, under this attempt's prefix
    c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
};

namespace {

bool isLoopback(const std::string& address)
{
    return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

/// This machine's address on the route to the master: a UDP socket "connected" to it sends
/// nothing, but the kernel picks the source address it would use. Empty when unknown.
std::string addressTowards(const std::string& host, int port)
{
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found)
        return {};
    std::string address;
    const int fd = socket(found->ai_family, SOCK_DGRAM, 0);
    sockaddr_storage local{};
    socklen_t size = sizeof local;
    char text[INET6_ADDRSTRLEN] = {};
    if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &size) == 0 &&
        getnameinfo(reinterpret_cast<sockaddr*>(&local), size, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
        address = text;
    if (fd >= 0)
        close(fd);
    freeaddrinfo(found);
    return address;
}

/// The interface Gloo's pairs listen on: GLOO_SOCKET_IFNAME when set (as in PyTorch), else the
/// address of this machine on the route to the master (the loopback for a master on this
/// machine's loopback), else the address this host's name resolves to (PyTorch's default).
std::shared_ptr<::gloo::transport::Device> glooDevice(const LaunchEnvironment& launch)
{
    if (const char* name = std::getenv("GLOO_SOCKET_IFNAME"); name && *name)
        return c10d::ProcessGroupGloo::createDeviceForInterface(name);
    if (isLoopback(launch.masterAddress))
        return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
    if (const std::string local = addressTowards(launch.masterAddress, launch.masterPort); !local.empty())
        return c10d::ProcessGroupGloo::createDeviceForHostname(local);
    return c10d::ProcessGroupGloo::createDefaultDevice();
}

/// c10d's messages carry a C++ backtrace; the first line says what happened.
std::string firstLine(const std::exception& e)
{
    std::string text = e.what();
    if (const auto end = text.find('\n'); end != std::string::npos)
        text.resize(end);
    return text;
}

} // namespace

TrainingGroup::TrainingGroup(LaunchEnvironment launch, std::chrono::seconds timeout, std::unique_ptr<Engine> engine)
    : m_launch(std::move(launch))
    , m_timeout(timeout)
    , m_engine(std::move(engine))
{
}

TrainingGroup::~TrainingGroup() = default;

Result<std::shared_ptr<TrainingGroup>> TrainingGroup::join(const LaunchEnvironment& launch,
                                                           std::chrono::seconds timeout)
{
    const std::string where = launch.masterAddress + ":" + std::to_string(launch.masterPort);
    auto engine = std::make_unique<Engine>();
    try {
        c10d::TCPStoreOptions options;
        options.port = uint16_t(launch.masterPort);
        options.isServer = launch.isMain() && !launch.agentServesStore;
        // Every rank counts itself in and rank 0's server waits for all of them (a client that
        // does not count in leaves it waiting until the timeout). An agent's store counts no one.
        if (!launch.agentServesStore)
            options.numWorkers = size_t(launch.worldSize);
        options.waitWorkers = !launch.agentServesStore;
        options.timeout = timeout;
        // Each attempt under its own prefix, as PyTorch's workers keep theirs (torchrun restarts).
        engine->store = c10::make_intrusive<c10d::PrefixStore>(
            "/d2dpo/attempt_" + std::to_string(launch.restartCount),
            c10::make_intrusive<c10d::TCPStore>(launch.masterAddress, options));
    } catch (const std::exception& e) {
        return makeError("rank " + std::to_string(launch.rank) + " could not meet the other " +
                         std::to_string(launch.worldSize - 1) + " at the rendezvous store " + where +
                         " within " + std::to_string(timeout.count()) + " s: " + firstLine(e));
    }
    try {
        auto options = c10d::ProcessGroupGloo::Options::create(timeout);
        options->devices.push_back(glooDevice(launch));
        engine->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(engine->store, launch.rank, launch.worldSize,
                                                                   options);
    } catch (const std::exception& e) {
        return makeError("rank " + std::to_string(launch.rank) + " could not connect to the other ranks (Gloo over "
                         "TCP, rendezvous at " + where + "): " + firstLine(e) +
                         "; GLOO_SOCKET_IFNAME names the network interface to use");
    }
    return std::shared_ptr<TrainingGroup>(new TrainingGroup(launch, timeout, std::move(engine)));
}

template <typename Body> void TrainingGroup::collective(const char* what, Body body)
{
    try {
        body();
    } catch (const std::exception& e) {
        throw GroupLost("rank " + std::to_string(rank()) + " of " + std::to_string(size()) + " lost the group " +
                        what + " (a rank stopped, died or did not answer within " +
                        std::to_string(m_timeout.count()) + " s): " + firstLine(e));
    }
}

void TrainingGroup::allReduceSum(const std::vector<torch::Tensor>& tensors)
{
    torch::NoGradGuard noGrad;
    // Buckets of consecutive tensors of one dtype and device, each at most kBucketBytes (a larger
    // tensor is a bucket of its own).
    std::vector<std::vector<torch::Tensor>> buckets;
    int64_t bytes = 0;
    for (const auto& tensor : tensors) {
        const int64_t size = tensor.numel() * int64_t(tensor.element_size());
        const bool fits = !buckets.empty() && buckets.back().front().dtype() == tensor.dtype() &&
                          buckets.back().front().device() == tensor.device() && bytes + size <= kBucketBytes;
        if (!fits) {
            buckets.emplace_back();
            bytes = 0;
        }
        buckets.back().push_back(tensor);
        bytes += size;
    }
    collective("while summing gradients", [&] {
        std::vector<torch::Tensor> flat(buckets.size());
        std::vector<c10::intrusive_ptr<c10d::Work>> sent;
        for (size_t b = 0; b < buckets.size(); ++b) {
            std::vector<torch::Tensor> pieces;
            for (const auto& tensor : buckets[b])
                pieces.push_back(tensor.reshape({-1}));
            flat[b] = pieces.size() == 1 && buckets[b].front().is_contiguous() ? pieces.front()
                                                                                 : torch::cat(pieces);
            std::vector<torch::Tensor> one{flat[b]};
            sent.push_back(m_engine->gloo->allreduce(one));
        }
        for (size_t b = 0; b < buckets.size(); ++b) {
            sent[b]->wait();
            int64_t offset = 0;
            for (const auto& tensor : buckets[b]) {
                const int64_t n = tensor.numel();
                if (flat[b].data_ptr() != tensor.data_ptr())
                    tensor.copy_(flat[b].narrow(0, offset, n).view_as(tensor));
                offset += n;
            }
        }
    });
}

void TrainingGroup::broadcastFromMain(const std::vector<torch::Tensor>& tensors)
{
    torch::NoGradGuard noGrad;
    collective("while receiving rank 0's tensors", [&] {
        std::vector<c10::intrusive_ptr<c10d::Work>> sent;
        std::vector<torch::Tensor> staged;
        for (const auto& tensor : tensors) {
            staged.push_back(tensor.is_contiguous() ? tensor : tensor.contiguous());
            std::vector<torch::Tensor> one{staged.back()};
            sent.push_back(m_engine->gloo->broadcast(one));
        }
        for (size_t k = 0; k < tensors.size(); ++k) {
            sent[k]->wait();
            if (staged[k].data_ptr() != tensors[k].data_ptr())
                tensors[k].copy_(staged[k]);
        }
    });
}

std::string TrainingGroup::shareFromMain(const std::string& bytes, std::chrono::seconds wait)
{
    const std::string key = "d2dpo/shared/" + std::to_string(m_shared++);
    std::string received;
    collective("while waiting for rank 0", [&] {
        if (isMain()) {
            m_engine->store->set(key, std::vector<uint8_t>(bytes.begin(), bytes.end()));
            received = bytes;
            return;
        }
        m_engine->store->wait({key}, wait);
        const std::vector<uint8_t> value = m_engine->store->get(key);
        received.assign(value.begin(), value.end());
    });
    return received;
}

std::vector<std::optional<std::string>> TrainingGroup::gatherToMain(const std::string& bytes,
                                                                    std::chrono::seconds wait)
{
    const std::string prefix = "d2dpo/gathered/" + std::to_string(m_gathered++) + "/";
    std::vector<std::optional<std::string>> received;
    collective("while gathering every rank's results", [&] {
        if (!isMain()) {
            m_engine->store->set(prefix + std::to_string(rank()), std::vector<uint8_t>(bytes.begin(), bytes.end()));
            return;
        }
        std::vector<std::string> keys;
        for (int r = 1; r < size(); ++r)
            keys.push_back(prefix + std::to_string(r));
        if (!keys.empty()) {
            try {
                m_engine->store->wait(keys, wait);
            } catch (const std::exception&) { // the timeout: take what came (a lost store fails below)
            }
        }
        received.push_back(bytes);
        for (const std::string& key : keys) {
            if (!m_engine->store->check({key})) {
                received.emplace_back();
                continue;
            }
            const std::vector<uint8_t> value = m_engine->store->get(key);
            received.emplace_back(std::string(value.begin(), value.end()));
        }
    });
    return received;
}

} // namespace d2dpo
