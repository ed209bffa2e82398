// The HTTP front end of `kalah serve` (serve/http_server.h) with a fake handler, over real
// loopback sockets: its caps (414, 431, 413, 405), pipelined requests answered in order,
// a stream of events, a handler's cancel flag set when its client closes, the connection
// caps and the head and idle deadlines. Deadlines are set short by each case; a case waits
// "until it happens", bounded by a generous limit, and never asserts a duration.
#include <doctest/doctest.h>

#if KALAH_HAS_SERVE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "serve/http_server.h"

namespace {
using namespace kalah::serve;
using namespace std::chrono_literals;

// A server on a free loopback port, run on its own thread for the case's length.
struct TestServer {
    HttpServer server;
    int port;
    std::thread thread;
    TestServer(HttpOptions o, HttpHandler h) : server(std::move(o), std::move(h)) {
        port = server.listen("127.0.0.1", 0);
        thread = std::thread([this] { server.run(); });
    }
    ~TestServer() {
        server.stop();
        thread.join();
    }
};

// A connected client socket from `source` (a loopback address), or -1.
int connect_to(int port, const char* source = "127.0.0.1") {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in from{}, to{};
    from.sin_family = to.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    to.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// A client socket whose receive buffer is set small before it connects (a client that
// never reads its answers), or -1.
int connect_small(int port, const char* source) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const int small = 2048;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in from{}, to{};
    from.sin_family = to.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    to.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

bool send_all(int fd, const std::string& s) {
    size_t sent = 0;
    while (sent < s.size()) {
        const ssize_t n = ::send(fd, s.data() + sent, s.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return false;
        sent += size_t(n);
    }
    return true;
}

// Everything the server sends until it closes the connection (or 20 s pass: a hang is
// then a failed comparison, not a stuck test).
std::string read_to_close(int fd) {
    std::string out;
    char buf[4096];
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < give_up) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        out.append(buf, size_t(n));
    }
    return out;
}

// Reads until `needle` has arrived (or the connection closes, or 20 s pass).
std::string read_until(int fd, const std::string& needle) {
    std::string out;
    char buf[4096];
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    while (out.find(needle) == std::string::npos && std::chrono::steady_clock::now() < give_up) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        out.append(buf, size_t(n));
    }
    return out;
}

// True once `cond` holds, false if it does not within 20 s.
bool eventually(const std::function<bool()>& cond) {
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > give_up) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

int status_of(const std::string& reply) {
    return reply.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(reply.substr(9, 3)) : 0;
}

// The fake application: /echo answers its path and parameters, /wait waits for its
// cancel flag (recording that it saw it), /slow works 300 ms unless cancelled (recorded
// too), /stream emits `n` events or until emit fails, /probed asks whether events are
// wanted (emit("")) before its work, as the API's streams do, then emits `n` events.
struct Fake {
    std::atomic<int> waiting{0}, cancelled{0}, emit_failed{0}, slow{0}, slow_done{0},
        probed_work{0};
    HttpResponse operator()(const HttpRequest& req, HttpCall& call) {
        HttpResponse r;
        r.content_type = "text/plain";
        if (req.path == "/echo") {
            r.body = req.method + " " + req.path;
            for (const auto& [k, v] : req.params) r.body += " " + k + "=" + v;
            if (req.params.count("sleep")) std::this_thread::sleep_for(100ms);
        } else if (req.path == "/wait") {
            ++waiting;
            const auto give_up = std::chrono::steady_clock::now() + 30s;
            while (!call.cancelled() && std::chrono::steady_clock::now() < give_up)
                std::this_thread::sleep_for(2ms);
            if (call.cancelled()) ++cancelled;
            r.body = "done";
        } else if (req.path == "/big") {
            r.body.assign(1 << 20, 'x');  // more than a client that never reads takes
        } else if (req.path == "/slow") {
            ++slow;
            const auto until = std::chrono::steady_clock::now() + 300ms;
            while (!call.cancelled() && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(2ms);
            if (call.cancelled()) ++cancelled;
            ++slow_done;
            r.body = "slow done";
        } else if (req.path == "/quiet-stream") {
            // A stream whose first event is far off: asks whether events are wanted, then
            // works until cancelled.
            if (!call.emit("")) return r;
            ++waiting;
            const auto give_up = std::chrono::steady_clock::now() + 30s;
            while (!call.cancelled() && std::chrono::steady_clock::now() < give_up)
                std::this_thread::sleep_for(2ms);
            if (call.cancelled()) ++cancelled;
        } else if (req.path == "/probed") {
            if (!call.emit("")) return r;
            ++probed_work;
            const int count = std::stoi(req.params.find("n")->second);
            for (int i = 0; i < count && call.emit("{\"i\": " + std::to_string(i) + "}"); ++i) {
            }
        } else if (req.path == "/stream") {
            const auto n = req.params.find("n");
            const int count = n == req.params.end() ? 1000000 : std::stoi(n->second);
            for (int i = 0; i < count; ++i) {
                if (!call.emit("{\"i\": " + std::to_string(i) + "}")) {
                    ++emit_failed;
                    break;
                }
            }
            r.status = 500;  // ignored once the stream has started
        } else {
            r.status = 404;
            r.body = "not found";
        }
        return r;
    }
};

HttpOptions small_options() {
    HttpOptions o;
    o.workers = 4;
    o.max_request_line = 200;
    o.max_head = 1024;
    o.max_headers = 8;
    o.max_body = 16;
    o.idle_timeout = 500ms;  // a kept-alive exchange ends soon
    o.default_headers = {{"X-Test", "yes"}};
    return o;
}

// `reply` without the interim 100 Continue answers in front of its first answer (the
// server's probe of a client whose FIN came while its request ran).
std::string without_interim(std::string reply) {
    const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
    while (reply.rfind(interim, 0) == 0) reply.erase(0, interim.size());
    return reply;
}

std::string ask(int port, const std::string& request) {
    const int fd = connect_to(port);
    REQUIRE(fd >= 0);
    send_all(fd, request);
    const std::string reply = read_to_close(fd);
    ::close(fd);
    return reply;
}
}  // namespace

TEST_SUITE("http") {
    TEST_CASE("a request: decoded path and parameters, default headers, HEAD without body") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        std::string r = ask(s.port,
                            "GET /ec%68o?a=1&b=x+y%21&a=2 HTTP/1.1\r\nHost: x\r\n"
                            "Connection: close\r\n\r\n");
        CHECK(status_of(r) == 200);
        CHECK(r.find("X-Test: yes\r\n") != std::string::npos);
        CHECK(r.find("Connection: close\r\n") != std::string::npos);
        CHECK(r.substr(r.find("\r\n\r\n") + 4) == "GET /echo a=1 a=2 b=x y!");
        r = ask(s.port, "HEAD /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        CHECK(status_of(r) == 200);
        CHECK(r.find("Content-Length: 10\r\n") != std::string::npos);
        CHECK(r.substr(r.find("\r\n\r\n") + 4).empty());
    }

    TEST_CASE("HTTP/1.0: kept alive, and told so, only when it asks for keep-alive") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        const int fd = connect_to(s.port);
        REQUIRE(fd >= 0);
        send_all(fd, "GET /echo?i=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        const std::string first = read_until(fd, "GET /echo i=1");
        CHECK(status_of(first) == 200);
        CHECK(first.find("Connection: keep-alive\r\n") != std::string::npos);
        // The same connection takes the next request; without keep-alive it then closes.
        send_all(fd, "GET /echo?i=2 HTTP/1.0\r\n\r\n");
        const std::string second = read_to_close(fd);
        CHECK(status_of(second) == 200);
        CHECK(second.find("GET /echo i=2") != std::string::npos);
        CHECK(second.find("Connection: close\r\n") != std::string::npos);
        ::close(fd);
    }

    TEST_CASE("caps: request line 414, headers and head 431, body 413, method 405") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        CHECK(status_of(ask(s.port, "GET /echo?x=" + std::string(300, 'a') +
                                        " HTTP/1.1\r\nHost: x\r\n\r\n")) == 414);
        // A request line past the cap is refused before its end arrives.
        CHECK(status_of(ask(s.port, "GET /echo?x=" + std::string(300, 'a'))) == 414);
        std::string many;
        for (int i = 0; i < 9; ++i) many += "X-H" + std::to_string(i) + ": 1\r\n";
        CHECK(status_of(ask(s.port, "GET /echo HTTP/1.1\r\n" + many + "\r\n")) == 431);
        CHECK(status_of(ask(s.port, "GET /echo HTTP/1.1\r\nX-Big: " + std::string(1100, 'b') +
                                        "\r\n\r\n")) == 431);
        CHECK(status_of(ask(s.port, "GET /echo HTTP/1.1\r\nContent-Length: 17\r\n\r\n")) == 413);
        CHECK(status_of(ask(s.port,
                            "GET /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                            "1\r\nx\r\n0\r\n\r\n")) == 413);
        const std::string post = ask(s.port, "POST /echo HTTP/1.1\r\nContent-Length: 1\r\n\r\nx");
        CHECK(status_of(post) == 405);
        CHECK(post.find("Allow: GET, HEAD\r\n") != std::string::npos);
        CHECK(status_of(ask(s.port, "BREW /echo HTTP/1.1\r\n\r\n")) == 405);
        CHECK(status_of(ask(s.port, "nonsense\r\n\r\n")) == 400);
        // Just under the caps, with a small body read and dropped: answered.
        std::string eight;
        for (int i = 0; i < 7; ++i) eight += "X-H" + std::to_string(i) + ": 1\r\n";
        const std::string ok = ask(s.port, "GET /echo HTTP/1.1\r\n" + eight +
                                               "Content-Length: 16\r\n\r\n0123456789abcdef");
        CHECK(status_of(ok) == 200);
    }

    TEST_CASE("pipelined requests are answered in order on one connection") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        const std::string r = ask(s.port,
                                  "GET /echo?i=1&sleep=1 HTTP/1.1\r\nHost: x\r\n\r\n"
                                  "GET /echo?i=2 HTTP/1.1\r\nHost: x\r\n\r\n"
                                  "HEAD /echo?i=3 HTTP/1.1\r\nHost: x\r\n\r\n"
                                  "GET /echo?i=4 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        const size_t a = r.find("GET /echo i=1 sleep=1"), b = r.find("GET /echo i=2"),
                     c = r.find("GET /echo i=4");
        CHECK(a != std::string::npos);
        CHECK(b != std::string::npos);
        CHECK(c != std::string::npos);
        CHECK(a < b);
        CHECK(b < c);
        int answers = 0;
        for (size_t at = r.find("HTTP/1.1 200"); at != std::string::npos;
             at = r.find("HTTP/1.1 200", at + 1))
            ++answers;
        CHECK(answers == 4);
    }

    TEST_CASE("a stream: text/event-stream, one event per emit, closed after the last") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        const std::string r = ask(s.port, "GET /stream?n=3 HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(status_of(r) == 200);
        CHECK(r.find("Content-Type: text/event-stream\r\n") != std::string::npos);
        CHECK(r.find("Content-Length") == std::string::npos);
        CHECK(r.find("X-Test: yes\r\n") != std::string::npos);
        CHECK(r.substr(r.find("\r\n\r\n") + 4) ==
              "data: {\"i\": 0}\n\ndata: {\"i\": 1}\n\ndata: {\"i\": 2}\n\n");
        CHECK(fake.emit_failed == 0);
    }

    TEST_CASE("a stream that asks first: GET gets its events, HEAD the head and no work") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        const std::string get = ask(s.port, "GET /probed?n=2 HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(status_of(get) == 200);
        CHECK(get.substr(get.find("\r\n\r\n") + 4) == "data: {\"i\": 0}\n\ndata: {\"i\": 1}\n\n");
        CHECK(fake.probed_work == 1);
        const std::string head = ask(s.port, "HEAD /probed?n=2 HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(status_of(head) == 200);
        CHECK(head.find("Content-Type: text/event-stream\r\n") != std::string::npos);
        CHECK(head.find("Content-Length") == std::string::npos);
        CHECK(head.substr(head.find("\r\n\r\n") + 4).empty());
        CHECK(fake.probed_work == 1);
    }

    TEST_CASE("a stream whose client goes away: emit returns false") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        const int fd = connect_to(s.port);
        REQUIRE(fd >= 0);
        send_all(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(read_until(fd, "data: {\"i\": 2}").find("data: {\"i\": 2}") != std::string::npos);
        ::close(fd);
        CHECK(eventually([&] { return fake.emit_failed == 1; }));
    }

    TEST_CASE("a handler's cancel flag is set when its client closes or resets") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        for (bool reset : {false, true}) {
            const int before = fake.cancelled;
            const int fd = connect_to(s.port);
            REQUIRE(fd >= 0);
            send_all(fd, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
            CHECK(eventually([&] { return fake.waiting == before + 1; }));
            if (reset) {
                linger l{1, 0};  // close with RST
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
            }
            ::close(fd);
            CHECK(eventually([&] { return fake.cancelled == before + 1; }));
        }
        CHECK(eventually([&] { return s.server.connections() == 0; }));
    }

    TEST_CASE("a half-close: the requests sent are answered, then the connection closes") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        const int fd = connect_to(s.port);
        REQUIRE(fd >= 0);
        send_all(fd,
                 "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
                 "GET /echo?i=2 HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(eventually([&] { return fake.slow == 1; }));
        // The FIN comes while the first request runs: as curl or a proxy may send it.
        ::shutdown(fd, SHUT_WR);
        const std::string r = without_interim(read_to_close(fd));
        ::close(fd);
        CHECK(status_of(r) == 200);
        const size_t a = r.find("slow done"), b = r.find("GET /echo i=2");
        CHECK(a != std::string::npos);
        CHECK(b != std::string::npos);
        CHECK(a < b);
        CHECK(eventually([&] { return fake.slow_done == 1; }));
        CHECK(fake.cancelled == 0);
        CHECK(eventually([&] { return s.server.connections() == 0; }));
    }

    TEST_CASE("a client that leaves while reading is paused (pipelined past the cap) cancels") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));  // reads pause past 2 * 1024 + 4096 bytes
        std::string burst = "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n";
        while (burst.size() < 20000) burst += "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n";
        for (bool reset : {false, true}) {
            const int before = fake.cancelled;
            const int fd = connect_to(s.port);
            REQUIRE(fd >= 0);
            REQUIRE(send_all(fd, burst));
            CHECK(eventually([&] { return fake.waiting == before + 1; }));
            // Time for the server to read up to its cap and pause (the case passes either
            // way once the server is right; before, a close after the pause went unseen).
            std::this_thread::sleep_for(100ms);
            if (reset) {
                linger l{1, 0};  // close with RST
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
            }
            ::close(fd);
            CHECK(eventually([&] { return fake.cancelled == before + 1; }));
        }
        CHECK(eventually([&] { return s.server.connections() == 0; }));
    }

    TEST_CASE("connection caps: per address; at the total cap the longest waiting is evicted") {
        Fake fake;
        HttpOptions o = small_options();
        o.max_connections_per_address = 2;
        o.max_connections = 3;
        // The connections stay silent for long stretches: the idle deadline must not close
        // them (on a slow machine, or under TSan, the case takes longer than 500 ms).
        o.idle_timeout = 30s;
        std::mutex log_mu;
        std::vector<HttpLogEntry> log;
        o.log = [&](const HttpLogEntry& e) {
            std::lock_guard<std::mutex> lock(log_mu);
            log.push_back(e);
            log.back().request = nullptr;  // not kept past the call
        };
        auto logged = [&](HttpLogEntry::Event event, const std::string& client) {
            std::lock_guard<std::mutex> lock(log_mu);
            for (const auto& e : log)
                if (e.event == event && e.client == client) return true;
            return false;
        };
        TestServer s(o, std::ref(fake));
        const int a1 = connect_to(s.port);
        REQUIRE(a1 >= 0);
        CHECK(eventually([&] { return s.server.connections() == 1; }));
        const int a2 = connect_to(s.port);
        REQUIRE(a2 >= 0);
        CHECK(eventually([&] { return s.server.connections() == 2; }));
        // A third from the same address: closed without an answer, and logged.
        const int a3 = connect_to(s.port);
        REQUIRE(a3 >= 0);
        send_all(a3, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(read_to_close(a3).empty());
        ::close(a3);
        CHECK(eventually([&] { return logged(HttpLogEntry::Event::Refused, "127.0.0.1"); }));
        // Another address is answered; the total cap is then reached.
        const int b1 = connect_to(s.port, "127.0.0.2");
        REQUIRE(b1 >= 0);
        send_all(b1, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(status_of(read_until(b1, "GET /echo")) == 200);
        // Past it, the connection that has waited longest for a request (a1, silent since
        // it opened) makes room: the newcomer is answered, a1 closed without an answer.
        const int c1 = connect_to(s.port, "127.0.0.3");
        REQUIRE(c1 >= 0);
        send_all(c1, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(status_of(read_until(c1, "GET /echo")) == 200);
        CHECK(read_to_close(a1).empty());
        ::close(a1);
        CHECK(logged(HttpLogEntry::Event::Evicted, "127.0.0.1"));
        CHECK(s.server.connections() == 3);
        // Every connection busy with a request: nothing to evict, a newcomer is refused.
        for (int fd : {a2, b1, c1}) send_all(fd, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(eventually([&] { return fake.waiting == 3; }));
        const int d1 = connect_to(s.port, "127.0.0.4");
        REQUIRE(d1 >= 0);
        send_all(d1, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(read_to_close(d1).empty());
        ::close(d1);
        CHECK(eventually([&] { return logged(HttpLogEntry::Event::Refused, "127.0.0.4"); }));
        for (int fd : {a2, b1, c1}) ::close(fd);
        CHECK(eventually([&] { return fake.cancelled == 3; }));
        CHECK(eventually([&] { return s.server.connections() == 0; }));
        // Room again.
        CHECK(status_of(ask(s.port, "GET /echo HTTP/1.1\r\nConnection: close\r\n\r\n")) == 200);
    }

    TEST_CASE("many addresses of idle connections cannot keep a newcomer out") {
        Fake fake;
        HttpOptions o = small_options();
        o.max_connections_per_address = 4;
        o.max_connections = 16;
        o.idle_timeout = 30s;
        TestServer s(o, std::ref(fake));
        // Four addresses fill the total cap with idle connections, as 16 addresses of 32
        // fill the default 512.
        std::vector<int> idle;
        for (int a = 0; a < 4; ++a)
            for (int i = 0; i < 4; ++i) {
                const std::string from = "127.0.1." + std::to_string(a + 1);
                idle.push_back(connect_to(s.port, from.c_str()));
                REQUIRE(idle.back() >= 0);
            }
        CHECK(eventually([&] { return s.server.connections() == 16; }));
        // Each newcomer from another address is answered, ten times over.
        for (int i = 0; i < 10; ++i) {
            const int fd = connect_to(s.port, "127.0.2.1");
            REQUIRE(fd >= 0);
            send_all(fd, "GET /echo HTTP/1.1\r\nConnection: close\r\n\r\n");
            CHECK(status_of(read_to_close(fd)) == 200);
            ::close(fd);
        }
        for (int fd : idle) ::close(fd);
        CHECK(eventually([&] { return s.server.connections() == 0; }));
    }

    TEST_CASE("pick_eviction: lingering first, then least progress for longest, never computing") {
        using P = EvictionView::Phase;
        const auto t0 = std::chrono::steady_clock::now();
        auto at = [&](int s) { return t0 + std::chrono::seconds(s); };
        CHECK(pick_eviction({}) == -1);
        CHECK(pick_eviction({{P::Computing, at(0)}, {P::Computing, at(1)}}) == -1);
        // Each phase but Computing can be evicted: the oldest progress goes.
        CHECK(pick_eviction({{P::Waiting, at(5)}, {P::Body, at(3)}, {P::Writing, at(4)}}) == 1);
        CHECK(pick_eviction({{P::Waiting, at(5)}, {P::Body, at(6)}, {P::Writing, at(4)}}) == 2);
        CHECK(pick_eviction({{P::Waiting, at(2)}, {P::Body, at(6)}, {P::Writing, at(4)}}) == 0);
        // A connection computing an answer is kept however old.
        CHECK(pick_eviction({{P::Computing, at(0)}, {P::Waiting, at(9)}}) == 1);
        // A lingering one (its answer sent) before any other, the longest lingering first.
        CHECK(pick_eviction({{P::Waiting, at(0)},
                             {P::Lingering, at(8)},
                             {P::Lingering, at(7)},
                             {P::Body, at(1)}}) == 2);
    }

    TEST_CASE("body timeout: a head announcing a body that never comes is closed") {
        Fake fake;
        HttpOptions o = small_options();
        o.head_timeout = 30s;  // only the body's deadline can close it within 20 s
        o.body_timeout = 200ms;
        std::mutex log_mu;
        std::vector<std::string> timeouts;
        o.log = [&](const HttpLogEntry& e) {
            std::lock_guard<std::mutex> lock(log_mu);
            if (e.event == HttpLogEntry::Event::Timeout) timeouts.push_back(e.reason);
        };
        TestServer s(o, std::ref(fake));
        const int fd = connect_to(s.port);
        REQUIRE(fd >= 0);
        send_all(fd, "GET /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n");
        CHECK(read_to_close(fd).empty());
        ::close(fd);
        {
            std::lock_guard<std::mutex> lock(log_mu);
            CHECK(timeouts == std::vector<std::string>{"body timeout"});
        }
        // A body that comes in time: the request is answered.
        CHECK(status_of(ask(s.port,
                            "GET /echo HTTP/1.1\r\nContent-Length: 3\r\n"
                            "Connection: close\r\n\r\nabc")) == 200);
    }

    TEST_CASE("at the cap a stalled body, an unread answer or a lingering refusal is evicted") {
        // Each kind of connection that is no answer being computed makes room for a
        // newcomer at the total cap; the other connection, computing, is kept.
        enum Kind { StalledBody, Unread, Lingering };
        for (const Kind kind : {StalledBody, Unread, Lingering}) {
            CAPTURE(int(kind));
            Fake fake;
            HttpOptions o = small_options();
            o.max_connections = 2;
            o.max_connections_per_address = 2;
            o.head_timeout = o.body_timeout = o.idle_timeout = o.write_timeout = 30s;
            std::mutex log_mu;
            std::vector<HttpLogEntry> log;
            o.log = [&](const HttpLogEntry& e) {
                std::lock_guard<std::mutex> lock(log_mu);
                log.push_back(e);
                log.back().request = nullptr;  // not kept past the call
            };
            auto evicted = [&] {
                std::lock_guard<std::mutex> lock(log_mu);
                std::vector<std::string> out;
                for (const auto& e : log)
                    if (e.event == HttpLogEntry::Event::Evicted)
                        out.push_back(e.client + " " + e.reason);
                return out;
            };
            TestServer s(o, std::ref(fake));
            const int busy = connect_to(s.port, "127.0.0.2");
            REQUIRE(busy >= 0);
            send_all(busy, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
            CHECK(eventually([&] { return fake.waiting == 1; }));
            int attacker = -1;
            std::string why;
            if (kind == StalledBody) {
                attacker = connect_to(s.port, "127.0.0.3");
                REQUIRE(attacker >= 0);
                send_all(attacker, "GET /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n");
                why = "connection cap: its body stalled longest";
            } else if (kind == Unread) {
                attacker = connect_small(s.port, "127.0.0.3");
                REQUIRE(attacker >= 0);
                std::string many;
                for (int i = 0; i < 8; ++i) many += "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
                send_all(attacker, many);
                why = "connection cap: its answer unread longest";
            } else {
                attacker = connect_to(s.port, "127.0.0.3");
                REQUIRE(attacker >= 0);
                send_all(attacker, "PUT /echo HTTP/1.1\r\nHost: x\r\n\r\n");
                CHECK(status_of(read_until(attacker, "}")) == 405);
                why = "connection cap: lingering longest";
            }
            CHECK(eventually([&] { return s.server.connections() == 2; }));
            // Let the attacker's connection settle into its state (the big answers fill
            // the socket's buffers; a lingering one lingers for a second, kLinger).
            if (kind != Lingering) std::this_thread::sleep_for(200ms);
            const int newcomer = connect_to(s.port, "127.0.0.4");
            REQUIRE(newcomer >= 0);
            send_all(newcomer, "GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            CHECK(status_of(read_to_close(newcomer)) == 200);
            ::close(newcomer);
            CHECK(evicted() == std::vector<std::string>{"127.0.0.3 " + why});
            CHECK(fake.cancelled == 0);  // the computing connection was kept
            ::close(attacker);
            ::close(busy);
            CHECK(eventually([&] { return fake.cancelled == 1; }));
        }
    }

    TEST_CASE("a send timeout closes a connection whose client does not read its answers") {
        Fake fake;
        HttpOptions o = small_options();
        o.write_timeout = 300ms;
        o.idle_timeout = 30s;
        std::atomic<int> write_timeouts{0};
        o.log = [&](const HttpLogEntry& e) {
            if (e.event == HttpLogEntry::Event::Timeout && e.reason == "write timeout")
                ++write_timeouts;
        };
        TestServer s(o, std::ref(fake));
        const int fd = connect_small(s.port, "127.0.0.1");
        REQUIRE(fd >= 0);
        std::string many;
        for (int i = 0; i < 8; ++i) many += "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
        send_all(fd, many);
        CHECK(eventually([&] { return write_timeouts == 1; }));
        CHECK(eventually([&] { return s.server.connections() == 0; }));
        ::close(fd);
    }

    TEST_CASE("a trusted proxy has a connection cap of its own") {
        Fake fake;
        HttpOptions o = small_options();
        o.max_connections_per_address = 1;
        o.max_connections_per_proxy = 3;
        o.proxies = {"127.0.0.9"};
        o.idle_timeout = 30s;
        TestServer s(o, std::ref(fake));
        std::vector<int> fds;
        for (int i = 0; i < 3; ++i) {
            fds.push_back(connect_to(s.port, "127.0.0.9"));
            REQUIRE(fds.back() >= 0);
        }
        CHECK(eventually([&] { return s.server.connections() == 3; }));
        for (int fd : fds) {
            send_all(fd, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
            CHECK(status_of(read_until(fd, "GET /echo")) == 200);
        }
        // Its fourth is past its cap; another address is held to the usual one.
        const int fourth = connect_to(s.port, "127.0.0.9");
        REQUIRE(fourth >= 0);
        send_all(fourth, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(read_to_close(fourth).empty());
        ::close(fourth);
        const int other = connect_to(s.port, "127.0.0.10");
        REQUIRE(other >= 0);
        CHECK(eventually([&] { return s.server.connections() == 4; }));
        const int other2 = connect_to(s.port, "127.0.0.10");
        REQUIRE(other2 >= 0);
        send_all(other2, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(read_to_close(other2).empty());
        ::close(other2);
        ::close(other);
        for (int fd : fds) ::close(fd);
    }

    TEST_CASE("a FIN during a stream or an HTTP/1.0 request cancels it; its answer still goes") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        // A stream's client shuts down its sending side (a browser closing an EventSource
        // sends a FIN) and reads on: the handler's next emit fails, the stream ends.
        int fd = connect_to(s.port);
        REQUIRE(fd >= 0);
        send_all(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(read_until(fd, "data: {\"i\": 2}").find("data: {\"i\": 2}") != std::string::npos);
        ::shutdown(fd, SHUT_WR);
        CHECK(eventually([&] { return fake.emit_failed == 1; }));
        read_to_close(fd);
        ::close(fd);
        // The same before the stream's first event, once its handler asked whether events
        // are wanted: a half-closed client that reads on is no reason to search on.
        fd = connect_to(s.port);
        REQUIRE(fd >= 0);
        send_all(fd, "GET /quiet-stream HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(eventually([&] { return fake.waiting == 1; }));
        ::shutdown(fd, SHUT_WR);
        CHECK(eventually([&] { return fake.cancelled == 1; }));
        read_to_close(fd);
        ::close(fd);
        // HTTP/1.0 has no interim answer to probe with: the FIN cancels, and the handler's
        // answer is still written to what is left of the connection.
        fd = connect_to(s.port);
        REQUIRE(fd >= 0);
        send_all(fd, "GET /wait HTTP/1.0\r\n\r\n");
        CHECK(eventually([&] { return fake.waiting == 2; }));
        ::shutdown(fd, SHUT_WR);
        CHECK(eventually([&] { return fake.cancelled == 2; }));
        const std::string r = read_to_close(fd);
        ::close(fd);
        CHECK(status_of(r) == 200);
        CHECK(r.find("done") != std::string::npos);
        CHECK(eventually([&] { return s.server.connections() == 0; }));
    }

    TEST_CASE("Transfer-Encoding other than a final chunked: 400, and nothing after it is read") {
        Fake fake;
        TestServer s(small_options(), std::ref(fake));
        for (const char* te : {"gzip", "identity", "xchunked", "chunked, gzip", "chunkedx"}) {
            CAPTURE(te);
            const std::string r = ask(s.port, std::string("GET /echo HTTP/1.1\r\nHost: x\r\n") +
                                                  "Transfer-Encoding: " + te +
                                                  "\r\n\r\nGET /echo?smuggled=1 HTTP/1.1\r\n"
                                                  "Host: x\r\n\r\n");
            CHECK(status_of(r) == 400);
            CHECK(r.find("Connection: close") != std::string::npos);
            CHECK(r.find("smuggled") == std::string::npos);
        }
        // A final chunked is a body, refused as before (413), and also closes.
        const std::string r = ask(s.port,
                                  "GET /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, "
                                  "chunked\r\n\r\n0\r\n\r\n");
        CHECK(status_of(r) == 413);
    }

    TEST_CASE("the log: a line per request with its status, bytes and time") {
        Fake fake;
        HttpOptions o = small_options();
        std::mutex log_mu;
        std::vector<std::tuple<std::string, std::string, int, uint64_t>> log;
        o.log = [&](const HttpLogEntry& e) {
            std::lock_guard<std::mutex> lock(log_mu);
            if (e.event == HttpLogEntry::Event::Request && e.request)
                log.emplace_back(e.client, e.request->target, e.status, e.bytes);
        };
        TestServer s(o, std::ref(fake));
        const std::string a = ask(s.port, "GET /echo?x=1 HTTP/1.1\r\nConnection: close\r\n\r\n");
        const std::string b = ask(s.port, "GET /nothing HTTP/1.1\r\nConnection: close\r\n\r\n");
        const std::string c = ask(s.port, "PUT /echo HTTP/1.1\r\nConnection: close\r\n\r\n");
        CHECK(eventually([&] {
            std::lock_guard<std::mutex> lock(log_mu);
            return log.size() == 3;
        }));
        std::lock_guard<std::mutex> lock(log_mu);
        REQUIRE(log.size() == 3);
        std::sort(log.begin(), log.end());
        CHECK(log[0] == std::make_tuple(std::string("127.0.0.1"), std::string("/echo"), 405,
                                        uint64_t(c.size())));
        CHECK(log[1] == std::make_tuple(std::string("127.0.0.1"), std::string("/echo?x=1"), 200,
                                        uint64_t(a.size())));
        CHECK(log[2] == std::make_tuple(std::string("127.0.0.1"), std::string("/nothing"), 404,
                                        uint64_t(b.size())));
    }

    TEST_CASE("deadlines: a head trickled in is cut off; an idle connection is closed") {
        Fake fake;
        HttpOptions o = small_options();
        o.head_timeout = 300ms;
        o.idle_timeout = 300ms;
        o.max_head = 1 << 20;  // only the deadline can cut the trickle off within 20 s
        TestServer s(o, std::ref(fake));
        // Slowloris: a header line every 50 ms, never the end of the head. The server
        // closes the connection; the client's writes then fail or its read sees the end.
        const int slow = connect_to(s.port);
        REQUIRE(slow >= 0);
        send_all(slow, "GET /echo HTTP/1.1\r\n");
        bool closed = false;
        const auto give_up = std::chrono::steady_clock::now() + 20s;
        while (!closed && std::chrono::steady_clock::now() < give_up) {
            std::this_thread::sleep_for(50ms);
            if (!send_all(slow, "X-a: b\r\n")) closed = true;
            pollfd p{slow, POLLIN, 0};
            char c;
            if (::poll(&p, 1, 0) > 0 && ::recv(slow, &c, 1, MSG_DONTWAIT) <= 0) closed = true;
        }
        CHECK(closed);
        ::close(slow);
        // Idle after an answer (keep-alive): closed.
        const int idle = connect_to(s.port);
        REQUIRE(idle >= 0);
        send_all(idle, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
        const std::string r = read_to_close(idle);
        CHECK(status_of(r) == 200);
        CHECK(r.find("Connection: close") == std::string::npos);
        ::close(idle);
        CHECK(eventually([&] { return s.server.connections() == 0; }));
    }

    TEST_CASE("a head trickled in a byte at a time is looked at once, not once per read") {
        Fake fake;
        HttpOptions o = small_options();
        o.max_head = 1 << 16;
        o.max_headers = 1000;
        o.head_timeout = 60s;  // the trickle is paced, not cut off
        TestServer s(o, std::ref(fake));
        std::string head = "GET /echo HTTP/1.1\r\n";
        for (int i = 0; head.size() < 3000; ++i) head += "X-" + std::to_string(i) + ": v\r\n";
        head += "Connection: close\r\n\r\n";
        const int fd = connect_to(s.port);
        REQUIRE(fd >= 0);
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const uint64_t before = s.server.head_work();
        // A byte at a time, a pause now and then so that the server reads them apart.
        bool sent = true;
        for (size_t i = 0; i < head.size() && sent; ++i) {
            sent = send_all(fd, head.substr(i, 1));
            if (i % 4 == 0) std::this_thread::sleep_for(200us);
        }
        REQUIRE(sent);
        const std::string r = read_to_close(fd);
        ::close(fd);
        CHECK(status_of(r) == 200);
        // Each byte scanned once and parsed once; a parse from the start on every read
        // would be about head.size()^2 / (2 * bytes per read).
        CHECK(s.server.head_work() - before <= 2 * head.size());
    }

    TEST_CASE("single_range: one satisfiable range, else nothing") {
        using R = std::pair<size_t, size_t>;
        CHECK(single_range("bytes=0-9", 100) == R{0, 9});
        CHECK(single_range("bytes=90-", 100) == R{90, 99});
        CHECK(single_range("bytes=-10", 100) == R{90, 99});
        CHECK(single_range("bytes=-200", 100) == R{0, 99});
        CHECK(single_range("bytes=50-500", 100) == R{50, 99});
        CHECK_FALSE(single_range("bytes=100-", 100));
        CHECK_FALSE(single_range("bytes=9-3", 100));
        CHECK_FALSE(single_range("bytes=0-1,3-4", 100));
        CHECK_FALSE(single_range("bytes=-", 100));
        CHECK_FALSE(single_range("bytes=-0", 100));
        CHECK_FALSE(single_range("items=0-9", 100));
        CHECK_FALSE(single_range("bytes=0-9", 0));
    }

    TEST_CASE("connection_key: IPv4 as it is, IPv4-mapped as IPv4, IPv6 by its /64") {
        CHECK(connection_key("127.0.0.1") == "127.0.0.1");
        CHECK(connection_key("::ffff:192.0.2.7") == "192.0.2.7");
        CHECK(connection_key("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64");
        // Two hosts of one /64 are one client; the next /64 is another.
        CHECK(connection_key("2001:db8:1:2::1") == connection_key("2001:db8:1:2:ffff::9"));
        CHECK(connection_key("2001:db8:1:3::1") == "2001:db8:1:3::/64");
        CHECK(connection_key("::1") == "::/64");
        CHECK(connection_key("?") == "?");
    }

    TEST_CASE("log_safe escapes what could forge a log line") {
        CHECK(log_safe("/a\nb\\c\x1b\xc3") == "/a\\x0ab\\x5cc\\x1b\\xc3");
        CHECK(log_safe(std::string(250, 'x')) == std::string(200, 'x') + "...");
    }
}
#endif
