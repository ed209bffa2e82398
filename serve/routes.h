// The routes of `kalah serve`: which answer each HTTP request gets. The page's files
// (serve/web_assets.h, whole or one byte range), the JSON API below /api/v1/ (serve/api.h,
// with a cap on each client's requests in flight), 404 for anything else; and the headers
// every answer carries. serve/http_server.h calls it on its handler threads; cli/cmd_serve.cpp
// only reads the options and wires the two together.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "serve/api.h"
#include "serve/http_server.h"
#include "serve/web_assets.h"

namespace kalah::serve {

class Routes {
  public:
    // `per_client`: API requests one client (connection_key) may have running or waiting
    // at once; past them 429 with Retry-After.
    Routes(Api& api, int per_client);
    Routes(const Routes&) = delete;
    Routes& operator=(const Routes&) = delete;

    // Any thread, any number at once.
    HttpResponse operator()(const HttpRequest& req, HttpCall& call);

  private:
    bool enter(const std::string& client);
    void leave(const std::string& client);

    Api& api_;
    const int per_client_;
    std::mutex mu_;
    std::map<std::string, int> in_flight_;  // by client key; absent: none
};

// The embedded file served at `path` ("/" is "/index.html"), or nullptr.
const web::Asset* find_asset(std::string_view path);

// The headers of every answer: the page loads only what this server serves (no other
// origin, no inline code), no content sniffing, no referrer.
Headers security_headers();

}  // namespace kalah::serve
