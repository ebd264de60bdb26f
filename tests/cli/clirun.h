// SPDX-License-Identifier: GPL-3.0-or-later
// Running the real `d2dpo` binary from a test: its exit code and both outputs.
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

namespace d2dpo::test {

struct CliRun {
    int exitCode = -1; ///< -1: it crashed or timed out
    QString out;
    QString err;
};

inline const QString kCli = QStringLiteral(D2DPO_CLI_PATH);

/// Waits for a started process (killed after `timeoutMs`) and collects what it wrote.
inline CliRun finishProcess(QProcess& process, int timeoutMs = 600000)
{
    CliRun run;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        run.err = QStringLiteral("timed out");
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

inline CliRun runCli(const QStringList& arguments, int timeoutMs = 600000)
{
    QProcess process;
    process.start(kCli, arguments);
    return finishProcess(process, timeoutMs);
}

} // namespace d2dpo::test
