// The routes of `kalah serve` (serve/routes.h).
#include "serve/routes.h"

#include <arpa/inet.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
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

std::string access_log_line(const HttpLogEntry& e) {
    using namespace std::chrono;
    const auto ms_since = duration_cast<milliseconds>(e.time.time_since_epoch()).count();
    const std::time_t secs = std::time_t(ms_since / 1000);
    std::tm utc{};
    gmtime_r(&secs, &utc);
    char when[40];
    const size_t n = std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(when + n, sizeof when - n, ".%03dZ", int(ms_since % 1000));
    analysis::Json j = {{"time", when}, {"client", log_safe(e.client)}};
    if (e.event == HttpLogEntry::Event::Request) {
        j["method"] = e.request ? log_safe(e.request->method) : "";
        j["target"] =
            e.request ? log_safe(e.request->target.empty() ? e.request->path : e.request->target)
                      : "";
        j["status"] = e.status;
        j["bytes"] = e.bytes;
        j["ms"] = std::round(e.ms * 10) / 10;
        j["nodes"] = e.nodes;
    } else {
        j["event"] = e.event == HttpLogEntry::Event::Refused   ? "refused"
                     : e.event == HttpLogEntry::Event::Evicted ? "evicted"
                                                               : "timeout";
        j["reason"] = log_safe(e.reason);
    }
    return analysis::json_line(j);
}

Headers security_headers() {
    return {{"Content-Security-Policy",
             "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
            {"X-Content-Type-Options", "nosniff"},
            {"Referrer-Policy", "no-referrer"}};
}

bool numeric_address(const std::string& text) {
    unsigned char buf[16];
    return inet_pton(AF_INET, text.c_str(), buf) == 1 ||
           inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

std::string host_name(std::string_view a) {
    std::string h;
    if (!a.empty() && a[0] == '[') {
        const size_t close = a.find(']');
        h = std::string(a.substr(0, close == std::string_view::npos ? a.size() : close + 1));
    } else {
        h = std::string(a.substr(0, a.find(':')));
    }
    for (char& c : h) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (!h.empty() && h.back() == '.') h.pop_back();
    return h;
}

namespace {

// The host of an Origin header's value ("http://localhost:8080" -> "localhost"); "" for
// "null" or anything that is no scheme://authority.
std::string origin_host(const std::string& origin) {
    const size_t sep = origin.find("://");
    if (sep == std::string::npos) return "";
    const std::string_view authority = std::string_view(origin).substr(sep + 3);
    return host_name(authority.substr(0, authority.find('/')));
}

}  // namespace

Routes::Routes(Api& api, RouteOptions options) : api_(api), opt_(std::move(options)) {}

std::string Routes::client_address(const HttpRequest& req) const {
    const auto& proxies = opt_.trusted_proxies;
    if (std::find(proxies.begin(), proxies.end(), req.remote_address) == proxies.end())
        return req.remote_address;
    // The last entry of the last header: the one the trusted proxy added.
    const std::string* forwarded = nullptr;
    for (const auto& [k, v] : req.headers)
        if (k.size() == 15 && strncasecmp(k.c_str(), "X-Forwarded-For", 15) == 0) forwarded = &v;
    if (!forwarded) return req.remote_address;
    const size_t comma = forwarded->rfind(',');
    std::string last = forwarded->substr(comma == std::string::npos ? 0 : comma + 1);
    const size_t a = last.find_first_not_of(" \t"), b = last.find_last_not_of(" \t");
    last = a == std::string::npos ? "" : last.substr(a, b - a + 1);
    return numeric_address(last) ? last : req.remote_address;
}

bool Routes::allowed_host(const std::string& name) const {
    if (opt_.allowed_hosts.empty()) return true;
    return std::find(opt_.allowed_hosts.begin(), opt_.allowed_hosts.end(), name) !=
           opt_.allowed_hosts.end();
}

bool Routes::enter(const std::string& client) {
    std::lock_guard<std::mutex> lock(mu_);
    int& n = in_flight_[client];
    if (n >= opt_.per_client) return false;
    ++n;
    return true;
}

void Routes::leave(const std::string& client) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = in_flight_.find(client);
    if (it != in_flight_.end() && --it->second == 0) in_flight_.erase(it);
}

HttpResponse Routes::operator()(const HttpRequest& req, HttpCall& call) {
    const std::string client = client_address(req);
    HttpResponse r = answer(req, call, client);
    if (client != req.remote_address) r.client = client;
    return r;
}

HttpResponse Routes::answer(const HttpRequest& req, HttpCall& call, const std::string& address) {
    // HTTP/1.1 requires a Host; an HTTP/1.0 client may send none. Two are 400 (RFC 9112,
    // 3.2): which one names the host would be a guess, and a proxy may have guessed the other.
    const std::string* host = req.header("Host");
    if (!host && req.version >= 11) {
        HttpResponse r = json_response(400, error_json("no Host header"));
        r.close = true;
        return r;
    }
    if (std::count_if(req.headers.begin(), req.headers.end(), [](const auto& h) {
            return h.first.size() == 4 && strncasecmp(h.first.c_str(), "Host", 4) == 0;
        }) > 1) {
        HttpResponse r = json_response(400, error_json("more than one Host header"));
        r.close = true;
        return r;
    }
    if (host && !allowed_host(host_name(*host)))
        return json_response(421, error_json("host '" + log_safe(host_name(*host)).substr(0, 80) +
                                             "' is not served here (kalah serve --allow-host)"));
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
    // A page of another site may not use the API through a visitor's browser: a browser
    // says where the page came from (Origin, Sec-Fetch-Site); a program sends neither.
    const std::string* site = req.header("Sec-Fetch-Site");
    if (site && *site != "same-origin" && *site != "none")
        return json_response(403, error_json("the API answers this server's page and programs, "
                                             "not a page of another site"));
    const std::string* origin = req.header("Origin");
    if (origin && (origin_host(*origin).empty() || !allowed_host(origin_host(*origin)) ||
                   (host && origin_host(*origin) != host_name(*host))))
        return json_response(403, error_json("the API answers this server's page and programs, "
                                             "not a page of another origin"));
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
    const std::string client = connection_key(address);
    if (!enter(client)) {
        HttpResponse r =
            json_response(429, error_json("too many requests from " + client + " at once (" +
                                          std::to_string(opt_.per_client) +
                                          " running or waiting); try again later"));
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
        reply = api_.stream(name, req.params, Caller(&call.cancelled(), client),
                            [&call](const std::string& object) { return call.emit(object); });
    else
        reply = api_.get(name, req.params, Caller(&call.cancelled(), client));
    HttpResponse r = json_response(reply.status, std::move(reply.body));
    r.nodes = reply.nodes;
    if (reply.status == 503) r.headers.emplace_back("Retry-After", "1");
    return r;
}

}  // namespace kalah::serve
