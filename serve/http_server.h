// A small HTTP/1.1 server on Boost.Asio with Boost.Beast's request parser: GET and HEAD
// only, no request bodies, answers whole or as a stream of server-sent events. It knows
// nothing of the API: cli/cmd_serve.cpp gives it a handler.
//
// Threads: one io thread (the caller of run()) accepts, reads, parses and writes every
// connection; handlers run on a fixed pool of workers, never on the io thread, so a
// handler may block (a search) without stalling other connections.
//
// A connection's life: accept (past the per-address connection cap: refused, closed at
// once; a trusted proxy's address has a cap of its own; at the total cap a connection is
// evicted to make room (pick_eviction: one lingering after its answer first, else the one
// whose last progress is oldest, in any state but computing an answer), so that no mix of
// connections, idle, stalled or unread, keeps a new client out; refused when every one is
// computing) -> read a
// request head (caps: request line -> 414, head size or header count -> 431, a body over the cap or
// chunked -> 413, a Transfer-Encoding whose last coding is not chunked -> 400 (RFC 9112 6.3: its
// length cannot be known), a method other than GET or HEAD -> 405 with Allow; the whole head must
// arrive within head_timeout of its first byte, a body announced within body_timeout of the
// head's end, an idle keep-alive connection is closed after
// idle_timeout) -> the handler on a worker, while the io thread keeps reading the socket: when the
// client resets, the request's cancel flag is set at once; a FIN means no more requests. An
// HTTP/1.1 client may have shut down only its sending side and read on: before its answer starts it
// is sent an interim "100 Continue" that a closed client's system answers with a reset, which
// cancels. A FIN during an answer streamed as events (from the handler's first emit, the
// empty one included), or during an HTTP/1.0 request
// (which has no interim answers), cancels the request at once (as nginx's 499): a client
// of either does not half-close. A request cancelled so still has its answer written, to
// whatever is left to read it -> the
// answer is written (within write_timeout, the send timeout) -> the next request, which may
// already be buffered (pipelining: answers in request order, one request at a time); after a
// FIN, once the requests read are answered, the connection closes. A refusal of the server's
// own (4xx above) closes the connection after its answer, reading and dropping what the
// client still sends for a moment (at most a second) so that the client sees the answer
// rather than a reset.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kalah::serve {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
    std::string method;                              // "GET" or "HEAD" when a handler sees it
    std::string target;                              // as sent: path and query string
    std::string path;                                // percent-decoded, without the query string
    std::multimap<std::string, std::string> params;  // the query string, decoded
    Headers headers;                                 // as sent, in order
    std::string remote_address;                      // numeric, e.g. "127.0.0.1"
    int version = 11;                                // HTTP/1.0: 10, HTTP/1.1: 11
    // The first header of that name (case-insensitive), or nullptr.
    const std::string* header(std::string_view name) const;
};

struct HttpResponse {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    Headers headers;     // besides the server's default headers
    bool close = false;  // close the connection after this answer
    uint64_t nodes = 0;  // the nodes searched for it, for the log (0: none)
    std::string client;  // the client it is logged as ("": the peer's address)
};

// What the server logs: a request answered (or ended by its client), or a connection the
// server refused, evicted or timed out. One entry a line (serve/routes.h, access_log_line).
struct HttpLogEntry {
    enum class Event { Request, Refused, Evicted, Timeout };
    Event event = Event::Request;
    std::chrono::system_clock::time_point time;  // when it happened (a request: its end)
    std::string client;                    // numeric address: the peer's, or HttpResponse::client
    const HttpRequest* request = nullptr;  // Request: what was asked (as far as it parsed)
    int status = 0;                        // Request: the status sent, or 499 (client gone)
    uint64_t bytes = 0;                    // Request: bytes of the answer, head included
    double ms = 0;                         // Request: from its head read to its answer's end
    uint64_t nodes = 0;                    // Request: HttpResponse::nodes
    std::string reason;                    // Refused, Evicted, Timeout: why
};

// What a handler has of its connection besides the request.
class HttpCall {
  public:
    virtual ~HttpCall() = default;
    // True once the client has gone (closed or reset its connection) or the server stops.
    virtual const std::atomic<bool>& cancelled() const = 0;
    // Sends one server-sent event `data: <line>` (a line per line of `event`) at once.
    // The first call answers the request with 200 text/event-stream (no Content-Length,
    // Connection: close); the handler's returned response is then ignored and the
    // connection closes after the handler returns. Blocks until written; false once the
    // write fails, the client has gone or (for HEAD) after the answer's head. An empty
    // `event` sends no event: it asks whether events are wanted, and a handler asks before
    // its work, so that HEAD (answered there with the stream's head, false) costs none.
    virtual bool emit(const std::string& event) = 0;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&, HttpCall&)>;

struct HttpOptions {
    int workers = 4;                               // handler threads
    int max_connections = 512;                     // open at once, in total
    int max_connections_per_address = 32;          // open at once from one client (connection_key)
    size_t max_request_line = 8192;                // bytes; past it 414
    size_t max_head = 16384;                       // bytes of request line and headers; past it 431
    int max_headers = 64;                          // header fields; past it 431
    size_t max_body = 1024;                        // Content-Length past it 413 (chunked: always)
    std::chrono::milliseconds head_timeout{5000};  // first byte of a head -> its end
    std::chrono::milliseconds body_timeout{5000};  // a head's end -> the end of its body
    std::chrono::milliseconds idle_timeout{5000};  // keep-alive: answer -> next request
    // The send timeout: one answer, or one event, handed whole to the socket within it
    // (a client that does not read its answers is closed).
    std::chrono::milliseconds write_timeout{10000};
    // Peers (numeric addresses, as connection_key gives them) held to
    // max_connections_per_proxy instead of max_connections_per_address: reverse proxies,
    // whose connections carry many clients.
    std::vector<std::string> proxies;
    int max_connections_per_proxy = 512;
    Headers default_headers;  // on every answer (security headers)
    // The body of the server's own error answers, application/json.
    std::function<std::string(const std::string& message)> error_body;
    // Called for each request once its answer is handed to the socket (a stream: once it
    // ends), and for each connection refused, evicted or timed out (nullptr: no log).
    // On the io thread: it must not block for long.
    std::function<void(const HttpLogEntry&)> log;
    // Called when a handler throws (the answer is then 500 "internal error").
    std::function<void(const HttpRequest&, const std::string& what)> on_error;
};

class HttpServer {
  public:
    HttpServer(HttpOptions options, HttpHandler handler);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // Binds `host` (a numeric address or a name) and `port` (0: any free port) with
    // SO_REUSEADDR (not SO_REUSEPORT: a taken port is an error) and a backlog of 1024.
    // Returns the bound port; std::runtime_error naming the cause when it cannot.
    int listen(const std::string& host, int port);
    // Serves on the calling thread until stop(); then cancels every request in flight,
    // waits for their handlers and returns.
    void run();
    // From any thread, also before run().
    void stop();
    // Connections open now (any thread; for tests and the load endpoint).
    int connections() const;
    // Bytes the request heads' reader has looked at so far, scanning for a head's end or
    // parsing it (for tests: linear in the bytes of the heads, however they trickle in).
    uint64_t head_work() const;

    struct Impl;  // serve/http_server_impl.h, shared with its connections (serve/connection.h)

  private:
    std::shared_ptr<Impl> impl_;
};

// What the connection cap knows of a connection when it must evict one.
struct EvictionView {
    enum class Phase {
        Waiting,    // for a request: idle keep-alive, or its head arriving
        Body,       // its head read, its body awaited
        Computing,  // its answer being computed (a handler runs) for a live client
        Writing,    // an answer (or a stream's event) being written, or its client gone
        Lingering,  // answered, closing: what the client still sends is dropped
    };
    Phase phase = Phase::Waiting;
    // Its last progress: accepted, a request's head read, bytes of an answer taken by the
    // socket, an answer written.
    std::chrono::steady_clock::time_point progress;
};

// Which of `conns` the connection cap closes to make room for a new one: a lingering
// one (its answer is sent) first, the longest lingering; else the one whose last
// progress is oldest, in any phase but Computing; -1 when every one is computing.
int pick_eviction(const std::vector<EvictionView>& conns);

// What the per-client connection cap counts by, for a numeric client address: an IPv4
// address as it is; an IPv4-mapped IPv6 address (::ffff:a.b.c.d) as its IPv4 address; any
// other IPv6 address as its /64 prefix, "p:q:r:s::/64" (one host is commonly given a whole
// /64, so a per-address cap on IPv6 would not cap it). Text that is no address: as it is.
std::string connection_key(const std::string& numeric_address);

// `text` as logged: control characters, backslash and bytes past ASCII as \xHH, so that a
// path with %0A cannot forge a line of the log; at most 200 characters.
std::string log_safe(const std::string& text);

// The one byte range of a `Range` header value for a body of `size` bytes: nullopt when
// the header is not one satisfiable "bytes=a-b", "bytes=a-" or "bytes=-n" range (the
// caller answers 416), else [first, last] inclusive.
std::optional<std::pair<size_t, size_t>> single_range(const std::string& value, size_t size);

}  // namespace kalah::serve
