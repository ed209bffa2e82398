// The HTTP/1.1 front end of `kalah serve` (serve/http_server.h): the io thread's
// connection state machine, the worker pool and the stream writer.
#include "serve/http_server.h"

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace kalah::serve {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// How long a connection closed by the server keeps reading (and dropping) what its
// client still sends, so that the client reads the answer instead of a reset.
constexpr std::chrono::milliseconds kLinger{1000};
// Bytes read per read; and the most the io thread buffers ahead of the request it answers
// (pipelined requests): past it, reading pauses until the answer is written (and the
// socket is watched for a reset or FIN meanwhile, Connection::watch).
constexpr size_t kReadChunk = 4096;
// How often a connection whose socket is not being read while its request runs (reading
// paused, or the client's FIN read) looks for the client's reset or FIN.
constexpr std::chrono::milliseconds kWatch{50};
// Sent once, when the client's FIN arrives while its request runs, to learn whether the
// client only shut down its sending side (it reads this interim answer, which HTTP/1.1
// clients skip) or closed (its system answers with a reset).
constexpr std::string_view kProbe = "HTTP/1.1 100 Continue\r\n\r\n";

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// %XX decoded (a malformed escape stays as it is); in a query string '+' is a space.
std::string percent_decode(std::string_view s, bool query) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            const int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
            if (hi >= 0 && lo >= 0) {
                out += char(hi * 16 + lo);
                i += 2;
                continue;
            }
        }
        out += (query && s[i] == '+') ? ' ' : s[i];
    }
    return out;
}

void split_target(const std::string& target, HttpRequest& req) {
    const size_t q = target.find('?');
    req.path = percent_decode(std::string_view(target).substr(0, q), false);
    if (q == std::string::npos) return;
    std::string_view rest = std::string_view(target).substr(q + 1);
    const size_t hash = rest.find('#');
    if (hash != std::string_view::npos) rest = rest.substr(0, hash);
    while (!rest.empty()) {
        const size_t amp = rest.find('&');
        const std::string_view pair = rest.substr(0, amp);
        rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
        if (pair.empty()) continue;
        const size_t eq = pair.find('=');
        req.params.emplace(percent_decode(pair.substr(0, eq), true),
                           eq == std::string_view::npos
                               ? std::string()
                               : percent_decode(pair.substr(eq + 1), true));
    }
}

std::string reason(int status) {
    const auto r = http::obsolete_reason(static_cast<http::status>(status));
    return r.empty() ? "Unknown" : std::string(r);
}

// A fixed set of threads taking jobs in order. Bounded by its users: each connection has
// at most one request on it.
class HandlerThreads {
  public:
    explicit HandlerThreads(int n) {
        for (int i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
    }
    ~HandlerThreads() { join(); }
    void push(std::function<void()> job) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            jobs_.push_back(std::move(job));
        }
        wake_.notify_one();
    }
    // Runs what is queued, then ends the threads.
    void join() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& t : threads_)
            if (t.joinable()) t.join();
    }

  private:
    void work() {
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock<std::mutex> lock(mu_);
                wake_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
                if (jobs_.empty()) return;
                job = std::move(jobs_.front());
                jobs_.pop_front();
            }
            job();
        }
    }
    std::mutex mu_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> jobs_;
    bool stop_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace

const std::string* HttpRequest::header(std::string_view name) const {
    for (const auto& [k, v] : headers)
        if (iequals(k, name)) return &v;
    return nullptr;
}

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

std::string connection_key(const std::string& numeric_address) {
    boost::system::error_code ec;
    const asio::ip::address a = asio::ip::make_address(numeric_address, ec);
    if (ec || !a.is_v6()) return numeric_address;
    const asio::ip::address_v6 v6 = a.to_v6();
    if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_string();
    asio::ip::address_v6::bytes_type b = v6.to_bytes();
    for (size_t i = 8; i < b.size(); ++i) b[i] = 0;
    return asio::ip::address_v6(b).to_string() + "/64";
}

std::optional<std::pair<size_t, size_t>> single_range(const std::string& value, size_t size) {
    if (value.rfind("bytes=", 0) != 0 || size == 0) return std::nullopt;
    const std::string spec = value.substr(6);
    const size_t dash = spec.find('-');
    if (dash == std::string::npos || spec.find_first_not_of("0123456789-") != std::string::npos ||
        spec.find('-', dash + 1) != std::string::npos)
        return std::nullopt;
    const std::string a = spec.substr(0, dash), b = spec.substr(dash + 1);
    if ((a.empty() && b.empty()) || a.size() > 18 || b.size() > 18) return std::nullopt;
    if (a.empty()) {  // the last n bytes
        const size_t n = std::stoull(b);
        if (n == 0) return std::nullopt;
        return std::make_pair(n >= size ? 0 : size - n, size - 1);
    }
    const size_t first = std::stoull(a);
    size_t last = b.empty() ? size - 1 : std::stoull(b);
    if (first >= size || last < first) return std::nullopt;
    if (last >= size) last = size - 1;
    return std::make_pair(first, last);
}

struct Connection;

// One request on a worker: what the handler sees, its cancel flag and the stream's
// hand-over to the io thread.
struct Job : HttpCall, std::enable_shared_from_this<Job> {
    HttpRequest request;
    bool keep_alive = true;
    std::atomic<bool> cancel{false};
    std::shared_ptr<Connection> conn;  // touched on the io thread only
    asio::executor_work_guard<asio::io_context::executor_type> work;
    asio::io_context& io;
    // The stream (worker side): started once the first event's head is sent.
    bool stream_started = false;
    // The handler asked whether events are wanted (emit("")): its answer is a stream, even
    // before its first event (read by the io thread: a FIN then cancels).
    std::atomic<bool> streams{false};
    std::mutex mu;
    std::condition_variable written;
    enum class Emit { Idle, Pending, Ok, Failed } emit_state = Emit::Idle;

    Job(asio::io_context& io_context) : work(asio::make_work_guard(io_context)), io(io_context) {}
    const std::atomic<bool>& cancelled() const override { return cancel; }
    bool emit(const std::string& event) override;
};

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

// A client connection, driven by the io thread (see serve/http_server.h for its life).
struct Connection : std::enable_shared_from_this<Connection> {
    enum class State { Head, Body, Worker, Write, Linger, Closed };
    HttpServer::Impl& server;
    tcp::socket socket;
    std::string address;  // numeric, as the request's remote_address
    std::string key;      // connection_key(address): what per_address counts by
    asio::steady_timer timer;
    unsigned timer_generation = 0;
    const char* timer_what = "";      // what the armed deadline is for, as logged
    Clock::time_point progress_at;    // its last progress (EvictionView::progress)
    Clock::time_point request_start;  // the request's head was read (or refused)
    uint64_t stream_bytes = 0;        // written so far of the stream under way
    asio::steady_timer watch_timer;
    bool watching = false;
    bool peer_done = false;         // the client's FIN read: it sends no more requests
    bool probed = false;            // kProbe sent
    bool stream_head_sent = false;  // the request's answer is a stream, under way
    bool writing_event = false;     // a stream's event being written
    State state = State::Head;
    std::string in;  // read, not yet parsed
    char chunk[kReadChunk];
    bool reading = false;
    bool head_started = false;
    // The head being read: how far `in` has been scanned for the ends of the request line
    // and of the head, so that each byte is looked at once however the head trickles in.
    size_t scanned = 0;
    int end_matched = 0;                  // bytes of "\r\n\r\n" ending at in[scanned - 1]
    size_t line_end = std::string::npos;  // where the request line's CRLF starts
    size_t head_end = std::string::npos;  // one past the head's CRLF CRLF
    size_t body_left = 0;
    std::shared_ptr<Job> job;  // the request on a worker, or being answered
    HttpRequest pending;       // the request whose body is being dropped
    bool pending_keep_alive = true;

    Connection(HttpServer::Impl& s, tcp::socket sock, std::string addr)
        : server(s),
          socket(std::move(sock)),
          address(std::move(addr)),
          key(connection_key(address)),
          timer(s.io),
          watch_timer(s.io) {}

    size_t read_cap() const { return 2 * server.opt.max_head + kReadChunk; }

    void start() {
        boost::system::error_code ec;
        // Small answers, many in a row on one connection: without TCP_NODELAY each waits
        // for the client's delayed ACK (40 ms on Linux).
        socket.set_option(tcp::no_delay(true), ec);
        progress_at = Clock::now();
        arm(server.opt.idle_timeout, "");
        read();
    }

    // One deadline at a time; a new one replaces the old. `what` names it in the log when
    // it closes the connection ("": an expected end, not logged: idle keep-alive, linger).
    void arm(std::chrono::milliseconds d, const char* what) {
        const unsigned gen = ++timer_generation;
        timer_what = what;
        timer.expires_after(d);
        timer.async_wait([self = shared_from_this(), gen](boost::system::error_code ec) {
            if (ec || gen != self->timer_generation || self->state == State::Closed) return;
            if (*self->timer_what)
                self->server.log_connection(HttpLogEntry::Event::Timeout, self->address,
                                            self->timer_what);
            self->close();
        });
    }
    void disarm() {
        ++timer_generation;
        timer.cancel();
    }

    void read() {
        if (reading || state == State::Closed) return;
        if (peer_done || in.size() >= read_cap()) return watch();
        reading = true;
        socket.async_read_some(asio::buffer(chunk),
                               [self = shared_from_this()](boost::system::error_code ec, size_t n) {
                                   self->on_read(ec, n);
                               });
    }

    void on_read(boost::system::error_code ec, size_t n) {
        reading = false;
        if (state == State::Closed) return;
        if (ec == asio::error::eof && state != State::Linger) {
            // A FIN: no more requests. The client may still read (it shut down only its
            // sending side): the requests read are answered, then the connection closes.
            // Whether it closed instead, the probe tells (watch()).
            peer_done = true;
            if (state == State::Head || state == State::Body) return close_done();
            peer_stopped_sending();
            watch();
            return;
        }
        if (ec) {
            // The client reset: a request on a worker stops now.
            close();
            return;
        }
        if (state == State::Linger) {
            read();
            return;
        }
        in.append(chunk, n);
        if (state == State::Head || state == State::Body) advance();
        read();
    }

    // Parses what is buffered while waiting for a request (State::Head, State::Body).
    void advance() {
        const HttpOptions& o = server.opt;
        if (state == State::Body) {
            const size_t drop = std::min(body_left, in.size());
            in.erase(0, drop);
            body_left -= drop;
            if (body_left == 0) dispatch(std::move(pending), pending_keep_alive);
            return;
        }
        if (state != State::Head) return;
        if (in.empty()) return;
        if (!head_started) {
            head_started = true;
            arm(o.head_timeout, "head timeout");
        }
        // Step 1. The bytes not scanned yet: the ends of the request line and of the head.
        scan_head();
        // Step 2. The request line, before the parser sees it: its own cap (414).
        if ((line_end == std::string::npos ? in.size() : line_end) > o.max_request_line)
            return refuse(
                unparsed(), 414,
                "request line longer than " + std::to_string(o.max_request_line) + " bytes");
        if (line_end == std::string::npos) return;
        // Step 3. The head, within max_head bytes (431), goes to Beast's parser once, whole.
        if (head_end == std::string::npos) {
            if (in.size() >= o.max_head)
                return refuse(unparsed(), 431,
                              "request head longer than " + std::to_string(o.max_head) + " bytes");
            return;
        }
        http::request_parser<http::empty_body> parser;
        parser.header_limit(static_cast<std::uint32_t>(o.max_head));
        parser.eager(false);
        boost::beast::error_code ec;
        server.head_work += head_end;
        const size_t used = parser.put(asio::buffer(in.data(), head_end), ec);
        if (ec == http::error::header_limit)
            return refuse(unparsed(), 431,
                          "request head longer than " + std::to_string(o.max_head) + " bytes");
        if (ec || !parser.is_header_done() || used != head_end)
            return refuse(unparsed(), 400, "malformed request");
        in.erase(0, used);
        scanned = 0;
        end_matched = 0;
        line_end = head_end = std::string::npos;
        const auto& msg = parser.get();
        HttpRequest req;
        req.method = std::string(msg.method_string());
        req.target = std::string(msg.target());
        req.remote_address = address;
        req.version = static_cast<int>(msg.version());
        split_target(req.target, req);
        for (const auto& f : msg) req.headers.emplace_back(f.name_string(), f.value());
        // Step 4. What a request may be: GET or HEAD (405), few headers (431), no body
        // past the cap and none chunked (413).
        if (req.method != "GET" && req.method != "HEAD")
            return refuse(req, 405, "method not allowed: GET only", {{"Allow", "GET, HEAD"}});
        if (req.headers.size() > size_t(o.max_headers))
            return refuse(req, 431,
                          "more than " + std::to_string(o.max_headers) + " request headers");
        if (parser.chunked()) return refuse(req, 413, "no request body (chunked)");
        // A Transfer-Encoding whose last coding is not chunked: no length can be known, so
        // what follows cannot be told from the next request (RFC 9112, 6.3).
        if (msg.find(http::field::transfer_encoding) != msg.end())
            return refuse(req, 400, "Transfer-Encoding other than a final chunked");
        const auto length = parser.content_length();
        if (length && *length > o.max_body)
            return refuse(req, 413, "request body over " + std::to_string(o.max_body) + " bytes");
        // Step 5. A small body is read and dropped, then the request goes to a worker.
        body_left = length ? static_cast<size_t>(*length) : 0;
        pending = std::move(req);
        pending_keep_alive = parser.keep_alive();
        state = State::Body;
        progress_at = Clock::now();
        // The body, if any, must follow within body_timeout (a head announcing a body
        // that never comes would otherwise hold the connection for good).
        if (body_left > 0) arm(o.body_timeout, "body timeout");
        advance();
    }

    // Scans what arrived since the last scan, up to the end of the head.
    void scan_head() {
        static constexpr char kEnd[] = "\r\n\r\n";
        const size_t from = scanned;
        while (head_end == std::string::npos && scanned < in.size()) {
            const char c = in[scanned++];
            end_matched = c == kEnd[end_matched] ? end_matched + 1 : (c == '\r' ? 1 : 0);
            if (end_matched == 2 && line_end == std::string::npos) line_end = scanned - 2;
            if (end_matched == 4) head_end = scanned;
        }
        server.head_work += scanned - from;
    }

    // While a request runs and its socket is not read (paused past read_cap(), or after the
    // client's FIN), the socket is polled every kWatch: a reset (or a FIN and then a reset
    // answering the probe: the client closed) cancels the request, as a read would.
    void watch() {
        if (watching || state != State::Worker) return;
        watching = true;
        watch_timer.expires_after(kWatch);
        watch_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            self->watching = false;
            if (ec || self->state != State::Worker || self->reading) return;
            pollfd p{self->socket.native_handle(), POLLRDHUP, 0};
            if (::poll(&p, 1, 0) < 0) return self->watch();
            if (p.revents & (POLLERR | POLLHUP)) return self->close();
            if (p.revents & POLLRDHUP) self->peer_stopped_sending();
            self->watch();
        });
    }

    // The client's FIN while its request runs. A stream (under way, or whose handler asked
    // whether events are wanted) or an HTTP/1.0 request: the client is gone (neither
    // half-closes), the request is cancelled now (its answer, if any, is still written).
    // Otherwise the probe asks; watch() looks again every kWatch, so a handler that turns
    // out to stream after the FIN is cancelled then.
    void peer_stopped_sending() {
        if (state != State::Worker || !job) return;
        if (stream_head_sent || job->streams || job->request.version < 11) {
            job->cancel = true;
            return;
        }
        probe();
    }

    // kProbe, once, to an HTTP/1.1 client whose FIN came while its request runs and before
    // its answer starts, when nothing else is waiting to be sent (so that it goes out
    // whole, never inside another answer's bytes).
    void probe() {
        if (probed || state != State::Worker || !job || stream_head_sent ||
            job->request.version < 11)
            return;
        int queued = 0;
        if (::ioctl(socket.native_handle(), SIOCOUTQ, &queued) != 0 || queued != 0) return;
        const ssize_t n = ::send(socket.native_handle(), kProbe.data(), kProbe.size(),
                                 MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
        if (n != static_cast<ssize_t>(kProbe.size())) return close();
        probed = true;
    }

    // No more requests will come and none is left to answer: FIN, then closed.
    void close_done() {
        boost::system::error_code ec;
        socket.shutdown(tcp::socket::shutdown_send, ec);
        close();
    }

    void dispatch(HttpRequest req, bool keep_alive) {
        disarm();
        request_start = progress_at = Clock::now();
        stream_bytes = 0;
        state = State::Worker;
        head_started = false;
        stream_head_sent = false;
        job = std::make_shared<Job>(server.io);
        job->request = std::move(req);
        job->keep_alive = keep_alive;
        job->conn = shared_from_this();
        server.pool->push([j = job, &server = server] {
            HttpResponse res;
            try {
                res = server.handler(j->request, *j);
            } catch (const std::exception& e) {
                if (server.opt.on_error) server.opt.on_error(j->request, e.what());
                res = server.error_response(500, "internal error", {}, false);
            } catch (...) {
                if (server.opt.on_error) server.opt.on_error(j->request, "unknown exception");
                res = server.error_response(500, "internal error", {}, false);
            }
            asio::post(j->io, [j, res = std::move(res)]() mutable {
                auto conn = std::move(j->conn);
                conn->finish(*j, std::move(res));
                j->work.reset();
            });
        });
    }

    // `close_after`: Connection: close. Otherwise an HTTP/1.0 client (`version` 10), whose
    // connections close after each answer unless it is told otherwise, is told
    // Connection: keep-alive (it is kept only when the client asked for it).
    std::string head_of(int status, const std::string& type, const Headers& extra,
                        std::optional<size_t> length, bool close_after, int version) const {
        std::string h = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) + "\r\n";
        for (const auto& [k, v] : server.opt.default_headers) h += k + ": " + v + "\r\n";
        if (!type.empty()) h += "Content-Type: " + type + "\r\n";
        for (const auto& [k, v] : extra) h += k + ": " + v + "\r\n";
        if (length) h += "Content-Length: " + std::to_string(*length) + "\r\n";
        if (close_after)
            h += "Connection: close\r\n";
        else if (version < 11)
            h += "Connection: keep-alive\r\n";
        return h + "\r\n";
    }

    // What the log names of a request refused before it parsed: the request line's first
    // two words as sent.
    HttpRequest unparsed() const {
        HttpRequest r;
        const std::string line = in.substr(0, std::min(in.find("\r\n"), size_t(256)));
        const size_t sp = line.find(' ');
        r.method = line.substr(0, std::min(sp, size_t(16)));
        if (sp != std::string::npos) r.path = line.substr(sp + 1, line.find(' ', sp + 1) - sp - 1);
        r.remote_address = address;
        return r;
    }

    // The server's own refusal: the answer, then the connection closes.
    void refuse(const HttpRequest& req, int status, const std::string& why, Headers extra = {}) {
        disarm();
        request_start = Clock::now();
        HttpResponse res = server.error_response(status, why, std::move(extra), true);
        state = State::Worker;  // nothing more is parsed
        respond(req, std::move(res), true);
    }

    // The worker's answer (io thread).
    void finish(Job& j, HttpResponse res) {
        job.reset();
        // A stream is logged when it ends: 200 when it ran to its last event, 499 when
        // its client went away first. An answer with no client left to take it is
        // logged with its status (499 from the API) here, as respond() is not reached.
        if (j.stream_started)
            log_request(
                j.request,
                state == State::Closed || j.cancel || j.emit_state == Job::Emit::Failed ? 499 : 200,
                stream_bytes, res.nodes, res.client);
        else if (state == State::Closed)
            log_request(j.request, res.status, 0, res.nodes, res.client);
        if (state == State::Closed) return;
        if (j.stream_started) {
            // A stream ends with its connection (Connection: close).
            linger();
            return;
        }
        respond(j.request, std::move(res), !j.keep_alive || res.close || server.stopping);
    }

    void log_request(const HttpRequest& req, int status, uint64_t bytes, uint64_t nodes,
                     const std::string& client) {
        if (!server.opt.log) return;
        HttpLogEntry e;
        e.time = std::chrono::system_clock::now();
        e.client = client.empty() ? address : client;
        e.request = &req;
        e.status = status;
        e.bytes = bytes;
        e.ms = std::chrono::duration<double, std::milli>(Clock::now() - request_start).count();
        e.nodes = nodes;
        server.opt.log(e);
    }

    void respond(const HttpRequest& req, HttpResponse res, bool close_after) {
        auto bytes = std::make_shared<std::string>(head_of(
            res.status, res.content_type, res.headers, res.body.size(), close_after, req.version));
        if (req.method != "HEAD") *bytes += res.body;
        log_request(req, res.status, bytes->size(), res.nodes, res.client);
        state = State::Write;
        arm(server.opt.write_timeout, "write timeout");
        write_all(std::move(bytes), [self = shared_from_this(),
                                     close_after](boost::system::error_code ec) {
            if (self->state == State::Closed) return;
            if (ec) return self->close();
            if (close_after) return self->linger();
            self->state = State::Head;
            self->progress_at = Clock::now();
            self->arm(self->server.opt.idle_timeout, "");
            self->advance();
            if (self->peer_done && (self->state == State::Head || self->state == State::Body))
                return self->close_done();
            self->read();
        });
    }

    // One event of a stream (io thread), after the answer's head for the first; the
    // worker waits for the result.
    void write_event(const std::shared_ptr<Job>& j, bool first, std::string data) {
        auto done = [j](bool ok) {
            {
                std::lock_guard<std::mutex> lock(j->mu);
                j->emit_state = ok ? Job::Emit::Ok : Job::Emit::Failed;
            }
            j->written.notify_all();
        };
        if (state == State::Closed || j->cancel) return done(false);
        auto bytes = std::make_shared<std::string>();
        if (first) {
            stream_head_sent = true;
            *bytes = head_of(200, "text/event-stream", {{"Cache-Control", "no-store"}},
                             std::nullopt, true, j->request.version);
        }
        *bytes += data;
        stream_bytes += bytes->size();
        arm(server.opt.write_timeout, "write timeout");
        writing_event = true;
        write_all(std::move(bytes),
                  [self = shared_from_this(), done](boost::system::error_code ec) {
                      self->writing_event = false;
                      if (self->state != State::Closed) self->disarm();
                      if (ec) self->close();
                      done(!ec);
                  });
    }

    // Writes `bytes` whole, then calls done(error); each part the socket takes is progress
    // (progress_at), so that at the connection cap a client reading its answer slowly is
    // told from one that does not read it at all. A connection closed meanwhile ends the
    // write with operation_aborted.
    template <class Done>
    void write_all(std::shared_ptr<std::string> bytes, Done done, size_t from = 0) {
        progress_at = Clock::now();
        const asio::const_buffer rest(bytes->data() + from, bytes->size() - from);
        socket.async_write_some(rest,
                                [self = shared_from_this(), bytes, from, done = std::move(done)](
                                    boost::system::error_code ec, size_t n) mutable {
                                    if (!ec && self->state == State::Closed)
                                        ec = asio::error::operation_aborted;
                                    if (ec || from + n >= bytes->size()) return done(ec);
                                    self->write_all(std::move(bytes), std::move(done), from + n);
                                });
    }

    // What the connection cap knows of this connection (pick_eviction).
    EvictionView view() const {
        using P = EvictionView::Phase;
        EvictionView v;
        v.progress = progress_at;
        switch (state) {
            case State::Head:
                v.phase = P::Waiting;
                break;
            case State::Body:
                v.phase = P::Body;
                break;
            case State::Write:
                v.phase = P::Writing;
                break;
            case State::Linger:
            case State::Closed:
                v.phase = P::Lingering;
                break;
            case State::Worker:
                // A stream blocked on writing an event, or a request whose client has
                // gone, is no answer being computed for a live client.
                v.phase = writing_event || (job && job->cancel) ? P::Writing : P::Computing;
                break;
        }
        return v;
    }

    // Sends FIN, then drops what the client still sends until it closes or kLinger passes.
    void linger() {
        if (peer_done) return close_done();
        boost::system::error_code ec;
        socket.shutdown(tcp::socket::shutdown_send, ec);
        if (ec) return close();
        state = State::Linger;
        progress_at = Clock::now();
        in.clear();
        arm(kLinger, "");
        read();
    }

    void close() {
        if (state == State::Closed) return;
        state = State::Closed;
        if (job) job->cancel = true;
        disarm();
        watch_timer.cancel();
        boost::system::error_code ec;
        socket.close(ec);
        server.open.erase(this);
        if (--server.per_address[key] == 0) server.per_address.erase(key);
        --server.count;
    }
};

bool Job::emit(const std::string& event) {
    if (cancel) return false;
    const bool first = !stream_started;
    const bool head_only = request.method == "HEAD";
    // The empty event asks whether events are wanted: for GET yes (nothing is sent); for
    // HEAD no, and the stream's head, its whole answer, is sent now.
    if (event.empty() && !head_only) {
        streams = true;
        return true;
    }
    if (head_only && !first) return false;
    stream_started = true;
    std::string data;
    if (!head_only) {
        size_t start = 0;
        for (;;) {
            const size_t nl = event.find('\n', start);
            data +=
                "data: " + event.substr(start, nl == std::string::npos ? nl : nl - start) + "\n";
            if (nl == std::string::npos) break;
            start = nl + 1;
        }
        data += "\n";
    }
    {
        std::lock_guard<std::mutex> lock(mu);
        emit_state = Emit::Pending;
    }
    // `conn` is set and reset on the io thread only, so it is read there.
    asio::post(io, [j = shared_from_this(), first, data = std::move(data)]() mutable {
        if (!j->conn) {
            std::lock_guard<std::mutex> lock(j->mu);
            j->emit_state = Emit::Failed;
            j->written.notify_all();
            return;
        }
        j->conn->write_event(j, first, std::move(data));
    });
    std::unique_lock<std::mutex> lock(mu);
    written.wait(lock, [&] { return emit_state != Emit::Pending; });
    return emit_state == Emit::Ok && !cancel && !head_only;
}

void HttpServer::Impl::accept() {
    acceptor.async_accept(
        [self = shared_from_this()](boost::system::error_code ec, tcp::socket sock) {
            if (self->stopping || !self->acceptor.is_open()) return;
            if (ec) {
                // Out of descriptors (EMFILE) or a connection reset before accept: try again
                // shortly rather than spin.
                self->accept_retry.expires_after(std::chrono::milliseconds(50));
                self->accept_retry.async_wait([self](boost::system::error_code e) {
                    if (!e) self->accept();
                });
                return;
            }
            boost::system::error_code aec;
            const auto remote = sock.remote_endpoint(aec);
            std::string addr = aec ? std::string("?") : remote.address().to_string();
            const std::string key = connection_key(addr);
            // Past a cap the connection is closed at once: no answer costs the server less.
            // At the total cap, a connection waiting for a request makes room first.
            const char* refused = nullptr;
            if (aec)
                refused = "no peer address";
            else if (self->per_address[key] >= self->connection_cap(key))
                refused = "per-client connection cap";
            else if (self->count >= self->opt.max_connections && !self->evict_least_progress())
                refused = "connection cap, every connection busy";
            if (!refused) {
                auto conn = std::make_shared<Connection>(*self, std::move(sock), addr);
                ++self->per_address[key];
                ++self->count;
                self->open.insert(conn.get());
                conn->start();
            } else {
                if (self->per_address[key] == 0) self->per_address.erase(key);
                self->log_connection(HttpLogEntry::Event::Refused, addr, refused);
                sock.close(aec);
            }
            self->accept();
        });
}

int pick_eviction(const std::vector<EvictionView>& conns) {
    using P = EvictionView::Phase;
    int best = -1;
    for (size_t i = 0; i < conns.size(); ++i) {
        const EvictionView& c = conns[i];
        if (c.phase == P::Computing) continue;
        if (best < 0) {
            best = int(i);
            continue;
        }
        const EvictionView& b = conns[size_t(best)];
        const bool c_lingers = c.phase == P::Lingering, b_lingers = b.phase == P::Lingering;
        if (c_lingers != b_lingers ? c_lingers : c.progress < b.progress) best = int(i);
    }
    return best;
}

// The connection that has made least progress for longest (pick_eviction) is closed;
// false when every connection is computing an answer.
bool HttpServer::Impl::evict_least_progress() {
    std::vector<Connection*> conns(open.begin(), open.end());
    std::vector<EvictionView> views;
    views.reserve(conns.size());
    for (Connection* c : conns) views.push_back(c->view());
    const int i = pick_eviction(views);
    if (i < 0) return false;
    static const char* const why[] = {
        "connection cap: waited longest for a request", "connection cap: its body stalled longest",
        "", "connection cap: its answer unread longest", "connection cap: lingering longest"};
    Connection* victim = conns[size_t(i)];
    log_connection(HttpLogEntry::Event::Evicted, victim->address,
                   why[static_cast<int>(views[size_t(i)].phase)]);
    victim->close();
    return true;
}

void HttpServer::Impl::do_stop() {
    if (stopping) return;
    stopping = true;
    boost::system::error_code ec;
    acceptor.close(ec);
    accept_retry.cancel();
    // Closing a connection cancels its request; its worker's answer is then dropped.
    std::vector<Connection*> all(open.begin(), open.end());
    for (Connection* c : all) c->close();
}

HttpServer::HttpServer(HttpOptions options, HttpHandler handler)
    : impl_(std::make_shared<Impl>(std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() = default;

int HttpServer::listen(const std::string& host, int port) {
    boost::system::error_code ec;
    tcp::resolver resolver(impl_->io);
    const auto found =
        resolver.resolve(host, std::to_string(port), tcp::resolver::numeric_service, ec);
    if (ec || found.empty())
        throw std::runtime_error("cannot listen on " + host + " port " + std::to_string(port) +
                                 " (not an address of this machine)");
    const tcp::endpoint at = found.begin()->endpoint();
    tcp::acceptor& a = impl_->acceptor;
    a.open(at.protocol(), ec);
    // SO_REUSEADDR: a restart binds at once past TIME_WAIT; no SO_REUSEPORT, with which a
    // second server on the same port would start and take half the connections.
    if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) a.bind(at, ec);
    // A burst of clients past a short backlog has its SYNs dropped and waits 1 s, then
    // 3 s, to try again (results/serve.md, "Robustness"); capped by net.core.somaxconn.
    if (!ec) a.listen(1024, ec);
    if (ec) {
        a.close();
        throw std::runtime_error("cannot listen on " + host + " port " + std::to_string(port) +
                                 " (in use, or not an address of this machine: " + ec.message() +
                                 ")");
    }
    return a.local_endpoint().port();
}

void HttpServer::run() {
    impl_->pool = std::make_unique<HandlerThreads>(impl_->opt.workers);
    impl_->accept();
    impl_->io.run();
    impl_->pool->join();
}

void HttpServer::stop() {
    asio::post(impl_->io, [impl = impl_] { impl->do_stop(); });
}

int HttpServer::connections() const { return impl_->count; }

uint64_t HttpServer::head_work() const { return impl_->head_work; }

}  // namespace kalah::serve
