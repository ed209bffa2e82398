// Random test positions: `seeds` seeds scattered over the pits, both rows non-empty.
#pragma once

#include <algorithm>
#include <random>

#include "core/board.h"

// Stores hold 0..9 seeds each and either side may be to move.
inline kalah::Board random_position(std::mt19937& rng, int m, int seeds) {
    int a[6] = {}, b[6] = {};
    for (;;) {
        std::fill(a, a + 6, 0);
        std::fill(b, b + 6, 0);
        for (int i = 0; i < seeds; ++i) {
            const int slot = int(rng() % (2 * m));
            (slot < m ? a[slot] : b[slot - m])++;
        }
        int ra = 0, rb = 0;
        for (int i = 0; i < m; ++i) ra += a[i], rb += b[i];
        if (ra > 0 && rb > 0) break;
    }
    const int sa = int(rng() % 10), sb = int(rng() % 10);
    return kalah::Board::from_rows(m, a, b, sa, sb,
                                   rng() % 2 ? kalah::Side::South : kalah::Side::North);
}
