// SPDX-License-Identifier: GPL-3.0-or-later
// The private PostgreSQL server of a test process (pgserver.h).
#include "support/pgserver.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <libpq-fe.h>
#include <mutex>
#include <pwd.h>
#include <random>
#include <signal.h>
#include <spawn.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace d2dpo::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kSetpriv = "/usr/bin/setpriv"; // util-linux, essential on Debian

std::string readFile(const std::string& path)
{
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Seeded from the OS: two test processes started at once draw different passwords and ports.
std::mt19937_64& entropy()
{
    static std::mt19937_64 engine{(uint64_t(std::random_device{}()) << 32) ^ std::random_device{}()};
    return engine;
}

std::string percentEncode(const std::string& text)
{
    std::string out;
    for (unsigned char c : text) {
        char escaped[4];
        std::snprintf(escaped, sizeof escaped, "%%%02X", c);
        out += std::isalnum(c) || std::strchr("-._~", c) ? std::string(1, char(c)) : std::string(escaped);
    }
    return out;
}

/// An SQL identifier (quote '"') or string literal (quote '\''): the quote doubled inside, nothing
/// else escaped (standard_conforming_strings is on, so a backslash is a backslash).
std::string quoted(const std::string& text, char quote)
{
    std::string out(1, quote);
    for (char c : text)
        out += c == quote ? std::string(2, c) : std::string(1, c);
    return out + quote;
}

/// The newest installed server's programs: Debian puts each major version in a folder of its
/// own, /usr/lib/postgresql/<major>/bin.
std::string findBinDir()
{
    int best = -1;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)
            && fs::exists(entry.path() / "bin" / "initdb") && fs::exists(entry.path() / "bin" / "postgres"))
            best = std::max(best, std::stoi(name));
    }
    return best < 0 ? "" : "/usr/lib/postgresql/" + std::to_string(best) + "/bin";
}

/// Starts `argv` in `cwd` with stdin from /dev/null and stdout and stderr into `logPath`, and no
/// other descriptor of ours (a pipe it kept open could make ctest wait for it). posix_spawn: a
/// test process has threads, so nothing but exec may follow a fork. -1 with `error` set.
pid_t spawn(const std::vector<std::string>& argv, const std::string& cwd, const std::string& logPath,
            std::string& error)
{
    const int log = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) {
        error = "cannot write " + logPath + ": " + std::strerror(errno);
        return -1;
    }
    std::vector<char*> args;
    for (const std::string& arg : argv)
        args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    // A fixed time zone: initdb otherwise probes the zoneinfo files (slow), and suites see UTC.
    std::vector<char*> env{const_cast<char*>("TZ=UTC")};
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "TZ=", 3) != 0)
            env.push_back(*e);
    env.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, log, 1);
    posix_spawn_file_actions_adddup2(&actions, log, 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    close(log);
    if (rc != 0)
        error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return rc == 0 ? pid : -1;
}

/// spawn() from a thread of its own that lives as long as the process. The parent-death signal
/// fires when the *thread* that started the child ends, not the process: a server started from a
/// suite's worker thread would die with that thread.
pid_t spawnForLife(const std::vector<std::string>& argv, const std::string& cwd, const std::string& logPath,
                   std::string& error)
{
    pid_t pid = -1;
    std::promise<void> started;
    auto done = started.get_future();
    std::thread([&, started = std::move(started)]() mutable {
        pid = spawn(argv, cwd, logPath, error); // the last use of the references: we wait for it
        started.set_value();
        for (;;)
            pause();
    }).detach();
    done.wait();
    return pid;
}

/// Waits up to `timeout` for our child `pid` to end; its status, or -1 if it still runs.
int waitFor(pid_t pid, std::chrono::milliseconds timeout)
{
    for (const auto deadline = Clock::now() + timeout;; std::this_thread::sleep_for(std::chrono::milliseconds(10))) {
        int status = 0;
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid || (done < 0 && errno != EINTR))
            return done == pid ? status : 0; // else not ours to wait for (SIGCHLD ignored): gone
        if (Clock::now() >= deadline)
            return -1;
    }
}

bool processAlive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/// Removes the folders of test processes that died without exiting (kill -9, a crash): their
/// server died with them (the parent-death signal), but its folder and its System V shared
/// memory segment remain. A folder whose owner runs, or that we cannot read, is left alone.
void removeStaleFolders()
{
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/tmp", ec)) {
        const std::string dir = entry.path().string();
        if (entry.path().filename().string().rfind("d2dpo-pg-", 0) != 0)
            continue;
        const pid_t owner = pid_t(std::atol(readFile(dir + "/owner").c_str()));
        if (owner <= 0 || processAlive(owner))
            continue; // alive, or still being set up (it writes the owner first)
        // postmaster.pid: the server's pid on line 1, "key shmid" of its segment on line 7.
        std::ifstream pidFile(dir + "/data/postmaster.pid");
        std::vector<std::string> fields;
        for (std::string line; std::getline(pidFile, line);)
            fields.push_back(line);
        const pid_t postmaster = fields.empty() ? 0 : pid_t(std::atol(fields[0].c_str()));
        if (processAlive(postmaster)
            && fs::read_symlink("/proc/" + std::to_string(postmaster) + "/cwd", ec) == fs::path(dir) / "data")
            continue; // its server outlived it (no parent-death signal?): not ours to pull away
        long key = 0, shmid = -1;
        shmid_ds info{};
        if (fields.size() >= 7)
            std::sscanf(fields[6].c_str(), "%ld %ld", &key, &shmid);
        if (shmid >= 0 && shmctl(int(shmid), IPC_STAT, &info) == 0 && info.shm_perm.__key == key
            && info.shm_nattch == 0)
            shmctl(int(shmid), IPC_RMID, nullptr);
        fs::remove_all(dir, ec);
    }
}

/// Runs `sql` on a connection of its own to `url`; false with *error and *sqlState set.
bool run(const std::string& url, const std::string& sql, std::string* error, std::string* sqlState = nullptr)
{
    PGconn* connection = PQconnectdb(url.c_str());
    bool ok = PQstatus(connection) == CONNECTION_OK;
    if (!ok && error)
        *error = PQerrorMessage(connection);
    if (ok) {
        PGresult* result = PQexec(connection, sql.c_str());
        const ExecStatusType status = PQresultStatus(result);
        ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY;
        if (!ok && error)
            *error = result ? PQresultErrorMessage(result) : PQerrorMessage(connection);
        if (!ok && sqlState && result && PQresultErrorField(result, PG_DIAG_SQLSTATE))
            *sqlState = PQresultErrorField(result, PG_DIAG_SQLSTATE);
        PQclear(result);
    }
    PQfinish(connection);
    return ok;
}

std::mutex g_mutex;
PostgresServer* g_server = nullptr;
bool g_tried = false;
std::string g_reason;
std::atomic<int> g_databases{0};

} // namespace

PostgresServer* PostgresServer::shared()
{
    std::lock_guard lock(g_mutex);
    if (!g_tried) {
        g_tried = true;
        auto* server = new PostgresServer; // never deleted: stopAtExit may run after every static
        if (server->start(g_reason)) {
            g_server = server;
            std::atexit(stopAtExit);
        } else {
            server->stop();
            delete server;
        }
    }
    return g_server;
}

std::string PostgresServer::unavailableReason()
{
    std::lock_guard lock(g_mutex);
    return g_reason;
}

bool PostgresServer::start(std::string& reason)
{
    m_owner = getpid();
    const std::string bin = findBinDir();
    if (bin.empty() || access(kSetpriv, X_OK) != 0) {
        reason = bin.empty() ? "PostgreSQL's initdb is not installed: apt-get install postgresql"
                             : "setpriv (util-linux) is not installed: it runs the server, and has it die with us";
        return false;
    }
    removeStaleFolders();

    // PostgreSQL refuses to run as root: then the server runs as `nobody`, who owns its folder.
    // --pdeathsig: the kernel kills the server when this process dies, however it dies.
    std::vector<std::string> prefix{kSetpriv};
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (uid == 0) {
        const passwd* nobody = getpwnam("nobody");
        if (!nobody) {
            reason = "the tests run as root, and PostgreSQL needs another user: there is no user `nobody`";
            return false;
        }
        uid = nobody->pw_uid;
        gid = nobody->pw_gid;
        prefix.insert(prefix.end(),
                      {"--reuid=" + std::to_string(uid), "--regid=" + std::to_string(gid), "--clear-groups"});
    }
    prefix.insert(prefix.end(), {"--pdeathsig", "KILL", "--"});

    // A short path: a Unix socket's path holds at most 107 bytes.
    char folder[] = "/tmp/d2dpo-pg-XXXXXX";
    if (!mkdtemp(folder)) {
        reason = std::string("cannot create a folder under /tmp: ") + std::strerror(errno);
        return false;
    }
    m_dir = folder;
    std::ofstream(m_dir + "/owner") << m_owner << '\n';
    const std::string pwfile = m_dir + "/pwfile";
    for (char& c : m_password.assign(32, ' '))
        c = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[entropy()() % 62];
    std::ofstream(pwfile) << m_password << '\n';
    // Root reaches nobody's folder anyway; 0711 only spares a root without CAP_DAC_OVERRIDE.
    if (chown(m_dir.c_str(), uid, gid) != 0 || chown(pwfile.c_str(), uid, gid) != 0
        || chmod(m_dir.c_str(), geteuid() == 0 ? 0711 : 0700) != 0 || chmod(pwfile.c_str(), 0600) != 0) {
        reason = "cannot hand " + m_dir + " to the server's user: " + std::strerror(errno);
        return false;
    }

    std::vector<std::string> initdb = prefix;
    initdb.insert(initdb.end(), {bin + "/initdb", "-D", m_dir + "/data", "-U", "postgres", "--pwfile=" + pwfile,
                                 "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
                                 "--no-instructions"});
    const pid_t pid = spawn(initdb, m_dir, m_dir + "/initdb.log", reason);
    if (pid < 0)
        return false;
    const int status = waitFor(pid, std::chrono::minutes(2));
    fs::remove(pwfile);
    if (status < 0 && kill(pid, SIGKILL) == 0)
        waitFor(pid, std::chrono::seconds(5));
    if (status != 0) {
        reason = "initdb failed:\n" + readFile(m_dir + "/initdb.log");
        return false;
    }

    // The port only names the socket file, .s.PGSQL.<port>, in our own folder: two servers
    // cannot collide on it (nor on shared memory, keyed by the data folder), so no retry.
    m_port = std::uniform_int_distribution<int>(20000, 60000)(entropy());
    const std::string onOff = durable() ? "on" : "off";
    std::vector<std::string> postgres = prefix;
    postgres.insert(postgres.end(),
                    {bin + "/postgres", "-D", m_dir + "/data", "-p", std::to_string(m_port),
                     // No TCP listener: the socket in our folder is the only way in.
                     "-c", "listen_addresses=", "-c", "unix_socket_directories=" + m_dir,
                     // Durability buys a test nothing; a benchmark asks for it (durable()).
                     "-c", "fsync=" + onOff, "-c", "full_page_writes=" + onOff, "-c", "synchronous_commit=" + onOff,
                     "-c", "max_connections=100", "-c", "shared_buffers=32MB",
                     // Dynamic shared memory in data/, not /dev/shm: a server killed with its test
                     // process leaves nothing there, and its folder is removed by the next one.
                     "-c", "dynamic_shared_memory_type=mmap"});
    m_postmaster = spawnForLife(postgres, m_dir, m_dir + "/postgres.log", reason);
    if (m_postmaster < 0)
        return false;
    const std::string ping = superuserUrl();
    bool exited = false;
    for (const auto deadline = Clock::now() + std::chrono::seconds(30); !exited && Clock::now() < deadline;) {
        if (PQping(ping.c_str()) == PQPING_OK)
            return true;
        exited = waitFor(m_postmaster, std::chrono::milliseconds(20)) >= 0;
    }
    m_postmaster = exited ? -1 : m_postmaster; // else shared() stops it
    reason = std::string(exited ? "PostgreSQL exited while starting" : "PostgreSQL did not start within 30 s")
             + "; its log:\n" + readFile(m_dir + "/postgres.log");
    return false;
}

void PostgresServer::stop()
{
    if (getpid() != m_owner)
        return; // a forked child that exits: the server is its parent's
    // SIGQUIT: an immediate shutdown, as the data is thrown away anyway.
    if (m_postmaster > 0 && kill(m_postmaster, SIGQUIT) == 0 && waitFor(m_postmaster, std::chrono::seconds(10)) < 0
        && kill(m_postmaster, SIGKILL) == 0)
        waitFor(m_postmaster, std::chrono::seconds(5));
    m_postmaster = -1;
    std::error_code ec;
    if (!m_dir.empty())
        fs::remove_all(m_dir, ec);
    m_dir.clear();
}

void PostgresServer::stopAtExit()
{
    std::lock_guard lock(g_mutex);
    if (g_server)
        g_server->stop();
}

std::string PostgresServer::url(const std::string& user, const std::string& password,
                                const std::string& database) const
{
    return "postgresql://" + percentEncode(user) + ":" + percentEncode(password) + "@/" + percentEncode(database)
           + "?host=" + percentEncode(m_dir) + "&port=" + std::to_string(m_port);
}

bool PostgresServer::exec(const std::string& database, const std::string& sql, std::string* error)
{
    return run(superuserUrl(database), sql, error);
}

std::string PostgresServer::createDatabase(const std::string& prefix, const std::string& owner, std::string* error)
{
    const std::string name = prefix + "_" + std::to_string(++g_databases);
    // template0: nothing a suite added to template1 leaks in, and no suite connected to template1
    // can make the copy fail ("source database is being accessed by other users").
    std::string sql = "CREATE DATABASE " + quoted(name, '"') + " TEMPLATE template0";
    if (!owner.empty())
        sql += " OWNER " + quoted(owner, '"');
    return exec("postgres", sql, error) ? name : std::string();
}

bool PostgresServer::createLoginRole(const std::string& role, const std::string& password, std::string* error)
{
    const std::string options = " LOGIN PASSWORD " + quoted(password, '\'');
    std::string sqlState;
    if (run(superuserUrl(), "CREATE ROLE " + quoted(role, '"') + options, error, &sqlState))
        return true;
    if (sqlState != "42710") // duplicate_object: it exists, and gets this password
        return false;
    return run(superuserUrl(), "ALTER ROLE " + quoted(role, '"') + options, error);
}

} // namespace d2dpo::test
