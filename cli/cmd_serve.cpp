// `kalah serve`: the web analysis board. cpp-httplib serves the embedded page (web/) and
// the GET-only JSON API of serve/server.h; everything else is refused. What Debian's
// cpp-httplib (0.11, a compiled library) lets us bound is bounded here; what it does not
// (connections per address, header count, a deadline per request phase) is listed in
// results/serve.md, "Robustness".
#include <httplib.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/command.h"
#include "cli/options.h"
#include "serve/client_watch.h"
#include "serve/server.h"
#include "serve/web_assets.h"

namespace kalah::cli {
using namespace kalah::serve;
namespace {
namespace po = boost::program_options;

// Largest request body accepted (a GET has none; see README, "Web API").
constexpr size_t kMaxBodyBytes = 1024;
// Most request headers a browser sends is about 20; more is not a browser.
constexpr size_t kMaxHeaders = 64;
// Connections the kernel holds for accept() (see run(), the backlog).
constexpr int kListenBacklog = 1024;

// A request's path as logged: control characters and bytes past ASCII as \xHH, so that a
// path with %0A cannot forge a line of the log; at most 200 characters.
std::string log_safe(const std::string& text) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned char c : text.substr(0, 200)) {
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += char(c);
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return text.size() > 200 ? out + "..." : out;
}

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

// A stream (Api::streams) as server-sent events: Api::stream runs on a thread of its own
// and each object it emits is sent as one event (`data: <object>`, then a blank line) of a
// chunked text/event-stream answer. A stream refused before its first event is an ordinary
// answer with its status. It stops when its client goes (the connection closes, or a write
// fails) and holds `keep` (its place among the client's requests) until it ends.
void serve_stream(Api& api, ClientWatch& watch, const httplib::Request& req,
                  httplib::Response& res, std::multimap<std::string, std::string> params,
                  std::shared_ptr<void> keep) {
    struct Run {
        std::mutex mu;
        std::condition_variable ready;
        std::deque<std::string> events;
        bool finished = false;
        ApiReply reply;
        std::atomic<bool> cancel{false};
        std::unique_ptr<ClientWatch::Guard> client;
        std::shared_ptr<void> keep;
        std::thread thread;
        // Waits for an event or the end; false when the client went away meanwhile.
        bool wait(std::unique_lock<std::mutex>& lock) {
            while (events.empty() && !finished) {
                if (client->gone()->load()) cancel = true;
                if (cancel) return false;
                ready.wait_for(lock, std::chrono::milliseconds(20));
            }
            return true;
        }
        void end() {
            cancel = true;
            if (thread.joinable()) thread.join();
        }
    };
    auto run = std::make_shared<Run>();
    run->keep = std::move(keep);
    run->client = std::make_unique<ClientWatch::Guard>(
        watch, find_connection_fd(req.remote_addr, req.remote_port, req.local_port));
    run->thread = std::thread([&api, r = run.get(), name = std::string(req.matches[1]),
                               params = std::move(params)] {
        const ApiReply reply = api.stream(name, params, &r->cancel, [r](const std::string& object) {
            std::lock_guard<std::mutex> lock(r->mu);
            r->events.push_back(object);
            r->ready.notify_all();
            return !r->cancel.load();
        });
        std::lock_guard<std::mutex> lock(r->mu);
        r->reply = reply;
        r->finished = true;
        r->ready.notify_all();
    });
    {
        std::unique_lock<std::mutex> lock(run->mu);
        run->wait(lock);
        if (run->events.empty()) {
            lock.unlock();
            run->end();
            res.status = run->reply.status;
            if (res.status == 503) res.set_header("Retry-After", "1");
            res.set_content(run->reply.body, "application/json");
            return;
        }
    }
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream",
        [run](size_t, httplib::DataSink& sink) {
            std::unique_lock<std::mutex> lock(run->mu);
            if (!run->wait(lock)) return false;
            while (!run->events.empty()) {
                const std::string event = "data: " + run->events.front() + "\n\n";
                run->events.pop_front();
                lock.unlock();
                if (!sink.write(event.data(), event.size())) {
                    run->cancel = true;
                    return false;
                }
                lock.lock();
            }
            if (run->finished) sink.done();
            return true;
        },
        [run](bool) { run->end(); });
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
        ("solvers", po::value<int>()->default_value(1),
         "searches that run at once (each with its own --tt-mb table and --threads)")
        ("queue", po::value<int>()->default_value(4),
         "requests that may wait for a solver; past them the answer is 503 (solvers + "
         "queue must leave HTTP threads free for the other requests)")
        ("http-threads", po::value<int>()->default_value(64),
         "threads answering HTTP requests (each open connection holds one)")
        ("per-client", po::value<int>()->default_value(2),
         "API requests one address may have running or waiting at once; past them 429");
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
    c.stream_budget_ms = checked_int(vm, "stream-budget-ms", 1, 3600 * 1000);
    const int http_threads = checked_int(vm, "http-threads", 1, 256);
    // Each searching or waiting request holds an HTTP thread: with as many threads as
    // solvers + queue the queue could never fill, so no 503, and nothing else answered.
    if (c.solvers + c.queue + 2 > http_threads)
        throw InputError("--solvers + --queue (" + std::to_string(c.solvers + c.queue) +
                         ") must leave at least 2 of the " + std::to_string(http_threads) +
                         " --http-threads free for the page and the database's answers");
    const int per_client = checked_int(vm, "per-client", 1, 256);
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
    ClientWatch watch;
    // API requests in flight per client address (--per-client): one client cannot take
    // every solver and queue place.
    std::mutex in_flight_mu;
    std::map<std::string, int> in_flight;
    httplib::Server svr;
    svr.new_task_queue = [http_threads] { return new httplib::ThreadPool(http_threads); };
    svr.set_payload_max_length(kMaxBodyBytes);
    // Small JSON answers: without TCP_NODELAY each waits for the client's delayed ACK
    // (40 ms on Linux); a page asks many in a row on one connection.
    svr.set_tcp_nodelay(true);
    svr.set_keep_alive_max_count(1000);
    // An idle keep-alive connection holds a thread: it is closed after 2 s of silence.
    svr.set_keep_alive_timeout(2);
    svr.set_read_timeout(2);
    svr.set_write_timeout(5);
    // httplib's default options add SO_REUSEPORT, with which a second server on the same
    // port starts and takes half the connections; SO_REUSEADDR alone lets a restart bind
    // at once past TIME_WAIT, and a taken port is an error.
    socket_t listen_fd = -1;
    svr.set_socket_options([&listen_fd](socket_t sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
        listen_fd = sock;
    });
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
        R"(/api/v1/([a-z]{1,16}))", [&](const httplib::Request& req, httplib::Response& res) {
            res.set_header("Cache-Control", "no-store");
            {
                std::lock_guard<std::mutex> lock(in_flight_mu);
                if (in_flight[req.remote_addr] >= per_client) {
                    res.status = 429;
                    res.set_header("Retry-After", "1");
                    res.set_content(error_json("too many requests from " + req.remote_addr +
                                               " at once (" + std::to_string(per_client) +
                                               " running or waiting); try again later"),
                                    "application/json");
                    return;
                }
                ++in_flight[req.remote_addr];
            }
            struct Leave {
                std::mutex& mu;
                std::map<std::string, int>& counts;
                const std::string addr;
                ~Leave() {
                    std::lock_guard<std::mutex> lock(mu);
                    if (--counts[addr] == 0) counts.erase(addr);
                }
            };
            // Held by a stream until its last event is sent.
            // Built in place: a temporary Leave would give the place back at once.
            std::shared_ptr<Leave> leave(new Leave{in_flight_mu, in_flight, req.remote_addr});
            std::multimap<std::string, std::string> params(req.params.begin(), req.params.end());
            if (Api::streams(req.matches[1])) {
                serve_stream(api, watch, req, res, std::move(params), leave);
                return;
            }
            // A search stops when its client goes away (serve/client_watch.h).
            ClientWatch::Guard gone(
                watch, find_connection_fd(req.remote_addr, req.remote_port, req.local_port));
            ApiReply r = api.get(req.matches[1], params, gone.gone());
            res.status = r.status;
            if (r.status == 503) res.set_header("Retry-After", "1");
            res.set_content(r.body, "application/json");
        });
    // GET only: every other method on any path is 405, before its body is read. Then the
    // caps: header count; no Range on the API (a cut JSON object is no answer), at most
    // one range on the page's files (many overlapping ranges multiply the answer).
    svr.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
        auto refuse = [&res](int status, const std::string& why) {
            res.status = status;
            res.set_header("Connection", "close");
            res.set_content(error_json(why), "application/json");
            return httplib::Server::HandlerResponse::Handled;
        };
        if (req.method != "GET" && req.method != "HEAD") {
            res.set_header("Allow", "GET, HEAD");
            return refuse(405, "method not allowed: GET only");
        }
        if (req.headers.size() > kMaxHeaders)
            return refuse(431, "more than " + std::to_string(kMaxHeaders) + " request headers");
        if (req.has_header("Range")) {
            if (req.path.rfind("/api/", 0) == 0) return refuse(416, "no Range on the API");
            if (req.ranges.size() > 1) return refuse(416, "at most one range");
        }
        return httplib::Server::HandlerResponse::Unhandled;
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
                std::cerr << "kalah serve: error: " << log_safe(req.path) << ": " << e.what()
                          << "\n";
            } catch (...) {
                std::cerr << "kalah serve: error: " << log_safe(req.path) << "\n";
            }
            res.status = 500;
            res.set_content(error_json("internal error"), "application/json");
        });
    if (log)
        svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
            // One write a line, so that the lines of concurrent requests do not interleave.
            const std::string line = "kalah serve: " + log_safe(req.method) + " " +
                                     log_safe(req.path) + " " + std::to_string(res.status) + "\n";
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
    // httplib listens with a backlog of 5: past 5 connections not yet accepted, a new
    // client's SYN is dropped and it waits 1 s, then 3 s, to try again, so a burst of
    // clients delays everyone by seconds. Listening again on the bound socket raises it
    // (Linux; capped by net.core.somaxconn).
    if (listen_fd >= 0 && listen(listen_fd, kListenBacklog) != 0)
        std::cerr << "kalah serve: warning: could not raise the listen backlog\n";
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
