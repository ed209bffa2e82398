// The one JSON writer of the program: every object the CLI's --json and the web API print
// is an ordered nlohmann::json (keys in the order given) written by json_line, and the
// pieces several objects share are built here once. README "JSON fields" lists the
// vocabulary; tests/test_cli_json.cpp checks every command's object against it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/board.h"
#include "core/notation.h"

namespace kalah::analysis {

using Json = nlohmann::ordered_json;

// One line: ", " between items, ": " after a key, a newline at the end.
std::string json_line(const Json& j);
// s as a JSON string, quotes included.
std::string json_string(const std::string& s);

// "A" or "B", the side to move, or "none" for a finished game.
const char* to_move_text(const Board& b);
// [South's, North's] final stores of a finished game (final_store).
Json score_json(const Board& b);
// The moves' notation, in order.
Json move_texts_json(const std::vector<PlayedMove>& moves);

// Text, not JSON, shared by the commands' human-readable output.
std::string signed_value(int v);        // "+3", "0", "-2"
std::string result_letter(int margin);  // "W", "D" or "L" for South's margin
const char* result_word(int margin);    // "win", "draw", "loss" (for whoever's margin)

}  // namespace kalah::analysis
