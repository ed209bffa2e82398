// Text of positions for people and the few text helpers the reports share.
#pragma once

#include <string>

#include "core/board.h"

namespace kalah::analysis {

// Seeds each side ends with when the game is over (stores plus own row swept).
int final_store(const Board& b, Side s);

// Human-readable board: North's row (B6..B1) above South's (A1..A6), stores at the ends.
std::string draw_board(const Board& b);

// s as a JSON string literal, quotes included.
std::string json_string(const std::string& s);

}  // namespace kalah::analysis
