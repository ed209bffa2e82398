// HttpServer::Impl: what the HTTP front end's event loop (serve/http_server.cpp) and its
// connections (serve/connection.h) share: the options and handler, the io context and
// acceptor, the handler threads, the open connections and their counts. Private to serve/.
#pragma once

// <utility> before Boost: 1.74's asio/awaitable.hpp uses std::exchange without including it.
// clang-format off
#include <utility>
// clang-format on

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "serve/handler_threads.h"
#include "serve/http_server.h"

namespace kalah::serve {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct Connection;

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
    HttpOptions opt;
    HttpHandler handler;
    asio::io_context io{1};
    tcp::acceptor acceptor{io};
    asio::steady_timer accept_retry{io};
    std::unique_ptr<HandlerThreads> pool;
    std::set<Connection*> open;              // io thread
    std::map<std::string, int> per_address;  // by connection_key; io thread
    std::atomic<int> count{0};
    std::atomic<uint64_t> head_work{0};  // HttpServer::head_work()
    bool stopping = false;               // io thread

    Impl(HttpOptions o, HttpHandler h) : opt(std::move(o)), handler(std::move(h)) {
        if (!opt.error_body)
            opt.error_body = [](const std::string& m) {
                return "{\"error\":\"" + log_safe(m) + "\"}";
            };
    }
    void accept();
    void do_stop();
    bool evict_least_progress();
    // The per-client connection cap of a connection_key: a trusted proxy's, or the usual.
    int connection_cap(const std::string& key) const {
        return std::find(opt.proxies.begin(), opt.proxies.end(), key) != opt.proxies.end()
                   ? opt.max_connections_per_proxy
                   : opt.max_connections_per_address;
    }
    // The server's own error answer: error_body(message) as JSON.
    HttpResponse error_response(int status, const std::string& message, Headers extra,
                                bool close) const {
        HttpResponse r;
        r.status = status;
        r.content_type = "application/json";
        r.body = opt.error_body(message);
        r.headers = std::move(extra);
        r.close = close;
        return r;
    }
    void log_connection(HttpLogEntry::Event event, const std::string& client, std::string why) {
        if (!opt.log) return;
        HttpLogEntry e;
        e.event = event;
        e.time = std::chrono::system_clock::now();
        e.client = client;
        e.reason = std::move(why);
        opt.log(e);
    }
};

}  // namespace kalah::serve
