// The web API of `kalah serve`, apart from HTTP: a GET of /api/v1/<name> with its query
// parameters in, a status and a JSON body out. cli/cmd_serve.cpp puts it behind
// serve/http_server.h.
//
// Safety: parameters are checked strictly by the server's own parser (serve/params.h:
// known names only, once each, printable ASCII, length caps) before anything runs; searches run on
// a fixed number of solvers apart from the HTTP threads, with a bounded queue in front of them
// served a client at a time in turn (503 when it is full of clients answered less recently;
// serve/turns.h), a stream yielding its solver to a waiting one-shot request, and every search
// stops at the request's budget (SolverOptions::stop, set by a watchdog), so a request answers "not
// known within the budget" instead of holding a solver. A request whose caller gives up (its
// `cancel` flag set: the client went away) stops its search, or leaves the queue, within a few
// milliseconds. Positions the database covers are answered at once on the HTTP thread, without a
// solver.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "db/database.h"
#include "serve/params.h"

namespace kalah::serve {

struct ServeConfig {
    std::string db_dir;          // empty: no database
    size_t db_memory_bytes = 0;  // per opened (m, rule) database
    db::Database::Layout db_layout = db::Database::Layout::Auto;
    uint64_t db_raw_top_bytes = 0;  // the top layers one byte an entry within this (db/open.h)
    size_t tt_mb = 256;             // per solver
    int threads = 1;                // per solver
    int solvers = 1;                // searches at once
    int queue = 8;                  // requests that may wait for a solver
    int budget_ms = 5000;           // work budget of one request
    int stream_budget_ms = 60000;   // work budget of one stream (Api::stream)
    bool books = true;              // answer from the built-in opening books (solver/known.h)
};

struct ApiReply {
    int status = 200;
    std::string body;    // one JSON object
    uint64_t nodes = 0;  // searched for it (for the log)
};

// A stream (Api::stream) holds its solver at least this long before it yields it to a
// waiting one-shot request (its last event then says so): long enough for its first
// passes, short beside a request's budget.
inline constexpr std::chrono::milliseconds kStreamHold{1000};

// Who asks: the caller's cancel flag and the client the solver queue serves in turn.
struct Caller {
    Caller(const std::atomic<bool>* cancel_flag = nullptr, std::string client_key = {})  // NOLINT
        : cancel(cancel_flag), client(std::move(client_key)) {}
    // Once it becomes true the request stops waiting or searching and answers 499
    // (client gone), a body nobody reads. nullptr: never.
    const std::atomic<bool>* cancel = nullptr;
    // The waiting requests are served a client at a time in turn (routes.h: the client's
    // connection_key); "" is one client like any other.
    std::string client;
};

class Api {
  public:
    explicit Api(const ServeConfig& config);
    ~Api();
    Api(const Api&) = delete;
    Api& operator=(const Api&) = delete;

    // `name` is the path below /api/v1/ ("query", "pv", ...); params as parsed from the
    // query string (a name may occur more than once: that is an error). A search's budget
    // (ServeConfig::budget_ms) counts from the call: a request that waits for a solver
    // past it answers 503.
    ApiReply get(const std::string& name, const std::multimap<std::string, std::string>& params,
                 const Caller& caller = {});
    // Streams (GET /api/v1/<name> where streams(name)): the answer is a sequence of JSON
    // objects, each handed to `emit` as soon as it is known (the HTTP front end sends each
    // as one server-sent event, `data: <object>`). A request refused before its first
    // event (a bad parameter, a full queue, no such stream) returns that status and JSON
    // body and emits nothing; otherwise it returns {200, ""} after its last event. `emit`
    // returns false once the client is gone: the request then stops, as with `cancel`.
    // Before its work a stream calls emit("") (no event): false means no events are
    // wanted (HEAD; HttpCall::emit) and the stream returns at once, without a search.
    // The streams: "analysis" (the query's parameters; its events: docs/json.md, "Analysis
    // stream"), with its own budget, ServeConfig::stream_budget_ms. Each object is one line
    // of JSON without a newline.
    using Emit = std::function<bool(const std::string& json_object)>;
    static bool streams(const std::string& name);
    ApiReply stream(const std::string& name, const std::multimap<std::string, std::string>& params,
                    const Caller& caller, const Emit& emit);
    // Opens the databases of --db for every m and rule now (one line each on stderr), so
    // that no request waits for a database to load. A damaged or unreadable layer file is
    // db::FormatError, as in every command (db/open.h): the server does not start.
    void open_databases();
    // Requests holding a solver and requests waiting for one, now.
    struct Load {
        int searching = 0, waiting = 0;
    };
    Load load() const;
    // Stops every running search (server shutdown).
    void stop_all();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// A JSON error object {"error": message}.
std::string error_json(const std::string& message);

}  // namespace kalah::serve
