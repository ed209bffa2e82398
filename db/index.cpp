// Binomial table, rank/unrank of seed configurations (layout in index.h).
#include "db/index.h"

#include <cstring>

namespace kalah::db {
namespace detail {

BinomialTable::BinomialTable() {
    std::memset(t, 0, sizeof t);
    for (int n = 0; n <= kMaxBinomialN; ++n) {
        t[0][n] = 1;
        for (int k = 1; k <= kMaxIndexPits && k <= n; ++k)
            t[k][n] = t[k - 1][n - 1] + (k <= n - 1 ? t[k][n - 1] : 0);
    }
}

const BinomialTable kBinom;

}  // namespace detail

using detail::kBinom;

uint64_t binomial(int n, int k) {
    if (n < 0 || k < 0 || k > kMaxIndexPits || n > detail::kMaxBinomialN) return 0;
    return kBinom.t[k][n];
}

uint64_t layer_size(int n_pits, int s) { return binomial(s + n_pits - 1, n_pits - 1); }

uint64_t rank(const uint8_t* c, int n_pits) {
    uint64_t r = 0;
    int prefix = 0;
    for (int j = 0; j + 1 < n_pits; ++j) {
        prefix += c[n_pits - 1 - j];
        r += kBinom.t[j + 1][prefix + j];
    }
    return r;
}

void unrank(uint64_t r, int s, int n_pits, uint8_t* c) {
    uint8_t* const d_end = c + n_pits - 1;  // d[i] = d_end[-i]
    // pos of the bar above the current one; the last "bar" is the end of the sequence.
    int upper = s + n_pits - 1;
    for (int j = n_pits - 2; j >= 0; --j) {
        int pos = upper - 1;
        while (kBinom.t[j + 1][pos] > r) --pos;
        r -= kBinom.t[j + 1][pos];
        d_end[-(j + 1)] = static_cast<uint8_t>(upper - pos - 1);
        upper = pos;
    }
    d_end[0] = static_cast<uint8_t>(upper);
}

bool next_configuration(uint8_t* c, int n_pits) {
    // Colex successor of the bar combination (in d order, d[i] = c[N-1-i]): move the lowest
    // bar that can move up by one (one seed from d[j+1] to d[j]) and drop all lower bars to
    // the bottom (the seeds of d[0..j] gather in d[j]). Rank 0 holds every seed in c[0].
    uint8_t* const d_end = c + n_pits - 1;
    int below = 0;  // seeds in d[0..j]
    for (int j = 0; j + 1 < n_pits; ++j) {
        below += d_end[-j];
        if (d_end[-(j + 1)] > 0) {
            d_end[-(j + 1)]--;
            for (int i = 0; i < j; ++i) d_end[-i] = 0;
            d_end[-j] = static_cast<uint8_t>(below + 1);
            return true;
        }
    }
    return false;
}

uint64_t rank_board(const Board& b) {
    const Cells pits = b.pits_key();
    switch (b.pits()) {
        case 1:
            return rank_cells<1>(pits);
        case 2:
            return rank_cells<2>(pits);
        case 3:
            return rank_cells<3>(pits);
        case 4:
            return rank_cells<4>(pits);
        case 5:
            return rank_cells<5>(pits);
        default:
            return rank_cells<6>(pits);
    }
}

Board board_from_configuration(const uint8_t* c, int m) {
    int own[kMaxPits], opp[kMaxPits];
    for (int i = 0; i < m; ++i) {
        own[i] = c[i];
        opp[i] = c[m + i];
    }
    return Board::from_rows(m, own, opp, 0, 0, Side::South);
}

}  // namespace kalah::db
