// `kalah serve`: the web analysis board. cpp-httplib serves the embedded page (web/) and
// the GET-only JSON API of serve/server.h; everything else is refused.
#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "cli/command.h"
#include "cli/options.h"
#include "serve/server.h"
#include "serve/web_assets.h"

namespace kalah::cli {
using namespace kalah::serve;
namespace {
namespace po = boost::program_options;

// Largest request body accepted (a GET has none; see README, "Web API").
constexpr size_t kMaxBodyBytes = 1024;

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
        ("solvers", po::value<int>()->default_value(1),
         "searches that run at once (each with its own --tt-mb table and --threads)")
        ("queue", po::value<int>()->default_value(8),
         "requests that may wait for a solver; past them the answer is 503")
        ("http-threads", po::value<int>()->default_value(8), "threads answering HTTP requests");
    // clang-format on
    add_tt_option(opts, 256);
    add_threads_option(opts, 1);
    add_db_options(opts);
    opts.add_options()("quiet,q", "no line per request on stderr");
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
    const int http_threads = checked_int(vm, "http-threads", 1, 256);
    const int port = checked_int(vm, "port", 0, 65535);
    const std::string host = vm["bind"].as<std::string>();
    if (vm.count("db")) c.db_dir = vm["db"].as<std::string>();
    c.db_memory_bytes = static_cast<size_t>(db_memory_gib(vm) * double(1ull << 30));
    c.db_layout = db_layout(vm);
    const bool log = !vm.count("quiet");

    // SIGINT and SIGTERM are taken by one thread (sigwait) that stops the server cleanly;
    // blocked here, before any thread starts, so that no other thread receives them.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    Api api(c);
    api.open_databases();
    httplib::Server svr;
    svr.new_task_queue = [http_threads] { return new httplib::ThreadPool(http_threads); };
    svr.set_payload_max_length(kMaxBodyBytes);
    // Small JSON answers: without TCP_NODELAY each waits for the client's delayed ACK
    // (40 ms on Linux); a page asks many in a row on one connection.
    svr.set_tcp_nodelay(true);
    svr.set_keep_alive_max_count(1000);
    svr.set_read_timeout(5);
    svr.set_write_timeout(5);
    // The page loads only what this server serves (no other origin, no inline code).
    svr.set_default_headers({{"Content-Security-Policy",
                              "default-src 'self'; base-uri 'none'; form-action 'none'; "
                              "frame-ancestors 'none'"},
                             {"X-Content-Type-Options", "nosniff"},
                             {"Referrer-Policy", "no-referrer"}});
    auto asset = [](const char* body, const char* type) {
        return [body, type](const httplib::Request&, httplib::Response& res) {
            res.set_content(body, type);
        };
    };
    svr.Get("/", asset(web::kIndexHtml, "text/html; charset=utf-8"));
    svr.Get("/app.js", asset(web::kAppJs, "text/javascript; charset=utf-8"));
    svr.Get("/style.css", asset(web::kStyleCss, "text/css; charset=utf-8"));
    svr.Get(
        R"(/api/v1/([a-z]{1,16}))", [&api](const httplib::Request& req, httplib::Response& res) {
            std::multimap<std::string, std::string> params(req.params.begin(), req.params.end());
            ApiReply r = api.get(req.matches[1], params);
            res.status = r.status;
            if (r.status == 503) res.set_header("Retry-After", "1");
            res.set_header("Cache-Control", "no-store");
            res.set_content(r.body, "application/json");
        });
    // GET only: every other method on any path is 405, before its body is read.
    svr.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
        if (req.method == "GET" || req.method == "HEAD")
            return httplib::Server::HandlerResponse::Unhandled;
        res.status = 405;
        res.set_header("Allow", "GET, HEAD");
        res.set_content(error_json("method not allowed: GET only"), "application/json");
        return httplib::Server::HandlerResponse::Handled;
    });
    // Errors that no handler answered (404, and httplib's own 400/413/414) get a JSON body.
    svr.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&,
                                                                  httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        res.set_content(
            error_json(res.status == 404 ? "not found"
                                         : "bad request (HTTP " + std::to_string(res.status) + ")"),
            "application/json");
        return httplib::Server::HandlerResponse::Handled;
    }));
    svr.set_exception_handler(
        [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
            try {
                std::rethrow_exception(ep);
            } catch (const std::exception& e) {
                std::cerr << "kalah serve: error: " << req.path << ": " << e.what() << "\n";
            } catch (...) {
                std::cerr << "kalah serve: error: " << req.path << "\n";
            }
            res.status = 500;
            res.set_content(error_json("internal error"), "application/json");
        });
    if (log)
        svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
            // One write a line, so that the lines of concurrent requests do not interleave.
            const std::string line = "kalah serve: " + req.method + " " + req.path + " " +
                                     std::to_string(res.status) + "\n";
            std::cerr << line << std::flush;
        });

    int bound = port;
    if (port == 0) {
        bound = svr.bind_to_any_port(host);
        if (bound <= 0) bound = -1;
    } else if (!svr.bind_to_port(host, port)) {
        bound = -1;
    }
    if (bound < 0) {
        std::cerr << "kalah serve: error: cannot listen on " << host << " port " << port
                  << " (in use, or not an address of this machine)\n";
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
        sigwait(&stop_signals, &sig);
        signalled = true;
        api.stop_all();
        svr.stop();
    });
    svr.listen_after_bind();
    // Not stopped by a signal (the listener failed): wake the stopper with one of its own.
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
