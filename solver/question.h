// One question about a game's value, settled by a single null-window test instead of the
// exact value: "does South win?" is "v >= +1?", which MTD(f) may take many passes to reach.
#pragma once

// v is South's final margin (docs/rules.md, "Value"). Every question is one of
//   lower:  v >= bound   (win: v >= 1; the published "at least +4": v >= 4)
//   upper:  v <= bound   (loss: v <= -1)
// and both are settled by one test "v >= beta?" for the position of s seeds in pits:
// v == s (mod 2), so v >= b  <=>  v >= (the least beta >= b of s's parity), and
// v <= b  <=>  not v >= b + 1. A test that proves v >= r (r >= beta) or v <= r (r < beta)
// answers the question and gives the bound r, which may be tighter than asked.

#include <optional>
#include <string>

#include "core/board.h"
#include "solver/search_experiments.h"

namespace kalah {

class KALAH_EXPERIMENTS_ABI Solver;  // the tag of the experiments build (search_experiments.h)

struct Question {
    bool lower = true;  // v >= bound; else v <= bound
    int bound = 1;

    // The threshold of the one test "v >= beta?" for a position of `seeds` seeds (mover's
    // view: South at the start of Kalah(m,n)).
    int beta(int seeds) const;
    // Whether the answer to "v >= beta(seeds)?" (true: v >= beta) makes the question true.
    bool proved_by(bool at_least_beta) const { return lower == at_least_beta; }
    // The question as written for people: ">= +2", "<= -1".
    std::string text() const;
    // A word for the question where it has one: "win" (v >= +1), "loss" (v <= -1),
    // "not a loss" (v >= 0), "not a win" (v <= 0); else "".
    std::string name() const;
};

// Parses "win", "loss", "v>=2", "v > 0", ">=+4", "v<=-2", "v<3" (spaces ignored); nothing
// for anything else or a bound outside [-1000, 1000].
std::optional<Question> parse_question(const std::string& text);

// "v >= +4", "v <= -2", "v <= +0": a proven bound on South's margin as people write it.
std::string bound_text(bool lower, int bound);

// The answer to a question about a position's value V (South's final margin, stores
// included; docs/rules.md, "Value"): one null-window test of the mover's pits value.
struct BoundAnswer {
    Question question;
    bool proved = false;  // the question is true; else it is refuted (its negation holds)
    // What the test proved of V, at least as tight as the answer: lower <= V <= upper
    // (the other side is the seed count's: -(s + stores)..; exact for a finished game).
    int lower = 0, upper = 0;
    // A move of the mover that keeps the answer the mover was after (the mover's side of
    // the question proved: South proving a lower bound, North an upper one): its pit
    // (0-based) and notation; -1 when the mover has no such move to show.
    int move = -1;
    std::string move_text;
    Question kept;  // the bound on V the move keeps (the mover's side of the test)
};

// Settles `q` for position b with one test (Solver::test); with find_move, then tests the
// mover's moves (the table's move first) for one that keeps it. The solver's limits apply
// (SearchStopped).
BoundAnswer settle(Solver& solver, const Board& b, Rule rule, const Question& q,
                   bool find_move = true);

}  // namespace kalah
