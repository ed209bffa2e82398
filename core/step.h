// One move and what it does to the value: the move rule's arithmetic, written once.
#pragma once

#include "core/board.h"

namespace kalah {

// The value convention (rules.md): the value of a position, seen by the side to move, is
// its store difference (own store minus the opponent's) plus v(pits), the value of the
// seeds still in pits. A move changes the store difference by its gain and leaves a
// child position whose mover is the same side (extra turn) or the opponent; a move that
// ends the game sweeps the rows, and its gain is then the whole rest of the game.
//
// Values of positions with s seeds in pits have the parity of s (every seed ends in one
// store), so a test "v >= beta" has the same answer as the test at the next beta of that
// parity (round_up); a bound "v <= r" the same as at the previous one (round_down).
struct MoveStep {
    int gain = 0;          // change of the mover's store difference made by the move
    bool extra = false;    // the mover moves again (the game goes on)
    bool over = false;     // the game ended; gain includes the swept rows, there is no child
    uint8_t captured = 0;  // as MoveResult::captured

    // What Board::play said (for the notation).
    MoveResult result() const { return {extra, over, captured}; }

    // The parent's value (mover's view) from the child's value v (the child's mover's
    // view), the game not over.
    int value(int v) const { return extra ? gain + v : gain - v; }
    // The child's value from the parent's: value()'s inverse.
    int child_value(int v) const { return extra ? v - gain : gain - v; }
    // The parent's bounds from the child's bounds [lo, hi].
    int lower(int lo, int hi) const { return extra ? gain + lo : gain - hi; }
    int upper(int lo, int hi) const { return extra ? gain + hi : gain - lo; }
    // The child's window for the parent's window (alpha, beta): the parent's value is in
    // (alpha, beta) iff the child's is in the returned window.
    struct Window {
        int alpha, beta;
    };
    Window child_window(int alpha, int beta) const {
        return extra ? Window{alpha - gain, beta - gain} : Window{gain - beta, gain - alpha};
    }
    // The child's threshold for the parent's null-window test "value >= beta": after an
    // extra move the parent's answer is the child's answer to "v >= child_beta(beta)",
    // otherwise its negation (gain - v >= beta  <=>  not v >= gain - beta + 1).
    int child_beta(int beta) const { return extra ? beta - gain : gain - beta + 1; }
};

// Plays pit (must be legal) on b and returns the step; b is afterwards seen from whoever
// moves next, as after Board::play. The gain is measured as the change of the store
// difference, so b's stores need not be empty.
inline MoveStep play_step(Board& b, int pit, Rule rule) {
    const Board before = b;
    const MoveResult r = b.play(pit, rule);
    MoveStep s;
    s.extra = r.extra;
    s.over = r.over;
    s.captured = r.captured;
    if (r.over)  // the rows were swept into both stores; the view is unchanged
        s.gain = b.own_store() - b.opp_store() - (before.own_store() - before.opp_store());
    else  // only the mover's store grew; after a move that passes the turn it is opp
        s.gain = (r.extra ? b.own_store() : b.opp_store()) - before.own_store();
    return s;
}

// The gain of a move played on a board whose stores were empty (a pits-only position, as
// the search, the proof tree and the database builder see them), from the stores after the
// move (the mover's view) and what Board::play said; the builder's kernel, which keeps raw
// cells, calls it so.
[[gnu::always_inline]] inline int gain_from_stores(int own_store, int opp_store, bool extra,
                                                   bool over) {
    if (over) return own_store - opp_store;
    // Only the mover's store grew; after a move that passes the turn it is opp.
    return extra ? own_store : opp_store;
}
// The same from the board after the move: the search's hot path takes it without a
// MoveStep.
[[gnu::always_inline]] inline int gain_from_pits(const Board& after, MoveResult r) {
    return gain_from_stores(after.own_store(), after.opp_store(), r.extra, r.over);
}

// play_step for a board whose stores are empty: the same step, without reading the
// stores before the move.
[[gnu::always_inline]] inline MoveStep play_step_from_pits(Board& pits, int pit, Rule rule) {
    const MoveResult r = pits.play(pit, rule);
    MoveStep s;
    s.gain = gain_from_pits(pits, r);
    s.extra = r.extra;
    s.over = r.over;
    s.captured = r.captured;
    return s;
}

// The smallest r' >= r, and the largest r' <= r, of the parity of seeds.
inline int round_up(int seeds, int r) { return ((r - seeds) & 1) ? r + 1 : r; }
inline int round_down(int seeds, int r) { return ((r - seeds) & 1) ? r - 1 : r; }

}  // namespace kalah
