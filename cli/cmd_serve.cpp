// `kalah serve`: the web analysis board. Reads the options and puts the routes of
// serve/routes.h (the embedded page and the JSON API of serve/api.h) behind the HTTP front
// end of serve/http_server.h. The caps and deadlines, and why: results/serve.md, "Robustness".
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "serve/access_log.h"
#include "serve/api.h"
#include "serve/http_server.h"
#include "serve/routes.h"

namespace kalah::cli {
using namespace kalah::serve;
namespace {
namespace po = boost::program_options;

int checked_int(const po::variables_map& vm, const char* name, int lo, int hi) {
    const int v = vm[name].as<int>();
    if (v < lo || v > hi)
        throw InputError("--" + std::string(name) + " must be " + std::to_string(lo) + ".." +
                         std::to_string(hi) + ", not " + std::to_string(v));
    return v;
}

bool loopback(const std::string& host) {
    return host == "127.0.0.1" || host == "::1" || host == "localhost" ||
           host.rfind("127.", 0) == 0;
}

// The Host names served (RouteOptions::allowed_hosts; empty: any).
std::vector<std::string> allowed_hosts(const po::variables_map& vm, const std::string& bind) {
    std::vector<std::string> names;
    if (vm.count("allow-host")) {
        for (const std::string& n : vm["allow-host"].as<std::vector<std::string>>()) {
            if (n == "*") return {};
            const std::string name = host_name(n);
            if (name.empty() || name.size() > 255 ||
                name.find_first_of(" \t\r\n/?#@") != std::string::npos)
                throw InputError("--allow-host '" + n + "' is no host name");
            names.push_back(name);
        }
        return names;
    }
    if (!loopback(bind)) return {};
    names = {"localhost", "127.0.0.1", "[::1]"};
    const std::string own =
        host_name(bind.find(':') != std::string::npos ? "[" + bind + "]" : bind);
    if (std::find(names.begin(), names.end(), own) == names.end()) names.push_back(own);
    return names;
}

// Each connection is a descriptor: the soft limit is raised as far as the connection cap
// needs (plus room for the databases' files), or the options are refused.
void ensure_descriptors(int max_connections) {
    const rlim_t need = rlim_t(max_connections) + 256;
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= need) return;
    if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < need)
        throw InputError("--max-connections " + std::to_string(max_connections) + " needs " +
                         std::to_string(need) + " open files; this process may have " +
                         std::to_string(lim.rlim_max) + " (ulimit -n)");
    lim.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
        throw InputError("cannot raise the open-file limit to " + std::to_string(need));
}

int run(const std::vector<std::string>& args) {
    po::options_description opts("serve options");
    // clang-format off
    opts.add_options()
        ("bind", po::value<std::string>()->default_value("127.0.0.1"),
         "address to listen on (another than loopback lets other machines in)")
        ("port", po::value<int>()->default_value(8080), "TCP port (0: any free port, printed)")
        ("budget-ms", po::value<int>()->default_value(5000),
         "work budget of one request in ms: a search still running then stops and the "
         "answer is \"not known within the budget\"")
        ("stream-budget-ms", po::value<int>()->default_value(60000),
         "work budget of one analysis stream (/api/v1/analysis) in ms: its last event "
         "then gives the bounds proven")
        ("no-book", "search every position: do not answer the first plies of Kalah(6,4) "
         "and the other boards of data/book/ from the built-in opening books")
        ("solvers", po::value<int>()->default_value(1),
         "searches that run at once (each with its own --tt-mb table and --threads)")
        ("queue", po::value<int>()->default_value(4),
         "requests that may wait for a solver; past them the answer is 503 (solvers + "
         "queue must leave HTTP threads free for the other requests)")
        ("http-threads", po::value<int>()->default_value(64),
         "threads answering requests (each request being answered holds one; open "
         "connections do not)")
        ("per-client", po::value<int>()->default_value(2),
         "API requests one client (an address; IPv6: its /64) may have running or "
         "waiting at once; past them 429")
        ("max-connections", po::value<int>()->default_value(512),
         "open connections in total; past them a new one is closed at once")
        ("max-connections-per-client", po::value<int>()->default_value(32),
         "open connections from one address; past them a new one is closed at once")
        ("max-connections-per-proxy", po::value<int>()->default_value(256),
         "open connections from one --trust-proxy address (its connections carry many "
         "clients), instead of --max-connections-per-client")
        ("header-timeout-ms", po::value<int>()->default_value(5000),
         "a request's head (request line and headers) must arrive within this of its first "
         "byte, or the connection is closed")
        ("body-timeout-ms", po::value<int>()->default_value(5000),
         "a request body (at most 1 KiB, dropped) must arrive within this of its head's end, "
         "or the connection is closed")
        ("send-timeout-ms", po::value<int>()->default_value(10000),
         "an answer (or one event of a stream) must be taken by the client within this, or "
         "the connection is closed")
        ("idle-timeout-ms", po::value<int>()->default_value(5000),
         "an idle keep-alive connection is closed after this")
        ("allow-host", po::value<std::vector<std::string>>()->composing(),
         "a name the Host header may give (repeatable; '*': any). Default: bound to "
         "loopback, localhost and the loopback addresses (a page of another name that "
         "points at this server is refused); else any")
        ("trust-proxy", po::value<std::vector<std::string>>()->composing(),
         "the numeric address of a reverse proxy (repeatable) whose X-Forwarded-For is "
         "believed: its requests count, wait their turn and are logged as the client's");
    // clang-format on
    add_tt_option(opts, 256);
    add_threads_option(opts, 1);
    add_db_options(opts);
    opts.add_options()("quiet,q",
                       "no log on stderr (a JSON line per request and per connection refused, "
                       "evicted or timed out: docs/serve.md, \"Log\")");
    opts.add_options()("log", po::value<std::string>(),
                       "the log's JSON lines to this file (appended) instead of stderr; "
                       "reopened on SIGHUP or SIGUSR1 (logrotate), rotated to FILE.1 past "
                       "--log-max-mb");
    opts.add_options()("log-max-mb", po::value<int>()->default_value(64),
                       "a --log file past this many MiB is renamed FILE.1 (replacing the one "
                       "before) and a new one begun (0: no cap)");
    po::variables_map vm;
    if (!parse_options("serve", "[--bind ADDR] [--port N] [--db DIR] [--budget-ms N] [options]",
                       opts, args, vm))
        return 0;
    ServeConfig c;
    c.tt_mb = checked_tt_mb(vm);
    c.threads = threads_option(vm);
    c.solvers = checked_int(vm, "solvers", 1, 64);
    c.queue = checked_int(vm, "queue", 0, 10000);
    c.budget_ms = checked_int(vm, "budget-ms", 1, 3600 * 1000);
    c.stream_budget_ms = checked_int(vm, "stream-budget-ms", 1, 3600 * 1000);
    c.books = vm.count("no-book") == 0;
    HttpOptions http;
    http.workers = checked_int(vm, "http-threads", 1, 256);
    // Each searching or waiting request holds a worker: with as many workers as solvers +
    // queue the queue could never fill, so no 503, and nothing else answered.
    if (c.solvers + c.queue + 2 > http.workers)
        throw InputError("--solvers + --queue (" + std::to_string(c.solvers + c.queue) +
                         ") must leave at least 2 of the " + std::to_string(http.workers) +
                         " --http-threads free for the page and the database's answers");
    const int per_client_cap = checked_int(vm, "per-client", 1, 256);
    http.max_connections = checked_int(vm, "max-connections", 1, 100000);
    http.max_connections_per_address = checked_int(vm, "max-connections-per-client", 1, 100000);
    http.head_timeout = std::chrono::milliseconds(checked_int(vm, "header-timeout-ms", 1, 600000));
    http.idle_timeout = std::chrono::milliseconds(checked_int(vm, "idle-timeout-ms", 1, 600000));
    http.body_timeout = std::chrono::milliseconds(checked_int(vm, "body-timeout-ms", 1, 600000));
    http.write_timeout = std::chrono::milliseconds(checked_int(vm, "send-timeout-ms", 1, 600000));
    http.max_connections_per_proxy = checked_int(vm, "max-connections-per-proxy", 1, 100000);
    const int log_max_mb = checked_int(vm, "log-max-mb", 0, 1 << 20);
    if (vm.count("quiet") && vm.count("log"))
        throw InputError("--quiet and --log exclude each other");
    const int port = checked_int(vm, "port", 0, 65535);
    const std::string host = vm["bind"].as<std::string>();
    if (vm.count("db")) c.db_dir = vm["db"].as<std::string>();
    if (!c.db_dir.empty()) check_db_dir(c.db_dir);
    c.db_memory_bytes = static_cast<size_t>(db_memory_gib(vm) * double(1ull << 30));
    c.db_layout = db_layout(vm);
    c.db_raw_top_bytes = db_raw_top_bytes(vm);
    const bool log = !vm.count("quiet");
    ensure_descriptors(http.max_connections);

    // SIGINT and SIGTERM are taken by one thread (sigwait) that stops the server cleanly;
    // blocked here, before any thread starts, so that no other thread receives them.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    // SIGHUP and SIGUSR1 reopen the log (logrotate); taken by the same thread.
    sigaddset(&stop_signals, SIGHUP);
    sigaddset(&stop_signals, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    Api api(c);
    api.open_databases();
    RouteOptions route_options;
    route_options.per_client = per_client_cap;
    route_options.allowed_hosts = allowed_hosts(vm, host);
    if (vm.count("trust-proxy"))
        for (const std::string& a : vm["trust-proxy"].as<std::vector<std::string>>()) {
            if (!numeric_address(a))
                throw InputError("--trust-proxy '" + a + "' is no numeric IPv4 or IPv6 address");
            route_options.trusted_proxies.push_back(a);
            http.proxies.push_back(connection_key(a));
        }
    Routes routes(api, route_options);
    http.default_headers = security_headers();
    http.error_body = error_json;
    http.on_error = [](const HttpRequest& req, const std::string& what) {
        std::cerr << "kalah serve: error: " + log_safe(req.path) + ": " + what + "\n" << std::flush;
    };
    // One write a line, so that the lines of concurrent requests do not interleave.
    std::unique_ptr<AccessLog> access_log;
    if (log) {
        try {
            access_log = std::make_unique<AccessLog>(
                vm.count("log") ? vm["log"].as<std::string>() : std::string(), uint64_t(log_max_mb)
                                                                                   << 20);
        } catch (const std::runtime_error& e) {
            throw InputError("--log: " + std::string(e.what()));
        }
        http.log = [&access_log](const HttpLogEntry& e) { access_log->write(access_log_line(e)); };
    }
    HttpServer server(
        http, [&routes](const HttpRequest& req, HttpCall& call) { return routes(req, call); });
    int bound = 0;
    try {
        bound = server.listen(host, port);
    } catch (const std::runtime_error& e) {
        std::cerr << "kalah serve: error: " << e.what() << "\n";
        return 1;
    }
    if (!loopback(host))
        std::cerr << "kalah serve: warning: listening on " << host
                  << ": other machines can reach this server\n";
    const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    std::cout << "kalah serve: listening on http://" << shown << ":" << bound << "/" << std::endl;

    std::atomic<bool> signalled{false};
    std::thread stopper([&] {
        int sig = 0;
        for (;;) {
            sigwait(&stop_signals, &sig);
            if (sig != SIGHUP && sig != SIGUSR1) break;
            if (access_log) access_log->reopen();
        }
        signalled = true;
        api.stop_all();
        server.stop();
    });
    server.run();
    // Stopped without a signal (cannot happen today): wake the stopper with one of its own.
    if (!signalled) pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    std::cerr << "kalah serve: stopped\n";
    return 0;
}

int guarded_run(const std::vector<std::string>& args) { return guarded("serve", run, args); }
const RegisterCommand reg({"serve", "web analysis board and JSON API on http://127.0.0.1:8080/",
                           guarded_run});

}  // namespace
}  // namespace kalah::cli
