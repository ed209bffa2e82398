// Slow, obviously-correct reference Kalah engine (plain arrays, seed by seed) for tests.
#pragma once

// This engine shares no code with core/board.*: it walks the circuit of rules.md one seed
// at a time, using absolute sides (a = South's row A1..Am, b = North's row B1..Bm). Only
// the conversions from_board/to_board and the Rule/Board types touch the core.

#include <stdexcept>
#include <vector>

#include "core/board.h"

namespace ref {

struct Pos {
    int m;
    int a[6];  // South's pits A1..Am (0-based index i is A(i+1))
    int b[6];  // North's pits B1..Bm
    int store_a;
    int store_b;
    bool south_to_move;
};

// Same meaning as kalah::MoveResult.
struct Result {
    bool extra;
    bool over;
    int captured;
};

inline Pos start(int m, int n) {
    Pos p{};
    p.m = m;
    for (int i = 0; i < m; ++i) p.a[i] = p.b[i] = n;
    p.store_a = p.store_b = 0;
    p.south_to_move = true;
    return p;
}

inline bool row_empty(const int* row, int m) {
    for (int i = 0; i < m; ++i)
        if (row[i] != 0) return false;
    return true;
}

// The game is over when either row is empty.
inline bool over(const Pos& p) { return row_empty(p.a, p.m) || row_empty(p.b, p.m); }

// Non-empty pits of the side to move (0-based), ascending. Like Board::legal_moves this
// does not look at over(); callers stop at the end of the game.
inline std::vector<int> legal(const Pos& p) {
    const int* own = p.south_to_move ? p.a : p.b;
    std::vector<int> out;
    for (int i = 0; i < p.m; ++i)
        if (own[i] > 0) out.push_back(i);
    return out;
}

// Plays pit `pit` (0-based) of the side to move, which must be non-empty.
inline Result play(Pos& p, int pit, kalah::Rule rule) {
    const int m = p.m;
    int* own = p.south_to_move ? p.a : p.b;
    int* opp = p.south_to_move ? p.b : p.a;
    int* own_store = p.south_to_move ? &p.store_a : &p.store_b;
    if (pit < 0 || pit >= m || own[pit] == 0) throw std::logic_error("ref::play: illegal move");

    // The mover's circuit, in sowing order: own pits, own store, opponent's pits.
    // The opponent's store is not on it.
    std::vector<int*> circuit;
    for (int i = 0; i < m; ++i) circuit.push_back(&own[i]);
    circuit.push_back(own_store);
    for (int i = 0; i < m; ++i) circuit.push_back(&opp[i]);

    int seeds = own[pit];
    own[pit] = 0;
    int pos = pit;              // index in circuit of the slot that got the latest seed
    int before_last_drop = -1;  // count of the last slot just before its final seed
    while (seeds > 0) {
        pos = (pos + 1) % static_cast<int>(circuit.size());
        before_last_drop = *circuit[pos];
        *circuit[pos] += 1;
        seeds -= 1;
    }

    Result r{false, false, 0};
    if (pos == m) {
        r.extra = true;  // last seed in the mover's store
    } else if (pos < m && before_last_drop == 0) {
        // Last seed in an own pit that was empty: opposite of own[i] is opp[m-1-i].
        int& facing = opp[m - 1 - pos];
        if (facing > 0 || rule == kalah::Rule::EmptyCapture) {
            r.captured = facing + 1;
            *own_store += facing + 1;
            facing = 0;
            own[pos] = 0;
        }
    }

    if (over(p)) {
        for (int i = 0; i < m; ++i) {
            p.store_a += p.a[i];
            p.a[i] = 0;
            p.store_b += p.b[i];
            p.b[i] = 0;
        }
        r.over = true;
        r.extra = false;
        return r;  // side to move unchanged, as Board::play leaves the view unchanged
    }
    if (!r.extra) p.south_to_move = !p.south_to_move;
    return r;
}

inline Pos from_board(const kalah::Board& bd) {
    Pos p{};
    p.m = bd.pits();
    for (int i = 0; i < p.m; ++i) {
        p.a[i] = bd.pit(kalah::Side::South, i);
        p.b[i] = bd.pit(kalah::Side::North, i);
    }
    p.store_a = bd.store(kalah::Side::South);
    p.store_b = bd.store(kalah::Side::North);
    p.south_to_move = bd.to_move() == kalah::Side::South;
    return p;
}

inline kalah::Board to_board(const Pos& p) {
    return kalah::Board::from_rows(p.m, p.a, p.b, p.store_a, p.store_b,
                                   p.south_to_move ? kalah::Side::South : kalah::Side::North);
}

inline bool operator==(const Pos& x, const Pos& y) {
    if (x.m != y.m || x.store_a != y.store_a || x.store_b != y.store_b ||
        x.south_to_move != y.south_to_move)
        return false;
    for (int i = 0; i < x.m; ++i)
        if (x.a[i] != y.a[i] || x.b[i] != y.b[i]) return false;
    return true;
}

}  // namespace ref
