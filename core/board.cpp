// Board construction, SWAR sowing tables and move application.
#include "core/board.h"

#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "core/sow.h"

namespace kalah {

namespace sow {

Tables::Tables() {
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
                Sow& sw = geo.sow[p][k];
                // Signed per-slot changes, accumulated as exact integer arithmetic
                // modulo 2^128 (valid because every result byte stays in 0..255).
                int change[2 * kMaxPits + 1] = {};
                change[p] -= k;
                for (int j = 1; j <= k; ++j) change[(p + j) % len] += 1;
                Cells d = 0;
                for (int s = 0; s < len; ++s) {
                    const int size = change[s] < 0 ? -change[s] : change[s];
                    Cells term = Cells(static_cast<unsigned>(size)) << (8 * s);
                    d = change[s] < 0 ? d - term : d + term;
                }
                sw.delta = d;
                const int last = (p + k) % len;
                const bool own_pit = last < m;
                const int facing = 2 * m - last;
                const Cells opp = own_pit ? Cells(0xff) << (8 * facing) : 0;
                sw.own_mask = own_pit ? uint64_t(0xff) << (8 * last) : 0;
                sw.own_one = own_pit ? uint64_t(1) << (8 * last) : 1;
                sw.opp_lo = static_cast<uint64_t>(opp);
                sw.opp_hi = static_cast<uint64_t>(opp >> 64);
                sw.opp_shift = own_pit ? static_cast<uint64_t>(8 * (facing % 8)) : 0;
                sw.stay = last == m ? ~uint64_t(0) : 0;
            }
        }
    }
}

const Tables kSowTables;

}  // namespace sow

namespace {

using sow::byte_sum;
using sow::kSowTables;

}  // namespace

Board Board::start(int m, int n) {
    int south[kMaxPits], north[kMaxPits];
    for (int i = 0; i < m && i < kMaxPits; ++i) south[i] = north[i] = n;
    return from_rows(m, south, north, 0, 0, Side::South);
}

Board Board::from_rows(int m, const int* south, const int* north, int store_south, int store_north,
                       Side to_move) {
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

Cells Board::own_row() const { return cells_ & kSowTables.g[m_].own_row; }
Cells Board::opp_row() const { return (cells_ >> (8 * (m_ + 1))) & kSowTables.g[m_].own_row; }

int Board::seeds_in_row_own() const { return byte_sum(static_cast<uint64_t>(own_row())); }
int Board::seeds_in_row_opp() const { return byte_sum(static_cast<uint64_t>(opp_row())); }
int Board::seeds_in_pits() const { return seeds_in_row_own() + seeds_in_row_opp(); }

unsigned Board::legal_mask() const { return sow::nonempty_mask(static_cast<uint64_t>(own_row())); }

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
    cells_ &= ~kSowTables.g[m].pits;
    cells_ += (Cells(own) << (8 * m)) + (Cells(opp) << (8 * (2 * m + 1)));
}

void Board::flip() {
    const int m = m_;
    const int half = 8 * (m + 1);  // a row and its store: the width of one half
    const Cells half_mask = (Cells(1) << half) - 1;
    cells_ = ((cells_ >> half) & half_mask) | ((cells_ & half_mask) << half);
    to_move_ = other(to_move_);
}

namespace {

inline MoveResult make_result(uint32_t bits) {
    static_assert(sizeof(MoveResult) == 3 && offsetof(MoveResult, extra) == 0 &&
                  offsetof(MoveResult, over) == 1 && offsetof(MoveResult, captured) == 2);
    MoveResult r;
    std::memcpy(static_cast<void*>(&r), &bits, sizeof r);  // little-endian, like the cells
    return r;
}

}  // namespace

MoveResult Board::play(int pit, Rule rule) {
    uint32_t bits;
    switch (m_) {
        case 1:
            bits = sow::play_fixed<1>(cells_, to_move_, pit, rule);
            break;
        case 2:
            bits = sow::play_fixed<2>(cells_, to_move_, pit, rule);
            break;
        case 3:
            bits = sow::play_fixed<3>(cells_, to_move_, pit, rule);
            break;
        case 4:
            bits = sow::play_fixed<4>(cells_, to_move_, pit, rule);
            break;
        case 5:
            bits = sow::play_fixed<5>(cells_, to_move_, pit, rule);
            break;
        default:
            bits = sow::play_fixed<6>(cells_, to_move_, pit, rule);
            break;
    }
    return make_result(bits);
}

Cells Board::pits_key() const { return cells_ & kSowTables.g[m_].pits; }

Board Board::without_stores() const {
    Board b = *this;
    b.cells_ = pits_key();
    return b;
}

}  // namespace kalah
