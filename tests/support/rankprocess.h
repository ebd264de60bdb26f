// SPDX-License-Identifier: GPL-3.0-or-later
// Starting the program as torchrun starts a rank, over 127.0.0.1 only: a free port for a rank 0
// that serves the rendezvous itself, and RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and
// MASTER_PORT set per process.
#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QStringList>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/clirun.h"

namespace d2dpo::test {

/// A port free on 127.0.0.1 now (for a launch whose rank 0 serves the rendezvous itself).
inline int freePort()
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    int port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0)
        port = ntohs(address.sin_port);
    close(fd);
    return port;
}

/// Starts `process` (the CLI with `args`) as rank `rank` of `world` of a torchrun-style launch
/// whose rank 0 serves the rendezvous on 127.0.0.1:`port`.
inline void startRank(QProcess& process, int rank, int world, int port, const QStringList& args)
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("RANK", QString::number(rank));
    environment.insert("LOCAL_RANK", QString::number(rank));
    environment.insert("WORLD_SIZE", QString::number(world));
    environment.insert("MASTER_ADDR", "127.0.0.1");
    environment.insert("MASTER_PORT", QString::number(port));
    process.setProcessEnvironment(environment);
    process.start(kCli, args);
}

} // namespace d2dpo::test
