// SPDX-License-Identifier: GPL-3.0-or-later
// The rendezvous store a local launcher serves for its workers, as torchrun's agent does: c10d's
// TCPStore on a free port, which every worker joins as a client (TORCHELASTIC_USE_AGENT_STORE).
// The port is the kernel's pick, so no two launches on one machine race for it. Torch-free.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"

namespace d2dpo {

class RendezvousHost {
public:
    /// Serves a store at `address` (an address of this machine) on a port the kernel picks.
    static Result<std::unique_ptr<RendezvousHost>> start(const std::string& address);
    ~RendezvousHost();
    RendezvousHost(const RendezvousHost&) = delete;
    RendezvousHost& operator=(const RendezvousHost&) = delete;

    int port() const;

private:
    struct Server;
    explicit RendezvousHost(std::unique_ptr<Server> server);
    std::unique_ptr<Server> m_server;
};

} // namespace d2dpo
