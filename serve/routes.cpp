// The routes of `kalah serve` (serve/routes.h).
#include "serve/routes.h"

#include <regex>

#include "analysis/json.h"

namespace kalah::serve {
namespace {

HttpResponse json_response(int status, std::string body) {
    HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
}

// A page's file, whole or one byte range (206); several ranges or one past the end: 416
// (many overlapping ranges would multiply the answer).
HttpResponse asset_response(const HttpRequest& req, const web::Asset& asset) {
    HttpResponse r;
    r.content_type = std::string(asset.type);
    const std::string* range = req.header("Range");
    if (!range) {
        r.body = std::string(asset.body);
        return r;
    }
    const size_t size = asset.body.size();
    const auto span = single_range(*range, size);
    if (!span) {
        HttpResponse refused = json_response(
            416, error_json(range->find(',') != std::string::npos ? "at most one range"
                                                                  : "range not satisfiable"));
        refused.headers.emplace_back("Content-Range", "bytes */" + std::to_string(size));
        refused.close = true;
        return refused;
    }
    r.status = 206;
    r.headers.emplace_back("Content-Range", "bytes " + std::to_string(span->first) + "-" +
                                                std::to_string(span->second) + "/" +
                                                std::to_string(size));
    r.body = std::string(asset.body.substr(span->first, span->second - span->first + 1));
    return r;
}

}  // namespace

const web::Asset* find_asset(std::string_view path) {
    if (path == "/") path = "/index.html";
    for (size_t i = 0; i < web::kAssetCount; ++i)
        if (web::kAssets[i].path == path) return &web::kAssets[i];
    return nullptr;
}

Headers security_headers() {
    return {{"Content-Security-Policy",
             "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
            {"X-Content-Type-Options", "nosniff"},
            {"Referrer-Policy", "no-referrer"}};
}

Routes::Routes(Api& api, int per_client) : api_(api), per_client_(per_client) {}

bool Routes::enter(const std::string& client) {
    std::lock_guard<std::mutex> lock(mu_);
    int& n = in_flight_[client];
    if (n >= per_client_) return false;
    ++n;
    return true;
}

void Routes::leave(const std::string& client) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = in_flight_.find(client);
    if (it != in_flight_.end() && --it->second == 0) in_flight_.erase(it);
}

HttpResponse Routes::operator()(const HttpRequest& req, HttpCall& call) {
    if (req.path.rfind("/api/", 0) != 0) {
        const web::Asset* asset = find_asset(req.path);
        return asset ? asset_response(req, *asset) : json_response(404, error_json("not found"));
    }
    // A cut JSON object is no answer.
    if (req.header("Range")) {
        HttpResponse r = json_response(416, error_json("no Range on the API"));
        r.close = true;
        return r;
    }
    static const std::regex api_path("/api/v1/([a-z]{1,16})");
    std::smatch m;
    if (!std::regex_match(req.path, m, api_path))
        return json_response(404, error_json("not found"));
    const std::string name = m[1];
    // What the server holds now, outside the per-client cap: a client can see its own
    // request in flight (the API test waits on it).
    if (name == "load") {
        const Api::Load l = api_.load();
        return json_response(
            200, analysis::json_line({{"searching", l.searching}, {"waiting", l.waiting}}));
    }
    const std::string client = connection_key(req.remote_address);
    if (!enter(client)) {
        HttpResponse r = json_response(
            429, error_json("too many requests from " + client + " at once (" +
                            std::to_string(per_client_) + " running or waiting); try again later"));
        r.headers.emplace_back("Retry-After", "1");
        return r;
    }
    struct Leave {
        Routes& routes;
        const std::string& client;
        ~Leave() { routes.leave(client); }
    } leave{*this, client};
    ApiReply reply;
    if (Api::streams(name))
        reply = api_.stream(name, req.params, &call.cancelled(),
                            [&call](const std::string& object) { return call.emit(object); });
    else
        reply = api_.get(name, req.params, &call.cancelled());
    HttpResponse r = json_response(reply.status, std::move(reply.body));
    if (reply.status == 503) r.headers.emplace_back("Retry-After", "1");
    return r;
}

}  // namespace kalah::serve
