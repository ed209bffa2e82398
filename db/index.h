// Perfect ranking of pit configurations with exactly s seeds (combinatorial number system).
#pragma once

#include <cstdint>

#include "core/board.h"

namespace kalah::db {

// A configuration is the seed count of each of the N = 2m pits in the mover's view:
// c[0..m-1] = the mover's pits P0..Pm-1, c[m..2m-1] = the opponent's Q0..Qm-1 (the order of
// Board's slots, stores left out). Configurations with an empty row are included, so the
// ranks of layer s are exactly 0 .. layer_size(N, s) - 1 with no gaps.
//
// Stars and bars, read from the last pit down: let d[i] = c[N-1-i] (the opponent's pit
// nearest their store first, the mover's P0 last). Write the s seeds as stars and the N-1
// pit boundaries as bars; bar j (j = 0..N-2) sits at position pos_j = (d[0] + .. + d[j]) + j
// among the s + N - 1 symbols, and 0 <= pos_0 < .. < pos_{N-2} <= s + N - 2 is a
// combination of N-1 elements. Its colex rank is
//      rank = sum_{j=0}^{N-2} C(pos_j, j + 1),
// a bijection onto 0 .. C(s+N-1, N-1) - 1 (the combinatorial number system). The mover's P0
// is the most significant pit and the opponent's pits near their store vary fastest: this
// order compresses better than the forward one (results/db.md, "First builds").
// Ranking is N-1 lookups in a small binomial table; the prefix sums come from one multiply
// per row. Unranking walks the bars from the last one down (greedy, largest pos first).

constexpr int kMaxIndexPits = 2 * kMaxPits;  // N <= 12

namespace detail {
constexpr int kMaxBinomialN = kMaxSeeds + kMaxIndexPits + 1;
// t[k][n] = C(n, k); rows by k keep one bar's lookups together.
struct BinomialTable {
    uint64_t t[kMaxIndexPits + 1][kMaxBinomialN + 1];
    BinomialTable();
};
extern const BinomialTable kBinom;
}  // namespace detail

// C(n, k) for 0 <= k <= kMaxIndexPits, 0 <= n <= kMaxSeeds + kMaxIndexPits (0 when k > n).
uint64_t binomial(int n, int k);

// Number of configurations of exactly s seeds over n_pits pits: C(s + n_pits - 1, n_pits - 1).
uint64_t layer_size(int n_pits, int s);

// Rank of a configuration c[0..n_pits-1] among those with the same total.
uint64_t rank(const uint8_t* c, int n_pits);
// Inverse: fills c[0..n_pits-1] with the configuration of total s that has rank r
// (r < layer_size(n_pits, s)).
void unrank(uint64_t r, int s, int n_pits, uint8_t* c);
// Steps c (total s) to the configuration of the next rank; false after the last one.
bool next_configuration(uint8_t* c, int n_pits);

// Rank of the pits of b (mover's view, stores ignored) within layer b.seeds_in_pits().
uint64_t rank_board(const Board& b);

// rank_board for M pits a side, from the cells of a board with empty stores (Board's
// layout): each row with its bytes reversed (byte 0 = the pit nearest the owner's store),
// its prefix sums by one multiply (byte i of x * 0x0101.. is the sum of bytes 0..i; every
// sum < 128, so no carries), then the 2M-1 bars' binomials.
template <int M>
[[gnu::always_inline]] inline uint64_t rank_cells(Cells pits) {
    static_assert(M >= 1 && M <= kMaxPits);
    constexpr int kShift = 8 * (8 - M);
    const auto& t = detail::kBinom.t;
    const uint64_t own = __builtin_bswap64(static_cast<uint64_t>(pits) << kShift);
    const uint64_t opp = __builtin_bswap64(static_cast<uint64_t>(pits >> (8 * (M + 1))) << kShift);
    const uint64_t opp_pre = opp * 0x0101010101010101ull;
    const uint64_t own_pre = own * 0x0101010101010101ull;
    const int opp_total = static_cast<int>((opp_pre >> (8 * (M - 1))) & 0xff);
    uint64_t r = 0;
    for (int j = 0; j < M; ++j) r += t[j + 1][static_cast<int>((opp_pre >> (8 * j)) & 0xff) + j];
    for (int j = 0; j + 1 < M; ++j)
        r += t[M + j + 1][opp_total + static_cast<int>((own_pre >> (8 * j)) & 0xff) + M + j];
    return r;
}
// Rank of one row of M pits (byte i = pit i) among the M-pit rows of its total: rank(c, M)
// of its bytes, by the arithmetic of rank_cells.
template <int M>
[[gnu::always_inline]] inline uint64_t rank_row(uint64_t row) {
    static_assert(M >= 1 && M <= kMaxPits);
    constexpr int kShift = 8 * (8 - M);
    const auto& t = detail::kBinom.t;
    const uint64_t pre = __builtin_bswap64(row << kShift) * 0x0101010101010101ull;
    uint64_t r = 0;
    for (int j = 0; j + 1 < M; ++j) r += t[j + 1][static_cast<int>((pre >> (8 * j)) & 0xff) + j];
    return r;
}
// Board with zero stores, South to move, whose pits are configuration c (n_pits = 2m).
Board board_from_configuration(const uint8_t* c, int m);

}  // namespace kalah::db
