// The routes of `kalah serve` (serve/routes.h) in-process, without sockets: every file of
// web/ served at its path with its bytes (the table is generated from the directory),
// byte ranges, the API's paths, and the per-client cap keyed like the connection cap (an
// IPv6 client by its /64).
#include <doctest/doctest.h>

#if KALAH_HAS_SERVE
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "serve/routes.h"

namespace {
using namespace kalah::serve;

// A connection that is never cancelled; emit() blocks while `hold` is set (a stream in
// flight), then answers false (no events wanted: the stream returns without a search).
struct FakeCall : HttpCall {
    std::atomic<bool> cancel{false};
    std::mutex mu;
    std::condition_variable cv;
    bool hold = false;
    int holding = 0;
    const std::atomic<bool>& cancelled() const override { return cancel; }
    bool emit(const std::string&) override {
        std::unique_lock<std::mutex> lock(mu);
        ++holding;
        cv.notify_all();
        cv.wait(lock, [this] { return !hold; });
        return false;
    }
};

HttpRequest get(const std::string& path, const std::string& client = "127.0.0.1") {
    HttpRequest r;
    r.method = "GET";
    r.target = r.path = path;
    r.remote_address = client;
    r.headers = {{"Host", "127.0.0.1:8080"}};
    return r;
}

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

ServeConfig small_config() {
    ServeConfig c;
    c.tt_mb = 4;
    return c;
}

}  // namespace

TEST_SUITE("serve") {
    TEST_CASE("routes: every file of web/ at its path, with its bytes and media type") {
        size_t files = 0;
        for (const auto& entry : std::filesystem::directory_iterator(KALAH_SOURCE_DIR "/web")) {
            const std::string name = entry.path().filename().string();
            CAPTURE(name);
            const kalah::web::Asset* a = find_asset("/" + name);
            REQUIRE(a != nullptr);
            CHECK(a->body == read_file(entry.path()));
            const std::string ext = entry.path().extension().string();
            if (ext == ".html") CHECK(a->type == "text/html; charset=utf-8");
            if (ext == ".js") CHECK(a->type == "text/javascript; charset=utf-8");
            if (ext == ".css") CHECK(a->type == "text/css; charset=utf-8");
            ++files;
        }
        CHECK(files == kalah::web::kAssetCount);
        CHECK(find_asset("/") == find_asset("/index.html"));
        CHECK(find_asset("/index.html") != nullptr);
        CHECK(find_asset("/nothing.js") == nullptr);
        CHECK(find_asset("/web/app.js") == nullptr);
        CHECK(find_asset("app.js") == nullptr);
        CHECK(find_asset("") == nullptr);
    }

    TEST_CASE("routes: the page, ranges, the API's paths") {
        Api api(small_config());
        Routes routes(api, RouteOptions{});
        FakeCall call;
        const kalah::web::Asset* js = find_asset("/app.js");
        REQUIRE(js != nullptr);

        HttpResponse page = routes(get("/"), call);
        CHECK(page.status == 200);
        CHECK(page.content_type == "text/html; charset=utf-8");
        CHECK(page.body == find_asset("/index.html")->body);

        HttpRequest ranged = get("/app.js");
        ranged.headers.push_back({"Range", "bytes=2-11"});
        HttpResponse part = routes(ranged, call);
        CHECK(part.status == 206);
        CHECK(part.body == js->body.substr(2, 10));
        ranged.headers.back() = {"Range", "bytes=0-,0-"};
        HttpResponse many = routes(ranged, call);
        CHECK(many.status == 416);
        CHECK(many.close);
        ranged.headers.back() = {"Range", "bytes=" + std::to_string(js->body.size()) + "-"};
        CHECK(routes(ranged, call).status == 416);

        CHECK(routes(get("/nothing"), call).status == 404);
        CHECK(routes(get("/api/v1/nothing"), call).status == 404);
        CHECK(routes(get("/api/v2/query"), call).status == 404);
        CHECK(routes(get("/api/v1/load"), call).status == 200);
        HttpRequest api_range = get("/api/v1/load");
        api_range.headers.push_back({"Range", "bytes=0-1"});
        CHECK(routes(api_range, call).status == 416);
    }

    TEST_CASE("routes: host_name drops the port, the case and a final dot") {
        CHECK(host_name("localhost:8080") == "localhost");
        CHECK(host_name("Example.COM.") == "example.com");
        CHECK(host_name("[::1]:8080") == "[::1]");
        CHECK(host_name("[2001:DB8::1]") == "[2001:db8::1]");
        CHECK(host_name("127.0.0.1") == "127.0.0.1");
        CHECK(host_name("") == "");
    }

    TEST_CASE("routes: Host outside the allow-list 421; the API refuses other sites' pages") {
        Api api(small_config());
        RouteOptions o;
        o.allowed_hosts = {"localhost", "127.0.0.1", "[::1]"};
        Routes routes(api, o);
        FakeCall call;
        auto with = [](std::string path, Headers headers, int version = 11) {
            HttpRequest r = get(path);
            r.headers = std::move(headers);
            r.version = version;
            return r;
        };
        for (const char* h :
             {"localhost:8080", "LOCALHOST", "127.0.0.1", "[::1]:80", "localhost."}) {
            CAPTURE(h);
            CHECK(routes(with("/", {{"Host", h}}), call).status == 200);
            CHECK(routes(with("/api/v1/load", {{"Host", h}}), call).status == 200);
        }
        // DNS rebinding: a name of the attacker's that resolves here.
        for (const char* h : {"evil.example", "evil.example:8080", "127.0.0.2", "localhost.evil"}) {
            CAPTURE(h);
            CHECK(routes(with("/", {{"Host", h}}), call).status == 421);
            CHECK(routes(with("/api/v1/load", {{"Host", h}}), call).status == 421);
        }
        // HTTP/1.1 needs a Host; HTTP/1.0 may go without.
        CHECK(routes(with("/", {}), call).status == 400);
        CHECK(routes(with("/", {}, 10), call).status == 200);
        // Two Host headers are 400 (RFC 9112, 3.2), the same name or not, any case, and
        // the connection closes; under HTTP/1.0 too.
        for (const Headers& two : {Headers{{"Host", "localhost"}, {"Host", "localhost"}},
                                   Headers{{"Host", "localhost"}, {"host", "evil.example"}},
                                   Headers{{"HOST", "evil.example"}, {"Host", "localhost"}}}) {
            const HttpResponse r = routes(with("/", two), call);
            CHECK(r.status == 400);
            CHECK(r.close);
            CHECK(r.body.find("more than one Host header") != std::string::npos);
            CHECK(routes(with("/api/v1/load", two, 10), call).status == 400);
        }
        // The page itself, a program (no Origin, no Sec-Fetch-Site) and a typed-in URL
        // ("none") may use the API; another site's page may not.
        const Headers host = {{"Host", "localhost:8080"}};
        auto api_with = [&](Headers extra) {
            Headers h = host;
            h.insert(h.end(), extra.begin(), extra.end());
            return routes(with("/api/v1/load", h), call).status;
        };
        CHECK(api_with({}) == 200);
        CHECK(api_with({{"Sec-Fetch-Site", "same-origin"}}) == 200);
        CHECK(api_with({{"Sec-Fetch-Site", "none"}}) == 200);
        CHECK(api_with({{"Origin", "http://localhost:8080"}}) == 200);
        CHECK(api_with({{"Sec-Fetch-Site", "cross-site"}}) == 403);
        CHECK(api_with({{"Sec-Fetch-Site", "same-site"}}) == 403);
        CHECK(api_with({{"Origin", "http://evil.example"}}) == 403);
        CHECK(api_with({{"Origin", "http://127.0.0.1:8080"}}) == 403);  // not the Host named
        CHECK(api_with({{"Origin", "null"}}) == 403);
        // The page's files are no secret: any site may link them.
        Headers page = host;
        page.push_back({"Sec-Fetch-Site", "cross-site"});
        CHECK(routes(with("/app.js", page), call).status == 200);
        // No list: any Host.
        Routes any(api, RouteOptions{});
        CHECK(any(with("/", {{"Host", "evil.example"}}), call).status == 200);
    }

    TEST_CASE("routes: behind a trusted proxy the client is the address it forwarded") {
        Api api(small_config());
        RouteOptions o;
        o.trusted_proxies = {"127.0.0.9"};
        Routes routes(api, o);
        auto from = [](const std::string& peer, const std::string& xff) {
            HttpRequest r = get("/api/v1/load", peer);
            if (!xff.empty()) r.headers.push_back({"X-Forwarded-For", xff});
            return r;
        };
        CHECK(routes.client_address(from("127.0.0.9", "203.0.113.5")) == "203.0.113.5");
        CHECK(routes.client_address(from("127.0.0.9", "10.1.1.1, 203.0.113.5")) == "203.0.113.5");
        CHECK(routes.client_address(from("127.0.0.9", " 2001:db8::7 ")) == "2001:db8::7");
        CHECK(routes.client_address(from("127.0.0.9", "203.0.113.5, forged")) == "127.0.0.9");
        CHECK(routes.client_address(from("127.0.0.9", "")) == "127.0.0.9");
        // Anyone else's header is not believed.
        CHECK(routes.client_address(from("127.0.0.8", "203.0.113.5")) == "127.0.0.8");
        Routes trusting_none(api, RouteOptions{});
        CHECK(trusting_none.client_address(from("127.0.0.9", "203.0.113.5")) == "127.0.0.9");
        // The answer is logged as the forwarded client.
        FakeCall call;
        CHECK(routes(from("127.0.0.9", "203.0.113.5"), call).client == "203.0.113.5");
        CHECK(routes(from("127.0.0.8", "203.0.113.5"), call).client.empty());
        CHECK(numeric_address("127.0.0.1"));
        CHECK(numeric_address("::1"));
        CHECK_FALSE(numeric_address("[::1]"));
        CHECK_FALSE(numeric_address("localhost"));
        CHECK_FALSE(numeric_address("1.2.3.4:80"));
    }

    TEST_CASE("routes: the log line, one JSON object of the documented fields") {
        HttpRequest req = get("/api/v1/query?pits=6&seeds=4");
        req.target = "/x?a=1\n\x01\xff";  // as a client could send it, percent-decoded or not
        HttpLogEntry e;
        e.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764870444015));
        e.client = "2001:db8::1";
        e.request = &req;
        e.status = 499;
        e.bytes = 1234;
        e.ms = 12.345;
        e.nodes = 65537;
        const std::string line = access_log_line(e);
        REQUIRE(!line.empty());
        CHECK(line.back() == '\n');
        CHECK(line.find('\n') == line.size() - 1);  // one line, whatever the target held
        for (char c : line) CHECK((c == '\n' || (c >= 0x20 && c < 0x7f)));
        const nlohmann::json j = nlohmann::json::parse(line);
        CHECK(j["time"] == "2025-12-04T17:47:24.015Z");
        CHECK(j["client"] == "2001:db8::1");
        CHECK(j["method"] == "GET");
        CHECK(j["target"] == "/x?a=1\\x0a\\x01\\xff");
        CHECK(j["status"] == 499);
        CHECK(j["bytes"] == 1234);
        CHECK(j["ms"] == doctest::Approx(12.3));
        CHECK(j["nodes"] == 65537);
        HttpLogEntry refused;
        refused.event = HttpLogEntry::Event::Refused;
        refused.time = e.time;
        refused.client = "127.0.0.4";
        refused.reason = "connection cap, every connection busy";
        const nlohmann::json r = nlohmann::json::parse(access_log_line(refused));
        CHECK(r.size() == 4);
        CHECK(r["event"] == "refused");
        CHECK(r["reason"] == "connection cap, every connection busy");
        refused.event = HttpLogEntry::Event::Evicted;
        CHECK(nlohmann::json::parse(access_log_line(refused))["event"] == "evicted");
        refused.event = HttpLogEntry::Event::Timeout;
        CHECK(nlohmann::json::parse(access_log_line(refused))["event"] == "timeout");
    }

    TEST_CASE("routes: the per-client cap counts an IPv6 client by its /64") {
        Api api(small_config());
        RouteOptions one;
        one.per_client = 1;
        Routes routes(api, one);
        FakeCall held;
        {
            std::lock_guard<std::mutex> lock(held.mu);
            held.hold = true;
        }
        HttpRequest stream = get("/api/v1/analysis", "2001:db8:1:2::10");
        stream.params = {{"pits", "4"}, {"seeds", "3"}};
        HttpResponse first;
        std::thread t([&] { first = routes(stream, held); });
        {
            std::unique_lock<std::mutex> lock(held.mu);
            held.cv.wait(lock, [&] { return held.holding == 1; });
        }
        FakeCall other;
        // Another address of the same /64: the same client, over its cap.
        HttpRequest same = get("/api/v1/query", "2001:db8:1:2::99");
        same.params = {{"pits", "4"}, {"seeds", "3"}};
        CHECK(routes(same, other).status == 429);
        // Another /64, and an IPv4 client: not capped by the first.
        HttpRequest next = same;
        next.remote_address = "2001:db8:1:3::10";
        CHECK(routes(next, other).status == 200);
        next.remote_address = "192.0.2.1";
        CHECK(routes(next, other).status == 200);
        {
            std::lock_guard<std::mutex> lock(held.mu);
            held.hold = false;
        }
        held.cv.notify_all();
        t.join();
        // Its request done, the client may ask again.
        CHECK(routes(same, other).status == 200);
    }
}
#endif
