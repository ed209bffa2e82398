// Exact Kalah solver: MTD(f) over fail-soft null-window alpha-beta with an exact TT.
#pragma once

// The search works on pits-only positions (stores zero, mover's view). Its value v(pits)
// is the mover's final store minus the opponent's counting only seeds now in pits, so
// -s <= v <= s and v == s (mod 2) for s seeds in pits. For a move with gain g (the mover's
// store minus the opponent's right after it): game over -> g; extra move -> g + v(child);
// otherwise g - v(child). The position value is store difference + v(pits).
//
// Return contract of the internal search(b, alpha, beta) (fail-soft, alpha < beta):
//   r <= alpha : fail low,  v <= r
//   r >= beta  : fail high, v >= r
//   otherwise  : exact,     v == r
// MTD(f) runs null-window searches (beta-1, beta) with beta == s (mod 2) until the lower
// and upper bounds meet; each pass moves a bound by at least 2. Every bound stored in the
// transposition table is a true bound on the exact value, so entries never go stale.
// Without SolverOptions::guess the first guess is a depth-10 alpha-beta estimate (seeds
// banked so far); the guess changes only the number of passes, never the value.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/board.h"
#include "core/notation.h"
#include "solver/search_experiments.h"

namespace kalah::db {
class Database;
}

namespace kalah {

class Book;
struct KnownValue;
struct KnownAnswer;

// One MTD(f) pass as SolverOptions::on_pass reports it: the null-window test "v >= beta"
// of a position's pits value v (mover's view, as Solver::pits_value), what it proved
// (v >= result if result >= beta, else v <= result) and the bounds lower <= v <= upper
// proven so far by this search; nodes and seconds count from the search's first pass.
struct MtdPass {
    int pass = 0;  // 1-based
    int beta = 0, result = 0;
    int lower = 0, upper = 0;
    uint64_t nodes = 0;
    double seconds = 0;
};

struct KALAH_EXPERIMENTS_ABI SolverOptions {
    size_t tt_mb = 1024;  // transposition table size in MiB
    int threads = 1;      // search threads
    // With threads > 1, positions with fewer seeds in pits are searched by one thread:
    // they take microseconds, less than waking the other threads. 0: always parallel.
    int parallel_min_seeds = 24;
    const db::Database* db = nullptr;  // probed for positions with <= db->max_seeds() seeds
    // Consulted at the root of each public call, before the database and the search
    // (solver/book.h); never inside a search.
    const Book* book = nullptr;
    std::optional<int> guess;  // first MTD(f) guess (pits value, mover's view)
    // Called after every MTD(f) pass (for progress on stderr); may be empty.
    std::function<void(const std::string&)> progress;
    // Called after every MTD(f) pass of every search (a position's, and each child's inside
    // move_values), from the calling thread; may be empty. It may throw SearchStopped to
    // end the search there (everything proven so far stays in the table).
    std::function<void(const MtdPass&)> on_pass;
    // Called about every heartbeat_seconds during a search (nodes, nodes/s, the pass's
    // test, table size, elapsed), from the calling thread; may be empty.
    std::function<void(const std::string&)> heartbeat;
    double heartbeat_seconds = 5;
    // Cooperative stop. Every thread checks these about every 65 k nodes it searches, and
    // the call then throws SearchStopped. The limits count from the start
    // of each public call (pits_value, value, move_values, principal_variation, test).
    const std::atomic<bool>* stop = nullptr;  // stop when it becomes true
    uint64_t node_limit = 0;                  // stop past this many nodes (0: no limit)
    double time_limit_seconds = 0;            // stop past this wall time (0: no limit)
    // Asked about every poll_seconds during a search, from the calling thread; true stops
    // the call as `stop` does (a caller's interrupt: Ctrl-C in the Python module). May be
    // empty. Under a poll or a time limit the threads check every 256 nodes rather than
    // 65 k: a node that probes a database layer read through its block cache can cost a
    // millisecond, and the check (a clock read) costs nanoseconds.
    std::function<bool()> poll;
    double poll_seconds = 0.05;
    // Features switched off only to measure them: constants, all on, in the product;
    // settable in the experiments build (search_experiments.h).
    [[no_unique_address]] SearchExperiments experiments;
};

struct SolverStats {
    uint64_t nodes = 0;      // summed over threads
    double seconds = 0;      // wall clock
    double cpu_seconds = 0;  // process CPU time (all threads) while searching
    size_t tt_bytes = 0;     // transposition table size after the last search
};

// A move's exact value (South's final margin, stores included) after perfect play.
struct MoveValue {
    int pit;           // mover's pit, 0-based
    int value;         // South's final margin after this move and perfect play
    std::string text;  // notation, e.g. "A3+"
};

// Thrown by a search that SolverOptions::stop, node_limit or time_limit_seconds ended.
// The solver stays usable: its table holds only proven bounds (a stopped search stores
// nothing of the node it was in), so a later call reuses everything proven before the stop.
struct SearchStopped : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class KALAH_EXPERIMENTS_ABI Solver {
  public:
    Solver(int m, Rule rule, SolverOptions opts = {});
    ~Solver();
    Solver(const Solver&) = delete;
    Solver& operator=(const Solver&) = delete;

    // Exact value of the pits of b, mover's view: mover's final store minus opponent's,
    // counting only seeds now in pits. For a finished game (a row empty), own row minus the
    // opponent's row (the sweep). Driven by MTD(f).
    int pits_value(const Board& b);
    // Exact value of the position as South's final margin, stores included.
    int value(const Board& b);
    // Every legal move with its exact value (South's margin), in pit order.
    std::vector<MoveValue> move_values(const Board& b);
    // A principal variation from b to the end of the game (a best move at every turn).
    std::vector<PlayedMove> principal_variation(const Board& b);
    // One null-window test of the pits value v of b (as pits_value): returns r with
    // v >= r if r >= beta (the test succeeded), v <= r if r < beta. One MTD(f) pass: the
    // unit of work of a proof split into jobs. A finished game returns its exact value.
    int test(const Board& b, int beta);
    // What is known of b without a search (solver/known.h), from the book and database of
    // this solver's options: b's value (known_value), or b's and every move's (known).
    std::optional<KnownValue> known_value(const Board& b) const;
    std::optional<KnownAnswer> known(const Board& b) const;
    // The move the transposition table holds for the pits of b (the best or cutting move of
    // its last search there), -1 when none: a hint for which move to try first, not a proof.
    int table_move(const Board& b) const;

    // The first MTD(f) guess pits_value uses without SolverOptions::guess: a depth-10
    // alpha-beta estimate of the pits value of b (seeds banked so far). Not a bound.
    int estimate(const Board& b) const;

    // Replaces SolverOptions::node_limit and time_limit_seconds for the following calls
    // (a reused solver given another budget per call).
    void set_limits(uint64_t node_limit, double time_limit_seconds);
    // Replaces SolverOptions::poll for the following calls (empty: none).
    void set_poll(std::function<bool()> poll);
    // Replaces SolverOptions::book for the following calls (nullptr: none).
    void set_book(const Book* book);
    // Replaces SolverOptions::on_pass for the following calls (empty: none).
    void set_pass_hook(std::function<void(const MtdPass&)> hook);

    const SolverStats& stats() const;  // accumulated over all calls
    void clear();                      // empty the TT and reset stats
    void clear_table();                // empty the TT, keep the stats

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace kalah
