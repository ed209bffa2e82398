// The oracle behind libkalah's C API (include/kalah/probe.h) and the Python module: one
// database directory, opened lazily per (m, rule), and a pool of solvers for what it does
// not hold. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/board.h"
#include "db/database.h"
#include "solver/solver.h"

namespace kalah::api {

// The database directory is missing or holds no layer file.
struct NotFound : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A layer file is damaged or unreadable.
struct DatabaseError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Where a value comes from: the database (or the game is over), a search, unknown (the
// budget ran out), or the opening books built into the program (solver/known.h).
enum class Source : uint8_t { Database, Search, Unknown, Book };
const char* source_name(Source s);  // "database", "search", "unknown", "book"

struct Value {
    int value = 0;  // South's final margin, stores included; meaningless when Unknown
    Source source = Source::Unknown;
    uint64_t nodes = 0;  // searched for it
};

struct MoveValue {
    int pit = 0;       // mover's pit, 0-based
    std::string text;  // notation, e.g. "A3+"
    Value value;       // of the position after the move
};

// The caller's interrupt (Budget::interrupted answered true): the call's values are lost.
struct Interrupted : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The budget of one call, whatever it does: the database's first opening, waiting for a
// solver, and the search of every move of move_values all count.
struct Budget {
    uint64_t node_limit = 0;        // 0: none
    double time_limit_seconds = 0;  // 0: none
    // Asked about every 50 ms while the call waits or searches, from the calling thread;
    // true ends the call with Interrupted. May be empty.
    std::function<bool()> interrupted;
};

// What the directory holds for one pit count and rule, and what of it is used
// (Oracle::coverage): layers 0..max_seeds, and why they stop there.
struct Coverage {
    enum class Stop : uint8_t {
        End,        // no file of layer stop_layer nor above it: the database as built
        Missing,    // stop_layer's file is missing while a higher layer's file exists
        Damaged,    // stop_layer's file is damaged or unreadable: nothing is used (and a
                    // probe of this pit count and rule throws DatabaseError)
        NotOpened,  // not opened: not yet (a probe or coverage(true) opens it), or its
                    // opening failed (a damaged layer: coverage(true) says which)
    };
    int m = 0;
    Rule rule = Rule::Standard;
    int max_seeds = -1;  // layers 0..max_seeds are used; -1: none
    Stop stop = Stop::NotOpened;
    int stop_layer = -1;  // the layer the run stops at: max_seeds + 1, or the damaged one
    std::string file;     // that layer's file name, without the directory ("" if none)
    std::string reason;   // one line for a person
};
const char* stop_name(Coverage::Stop s);  // "end", "missing", "damaged", "not-opened"

struct Options {
    size_t db_memory_mib = 4096;
    size_t tt_mib = 64;
    int threads = 1;
    // At most this many solvers at once (each tt_mib and `threads` threads); a call that
    // needs one beyond them waits for one within its budget. 0: one per hardware thread.
    int max_solvers = 0;
    // Answer the first plies of Kalah(6,4) from the opening books built into the library
    // (solver/known.h); false: search them (as `kalah query --no-book`).
    bool books = true;
};

class Oracle {
  public:
    // dir empty: no database. Throws NotFound for a missing directory or one without
    // layer files.
    Oracle(const std::string& dir, Options options);
    ~Oracle();
    Oracle(const Oracle&) = delete;
    Oracle& operator=(const Oracle&) = delete;

    const std::string& dir() const { return dir_; }

    // b must be valid (Board::from_rows' requirements). The known answers of every front
    // end first (solver/known.h): a finished game, then the built-in opening book (Book,
    // without waiting for the database: its first use starts opening it in the background),
    // then the database, then a search. Throws DatabaseError for a damaged layer met on the
    // way (also before a book's answer once the opening has found it), Interrupted when
    // budget.interrupted answered true. A value the budget did not reach is Unknown: a
    // search stopped, the database still opening (a later call finds it open), or no
    // solver free in time.
    Value value(const Board& b, Rule rule, const Budget& budget);
    // Every legal move, best first for the side to move (South: highest margin first,
    // North: lowest), ties in pit order, unknown values last. One budget for all moves:
    // once it is spent, the moves left are Unknown (those the database holds excepted).
    std::vector<MoveValue> move_values(const Board& b, Rule rule, const Budget& budget);
    // The pits of the best moves (ascending), and Search if any move needed a search, else
    // Book if the book gave any; no pits and Unknown when some move's value is unknown.
    struct Best {
        std::vector<int> pits;
        Source source = Source::Database;
    };
    Best best_moves(const Board& b, Rule rule, const Budget& budget);

    // One entry per pit count and rule with a layer file (.kdb or .kpk) in the directory,
    // by pit count then rule (none without a directory). open: opens each under the
    // policy of every command first, as a probe would (a damaged layer is then reported,
    // not thrown); otherwise those not opened yet say so. The checks are those of opening:
    // every file's header and index, and the contents of the layers held in memory; a
    // damaged block of a layer read through the block cache is met by the probe that
    // reads it.
    std::vector<Coverage> coverage(bool open);

  private:
    struct Call;
    using Key = std::pair<int, Rule>;
    using Opening = std::shared_future<std::shared_ptr<const db::Database>>;
    // The database of (m, rule), opened in the background on first use: nullopt when the
    // call's budget ran out while it opens, or at once when it is still opening and `wait`
    // is false. Throws DatabaseError when the opening failed.
    std::optional<const db::Database*> database(int m, Rule rule, Call& call, bool wait = true);
    Value value_in(const Board& b, Rule rule, Call& call);
    // A pooled solver, or a new one under the cap; nullptr when the budget ran out waiting.
    std::unique_ptr<Solver> take_solver(int m, Rule rule, const db::Database* db, Call& call);
    void give_back(int m, Rule rule, std::unique_ptr<Solver> s);
    void drop_solver();  // a taken solver that is not given back

    std::string dir_;
    Options options_;
    int max_solvers_;
    std::mutex mutex_;  // guards the maps and the count
    std::condition_variable solver_returned_;
    std::map<Key, Opening> databases_;
    std::map<Key, std::vector<std::unique_ptr<Solver>>> idle_solvers_;
    int solvers_ = 0;  // solvers alive: idle ones and those taken
};

}  // namespace kalah::api
