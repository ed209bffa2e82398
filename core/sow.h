// The sowing tables and the move of a fixed pit count on raw cells: Board::play's kernel,
// shared with the hot loops that keep their positions as Cells (the database builder).
#pragma once

#include <cstdint>

#include "core/board.h"

namespace kalah::sow {

// Everything play() needs about sowing k seeds from pit p, in one 64-byte entry so that
// a single (usually L1-resident: small k dominate) load follows the read of k. Masks are
// split in the low and high 64 bits of the cells; "last" is the slot of the last seed.
struct alignas(64) Sow {
    Cells delta;        // add to cells: -k at p, +1 per seed on the circuit (see board.h)
    uint64_t own_mask;  // 0xff at byte last when last is a mover's pit, else 0
    uint64_t own_one;   // 1 at byte last when last is a mover's pit, else 1 (never equal
                        // to x & own_mask = 0, so "the pit was empty" is false elsewhere)
    uint64_t opp_lo;    // 0xff at the byte of the facing pit (slot 2m-last), own pits only
    uint64_t opp_hi;
    uint64_t opp_shift;  // bit offset of that byte within its 64-bit half
    uint64_t stay;       // all ones when last is the mover's store (extra move), else 0
};
static_assert(sizeof(Sow) == 64);

// Per-m constants: masks of the rows and the sowing table.
struct Geometry {
    Cells own_row = 0;    // bytes 0..m-1
    Cells pits = 0;       // bytes 0..m-1 and m+1..2m
    uint64_t row_lo = 0;  // m low bytes set to 0xff (a row shifted down to byte 0)
    Sow sow[kMaxPits][kMaxSeeds + 1];
};

struct Tables {
    Geometry g[kMaxPits + 1];
    Tables();
};

extern const Tables kSowTables;

// Sum of the bytes of x (each < 128, total < 256).
inline int byte_sum(uint64_t x) { return static_cast<int>((x * 0x0101010101010101ull) >> 56); }

// Bit i set when byte i of row (the bytes of one row, each < 128) is not zero: the legal
// moves of a row.
inline unsigned nonempty_mask(uint64_t row) {
    constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full;
    const uint64_t nz = (((row & kLow7) + kLow7) | row) & 0x8080808080808080ull;
    // Gather bit 7 of each byte into bits 0..7.
    return static_cast<unsigned>(((nz >> 7) * 0x0102040810204080ull) >> 56);
}

// The result as one integer (bytes: extra, over, captured, as in MoveResult). For a
// struct of two bools and a byte GCC otherwise assembles the return value in memory and
// reloads it, a store-forwarding stall on the hot path.
inline uint32_t result_bits(bool extra, bool over, uint8_t captured) {
    return uint32_t(extra) | uint32_t(over) << 8 | uint32_t(captured) << 16;
}

// Board::play for a fixed m, so that every shift and table offset is a constant; the
// switch on m in Board::play is perfectly predicted (m never changes within a game).
// Branch-light: extra moves and captures on random positions are unpredictable, so
// both are applied through masks; only the rare game end branches. Works on the two
// 64-bit halves: the mover's pits and store (slots 0..m <= 6) lie in the low half.
template <int M>
[[gnu::always_inline]] inline uint32_t play_fixed(Cells& cells, Side& to_move, int pit, Rule rule) {
    static_assert(M >= 1 && M <= 6, "slots 0..M must lie in the low 64 bits");
    constexpr int kHalf = 8 * (M + 1);  // bits of a row and its store
    // The lifted count read straight from memory (byte `pit`, little-endian layout),
    // in parallel with the load of the whole cells.
    const int k = reinterpret_cast<const uint8_t*>(&cells)[pit];
    const Sow& sw = kSowTables.g[M].sow[pit][k];
    const Cells c = cells + sw.delta;
    uint64_t lo = static_cast<uint64_t>(c);
    uint64_t hi = static_cast<uint64_t>(c >> 64);
    // Last seed in a mover's pit that was empty: that pit now holds exactly 1.
    const bool landed_empty = (lo & sw.own_mask) == sw.own_one;
    // Seeds in the facing pit: only its byte survives the masks.
    const uint64_t opp = (((lo & sw.opp_lo) | (hi & sw.opp_hi)) >> sw.opp_shift) & 0xff;
    const bool capture = landed_empty & ((opp != 0) | (rule == Rule::EmptyCapture));
    const uint64_t take = uint64_t(0) - uint64_t(capture);  // all ones when capturing
    lo &= ~((sw.own_mask | sw.opp_lo) & take);
    hi &= ~(sw.opp_hi & take);
    lo += ((opp + 1) << (8 * M)) & take;
    const bool extra = sw.stay != 0;
    const auto captured = static_cast<uint8_t>((opp + 1) & take);
    constexpr uint64_t kOwnRow = (uint64_t(1) << (8 * M)) - 1;
    const Cells opp_row_cells = Cells(kOwnRow) << kHalf;
    const bool own_empty = (lo & kOwnRow) == 0;
    const bool opp_empty = ((lo & static_cast<uint64_t>(opp_row_cells)) |
                            (hi & static_cast<uint64_t>(opp_row_cells >> 64))) == 0;
    if (__builtin_expect(own_empty | opp_empty, 0)) {
        // Game over: each side sweeps its row into its store; the view is unchanged.
        const Cells now = (Cells(hi) << 64) | lo;
        const uint64_t own_seeds = byte_sum(lo & kOwnRow);
        const uint64_t opp_seeds = byte_sum(static_cast<uint64_t>(now >> kHalf) & kOwnRow);
        cells = (now & ~(Cells(kOwnRow) | opp_row_cells)) + (Cells(own_seeds) << (8 * M)) +
                (Cells(opp_seeds) << (8 * (2 * M + 1)));
        return result_bits(false, true, captured);
    }
    // Turn passes unless extra: swap the halves (a row and its store each), branch-free.
    // Only bytes 0..2M+1 can be non-zero, so the shifts lose nothing.
    constexpr uint64_t kFirst = (uint64_t(1) << kHalf) - 1;
    const uint64_t first = lo & kFirst;
    const uint64_t f_lo = (lo >> kHalf) | (hi << (64 - kHalf)) | (first << kHalf);
    const uint64_t f_hi = (hi >> kHalf) | (first >> (64 - kHalf));
    lo = (lo & sw.stay) | (f_lo & ~sw.stay);
    hi = (hi & sw.stay) | (f_hi & ~sw.stay);
    cells = (Cells(hi) << 64) | lo;
    to_move = static_cast<Side>(static_cast<uint8_t>(to_move) ^ static_cast<uint8_t>(!extra));
    return result_bits(extra, false, captured);
}

}  // namespace kalah::sow
