// The JSON objects of the commands, built in one place: the CLI's --json output and the
// web API of `kalah serve` (serve/server.h) call the same functions, so a field cannot mean
// two things in two places. README "JSON fields" lists the vocabulary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/json.h"
#include "core/board.h"
#include "core/notation.h"
#include "solver/solver.h"

namespace kalah::analysis {

// Replays a record from b (updated) like kalah::replay, but an error names the ply:
// "ply 3: move 'A9' names pit 9 ...".
std::vector<PlayedMove> replay_plies(Board& b, const std::string& record, Rule rule);

// `query`: the value of b and of every legal move, searched by `solver` (nodes and
// seconds are those of this call only).
struct QueryReport {
    Board board;
    Rule rule = Rule::Standard;
    int value = 0;
    std::vector<MoveValue> moves;
    uint64_t nodes = 0;
    double seconds = 0;
};
QueryReport query_report(Solver& solver, const Board& b, Rule rule);
std::string query_json(const QueryReport& q);

// A principal variation from `start` to the end of the game (`solve`'s object without the
// solver's figures): "position", "rule", "value", "result", "best", "best_turn", "pv",
// "score" (an object that `solve` puts its own fields around).
struct PvReport {
    Board start;
    Rule rule = Rule::Standard;
    int value = 0;
    std::vector<PlayedMove> pv;
    uint64_t nodes = 0;
    double seconds = 0;
};
PvReport pv_report(Solver& solver, const Board& start, Rule rule);
Json pv_fields(const PvReport& p);
// The web API's `pv` object: the fields above plus "nodes" and "seconds".
std::string pv_json(const PvReport& p);

// A principal variation from `start` as text: the first turn (the moves of the side to
// move up to its last extra move), the whole line, and the position it ends in.
struct PvText {
    std::string best_turn;
    std::string line;
    Board end;
};
PvText pv_text(const Board& start, const std::vector<PlayedMove>& pv, Rule rule);

// `pie`: every opening turn's value and the pie-rule value.
std::string pie_json(const PieReport& rep, const Board& start, Rule rule, uint64_t nodes,
                     double seconds);

// `show`: the position after `played`, the moves in full notation, side to move, score.
std::string show_json(const Board& b, Rule rule, const std::vector<PlayedMove>& played);

// The engine's move at a level (analysis.h, choose_move): "position", "rule", "level",
// "move" (null for a finished game), "value" (South's margin after it), "best" (every best
// move) and "position_after".
struct EngineMove {
    Board board;
    Rule rule = Rule::Standard;
    Level level = Level::Perfect;
    std::vector<MoveValue> moves;
    int chosen = -1;  // index into moves, -1 when the game is over
};
EngineMove engine_move(Solver& solver, const Board& b, Rule rule, Level level, Rng& rng);
std::string engine_move_json(const EngineMove& e);

}  // namespace kalah::analysis
