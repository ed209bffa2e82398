// The transposition table's key and what a probe finds (solver/tt.h), apart from the
// table so that its private entry layout (solver/tt_entry.h) can use them.
#pragma once

#include <cstdint>

#include "core/board.h"

namespace kalah {

// The key of a pits-only position, mover's view: the 2m pit counts (each < 128) packed
// one byte each, the mover's pits P0..Pm-1 in bytes 0..m-1 and the opponent's Q0..Qm-1 in
// bytes m..2m-1 (the store byte of Board::cells removed). 2m <= 12 bytes: `lo` holds bytes
// 0..7, `hi` bytes 8..11. Two different positions of the same m never share a key.
// `hash` mixes lo and hi once for the key's bucket (and the parallel search's busy
// table): a search probes, prefetches and stores a key several times, and mixing it anew
// each time cost more than carrying it (results/solver.md, "A key carries its hash").
// Build keys with of() or from_parts(), never field by field. No member
// initializers: a node's expansion holds a dozen keys it fills before use.
struct TTKey {
    uint64_t lo;
    uint32_t hi;
    uint64_t hash;
    static TTKey of(const Board& b);                    // b's pits (stores ignored)
    static TTKey of_pits(const Board& b);               // the same, for b with empty stores
    static TTKey from_parts(uint64_t lo, uint32_t hi);  // the key of those bytes
};

// What a probe found. Bounds are on the exact pit value v (mover's view):
// lower <= v <= upper. Without an entry: found = false, lower = -127, upper = 127.
struct TTProbe {
    bool found = false;
    int lower = -127;
    int upper = 127;
    int move = -1;  // best (or refuting) pit, -1 if none
};

}  // namespace kalah
