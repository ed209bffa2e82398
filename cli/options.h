// The options that several commands take, each defined once here: its name, its unit, its
// default and its check. A command declares the groups it needs and reads them back with
// the matching functions, so `--threads` or `--db` mean the same in every command.
#pragma once

#include <boost/program_options.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/notation.h"
#include "db/database.h"
#include "solver/known.h"
#include "solver/question.h"
#include "solver/solver.h"

namespace kalah::cli {

// Default directory of endgame databases (build-db writes there; searches probe it).
inline constexpr const char* kDefaultDbDir = "kalah-db";
// Default transposition-table budget of the searching commands, in MiB.
inline constexpr size_t kDefaultTtMib = 1024;
// Default memory for a probed database, in GiB.
inline constexpr double kDefaultDbMemoryGib = 8.0;

// --pits/--seeds (a start position), --position, --rule and, if with_moves, --moves.
void add_game_options(boost::program_options::options_description& opts, bool with_moves = true);
// The board the options name, the moves replayed (returned in `played`). Without --position
// or --pits/--seeds: an InputError if `required`, else the start of Kalah(6,4).
Board game_from_options(const boost::program_options::variables_map& vm, Rule& rule,
                        std::vector<kalah::PlayedMove>* played = nullptr, bool required = true);
// --pits M --seeds N (required when `required`) and --rule: the start of Kalah(m,n), for
// the commands that work on a start rather than any position.
void add_start_options(boost::program_options::options_description& opts, bool required = true);
// --prove Q: one question (solver/question.h) instead of the exact value; `what` ends the
// help line (what else the command does with it).
void add_question_option(boost::program_options::options_description& opts,
                         const std::string& what = "");
// --prove's question, or nothing (the exact value); an InputError for a bad one.
std::optional<Question> question_option(const boost::program_options::variables_map& vm);
// --guess B, the first MTD(f) guess, with the command's own help line.
void add_guess_option(boost::program_options::options_description& expert, const std::string& help);
// The start of Kalah(m,n), with --pits/--seeds range errors as InputError.
Board checked_start(int m, int n);
// --guess (South's margin, the first MTD(f) guess) if given, else `otherwise`; checked to
// lie within the seeds of Kalah(m,n) (-2mn..2mn: no margin is larger). Throws InputError.
int guess_option(const boost::program_options::variables_map& vm, int m, int n, int otherwise);

// --threads T: 1 .. 4 per core; the default is every core (or OMP_NUM_THREADS) when
// default_threads = 0, else the given count.
void add_threads_option(boost::program_options::options_description& opts, int default_threads = 0);
int threads_option(const boost::program_options::variables_map& vm);

// --tt-mb X: the transposition table's budget in MiB, 1 .. this machine's memory.
void add_tt_option(boost::program_options::options_description& opts,
                   size_t default_mib = kDefaultTtMib);
size_t checked_tt_mb(const boost::program_options::variables_map& vm);

// --db DIR (default kDefaultDbDir, or none when use_default_dir is false) and
// --db-memory-gb G (GiB).
void add_db_options(boost::program_options::options_description& opts, bool use_default_dir = true);
// An InputError when `dir` (--db) names something that is not a directory (a file, a
// FIFO): the database is a directory of layer files. A missing one is no error here.
void check_db_dir(const std::string& dir);
// --db-memory-gb, checked.
double db_memory_gib(const boost::program_options::variables_map& vm);
// --db-layout, checked.
db::Database::Layout db_layout(const boost::program_options::variables_map& vm);
// --db-raw-gb in bytes, checked.
uint64_t db_raw_top_bytes(const boost::program_options::variables_map& vm);
// Opens the database the options name for (m, rule) under the one open policy of
// db/open.h (a damaged or unreadable layer file is db::FormatError, exit 1). Prints one
// line on stderr: what is used, or why nothing is followed by `otherwise` (what happens
// instead). Returns nullptr when there is no usable database.
std::unique_ptr<db::Database> open_database(const boost::program_options::variables_map& vm,
                                            const std::string& cmd, int m, Rule rule,
                                            const std::string& otherwise = "searching without one");

// The Solver that the options of add_solver_options describe, with its
// database (opened when --db names a usable one, or built in memory); `start` is the
// largest position it will search. Heartbeats go to stderr if `heartbeat`
// and not --quiet.
struct SolverSetup {
    std::unique_ptr<db::Database> db;
    std::unique_ptr<Solver> solver;
};
SolverSetup make_solver(const boost::program_options::variables_map& vm, const std::string& cmd,
                        const Board& start, Rule rule, bool heartbeat = true);

// --time-limit S: a search still running after S seconds stops (SolverOptions::
// time_limit_seconds); the command then exits kExitStopped (cli/command.h) with one line.
void add_time_limit_option(boost::program_options::options_description& opts);
// The limit in seconds, 0 for none; checked.
double time_limit_option(const boost::program_options::variables_map& vm);

// --no-book: the commands that answer a position's value from the opening books built into
// the program (solver/known.h: query, solve, play, annotate, pie) search it instead.
void add_book_option(boost::program_options::options_description& opts);
// The built-in book of b's board under `rule` (nullptr without one, or with --no-book).
const Book* book_option(const boost::program_options::variables_map& vm, const Board& b, Rule rule);

// --json (print one JSON object) and --quiet (no progress or heartbeat on stderr).
void add_output_options(boost::program_options::options_description& opts);
bool quiet(const boost::program_options::variables_map& vm);

// Everything a search takes: --tt-mb, --threads, --db, --db-memory-gb, and in `expert`
// --heartbeat-seconds and --memory-db.
void add_solver_options(boost::program_options::options_description& opts,
                        boost::program_options::options_description& expert);
// The solver options they describe; `db` receives the opened database (kept alive by
// the caller). Pass lines (if `passes`) and heartbeats go to stderr unless --quiet.
// When no database on disk covers the board, layers that pay for themselves are built in
// memory (--memory-db, an expert option: auto, off or K): root_seeds is the number of
// seeds in the pits of the largest position the command will search. `booked`: the
// opening book answers the command (no layers are built in memory, and a missing database
// is said so).
SolverOptions solver_options(const boost::program_options::variables_map& vm,
                             const std::string& cmd, int m, Rule rule, int root_seeds,
                             std::unique_ptr<db::Database>& db, bool passes, bool booked = false);

}  // namespace kalah::cli

namespace kalah::cli {
// Clears a heartbeat line left open on a terminal (call before printing a result).
void end_progress_line();
}  // namespace kalah::cli
