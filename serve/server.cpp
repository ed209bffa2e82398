// The web API of `kalah serve` (serve/server.h): parameter checks, the solver pool with its
// queue and budget watchdog, and the endpoints, each answering with the CLI's own JSON
// (analysis/reports.h).
#include "serve/server.h"

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
#include "analysis/reports.h"
#include "analysis/text.h"
#include "cli/command.h"
#include "cli/options.h"
#include "db/database.h"
#include "db/open.h"

namespace kalah::serve {
using namespace kalah::analysis;
using cli::add_game_options;
using cli::game_from_options;
namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

std::string error_json(const std::string& message) {
    return "{\"error\": " + json_string(message) + "}\n";
}

namespace {

ApiReply reply(int status, const std::string& body) { return {status, body}; }
ApiReply bad_request(const std::string& message) { return reply(400, error_json(message)); }

// The parameters of one request, checked and parsed: the start position, the moves
// played from it, the position they reach, the rule and the endpoint's extras.
struct Request {
    Board start, board;
    Rule rule = Rule::Standard;
    std::vector<PlayedMove> played;
    po::variables_map vm;
};

// Every endpoint takes the game parameters of the CLI (cli/options.h, add_game_options:
// position | pits & seeds, moves, rule); `move` also takes level and seed.
const std::set<std::string> kGameParams = {"position", "pits", "seeds", "rule", "moves"};

// Checks the parameters and parses them with the CLI's own option definitions, so that a
// parameter means exactly what the option of the same name means. Throws InputError.
Request parse_request(const std::multimap<std::string, std::string>& params,
                      const std::set<std::string>& extra, po::options_description& opts) {
    std::vector<std::string> args;
    for (const auto& [key, value] : params) {
        if (!kGameParams.count(key) && !extra.count(key))
            throw InputError("unknown parameter '" + key.substr(0, 40) + "'");
        if (params.count(key) > 1) throw InputError("parameter '" + key + "' given twice");
        const size_t cap = key == "moves" ? kMaxMovesChars : kMaxParamChars;
        if (value.size() > cap)
            throw InputError("parameter '" + key + "' is longer than " + std::to_string(cap) +
                             " characters");
        for (unsigned char c : value)
            if (c < 0x20 || c > 0x7e)
                throw InputError("parameter '" + key +
                                 "' holds a character that is not printable ASCII");
        // An empty record is no moves; any other parameter needs a value.
        if (value.empty()) {
            if (key == "moves") continue;
            throw InputError("parameter '" + key + "' is empty");
        }
        args.push_back("--" + key + "=" + value);
    }
    if (!params.count("position") && !params.count("pits"))
        throw InputError("which position? give position=P, or pits=M&seeds=N (a start)");
    add_game_options(opts);
    Request r;
    po::store(po::command_line_parser(args).options(opts).run(), r.vm);
    po::notify(r.vm);
    po::variables_map start_vm = r.vm;
    start_vm.erase("moves");
    r.start = game_from_options(start_vm, r.rule);
    r.board = r.start;
    if (r.vm.count("moves"))
        r.played = replay_plies(r.board, r.vm["moves"].as<std::string>(), r.rule);
    return r;
}

// The databases on disk, opened on first use for each (m, rule) and kept open, under the
// open policy of every command (db/open.h): a damaged layer file is db::FormatError.
class Databases {
  public:
    Databases(std::string dir, size_t memory, db::Database::Layout layout)
        : dir_(std::move(dir)), memory_(memory), layout_(layout) {}
    const db::Database* get(int m, Rule rule) {
        std::lock_guard<std::mutex> lock(mu_);
        const int key = m * 2 + static_cast<int>(rule);
        auto it = open_.find(key);
        if (it != open_.end()) return it->second.get();
        db::Opened o;
        // Most (m, rule) have no database: searching without one is the normal case.
        if (!dir_.empty()) o = db::open_checked({dir_, m, rule, memory_, layout_});
        if (!o.warning.empty()) std::cerr << "kalah serve: warning: " << o.warning << "\n";
        if (o.db) std::cerr << "kalah serve: " << db::describe(*o.db, dir_) << "\n";
        return (open_[key] = std::move(o.db)).get();
    }

  private:
    std::string dir_;
    size_t memory_;
    db::Database::Layout layout_;
    std::mutex mu_;
    std::map<int, std::unique_ptr<db::Database>> open_;
};

// A fixed set of solvers, each with its own table (kept between requests of the same
// m and rule, so a game's positions reuse what earlier requests proved), a bounded queue
// in front of them, and a watchdog that stops a search when its request's budget is
// spent.
class SolverPool {
  public:
    struct Slot {
        std::unique_ptr<Solver> solver;
        int m = 0;
        Rule rule = Rule::Standard;
        bool busy = false;
        std::atomic<bool> stop{false};
        Clock::time_point deadline;
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

    // A free solver for (m, rule) with the budget's clock started, after waiting in the
    // queue if need be; nullptr when the queue is full (or the server stops).
    Slot* acquire(int m, Rule rule) {
        std::unique_lock<std::mutex> lock(mu_);
        // Once the server stops no search starts: one started now would run unbudgeted
        // and hold up the shutdown.
        if (shutdown_) return nullptr;
        auto free_slot = [&]() -> Slot* {
            for (auto& s : slots_)
                if (!s->busy) return s.get();
            return nullptr;
        };
        Slot* slot = free_slot();
        if (!slot) {
            if (waiting_ >= config_.queue) return nullptr;
            ++waiting_;
            free_.wait(lock, [&] { return shutdown_ || (slot = free_slot()) != nullptr; });
            --waiting_;
            if (shutdown_) return nullptr;
        }
        slot->busy = true;
        slot->stop = false;
        slot->deadline = Clock::now() + std::chrono::milliseconds(config_.budget_ms);
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
    void release(Slot* slot) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            slot->busy = false;
        }
        free_.notify_one();
    }

  private:
    // Sets a slot's stop flag once its deadline has passed; the search sees it within a
    // few milliseconds (SolverOptions::stop).
    void watch() {
        std::unique_lock<std::mutex> lock(mu_);
        // Runs until the pool is destroyed, past stop_all: searches already running keep
        // their budgets while the server drains.
        while (watch_) {
            wake_.wait_for(lock, std::chrono::milliseconds(5));
            const auto now = Clock::now();
            for (auto& s : slots_)
                if (s->busy && now >= s->deadline) s->stop = true;
        }
    }

    const ServeConfig& config_;
    Databases& dbs_;
    std::mutex mu_;
    std::condition_variable free_, wake_;
    std::vector<std::unique_ptr<Slot>> slots_;
    int waiting_ = 0;
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
        : config(c), dbs(c.db_dir, c.db_memory_bytes, c.db_layout), pool(config, dbs) {}

    // Runs work on a solver for the request's board. `largest` is the position with the
    // most seeds in pits the work will search: when the database holds it (or the game is
    // over), a small solver of this thread answers at once; otherwise one from the pool.
    ApiReply search(const Request& r, const Board& largest,
                    const std::function<std::string(Solver&)>& work) {
        const int m = r.board.pits();
        const db::Database* d = dbs.get(m, r.rule);
        if (largest.over() || (d && largest.seeds_in_pits() <= d->max_seeds())) {
            SolverOptions o;
            o.tt_mb = 1;
            o.db = d;
            Solver s(m, r.rule, o);
            return reply(200, work(s));
        }
        SolverPool::Slot* slot = pool.acquire(m, r.rule);
        if (!slot)
            return reply(503, error_json("busy: every solver is searching and " +
                                         std::to_string(config.queue) +
                                         " requests are waiting; try again later"));
        struct Release {
            SolverPool& p;
            SolverPool::Slot* s;
            ~Release() { p.release(s); }
        } release{pool, slot};
        const uint64_t nodes0 = slot->solver->stats().nodes;
        const auto t0 = Clock::now();
        try {
            return reply(200, work(*slot->solver));
        } catch (const SearchStopped&) {
            const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
            return reply(
                200, "{\"position\": " + json_string(format_position(r.board)) + ", \"rule\": " +
                         json_string(rule_name(r.rule)) + ", \"unknown\": true, \"reason\": " +
                         json_string("not known within the budget of " +
                                     std::to_string(config.budget_ms) + " ms") +
                         ", \"budget_ms\": " + std::to_string(config.budget_ms) +
                         ", \"nodes\": " + std::to_string(slot->solver->stats().nodes - nodes0) +
                         ", \"seconds\": " + std::to_string(secs) + "}\n");
        }
    }

    ApiReply route(const std::string& name, const std::multimap<std::string, std::string>& params) {
        po::options_description opts;
        if (name == "show") {
            Request r = parse_request(params, {}, opts);
            return reply(200, show_json(r.board, r.rule, r.played));
        }
        if (name == "query") {
            Request r = parse_request(params, {}, opts);
            return search(r, r.board,
                          [&](Solver& s) { return query_json(query_report(s, r.board, r.rule)); });
        }
        if (name == "pv") {
            Request r = parse_request(params, {}, opts);
            return search(r, r.board,
                          [&](Solver& s) { return pv_json(pv_report(s, r.board, r.rule)); });
        }
        if (name == "annotate") {
            Request r = parse_request(params, {}, opts);
            if (r.played.empty()) throw InputError("the game record (moves) holds no moves");
            return search(r, r.start, [&](Solver& s) {
                return annotation_json(annotate_game(s, r.start, r.played, r.rule), r.rule);
            });
        }
        if (name == "pie") {
            Request r = parse_request(params, {}, opts);
            return search(r, r.board, [&](Solver& s) {
                const uint64_t n0 = s.stats().nodes;
                const double t0 = s.stats().seconds;
                PieReport rep = pie_analysis(s, r.board, r.rule);
                return pie_json(rep, r.board, r.rule, s.stats().nodes - n0, s.stats().seconds - t0);
            });
        }
        if (name == "move") {
            // clang-format off
            opts.add_options()
                ("level", po::value<std::string>()->default_value("perfect"), "")
                ("seed", po::value<uint64_t>(), "");
            // clang-format on
            Request r = parse_request(params, {"level", "seed"}, opts);
            const Level level = parse_level(r.vm["level"].as<std::string>());
            const uint64_t seed =
                r.vm.count("seed") ? r.vm["seed"].as<uint64_t>() : std::random_device{}();
            return search(r, r.board, [&](Solver& s) {
                Rng rng(seed);
                return engine_move_json(engine_move(s, r.board, r.rule, level, rng));
            });
        }
        return reply(404, error_json("no such endpoint: /api/v1/" + name.substr(0, 40) +
                                     " (query, pv, annotate, pie, move, show)"));
    }
};

Api::Api(const ServeConfig& config) : impl_(std::make_unique<Impl>(config)) {}
Api::~Api() = default;
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

ApiReply Api::get(const std::string& name, const std::multimap<std::string, std::string>& params) {
    // Bad input gets its one-line message; anything else is the server's problem, logged
    // here and answered without its text.
    try {
        return impl_->route(name, params);
    } catch (const InputError& e) {
        return bad_request(e.what());
    } catch (const po::error& e) {
        return bad_request(e.what());
    } catch (const std::invalid_argument& e) {
        return bad_request(e.what());
    } catch (const std::exception& e) {
        std::cerr << "kalah serve: error: /api/v1/" << name << ": " << e.what() << "\n";
        return reply(500, error_json("internal error"));
    }
}

}  // namespace kalah::serve
