// The JSON objects of the commands, built in one place: the CLI's --json output and the
// web API of `kalah serve` (serve/api.h) call the same functions, so a field cannot mean
// two things in two places. README "JSON fields" lists the vocabulary.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/json.h"
#include "core/board.h"
#include "core/notation.h"
#include "solver/known.h"
#include "solver/question.h"
#include "solver/solver.h"

namespace kalah::analysis {

// The search's figures that every search command's output ends with: in JSON "nodes",
// "seconds", "nodes_per_second", "threads", "cpu_seconds", "tt_mib", "tt_budget_mib"; as
// text "nodes: N, seconds: S, nodes/s: R".
struct SearchFigures {
    uint64_t nodes = 0;
    double seconds = 0;
    int threads = 1;
    double cpu_seconds = 0;  // summed over the threads
    double tt_mib = 0;       // the table's size, and its budget
    size_t tt_budget_mib = 0;
    uint64_t nodes_per_second() const { return uint64_t(seconds > 0 ? nodes / seconds : 0); }
};
void add_search_figures(Json& j, const SearchFigures& f);
std::string search_figures_text(const SearchFigures& f);

// A question as the commands print it: "v >= +1 (win for South)", "v <= +3".
std::string question_text(const Question& q);

// Replays a record from b (updated) like kalah::replay, but an error names the ply:
// "ply 3: move 'A9' names pit 9 ...".
std::vector<PlayedMove> replay_plies(Board& b, const std::string& record, Rule rule);

// `query`: the value of b and of every legal move, known without a search (Solver::known:
// the solver's book or database holds them all, or the game is over) or searched by
// `solver` (nodes and seconds are those of this call only). Its JSON says which in
// "source" ("book", "database" or "search").
struct QueryReport {
    Board board;
    Rule rule = Rule::Standard;
    int value = 0;
    std::vector<MoveValue> moves;
    AnswerSource source = AnswerSource::Search;
    uint64_t nodes = 0;
    double seconds = 0;
};
struct QueryBounds;
// With `proven` (of the same board and rule), the position's bounds the search has proven
// so far are kept there, also when it stops (SearchStopped).
QueryReport query_report(Solver& solver, const Board& b, Rule rule, QueryBounds* proven = nullptr);
Json query_fields(const QueryReport& q);
std::string query_json(const QueryReport& q);  // query_fields as one line

// What is proven of a position's value and of each legal move's while `query` searches:
// bounds on South's final margin (stores included), lower == upper once exact. They start
// at what the seed counts alone prove and only tighten.
struct QueryBounds {
    struct Move {
        int pit = 0;
        std::string text;  // notation, as in query's "moves"
        int lower = 0, upper = 0;
    };
    Board board;
    Rule rule = Rule::Standard;
    int lower = 0, upper = 0;
    std::vector<Move> moves;  // every legal move, in pit order
    uint64_t nodes = 0;       // searched so far for these bounds
    double seconds = 0;
    QueryBounds(const Board& b, Rule rule);
    bool exact() const { return lower == upper; }
    // Tightens the position's bounds by one MTD(f) pass of its own search.
    void add_pass(const MtdPass& p);
};

// The object of a query whose search stopped at its budget: "position", "rule",
// "unknown": true, "reason", "budget_ms", "lower" and "upper" (the position's proven
// bounds), "moves" (each move's: "move", "lower", "upper"), "nodes", "seconds".
Json query_unknown_fields(const QueryBounds& q, const std::string& reason, int budget_ms);

// `query` as a stream of events, each handed to `event` as it is proven (docs/json.md,
// "Analysis stream"): {"event": "bound"} after every MTD(f) pass of the position, then
// {"event": "move"} after every pass of each move's search (and once for a move valued
// without one), last query_fields' object with "event": "value" (nodes and seconds those
// of the whole stream). `bounds` (of the same board and rule) holds what is proven, also
// after a stop. `event` returning false stops the search (SearchStopped), as do the
// solver's stop and limits.
void query_stream(Solver& solver, QueryBounds& bounds,
                  const std::function<bool(const Json&)>& event);

// Sets the solver's pass hook (Solver::set_pass_hook) for one scope.
class PassHook {
  public:
    PassHook(Solver& s, std::function<void(const MtdPass&)> hook) : s_(s) {
        s_.set_pass_hook(std::move(hook));
    }
    ~PassHook() { s_.set_pass_hook({}); }
    PassHook(const PassHook&) = delete;
    PassHook& operator=(const PassHook&) = delete;

  private:
    Solver& s_;
};

// A principal variation from `start` to the end of the game (`solve`'s object without the
// solver's figures): "position", "rule", "value", "result", "source" (of the value:
// Solver::known_value, else "search"; the line past what the book and database hold is
// searched), "best", "best_turn", "pv", "score" (an object that `solve` puts its own
// fields around).
struct PvReport {
    Board start;
    Rule rule = Rule::Standard;
    int value = 0;
    AnswerSource source = AnswerSource::Search;
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
// move), "position_after" and "source" (of the moves' values, as query's).
struct EngineMove {
    Board board;
    Rule rule = Rule::Standard;
    Level level = Level::Perfect;
    std::vector<MoveValue> moves;
    AnswerSource source = AnswerSource::Search;
    int chosen = -1;  // index into moves, -1 when the game is over
};
EngineMove engine_move(Solver& solver, const Board& b, Rule rule, Level level, Rng& rng);
std::string engine_move_json(const EngineMove& e);

}  // namespace kalah::analysis
