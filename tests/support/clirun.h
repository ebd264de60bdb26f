// SPDX-License-Identifier: GPL-3.0-or-later
// Running the real `d2dpo` binary from a test: its exit code and both outputs, and the check that
// it refuses bad input the way a user should see it.
#pragma once

#include <QElapsedTimer>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QtTest/QtTest>

#include <optional>

namespace d2dpo::test {

struct CliRun {
    int exitCode = -1; ///< -1: it crashed or timed out
    QString out;
    QString err;
};

inline const QString kCli = QStringLiteral(D2DPO_CLI_PATH);

/// The exit code of a command that failed at its work.
inline constexpr int kExitFailure = 1;
/// The exit code of a command line that is itself wrong (an unknown command, a bad option).
inline constexpr int kExitUsage = 2;

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

/// Waits until the running `process` has written `wanted` to its standard error; `err` collects
/// all it wrote (and may already hold it).
inline void waitForOutput(QProcess& process, const QString& wanted, QString& err)
{
    QElapsedTimer timer;
    timer.start();
    while (!err.contains(wanted) && timer.elapsed() < 120000 && process.state() == QProcess::Running) {
        process.waitForReadyRead(200);
        err += QString::fromUtf8(process.readAllStandardError());
    }
    QVERIFY2(err.contains(wanted), qPrintable(err));
}

inline CliRun runCli(const QStringList& arguments, int timeoutMs = 600000)
{
    QProcess process;
    process.start(kCli, arguments);
    return finishProcess(process, timeoutMs);
}

/// Runs the CLI and checks that it refuses: a non-zero exit code (exactly `exitCode` when given),
/// `phrase` in its standard error, and no stack trace there.
inline void expectRefusal(const QStringList& arguments, const QString& phrase,
                          std::optional<int> exitCode = std::nullopt)
{
    const CliRun run = runCli(arguments);
    const QString context = arguments.join(QLatin1Char(' ')) + QLatin1Char('\n') + run.err;
    QVERIFY2(run.exitCode != 0, qPrintable(context));
    if (exitCode)
        QVERIFY2(run.exitCode == *exitCode, qPrintable(context));
    QVERIFY2(run.err.contains(phrase), qPrintable(context));
    QVERIFY2(!run.err.contains(QStringLiteral("frame #")), qPrintable(context));
}

} // namespace d2dpo::test
