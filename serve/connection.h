// Connection: one client connection of the HTTP front end (serve/http_server.h tells its
// life), driven by the io thread: it reads and parses request heads, hands each request to a
// handler thread as a Job, writes the answer or a stream's events, and watches meanwhile for
// the client's FIN or reset (Beast's http_session). Private to serve/.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "serve/http_server.h"
#include "serve/http_server_impl.h"  // Boost.Asio, as asio::

namespace kalah::serve {

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

    void start();

    // One deadline at a time; a new one replaces the old. `what` names it in the log when
    // it closes the connection ("": an expected end, not logged: idle keep-alive, linger).
    void arm(std::chrono::milliseconds d, const char* what);
    void disarm();

    void read();
    void on_read(boost::system::error_code ec, size_t n);

    // Parses what is buffered while waiting for a request (State::Head, State::Body).
    void advance();

    // Scans what arrived since the last scan, up to the end of the head.
    void scan_head();

    // While a request runs and its socket is not read (paused past read_cap(), or after the
    // client's FIN), the socket is polled every kWatch: a reset (or a FIN and then a reset
    // answering the probe: the client closed) cancels the request, as a read would.
    void watch();

    // The client's FIN while its request runs. A stream (under way, or whose handler asked
    // whether events are wanted) or an HTTP/1.0 request: the client is gone (neither
    // half-closes), the request is cancelled now (its answer, if any, is still written).
    // Otherwise the probe asks; watch() looks again every kWatch, so a handler that turns
    // out to stream after the FIN is cancelled then.
    void peer_stopped_sending();

    // kProbe, once, to an HTTP/1.1 client whose FIN came while its request runs and before
    // its answer starts, when nothing else is waiting to be sent (so that it goes out
    // whole, never inside another answer's bytes).
    void probe();

    // No more requests will come and none is left to answer: FIN, then closed.
    void close_done();

    void dispatch(HttpRequest req, bool keep_alive);

    // `close_after`: Connection: close. Otherwise an HTTP/1.0 client (`version` 10), whose
    // connections close after each answer unless it is told otherwise, is told
    // Connection: keep-alive (it is kept only when the client asked for it).
    std::string head_of(int status, const std::string& type, const Headers& extra,
                        std::optional<size_t> length, bool close_after, int version) const;

    // What the log names of a request refused before it parsed: the request line's first
    // two words as sent.
    HttpRequest unparsed() const;

    // The server's own refusal: the answer, then the connection closes.
    void refuse(const HttpRequest& req, int status, const std::string& why, Headers extra = {});

    // The worker's answer (io thread).
    void finish(Job& j, HttpResponse res);

    void log_request(const HttpRequest& req, int status, uint64_t bytes, uint64_t nodes,
                     const std::string& client);

    void respond(const HttpRequest& req, HttpResponse res, bool close_after);

    // One event of a stream (io thread), after the answer's head for the first; the
    // worker waits for the result.
    void write_event(const std::shared_ptr<Job>& j, bool first, std::string data);

    // Writes `bytes` whole, then calls done(error); each part the socket takes is progress
    // (progress_at), so that at the connection cap a client reading its answer slowly is
    // told from one that does not read it at all. A connection closed meanwhile ends the
    // write with operation_aborted.
    template <class Done>
    void write_all(std::shared_ptr<std::string> bytes, Done done, size_t from = 0);

    // What the connection cap knows of this connection (pick_eviction).
    EvictionView view() const;

    // Sends FIN, then drops what the client still sends until it closes or kLinger passes.
    void linger();
    void close();
};

}  // namespace kalah::serve
