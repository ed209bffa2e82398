// The web API of `kalah serve` (serve/api.h): the solver pool with its queue and its
// watchdog (budget and cancellation), and the endpoints, each answering with the CLI's own JSON
// (analysis/reports.h).
#include "serve/api.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <iostream>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/json.h"
#include "analysis/reports.h"
#include "analysis/text.h"
#include "db/database.h"
#include "db/open.h"
#include "serve/turns.h"
#include "solver/known.h"

namespace kalah::serve {
using namespace kalah::analysis;
using Clock = std::chrono::steady_clock;

std::string error_json(const std::string& message) {
    return analysis::json_line({{"error", message}});
}

namespace {

ApiReply reply(int status, const std::string& body) { return {status, body}; }
ApiReply bad_request(const std::string& message) { return reply(400, error_json(message)); }

ApiReply client_gone() { return reply(499, error_json("the client went away")); }

// The databases on disk, opened on first use for each (m, rule) and kept open, under the
// open policy of every command (db/open.h): a damaged layer file is db::FormatError.
class Databases {
  public:
    Databases(std::string dir, size_t memory, db::Database::Layout layout, uint64_t raw_top)
        : dir_(std::move(dir)), memory_(memory), layout_(layout), raw_top_(raw_top) {}
    const db::Database* get(int m, Rule rule) {
        std::lock_guard<std::mutex> lock(mu_);
        const int key = m * 2 + static_cast<int>(rule);
        auto it = open_.find(key);
        if (it != open_.end()) return it->second.get();
        db::Opened o;
        // Most (m, rule) have no database: searching without one is the normal case.
        if (!dir_.empty()) o = db::open_checked({dir_, m, rule, memory_, layout_, raw_top_});
        if (!o.warning.empty()) std::cerr << "kalah serve: warning: " << o.warning << "\n";
        if (o.db) std::cerr << "kalah serve: " << db::describe(*o.db, dir_) << "\n";
        return (open_[key] = std::move(o.db)).get();
    }

  private:
    std::string dir_;
    size_t memory_;
    db::Database::Layout layout_;
    uint64_t raw_top_;
    std::mutex mu_;
    std::map<int, std::unique_ptr<db::Database>> open_;
};

// A fixed set of solvers, each with its own table (kept between requests of the same
// m and rule, so a game's positions reuse what earlier requests proved), a bounded queue
// in front of them in turns (serve/turns.h), and a watchdog that stops a search when its
// request's budget is spent, or a stream's when a one-shot request waits (kStreamHold).
class SolverPool {
  public:
    struct Slot {
        std::unique_ptr<Solver> solver;
        int m = 0;
        Rule rule = Rule::Standard;
        bool busy = false;
        std::atomic<bool> stop{false};
        const std::atomic<bool>* cancel = nullptr;  // the request's, while busy
        Clock::time_point deadline;
        bool yields = false;               // a stream's: yields to a waiting one-shot request
        Clock::time_point since;           // when it was handed to its request
        std::atomic<bool> yielded{false};  // stopped by the watchdog to yield
    };

    SolverPool(const ServeConfig& c, Databases& dbs) : config_(c), dbs_(dbs) {
        for (int i = 0; i < c.solvers; ++i) slots_.push_back(std::make_unique<Slot>());
        watchdog_ = std::thread([this] { watch(); });
    }
    ~SolverPool() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            shutdown_ = true;
            watch_ = false;
            for (auto& s : slots_) s->stop = true;
        }
        free_.notify_all();
        wake_.notify_all();
        watchdog_.join();
    }
    void stop_all() {
        std::lock_guard<std::mutex> lock(mu_);
        shutdown_ = true;
        for (auto& s : slots_) s->stop = true;
        free_.notify_all();
    }

    // Why acquire() gave no solver.
    enum class Refusal { None, QueueFull, Displaced, Cancelled, Deadline, Stopping };

    // A solver for (m, rule), its budget's clock (budget_ms) started at the call: the wait
    // in the queue counts. nullptr, with the reason, when the queue is full of requests
    // whose clients come before `client` in turn, a request whose client comes before
    // takes its place while it waits, the caller's `cancel` is set, its budget runs out
    // while it waits, or the server stops. The waiting requests are served a client at a
    // time in turn (serve/turns.h: the client answered longest ago first, then the
    // earliest come), so that neither one client's requests nor a flood from many can
    // keep a client that asks now and then out of the solvers. A `stream`'s solver is
    // yielded to a waiting one-shot request once it has held it kStreamHold.
    Slot* acquire(int m, Rule rule, int budget_ms, const std::atomic<bool>* cancel,
                  const std::string& client, bool stream, Refusal* refusal) {
        *refusal = Refusal::None;
        const auto deadline = Clock::now() + std::chrono::milliseconds(budget_ms);
        std::unique_lock<std::mutex> lock(mu_);
        // Once the server stops no search starts: one started now would run unbudgeted
        // and hold up the shutdown.
        if (shutdown_) {
            *refusal = Refusal::Stopping;
            return nullptr;
        }
        Slot* slot = nullptr;
        for (auto& s : slots_)
            if (!s->busy) {
                slot = s.get();
                break;
            }
        if (slot && turns_.waiting() == 0) {
            slot->busy = true;
            turns_.answered(client);
        } else {
            const Turns::Admission admission = turns_.admit(client, size_t(config_.queue));
            if (admission.displaced) {
                // Its waiting thread sees this at its next look (a few milliseconds).
                displaced_.insert(*admission.displaced);
                oneshots_.erase(*admission.displaced);
            }
            if (!admission.ticket) {
                *refusal = Refusal::QueueFull;
                return nullptr;
            }
            const uint64_t ticket = *admission.ticket;
            if (!stream) oneshots_.insert(ticket);
            hand_out();
            // The cancel flag is the caller's and nobody notifies on it: looked at every
            // few milliseconds, as the watchdog looks at deadlines.
            auto gone = [&] { return cancel && cancel->load(); };
            auto handed = [&] { return handed_.count(ticket) != 0; };
            auto displaced = [&] { return displaced_.count(ticket) != 0; };
            while (!handed() && !displaced() && !shutdown_ && !gone() && Clock::now() < deadline)
                free_.wait_until(lock,
                                 std::min(deadline, Clock::now() + std::chrono::milliseconds(5)));
            oneshots_.erase(ticket);
            if (displaced()) {
                displaced_.erase(ticket);
                *refusal = Refusal::Displaced;
                return nullptr;
            }
            if (shutdown_ && handed()) {
                // Handed a solver as the server stops: no search starts now.
                handed_[ticket]->busy = false;
                handed_.erase(ticket);
            }
            if (!handed()) {
                turns_.remove(ticket);
                *refusal = shutdown_ ? Refusal::Stopping
                           : gone()  ? Refusal::Cancelled
                                     : Refusal::Deadline;
                return nullptr;
            }
            slot = handed_[ticket];
            handed_.erase(ticket);
        }
        slot->stop = false;
        slot->yielded = false;
        slot->yields = stream;
        slot->since = Clock::now();
        slot->cancel = cancel;
        slot->deadline = deadline;
        lock.unlock();
        if (!slot->solver || slot->m != m || slot->rule != rule) {
            // A failure here (out of memory) must give the slot back, or it stays busy.
            try {
                slot->solver.reset();  // its table's memory first
                SolverOptions o;
                o.tt_mb = config_.tt_mb;
                o.threads = config_.threads;
                o.db = dbs_.get(m, rule);
                o.stop = &slot->stop;
                slot->solver = std::make_unique<Solver>(m, rule, o);
                slot->m = m;
                slot->rule = rule;
            } catch (...) {
                release(slot);
                throw;
            }
        }
        return slot;
    }
    Api::Load load() {
        std::lock_guard<std::mutex> lock(mu_);
        Api::Load l;
        for (auto& s : slots_) l.searching += s->busy;
        l.waiting = int(turns_.waiting());
        return l;
    }
    void release(Slot* slot) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            slot->busy = false;
            slot->cancel = nullptr;
            hand_out();
        }
        free_.notify_all();
    }

  private:
    // Gives each free solver to the waiting request next in turn (under mu_).
    void hand_out() {
        for (auto& slot : slots_) {
            if (slot->busy) continue;
            const std::optional<uint64_t> next = turns_.next();
            if (!next) return;
            slot->busy = true;
            handed_[*next] = slot.get();
        }
    }

    // Sets a slot's stop flag once its deadline has passed or its request is cancelled,
    // or, for a stream that has held it kStreamHold, while a one-shot request waits (the
    // slot marked yielded); the search sees it within a few milliseconds
    // (SolverOptions::stop).
    void watch() {
        std::unique_lock<std::mutex> lock(mu_);
        // Runs until the pool is destroyed, past stop_all: searches already running keep
        // their budgets while the server drains.
        while (watch_) {
            wake_.wait_for(lock, std::chrono::milliseconds(5));
            const auto now = Clock::now();
            for (auto& s : slots_) {
                if (!s->busy) continue;
                if (now >= s->deadline || (s->cancel && s->cancel->load())) {
                    s->stop = true;
                } else if (s->yields && !oneshots_.empty() && now - s->since >= kStreamHold) {
                    s->yielded = true;
                    s->stop = true;
                }
            }
        }
    }

    const ServeConfig& config_;
    Databases& dbs_;
    std::mutex mu_;
    std::condition_variable free_, wake_;
    std::vector<std::unique_ptr<Slot>> slots_;
    Turns turns_;                       // the requests waiting, and whose turn is next
    std::map<uint64_t, Slot*> handed_;  // ticket -> the solver handed to its request
    std::set<uint64_t> displaced_;      // tickets whose place a later request took
    std::set<uint64_t> oneshots_;       // tickets of waiting requests that are not streams
    bool shutdown_ = false;
    bool watch_ = true;
    std::thread watchdog_;
};

}  // namespace

struct Api::Impl {
    ServeConfig config;
    Databases dbs;
    SolverPool pool;
    explicit Impl(const ServeConfig& c)
        : config(c),
          dbs(c.db_dir, c.db_memory_bytes, c.db_layout, c.db_raw_top_bytes),
          pool(config, dbs) {}

    // How a search ran: `work` on a solver for the request's board. `largest` is the
    // position with the most seeds in pits the work will search: when the database holds
    // it (or the game is over), or when the work only values the board and its moves
    // (`moves_only`) and they are all known (solver/known.h), a small solver of this thread
    // answers at once (`pooled` false); otherwise one from the pool, under `budget_ms`. A
    // search stopped at its budget (or, a stream's, to yield its solver: `yields`) calls
    // `stopped` with its nodes, seconds and why it stopped. Every solver consults the board's
    // opening book, if any. `work` is told where its answer comes from: the database (or a finished
    // game), the book, or a pooled solver.
    enum class Source { Database, Book, Solver };
    struct Search {
        const GameRequest& r;
        const Board& largest;
        int budget_ms;
        const Caller& caller;
        std::function<ApiReply(Solver&, Source)> work;
        std::function<ApiReply(uint64_t nodes, double seconds, const std::string& reason)> stopped;
        bool moves_only = false;
        bool yields = false;
    };
    ApiReply search(const Search& x) {
        const int m = x.r.board.pits();
        const db::Database* d = dbs.get(m, x.r.rule);
        const Book* book = config.books ? builtin_book_for(x.r.board, x.r.rule) : nullptr;
        const bool in_db = x.largest.over() || (d && x.largest.seeds_in_pits() <= d->max_seeds());
        if (in_db || (x.moves_only && known_answer(x.r.board, x.r.rule, book, d))) {
            SolverOptions o;
            o.tt_mb = 1;
            o.db = d;
            o.book = book;
            Solver s(m, x.r.rule, o);
            ApiReply done = x.work(s, in_db ? Source::Database : Source::Book);
            done.nodes = s.stats().nodes;
            return done;
        }
        SolverPool::Refusal refusal;
        SolverPool::Slot* slot = pool.acquire(m, x.r.rule, x.budget_ms, x.caller.cancel,
                                              x.caller.client, x.yields, &refusal);
        if (refusal == SolverPool::Refusal::Cancelled) return client_gone();
        if (refusal == SolverPool::Refusal::Displaced)
            return reply(503, error_json("busy: a request of a client answered less recently took "
                                         "this one's place in the queue; try again later"));
        if (refusal == SolverPool::Refusal::Deadline)
            return reply(503, error_json("busy: no solver was free within the budget of " +
                                         std::to_string(x.budget_ms) + " ms; try again later"));
        if (!slot)
            return reply(503, error_json("busy: every solver is searching and " +
                                         std::to_string(config.queue) +
                                         " requests are waiting; try again later"));
        struct Release {
            SolverPool& p;
            SolverPool::Slot* s;
            ~Release() { p.release(s); }
        } release{pool, slot};
        slot->solver->set_book(book);
        // The watchdog's stop flag ends the request at its deadline; the solver's own time
        // limit to it as well makes the search check its clock every 256 nodes and bounds
        // its table's presize, which a first search would otherwise spend seconds faulting
        // in before any check.
        const double left = std::chrono::duration<double>(slot->deadline - Clock::now()).count();
        slot->solver->set_limits(0, std::max(1e-3, left));
        const uint64_t nodes0 = slot->solver->stats().nodes;
        const auto t0 = Clock::now();
        ApiReply done;
        try {
            done = x.work(*slot->solver, Source::Solver);
        } catch (const SearchStopped&) {
            if (x.caller.cancel && x.caller.cancel->load()) {
                done = client_gone();
            } else {
                const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
                const std::string reason = slot->yielded
                                               ? "yielded the solver to a waiting request after " +
                                                     std::to_string(int(secs * 1000)) + " ms"
                                               : within(x.budget_ms);
                done = x.stopped(slot->solver->stats().nodes - nodes0, secs, reason);
            }
        }
        done.nodes = slot->solver->stats().nodes - nodes0;
        return done;
    }

    // The answer of a search stopped at its budget, without bounds (pv, annotate, pie, move).
    ApiReply unknown(const GameRequest& r, uint64_t nodes, double seconds,
                     const std::string& reason) const {
        return reply(200, analysis::json_line({{"position", format_position(r.board)},
                                               {"rule", rule_name(r.rule)},
                                               {"unknown", true},
                                               {"reason", reason},
                                               {"budget_ms", config.budget_ms},
                                               {"nodes", nodes},
                                               {"seconds", seconds}}));
    }
    static std::string within(int budget_ms) {
        return "not known within the budget of " + std::to_string(budget_ms) + " ms";
    }
    // A search of one of the endpoints of get(), under the request budget.
    ApiReply search(const GameRequest& r, const Board& largest, const Caller& caller,
                    const std::function<std::string(Solver&)>& work, bool moves_only = false) {
        return search({r, largest, config.budget_ms, caller,
                       [&](Solver& s, Source) { return reply(200, work(s)); },
                       [&](uint64_t nodes, double secs, const std::string& reason) {
                           return unknown(r, nodes, secs, reason);
                       },
                       moves_only});
    }

    // query: at the budget, the bounds its search proved for the position.
    ApiReply query(const GameRequest& r, const Caller& caller) {
        QueryBounds bounds(r.board, r.rule);
        return search({r, r.board, config.budget_ms, caller,
                       // The page says where a value comes from: query's "source".
                       [&](Solver& s, Source) {
                           return reply(200, query_json(query_report(s, r.board, r.rule, &bounds)));
                       },
                       [&](uint64_t nodes, double secs, const std::string& reason) {
                           bounds.nodes = nodes;
                           bounds.seconds = secs;
                           return reply(200, json_line(query_unknown_fields(bounds, reason,
                                                                            config.budget_ms)));
                       },
                       true});
    }

    // The analysis stream (query_stream): a position the database holds, or a finished
    // game, is one final event; at the stream budget, or when it yields its solver to a
    // waiting one-shot request (SolverPool::kStreamHold), the last event is the unknown
    // answer with the bounds proven and why it stopped.
    ApiReply analysis_stream(const GameRequest& r, const Caller& caller, const Api::Emit& emit) {
        // No reader for events (HEAD: the front end has sent the stream's head): no search.
        if (!emit("")) return client_gone();
        QueryBounds bounds(r.board, r.rule);
        bool reader_gone = false;
        auto send = [&](const Json& j) {
            std::string line = json_line(j);
            line.pop_back();  // the newline
            if (!emit(line)) reader_gone = true;
            return !reader_gone;
        };
        return search({r, r.board, config.stream_budget_ms, caller,
                       [&](Solver& s, Source source) {
                           if (source != Source::Solver) {
                               Json j = {{"event", "value"}};
                               j.update(query_fields(query_report(s, r.board, r.rule)));
                               send(j);
                           } else {
                               query_stream(s, bounds, send);
                           }
                           return reply(200, "");
                       },
                       [&](uint64_t nodes, double secs, const std::string& reason) {
                           // Stopped by its reader (send returned false): nobody to tell.
                           if (reader_gone) return client_gone();
                           bounds.nodes = nodes;
                           bounds.seconds = secs;
                           Json j = {{"event", "unknown"}};
                           j.update(query_unknown_fields(bounds, reason, config.stream_budget_ms));
                           send(j);
                           return reply(200, "");
                       },
                       true, true});
    }

    ApiReply route(const std::string& name, const std::multimap<std::string, std::string>& raw,
                   const Caller& caller) {
        if (name == "show") {
            const GameRequest r = parse_game(Params(raw, {}));
            return reply(200, show_json(r.board, r.rule, r.played));
        }
        if (name == "query") return query(parse_game(Params(raw, {})), caller);
        if (name == "pv") {
            const GameRequest r = parse_game(Params(raw, {}));
            return search(r, r.board, caller,
                          [&](Solver& s) { return pv_json(pv_report(s, r.board, r.rule)); });
        }
        if (name == "annotate") {
            const GameRequest r = parse_game(Params(raw, {}));
            if (r.played.empty()) throw InputError("the game record (moves) holds no moves");
            return search(r, r.start, caller, [&](Solver& s) {
                return annotation_json(annotate_game(s, r.start, r.played, r.rule), r.rule);
            });
        }
        if (name == "pie") {
            const GameRequest r = parse_game(Params(raw, {}));
            return search(r, r.board, caller, [&](Solver& s) {
                const uint64_t n0 = s.stats().nodes;
                const double t0 = s.stats().seconds;
                PieReport rep = pie_analysis(s, r.board, r.rule);
                return pie_json(rep, r.board, r.rule, s.stats().nodes - n0, s.stats().seconds - t0);
            });
        }
        if (name == "move") {
            const Params p(raw, {"level", "seed"});
            const GameRequest r = parse_game(p);
            Level level = Level::Perfect;
            if (auto l = p.text("level")) {
                try {
                    level = parse_level(*l);
                } catch (const InputError& e) {
                    throw InputError("parameter 'level': " + std::string(e.what()));
                }
            }
            const uint64_t seed = p.unsigned64("seed").value_or(std::random_device{}());
            return search(
                r, r.board, caller,
                [&](Solver& s) {
                    Rng rng(seed);
                    return engine_move_json(engine_move(s, r.board, r.rule, level, rng));
                },
                true);
        }
        return reply(404, error_json("no such endpoint: /api/v1/" + name.substr(0, 40) +
                                     " (query, pv, annotate, pie, move, show)"));
    }
};

Api::Api(const ServeConfig& config) : impl_(std::make_unique<Impl>(config)) {}
Api::~Api() = default;
Api::Load Api::load() const { return impl_->pool.load(); }
void Api::stop_all() { impl_->pool.stop_all(); }
void Api::open_databases() {
    int found = 0;
    for (int m = 1; m <= kMaxPits; ++m)
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture})
            found += impl_->dbs.get(m, rule) != nullptr;
    if (!found && !impl_->config.db_dir.empty())
        std::cerr << "kalah serve: no endgame database in " << impl_->config.db_dir
                  << " (kalah build-db makes one); every position is searched\n";
}

namespace {
// Runs one request of get() or stream(): bad input gets its one-line message (400);
// anything else is the server's problem, logged here and answered without its text.
template <class Run>
ApiReply guarded(const std::string& name, Run run) {
    try {
        return run();
    } catch (const InputError& e) {
        return bad_request(e.what());
    } catch (const std::invalid_argument& e) {
        return bad_request(e.what());
    } catch (const std::exception& e) {
        std::cerr << "kalah serve: error: /api/v1/" << name << ": " << e.what() << "\n";
        return reply(500, error_json("internal error"));
    }
}
}  // namespace

bool Api::streams(const std::string& name) { return name == "analysis"; }

ApiReply Api::stream(const std::string& name, const std::multimap<std::string, std::string>& params,
                     const Caller& caller, const Emit& emit) {
    if (!streams(name))
        return reply(404, error_json("no such stream: /api/v1/" + name.substr(0, 40)));
    // Bad input is its one line, before any event.
    return guarded(
        name, [&] { return impl_->analysis_stream(parse_game(Params(params, {})), caller, emit); });
}

ApiReply Api::get(const std::string& name, const std::multimap<std::string, std::string>& params,
                  const Caller& caller) {
    return guarded(name, [&] { return impl_->route(name, params, caller); });
}

}  // namespace kalah::serve
