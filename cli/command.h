// Subcommand registry and helpers shared by the `kalah` subcommands.
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <string>
#include <vector>

namespace kalah::cli {

// A subcommand registers itself from its own .cpp with a static RegisterCommand.
struct Command {
    const char* name;
    const char* summary;
    int (*run)(const std::vector<std::string>& args);  // args after the command name
};
struct RegisterCommand {
    explicit RegisterCommand(Command c);
};
const std::vector<Command>& commands();

// Exit status for bad input (one line on stderr, see fail()).
constexpr int kExitBadInput = 2;
// Prints "kalah <cmd>: <message>" to stderr and returns kExitBadInput.
int fail(const std::string& cmd, const std::string& message);

// Parses args against opts; returns false after printing help (--help). Throws
// boost::program_options::error or kalah::InputError on bad input.
bool parse_options(const std::string& cmd, const std::string& usage,
                   boost::program_options::options_description& opts,
                   const std::vector<std::string>& args,
                   boost::program_options::variables_map& vm);

// Runs body, turning exceptions from bad input into one stderr line and exit 2.
int guarded(const std::string& cmd, int (*body)(const std::vector<std::string>&),
            const std::vector<std::string>& args);

// Minimal JSON text helpers.
std::string json_string(const std::string& s);

}  // namespace kalah::cli

#include "core/notation.h"

namespace kalah::cli {

// Options that pick a position: --pits/--seeds (start position), --position, --moves
// (replayed from it) and --rule. add_game_options declares them; game_from_options
// builds the board and replays the moves (played moves returned in `played`).
void add_game_options(boost::program_options::options_description& opts, bool with_moves = true);
Board game_from_options(const boost::program_options::variables_map& vm, Rule& rule,
                        std::vector<kalah::PlayedMove>* played = nullptr);

// The start of Kalah(m,n), with --pits/--seeds range errors as InputError.
Board checked_start(int m, int n);

// Seeds each side ends with when the game is over (stores plus own row swept).
int final_store(const Board& b, Side s);

// Human-readable board: North's row (B6..B1) above South's (A1..A6), stores at the ends.
std::string draw_board(const Board& b);

}  // namespace kalah::cli

namespace kalah::db {
class Database;
}

namespace kalah::cli {

// Default directory of endgame databases (build-db writes there; searches probe it).
inline constexpr const char* kDefaultDbDir = "kalah-db";

// --db DIR (default kDefaultDbDir, or none when use_default_dir is false) and
// --db-memory-gb G (default default_gb).
void add_db_options(boost::program_options::options_description& opts, double default_gb,
                    bool use_default_dir = true);
// Opens the database the options name for (m, rule). Prints one line on stderr: what is
// used, or why nothing is (the search then runs without one), plus any warning about a
// damaged layer. Returns nullptr when there is no usable database.
std::unique_ptr<db::Database> open_database(const boost::program_options::variables_map& vm,
                                            const std::string& cmd, int m, Rule rule);

}  // namespace kalah::cli

namespace kalah::cli {
// --tt-mb, checked: at least 1 MiB and at most this machine's physical memory.
size_t checked_tt_mb(const boost::program_options::variables_map& vm);
}  // namespace kalah::cli
