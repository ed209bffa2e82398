// Text of positions for people: the drawn board and the final stores.
#pragma once

#include <string>

#include "core/board.h"
#include "solver/known.h"

namespace kalah::analysis {

// Seeds each side ends with when the game is over (stores plus own row swept).
int final_store(const Board& b, Side s);

// Human-readable board: North's row (B6..B1) above South's (A1..A6), stores at the ends.
std::string draw_board(const Board& b);

// Where a value came from, for a person: "from the opening book", "from the endgame
// database", "searched".
const char* source_text(AnswerSource s);

}  // namespace kalah::analysis
