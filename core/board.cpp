// Board construction, SWAR sowing tables and move application.
#include "core/board.h"

#include <stdexcept>

namespace kalah {
namespace {

constexpr uint64_t kLowBytes7 = 0x7f7f7f7f7f7f7f7full;
constexpr uint64_t kHighBits = 0x8080808080808080ull;

// Per-m constants: masks of the rows and the sowing deltas.
struct Geometry {
    Cells own_row = 0;  // bytes 0..m-1
    Cells pits = 0;     // bytes 0..m-1 and m+1..2m
    uint64_t row_lo = 0;  // m low bytes set to 0xff (a row shifted down to byte 0)
    // delta[p][k]: add to cells to sow k seeds from slot p (see board.h).
    Cells delta[kMaxPits][kMaxSeeds + 1];
    uint8_t last[kMaxPits][kMaxSeeds + 1];  // slot of the last seed
};

struct Tables {
    Geometry g[kMaxPits + 1];
    Tables() {
        for (int m = 1; m <= kMaxPits; ++m) {
            Geometry& geo = g[m];
            const int len = 2 * m + 1;
            for (int i = 0; i < m; ++i) {
                geo.own_row |= Cells(0xff) << (8 * i);
                geo.row_lo |= uint64_t(0xff) << (8 * i);
            }
            geo.pits = geo.own_row | (geo.own_row << (8 * (m + 1)));
            for (int p = 0; p < m; ++p) {
                for (int k = 0; k <= kMaxSeeds; ++k) {
                    // Signed per-slot changes, accumulated as exact integer arithmetic
                    // modulo 2^128 (valid because every result byte stays in 0..255).
                    int change[2 * kMaxPits + 1] = {};
                    change[p] -= k;
                    for (int j = 1; j <= k; ++j) change[(p + j) % len] += 1;
                    Cells d = 0;
                    for (int s = 0; s < len; ++s) {
                        Cells term = Cells(static_cast<unsigned>(change[s] < 0 ? -change[s] : change[s]))
                                     << (8 * s);
                        d = change[s] < 0 ? d - term : d + term;
                    }
                    geo.delta[p][k] = d;
                    geo.last[p][k] = static_cast<uint8_t>((p + k) % len);
                }
            }
        }
    }
};

const Tables kTables;

// Sum of the bytes of x (each < 128, total < 256).
inline int byte_sum(uint64_t x) { return static_cast<int>((x * 0x0101010101010101ull) >> 56); }

}  // namespace

Board Board::start(int m, int n) {
    int south[kMaxPits], north[kMaxPits];
    for (int i = 0; i < m && i < kMaxPits; ++i) south[i] = north[i] = n;
    return from_rows(m, south, north, 0, 0, Side::South);
}

Board Board::from_rows(int m, const int* south, const int* north, int store_south,
                       int store_north, Side to_move) {
    if (m < 1 || m > kMaxPits) throw std::invalid_argument("pits per side must be 1..6");
    long total = static_cast<long>(store_south) + store_north;
    if (store_south < 0 || store_north < 0) throw std::invalid_argument("negative store");
    for (int i = 0; i < m; ++i) {
        if (south[i] < 0 || north[i] < 0) throw std::invalid_argument("negative pit count");
        total += static_cast<long>(south[i]) + north[i];
    }
    if (total > kMaxSeeds)
        throw std::invalid_argument("too many seeds: at most " + std::to_string(kMaxSeeds) +
                                    " on the board");
    Board b;
    b.m_ = static_cast<uint8_t>(m);
    b.to_move_ = to_move;
    const int* own = to_move == Side::South ? south : north;
    const int* opp = to_move == Side::South ? north : south;
    for (int i = 0; i < m; ++i) {
        b.cells_ |= Cells(own[i]) << (8 * i);
        b.cells_ |= Cells(opp[i]) << (8 * (m + 1 + i));
    }
    b.cells_ |= Cells(to_move == Side::South ? store_south : store_north) << (8 * m);
    b.cells_ |= Cells(to_move == Side::South ? store_north : store_south) << (8 * (2 * m + 1));
    return b;
}

Cells Board::own_row() const { return cells_ & kTables.g[m_].own_row; }
Cells Board::opp_row() const { return (cells_ >> (8 * (m_ + 1))) & kTables.g[m_].own_row; }

int Board::seeds_in_row_own() const { return byte_sum(static_cast<uint64_t>(own_row())); }
int Board::seeds_in_row_opp() const { return byte_sum(static_cast<uint64_t>(opp_row())); }
int Board::seeds_in_pits() const { return seeds_in_row_own() + seeds_in_row_opp(); }

unsigned Board::legal_mask() const {
    // High bit of each non-zero byte, then gather the bits.
    uint64_t x = static_cast<uint64_t>(own_row());
    uint64_t nz = (((x & kLowBytes7) + kLowBytes7) | x) & kHighBits;
    nz &= kTables.g[m_].row_lo;
    // Gather bit 7 of each byte into bits 0..7.
    return static_cast<unsigned>(((nz >> 7) * 0x0102040810204080ull) >> 56);
}

MoveList Board::legal_moves() const {
    MoveList list;
    for (unsigned mask = legal_mask(); mask; mask &= mask - 1)
        list.pit[list.size++] = static_cast<uint8_t>(__builtin_ctz(mask));
    return list;
}

void Board::sweep() {
    const int m = m_;
    int own = seeds_in_row_own();
    int opp = seeds_in_row_opp();
    cells_ &= ~kTables.g[m].pits;
    cells_ += (Cells(own) << (8 * m)) + (Cells(opp) << (8 * (2 * m + 1)));
}

void Board::flip() {
    const int m = m_;
    const int half = 8 * (m + 1);  // a row and its store: the width of one half
    const Cells half_mask = (Cells(1) << half) - 1;
    cells_ = ((cells_ >> half) & half_mask) | ((cells_ & half_mask) << half);
    to_move_ = other(to_move_);
}

MoveResult Board::play(int pit, Rule rule) {
    const Geometry& geo = kTables.g[m_];
    const int m = m_;
    const int k = slot(pit);
    cells_ += geo.delta[pit][k];
    const int last = geo.last[pit][k];
    MoveResult r;
    if (last == m) {
        r.extra = true;
    } else if (last < m && slot(last) == 1) {
        const int facing = 2 * m - last;
        const int opp = slot(facing);
        if (opp > 0 || rule == Rule::EmptyCapture) {
            cells_ &= ~((Cells(0xff) << (8 * last)) | (Cells(0xff) << (8 * facing)));
            cells_ += Cells(opp + 1) << (8 * m);
            r.captured = static_cast<uint8_t>(opp + 1);
        }
    }
    if (over()) {
        sweep();
        r.over = true;
        r.extra = false;
        return r;
    }
    if (!r.extra) flip();
    return r;
}

Cells Board::pits_key() const { return cells_ & kTables.g[m_].pits; }

Board Board::without_stores() const {
    Board b = *this;
    b.cells_ = pits_key();
    return b;
}

}  // namespace kalah
