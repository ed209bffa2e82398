// The routes of `kalah serve`: which answer each HTTP request gets. First the Host it names
// (an allow-list: 421 past it); then the page's files (serve/web_assets.h, whole or one
// byte range), the JSON API below /api/v1/ (serve/api.h: only from the page itself or a
// program, 403 for another site's page, by Origin and Sec-Fetch-Site; with a cap on each
// client's requests in flight), 404 for anything else; and the headers every answer
// carries. serve/http_server.h calls it on its handler threads; cli/cmd_serve.cpp
// only reads the options and wires the two together.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "serve/api.h"
#include "serve/http_server.h"
#include "serve/web_assets.h"

namespace kalah::serve {

struct RouteOptions {
    // API requests one client (connection_key) may have running or waiting at once; past
    // them 429 with Retry-After.
    int per_client = 2;
    // The names a request's Host may give (lowercase; an IPv6 address in brackets), the
    // port aside; past them 421. Empty: any. A page elsewhere that a DNS name of its own
    // points at this server (DNS rebinding) sends its own name, and is refused.
    std::vector<std::string> allowed_hosts;
    // Reverse proxies (numeric addresses) whose X-Forwarded-For is believed: a request
    // from one is the client's whose address the header's last entry names (the address
    // the proxy saw), for the per-client cap, the solver queue's turns and the log.
    std::vector<std::string> trusted_proxies;
};

class Routes {
  public:
    Routes(Api& api, RouteOptions options);
    Routes(const Routes&) = delete;
    Routes& operator=(const Routes&) = delete;

    // Any thread, any number at once.
    HttpResponse operator()(const HttpRequest& req, HttpCall& call);

    // The client a request is counted and logged as: its peer's address, or behind a
    // trusted proxy the address it forwarded (a header that names none: the proxy's).
    std::string client_address(const HttpRequest& req) const;

  private:
    // The answer to `req` from `address` (client_address).
    HttpResponse answer(const HttpRequest& req, HttpCall& call, const std::string& address);
    bool allowed_host(const std::string& name) const;
    bool enter(const std::string& client);
    void leave(const std::string& client);

    Api& api_;
    const RouteOptions opt_;
    std::mutex mu_;
    std::map<std::string, int> in_flight_;  // by client key; absent: none
};

// Whether `text` is a numeric IPv4 or IPv6 address (no brackets, no port).
bool numeric_address(const std::string& text);

// The host name of a Host header or of an Origin's authority: lowercase, the port and a
// final dot dropped ("[::1]:8080" -> "[::1]", "Example.COM.:80" -> "example.com").
std::string host_name(std::string_view authority);

// The embedded file served at `path` ("/" is "/index.html"), or nullptr.
const web::Asset* find_asset(std::string_view path);

// The server's log line for `e`: one JSON object with a newline (docs/serve.md, "Log"):
// time (UTC, ms), client, then for a request method, target, status, bytes, ms and nodes,
// and for a connection refused, evicted or timed out, event and reason. Text sent by the
// client is escaped (log_safe) and cut, so a line is always one line of ASCII.
std::string access_log_line(const HttpLogEntry& e);

// The headers of every answer: the page loads only what this server serves (no other
// origin, no inline code), no content sniffing, no referrer.
Headers security_headers();

}  // namespace kalah::serve
