// Text formats: positions, moves and game records in the notation of rules.md.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "core/board.h"

namespace kalah {

// Malformed or inconsistent user input; what() is one line naming the problem.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// "A1,...,Am/B1,...,Bm/storeA,storeB/side", side A or B to move.
Board parse_position(const std::string& text);
std::string format_position(const Board& b);

Rule parse_rule(const std::string& text);  // "standard" | "empty-capture"
std::string rule_name(Rule r);

// A move as written: side, pit (0-based) and the suffix, if any was given.
struct MoveText {
    Side side = Side::South;
    int pit = 0;
    bool has_suffix = false;
    MoveResult suffix;  // what the suffix claims (only when has_suffix)
};
MoveText parse_move(const std::string& text, int m);
// "A3", then "+" (extra move), "xN" (capture of N seeds), "#" (game over).
std::string format_move(Side side, int pit, const MoveResult& r);

// One played move with its full notation.
struct PlayedMove {
    Side side;
    int pit;
    MoveResult result;
    std::string text;
};

// Plays a whitespace-separated record from b (which is updated). Throws InputError
// naming the move for an illegal move, a move out of turn, a move after the game ended,
// or a suffix that disagrees with what the move does.
std::vector<PlayedMove> replay(Board& b, const std::string& record, Rule rule);

// The move text of the mover's pit, e.g. "A3".
std::string pit_name(Side side, int pit);

}  // namespace kalah
