// Connection (serve/connection.h): reading and parsing a request head, handing the request
// to a handler thread, writing its answer or stream, watching for the client's FIN or reset;
// and Job::emit, a handler's side of a stream.
#include "serve/connection.h"

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <exception>

namespace kalah::serve {
namespace http = boost::beast::http;

namespace {

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

}  // namespace

void Connection::start() {
    boost::system::error_code ec;
    // Small answers, many in a row on one connection: without TCP_NODELAY each waits
    // for the client's delayed ACK (40 ms on Linux).
    socket.set_option(tcp::no_delay(true), ec);
    progress_at = Clock::now();
    arm(server.opt.idle_timeout, "");
    read();
}

void Connection::arm(std::chrono::milliseconds d, const char* what) {
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

void Connection::disarm() {
    ++timer_generation;
    timer.cancel();
}

void Connection::read() {
    if (reading || state == State::Closed) return;
    if (peer_done || in.size() >= read_cap()) return watch();
    reading = true;
    socket.async_read_some(asio::buffer(chunk),
                           [self = shared_from_this()](boost::system::error_code ec, size_t n) {
                               self->on_read(ec, n);
                           });
}

void Connection::on_read(boost::system::error_code ec, size_t n) {
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

void Connection::advance() {
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
        return refuse(unparsed(), 414,
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
        return refuse(req, 431, "more than " + std::to_string(o.max_headers) + " request headers");
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

void Connection::scan_head() {
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

void Connection::watch() {
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

void Connection::peer_stopped_sending() {
    if (state != State::Worker || !job) return;
    if (stream_head_sent || job->streams || job->request.version < 11) {
        job->cancel = true;
        return;
    }
    probe();
}

void Connection::probe() {
    if (probed || state != State::Worker || !job || stream_head_sent || job->request.version < 11)
        return;
    int queued = 0;
    if (::ioctl(socket.native_handle(), SIOCOUTQ, &queued) != 0 || queued != 0) return;
    const ssize_t n =
        ::send(socket.native_handle(), kProbe.data(), kProbe.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n != static_cast<ssize_t>(kProbe.size())) return close();
    probed = true;
}

void Connection::close_done() {
    boost::system::error_code ec;
    socket.shutdown(tcp::socket::shutdown_send, ec);
    close();
}

void Connection::dispatch(HttpRequest req, bool keep_alive) {
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

std::string Connection::head_of(int status, const std::string& type, const Headers& extra,
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

HttpRequest Connection::unparsed() const {
    HttpRequest r;
    const std::string line = in.substr(0, std::min(in.find("\r\n"), size_t(256)));
    const size_t sp = line.find(' ');
    r.method = line.substr(0, std::min(sp, size_t(16)));
    if (sp != std::string::npos) r.path = line.substr(sp + 1, line.find(' ', sp + 1) - sp - 1);
    r.remote_address = address;
    return r;
}

void Connection::refuse(const HttpRequest& req, int status, const std::string& why, Headers extra) {
    disarm();
    request_start = Clock::now();
    HttpResponse res = server.error_response(status, why, std::move(extra), true);
    state = State::Worker;  // nothing more is parsed
    respond(req, std::move(res), true);
}

void Connection::finish(Job& j, HttpResponse res) {
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

void Connection::log_request(const HttpRequest& req, int status, uint64_t bytes, uint64_t nodes,
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

void Connection::respond(const HttpRequest& req, HttpResponse res, bool close_after) {
    auto bytes = std::make_shared<std::string>(head_of(res.status, res.content_type, res.headers,
                                                       res.body.size(), close_after, req.version));
    if (req.method != "HEAD") *bytes += res.body;
    log_request(req, res.status, bytes->size(), res.nodes, res.client);
    state = State::Write;
    arm(server.opt.write_timeout, "write timeout");
    write_all(std::move(bytes),
              [self = shared_from_this(), close_after](boost::system::error_code ec) {
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

void Connection::write_event(const std::shared_ptr<Job>& j, bool first, std::string data) {
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
        *bytes = head_of(200, "text/event-stream", {{"Cache-Control", "no-store"}}, std::nullopt,
                         true, j->request.version);
    }
    *bytes += data;
    stream_bytes += bytes->size();
    arm(server.opt.write_timeout, "write timeout");
    writing_event = true;
    write_all(std::move(bytes), [self = shared_from_this(), done](boost::system::error_code ec) {
        self->writing_event = false;
        if (self->state != State::Closed) self->disarm();
        if (ec) self->close();
        done(!ec);
    });
}

template <class Done>
void Connection::write_all(std::shared_ptr<std::string> bytes, Done done, size_t from) {
    progress_at = Clock::now();
    const asio::const_buffer rest(bytes->data() + from, bytes->size() - from);
    socket.async_write_some(rest, [self = shared_from_this(), bytes, from, done = std::move(done)](
                                      boost::system::error_code ec, size_t n) mutable {
        if (!ec && self->state == State::Closed) ec = asio::error::operation_aborted;
        if (ec || from + n >= bytes->size()) return done(ec);
        self->write_all(std::move(bytes), std::move(done), from + n);
    });
}

EvictionView Connection::view() const {
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

void Connection::linger() {
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

void Connection::close() {
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

}  // namespace kalah::serve
