// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/rendezvoushost.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace d2dpo {

struct RendezvousHost::Server {
    c10::intrusive_ptr<c10d::TCPStore> store;
};

RendezvousHost::RendezvousHost(std::unique_ptr<Server> server) : m_server(std::move(server)) {}

RendezvousHost::~RendezvousHost() = default;

Result<std::unique_ptr<RendezvousHost>> RendezvousHost::start(const std::string& address)
{
    auto server = std::make_unique<Server>();
    try {
        c10d::TCPStoreOptions options;
        options.port = 0; // the kernel's pick
        options.isServer = true;
        options.waitWorkers = false;
        server->store = c10::make_intrusive<c10d::TCPStore>(address, options);
    } catch (const std::exception& e) {
        std::string text = e.what();
        text = text.substr(0, text.find('\n'));
        return makeError("cannot serve the rendezvous store on " + address + ": " + text);
    }
    return std::unique_ptr<RendezvousHost>(new RendezvousHost(std::move(server)));
}

int RendezvousHost::port() const { return m_server->store->getPort(); }

} // namespace d2dpo
