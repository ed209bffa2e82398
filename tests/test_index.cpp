// The database index (db/index.*): layer sizes against the paper's database sizes, and
// rank, unrank, enumeration order and rank_board agreeing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "db/index.h"

namespace {

using kalah::Board;
namespace db = kalah::db;

}  // namespace

TEST_SUITE("db") {
    TEST_CASE("index: layer sizes sum to the paper's database sizes") {
        // Positions with exactly s seeds and both rows non-empty, summed over s <= K.
        auto both_rows = [](int k) {
            uint64_t sum = 0;
            for (int s = 0; s <= k; ++s) {
                uint64_t n = db::layer_size(12, s);
                uint64_t one_empty = 2 * db::layer_size(6, s) - (s == 0 ? 1 : 0);
                sum += n - one_empty;
            }
            return sum;
        };
        CHECK(both_rows(20) == 225332381ull);
        CHECK(both_rows(24) == 1250490151ull);
        CHECK(both_rows(28) == 5584163673ull);
        CHECK(both_rows(30) == 11054221305ull);
        // Binomials against the multiplicative formula.
        for (int n = 0; n <= 60; ++n)
            for (int k = 0; k <= 12; ++k) {
                unsigned __int128 c = 1;
                for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
                CHECK(db::binomial(n, k) == (k > n ? 0 : static_cast<uint64_t>(c)));
            }
    }

    TEST_CASE("index: rank, unrank, enumeration order and rank_board agree") {
        std::mt19937_64 rng(7);
        for (int n_pits = 2; n_pits <= 12; n_pits += 2) {
            const int m = n_pits / 2;
            for (int s = 0; s <= 40; s += (s < 8 ? 1 : 7)) {
                const uint64_t size = db::layer_size(n_pits, s);
                const bool all = size <= 20000;
                uint8_t c[12];
                db::unrank(0, s, n_pits, c);
                std::set<std::vector<uint8_t>> seen;
                const uint64_t count = all ? size : 3000;
                for (uint64_t i = 0; i < count; ++i) {
                    const uint64_t r = all ? i : rng() % size;
                    uint8_t u[12];
                    db::unrank(r, s, n_pits, u);
                    int total = 0;
                    for (int j = 0; j < n_pits; ++j) total += u[j];
                    REQUIRE(total == s);
                    REQUIRE(db::rank(u, n_pits) == r);
                    const Board b = db::board_from_configuration(u, m);
                    REQUIRE(db::rank_board(b) == r);
                    // The same pits from North's view, with seeds in both stores.
                    int own_row[6], opp_row[6];
                    for (int j = 0; j < m; ++j) {
                        own_row[j] = u[j];
                        opp_row[j] = u[m + j];
                    }
                    const Board f = Board::from_rows(m, opp_row, own_row, 3, 5, kalah::Side::North);
                    REQUIRE(f.to_move() == kalah::Side::North);
                    REQUIRE(f.own_store() == 5);
                    REQUIRE(f.opp_store() == 3);
                    REQUIRE(db::rank_board(f) == r);
                    if (all) {
                        REQUIRE(std::equal(c, c + n_pits, u));  // enumeration is rank order
                        seen.insert(std::vector<uint8_t>(u, u + n_pits));
                        const bool more = db::next_configuration(c, n_pits);
                        REQUIRE(more == (i + 1 < size));
                    }
                }
                if (all) CHECK(seen.size() == size);  // a bijection: no two ranks alike
            }
        }
        // rank_board ignores stores.
        int south[6] = {1, 0, 3, 0, 2, 9}, north[6] = {0, 4, 0, 0, 1, 7};
        Board a = Board::from_rows(6, south, north, 0, 0, kalah::Side::South);
        Board b = Board::from_rows(6, south, north, 30, 40, kalah::Side::South);
        CHECK(db::rank_board(a) == db::rank_board(b));
    }
}
