// Board construction, SWAR sowing tables and move application.
#include "core/board.h"

#include <cstddef>
#include <cstring>
#include <stdexcept>

namespace kalah {
namespace {

constexpr uint64_t kLowBytes7 = 0x7f7f7f7f7f7f7f7full;
constexpr uint64_t kHighBits = 0x8080808080808080ull;

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

namespace {

// Board::play for a fixed m, so that every shift and table offset is a constant; the
// switch on m in Board::play is perfectly predicted (m never changes within a game).
// Branch-light: extra moves and captures on random positions are unpredictable, so
// both are applied through masks; only the rare game end branches. Works on the two
// 64-bit halves: the mover's pits and store (slots 0..m <= 6) lie in the low half.
// The result as one integer (bytes: extra, over, captured, as in MoveResult). For a
// struct of two bools and a byte GCC otherwise assembles the return value in memory and
// reloads it, a store-forwarding stall on the hot path.
inline uint32_t result_bits(bool extra, bool over, uint8_t captured) {
    return uint32_t(extra) | uint32_t(over) << 8 | uint32_t(captured) << 16;
}

inline MoveResult make_result(uint32_t bits) {
    static_assert(sizeof(MoveResult) == 3 && offsetof(MoveResult, extra) == 0 &&
                  offsetof(MoveResult, over) == 1 && offsetof(MoveResult, captured) == 2);
    MoveResult r;
    std::memcpy(static_cast<void*>(&r), &bits, sizeof r);  // little-endian, like the cells
    return r;
}

template <int M>
uint32_t play_fixed(Cells& cells, Side& to_move, int pit, Rule rule) {
    static_assert(M >= 1 && M <= 6, "slots 0..M must lie in the low 64 bits");
    constexpr int kHalf = 8 * (M + 1);  // bits of a row and its store
    // The lifted count read straight from memory (byte `pit`, little-endian layout),
    // in parallel with the load of the whole cells.
    const int k = reinterpret_cast<const uint8_t*>(&cells)[pit];
    const Sow& sw = kTables.g[M].sow[pit][k];
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

}  // namespace

MoveResult Board::play(int pit, Rule rule) {
    uint32_t bits;
    switch (m_) {
        case 1:
            bits = play_fixed<1>(cells_, to_move_, pit, rule);
            break;
        case 2:
            bits = play_fixed<2>(cells_, to_move_, pit, rule);
            break;
        case 3:
            bits = play_fixed<3>(cells_, to_move_, pit, rule);
            break;
        case 4:
            bits = play_fixed<4>(cells_, to_move_, pit, rule);
            break;
        case 5:
            bits = play_fixed<5>(cells_, to_move_, pit, rule);
            break;
        default:
            bits = play_fixed<6>(cells_, to_move_, pit, rule);
            break;
    }
    return make_result(bits);
}

Cells Board::pits_key() const { return cells_ & kTables.g[m_].pits; }

Board Board::without_stores() const {
    Board b = *this;
    b.cells_ = pits_key();
    return b;
}

}  // namespace kalah
