// Analysis for players on top of the exact solver: opening turns and the pie rule, game
// annotation (?/??), and the engine's playing levels.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "analysis/json.h"
#include "core/board.h"
#include "core/notation.h"
#include "solver/solver.h"

namespace kalah::analysis {

// ---- Opening turns and the pie rule (rules.md "Pie rule") -------------------------------

// One complete turn of the side to move: a move and every chained extra move.
struct Turn {
    std::vector<PlayedMove> moves;
    std::string text;  // notation, e.g. "A3+ A6"
    Board after;       // the position it leaves: the opponent to move, or the game over
};

// Every distinct complete turn of the side to move in b, depth-first in pit order.
// Empty for a finished game.
std::vector<Turn> enumerate_turns(const Board& b, Rule rule);

// One opening of the pie analysis. V (South's final margin, stores included) is the value
// of the position the opening leaves; North keeps its seat when V < 0, swaps when V > 0
// (either when V = 0), and so gets |V|: the opener's pie-rule value is -|V|.
struct PieRow {
    Turn opening;
    int value;      // V, South's margin
    int pie_value;  // -|V|, the opener's margin under the pie rule
};
struct PieReport {
    std::vector<PieRow> rows;     // in enumerate_turns order
    std::vector<size_t> fairest;  // indices of the rows with the smallest |V|
    int pie_value = 0;            // -min |V|: the game's value for the opener under the pie rule
    int plain_value = 0;          // max V: the game's value without the pie rule
};
// The opener must be South (the first player) and the game not over.
PieReport pie_analysis(Solver& solver, const Board& start, Rule rule);

// ---- Annotation ---------------------------------------------------------------------------

// A move is a mistake (`?`) when it loses seeds against the best move but the result for the
// mover (win / draw / loss under perfect play afterwards) stays the same, and a blunder (`??`)
// when it changes that result.
enum class Mark : uint8_t { None, Mistake, Blunder };
const char* mark_text(Mark m);  // "", "?", "??"

struct MoveNote {
    int ply = 0;  // 1-based index of the move in the record (each extra move counts)
    PlayedMove move;
    Board before;
    int before_value = 0;  // South's margin with perfect play from `before` (the best move)
    int after_value = 0;   // South's margin after the move played and perfect play
    std::vector<std::string> best;  // every best move, in notation
    int loss = 0;                   // seeds the move gave away, mover's view; 0 if best
    Mark mark = Mark::None;
};

struct PlayerSummary {
    int moves = 0;
    int best = 0;  // moves that kept the value
    int mistakes = 0;
    int blunders = 0;
    int total_loss = 0;  // seeds given away in total
    int worst = -1;      // index in Annotation::notes of the biggest loss (first one), -1 if none
    double accuracy() const { return moves ? double(best) / moves : 1.0; }
};

struct Annotation {
    Board start;
    Board end;
    int end_value = 0;  // South's margin at the end of the record (final score if over)
    std::vector<MoveNote> notes;
    PlayerSummary player[2];  // indexed by Side
};

Annotation annotate_game(Solver& solver, const Board& start, const std::vector<PlayedMove>& moves,
                         Rule rule);
// Human-readable table and per-player summary; `only` restricts the move lines (and the
// summary) to one side, e.g. the person's moves after a game of `kalah play`.
std::string format_annotation(const Annotation& a, const Side* only = nullptr);
std::string annotation_json(const Annotation& a, Rule rule);

// A game record file: moves in notation separated by white space; `;` starts a comment that
// runs to the end of the line, and move numbers such as `12.` are ignored.
std::string read_record_file(const std::string& path);

// ---- Engine levels ------------------------------------------------------------------------

// How far the engine strays from perfect play. On each of its moves the engine deviates with
// probability `deviate`: it then plays a uniformly chosen non-best move that loses at most
// `max_loss` seeds (any move if max_loss < 0); if there is none it plays a best move.
// Otherwise it plays a best move, ties broken at random.
enum class Level : uint8_t { Easy, Medium, Hard, Perfect };
struct LevelSpec {
    Level level;
    const char* name;
    double deviate;
    int max_loss;
};
const LevelSpec& level_spec(Level l);
Level parse_level(const std::string& text);  // throws InputError

// A small reproducible generator (same sequence on every platform for a given seed).
class Rng {
  public:
    explicit Rng(uint64_t seed) : gen_(seed) {}
    uint64_t below(uint64_t n) { return gen_() % n; }
    double unit() { return double(gen_() >> 11) * 0x1.0p-53; }

  private:
    std::mt19937_64 gen_;
};

// Picks the engine's move (index into mv) for the side `mover`.
size_t choose_move(const std::vector<MoveValue>& mv, Side mover, Level level, Rng& rng);

// ---- Values ------------------------------------------------------------------------------

int for_side(int south_margin, Side s);  // the margin seen by s

}  // namespace kalah::analysis
