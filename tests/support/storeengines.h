// SPDX-License-Identifier: GPL-3.0-or-later
// The store's suites on both engines: each suite runs once on SQLite files and once on databases
// of a private PostgreSQL server (support/pgserver.h), through one main (runOnEveryEngine), so
// every case holds for a team store as it does for a file.
#pragma once

#include <QCoreApplication>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cstdio>
#include <map>
#include <string>

#include "support/pgserver.h"

namespace d2dpo::test {

enum class StoreEngine { SQLite, PostgreSQL };

/// New stores of one engine: files in a temporary folder, or fresh databases (their owner's URL).
class FreshStores {
public:
    explicit FreshStores(StoreEngine engine) : m_engine(engine) {}

    StoreEngine engine() const { return m_engine; }
    bool team() const { return m_engine == StoreEngine::PostgreSQL; }
    const char* engineName() const { return team() ? "PostgreSQL" : "SQLite"; }

    /// The store called `name` in this suite: the same name gives the same store (to reopen it).
    std::string named(const std::string& name)
    {
        if (!team())
            return m_dir.filePath(QString::fromStdString(name)).toStdString();
        auto known = m_urls.find(name);
        if (known != m_urls.end())
            return known->second;
        return m_urls[name] = freshDatabase();
    }
    /// A store no one has used.
    std::string fresh() { return named("fresh" + std::to_string(++m_count) + ".sqlite"); }

private:
    std::string freshDatabase()
    {
        PostgresServer* server = PostgresServer::shared();
        if (!server)
            qFatal("no PostgreSQL server: %s", PostgresServer::unavailableReason().c_str());
        std::string error;
        const std::string database = server->createDatabase("store", {}, &error);
        if (database.empty())
            qFatal("cannot create a database: %s", error.c_str());
        return server->superuserUrl(database);
    }

    StoreEngine m_engine;
    QTemporaryDir m_dir;
    std::map<std::string, std::string> m_urls;
    int m_count = 0;
};

/// Runs `Suite` (constructed from a StoreEngine) on SQLite, then on PostgreSQL; the failures of
/// both. Without a PostgreSQL server here (its package not installable) the second run is skipped
/// with the reason, and only then.
template <typename Suite>
int runOnEveryEngine(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    int failures = 0;
    {
        std::printf("********* Engine: SQLite *********\n");
        Suite suite(StoreEngine::SQLite);
        failures += QTest::qExec(&suite, argc, argv);
    }
    if (!PostgresServer::shared()) {
        std::printf("SKIP   : the PostgreSQL run: %s\n", PostgresServer::unavailableReason().c_str());
        return failures;
    }
    std::printf("********* Engine: PostgreSQL *********\n");
    Suite suite(StoreEngine::PostgreSQL);
    failures += QTest::qExec(&suite, argc, argv);
    return failures;
}

} // namespace d2dpo::test
