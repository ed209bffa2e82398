// The transposition table: keys, bound merging, budget and growth policy.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/board.h"
#include "random_position.h"
#include "solver/tt.h"
#include "solver/tt_growth.h"

using kalah::Board;
using kalah::Rule;
using kalah::Side;

TEST_SUITE("tt") {
    TEST_CASE("TT key holds every pit count exactly") {
        std::mt19937 rng(7);
        for (int m = 1; m <= 6; ++m) {
            for (int t = 0; t < 200; ++t) {
                const Board b = random_position(rng, m, int(rng() % 100) + 2);
                const kalah::TTKey k = kalah::TTKey::of(b);
                auto byte = [&](int i) {
                    return i < 8 ? int((k.lo >> (8 * i)) & 0xff)
                                 : int((k.hi >> (8 * (i - 8))) & 0xff);
                };
                for (int i = 0; i < m; ++i) {
                    CHECK(byte(i) == b.own_pit(i));
                    CHECK(byte(m + i) == b.opp_pit(i));
                }
                for (int i = 2 * m; i < 12; ++i) CHECK(byte(i) == 0);
            }
        }
    }

    TEST_CASE("TT merges bounds and keeps positions apart") {
        kalah::TranspositionTable tt(1 << 20);
        tt.reserve(100);
        const Board b = Board::start(6, 4), c = Board::start(6, 3);
        const auto kb = kalah::TTKey::of(b), kc = kalah::TTKey::of(c);
        CHECK_FALSE(tt.probe(kb).found);
        tt.store(kb, 2, 127, 3, 100);
        tt.store(kb, -127, 10, -1, 5);
        const auto p = tt.probe(kb);
        CHECK(p.found);
        CHECK(p.lower == 2);
        CHECK(p.upper == 10);
        CHECK(p.move == 3);
        CHECK_FALSE(tt.probe(kc).found);
        // Growth keeps the contents.
        for (int i = 0; i < 20000; ++i) {
            int a[6] = {i % 50, (i / 50) % 50, (i / 2500) % 8, 1, 1, 1}, n[6] = {1, 1, 1, 1, 1, 1};
            tt.store(kalah::TTKey::of(Board::from_rows(6, a, n, 0, 0, Side::South)), -4, 4, 0, 1);
        }
        CHECK(tt.probe(kb).lower == 2);
        CHECK(tt.probe(kb).upper == 10);
    }

    TEST_CASE("TT resize to the budget takes it at once and keeps the contents") {
        kalah::TranspositionTable tt(4 << 20);
        tt.reserve(100);
        CHECK(tt.bytes() < tt.max_bytes());
        std::vector<kalah::TTKey> keys;
        for (int i = 0; i < 2000; ++i) {
            int a[6] = {i % 40, (i / 40) % 50, 2, 1, 1, 1}, n[6] = {1, 3, 1, 1, 1, 1};
            keys.push_back(kalah::TTKey::of(Board::from_rows(6, a, n, 0, 0, Side::South)));
            tt.store(keys.back(), -(i % 7), i % 5, i % 6, 1 + i);
        }
        std::vector<kalah::TTProbe> before;
        for (const auto& k : keys) before.push_back(tt.probe(k));
        tt.resize(tt.max_bytes());
        CHECK(tt.bytes() == tt.max_bytes());
        int kept = 0;
        for (size_t i = 0; i < keys.size(); ++i) {
            const auto p = tt.probe(keys[i]);
            if (!before[i].found) continue;
            ++kept;
            CHECK(p.found);
            CHECK(p.lower == before[i].lower);
            CHECK(p.upper == before[i].upper);
            CHECK(p.move == before[i].move);
        }
        CHECK(kept > 1000);
        tt.resize(tt.max_bytes());  // already there: no change
        CHECK(tt.bytes() == tt.max_bytes());
        tt.resize(tt.max_bytes() * 2);  // never past the budget
        CHECK(tt.bytes() == tt.max_bytes());
    }

    TEST_CASE("TT growth policy: store count up to kCheapBytes, costly evictions past it") {
        namespace TT = kalah::tt_growth;
        const size_t budget = TT::kFarBytes * 16;
        // A table whose fourfold growth would take `grown` bytes (64-byte buckets of four
        // 16-byte entries), full, with twice its entries stored: does it want to grow?
        auto wanted = [&](size_t grown, uint64_t costly, size_t max_bytes) {
            const uint64_t buckets = grown / 4 / 64;
            const uint64_t entries = buckets * 4;
            return TT::wanted(buckets, entries, 2 * entries, costly, max_bytes);
        };
        auto entries_before = [](size_t grown) { return uint64_t(grown / 4 / 16); };
        // Up to kCheapBytes: fill and store count alone.
        CHECK(wanted(TT::kCheapBytes, 0, budget));
        {
            const uint64_t buckets = TT::kCheapBytes / 4 / 64, entries = buckets * 4;
            CHECK_FALSE(TT::wanted(buckets, entries * 3 / 4, 2 * entries, 0, budget));
            CHECK_FALSE(TT::wanted(buckets, entries, 2 * entries - 1, 0, budget));
        }
        // Past kCheapBytes up to kFarBytes: costly evictions of 1/kCostlyShare the entries.
        for (const size_t grown : {TT::kCheapBytes * 4, TT::kFarBytes}) {
            const uint64_t n = entries_before(grown);
            CHECK_FALSE(wanted(grown, 0, budget));
            CHECK_FALSE(wanted(grown, n / TT::kCostlyShare - 1, budget));
            CHECK(wanted(grown, n / TT::kCostlyShare, budget));
        }
        // Past kFarBytes: costly evictions of 1/kFarShare the entries.
        for (const size_t grown : {TT::kFarBytes * 4, TT::kFarBytes * 16}) {
            const uint64_t n = entries_before(grown);
            CHECK_FALSE(wanted(grown, n / TT::kCostlyShare, budget));
            CHECK_FALSE(wanted(grown, n / TT::kFarShare - 1, budget));
            CHECK(wanted(grown, n / TT::kFarShare, budget));
        }
        // Never past the budget.
        CHECK_FALSE(wanted(TT::kCheapBytes, 0, TT::kCheapBytes - 1));
        CHECK_FALSE(
            wanted(TT::kFarBytes * 4, entries_before(TT::kFarBytes * 4), TT::kFarBytes * 4 - 1));
        static_assert(TT::kCheapBytes < TT::kFarBytes && TT::kFarShare < TT::kCostlyShare);
    }

    TEST_CASE("TT grows past kCheapBytes only once it evicts costly entries") {
        namespace TT = kalah::tt_growth;
        kalah::TranspositionTable tt(TT::kCheapBytes * 4);
        tt.reserve(100);
        auto key = [](uint64_t i) {
            // Distinct keys for distinct i.
            return kalah::TTKey::from_parts(i * 0x9e3779b97f4a7c15ull, uint32_t(i >> 40));
        };
        const uint64_t cheap_entries = TT::kCheapBytes / 16;  // 16-byte entries
        uint64_t i = 0;
        // Stores of small subtrees: the table grows by the store count alone up to
        // kCheapBytes, then stays there however many it gets.
        for (; i < 4 * cheap_entries; ++i) tt.store(key(i), -1, 1, 0, 3);
        CHECK(tt.bytes() == TT::kCheapBytes);
        // Stores of large subtrees: once they evict each other, the table grows.
        const uint64_t costly_from = i;
        for (; i < costly_from + 2 * cheap_entries && tt.bytes() == TT::kCheapBytes; ++i)
            tt.store(key(i), -3, 5, 2, uint64_t(1) << (TT::kCostlyLog2 + 2));
        CHECK(tt.bytes() == TT::kCheapBytes * 4);
        // The growth kept the costly entries it had: the last ones stored are all there.
        for (uint64_t j = i - 1000; j < i; ++j) {
            const kalah::TTProbe p = tt.probe(key(j));
            REQUIRE(p.found);
            CHECK(p.lower == -3);
            CHECK(p.upper == 5);
            CHECK(p.move == 2);
        }
    }

    TEST_CASE("TT shared stores: the table grows only in end_shared_phase(), keeping every entry") {
        // The contract of the shared calls: store_shared() never grows the table but says
        // when it wants to; end_shared_phase() then grows it fourfold, and every entry held before
        // is found after with the same bounds and move; usage_permille() counts exactly
        // the entries in use once the shared phase ended.
        kalah::TranspositionTable tt(64 << 20);
        tt.reserve(100);
        const size_t start = tt.bytes();
        auto key = [](uint64_t i) {
            return kalah::TTKey::from_parts(i * 0x9e3779b97f4a7c15ull, uint32_t(i >> 40));
        };
        kalah::TranspositionTable::Tally tally;
        uint64_t n = 0;
        bool wants = false;
        while (!wants && n < 100 * start) {
            wants =
                tt.store_shared(key(n), -int(n % 9), int(n % 11), int(n % 6), 1 + n % 1000, tally);
            ++n;
        }
        REQUIRE(wants);
        CHECK(tt.bytes() == start);       // the shared calls never grow it
        CHECK(tt.usage_permille() == 0);  // nor count entries before end_shared_phase()
        tt.report(tally);                 // this thread stops: its last tally
        std::vector<uint64_t> held;
        for (uint64_t i = 0; i < n; ++i)
            if (tt.probe(key(i)).found) held.push_back(i);
        REQUIRE(held.size() * 4 > start / 16 * 3);  // over three quarters full
        tt.end_shared_phase(1);
        CHECK(tt.bytes() == 4 * start);
        for (uint64_t i : held) {
            const kalah::TTProbe p = tt.probe(key(i));
            REQUIRE(p.found);
            CHECK(p.lower == -int(i % 9));
            CHECK(p.upper == int(i % 11));
            CHECK(p.move == int(i % 6));
        }
        CHECK(tt.usage_permille() == int(held.size() * 1000 / (4 * start / 16)));
        // Settled with nothing new: no second growth.
        tt.end_shared_phase(1);
        CHECK(tt.bytes() == 4 * start);
    }

    TEST_CASE("TT usage counts the entries one thread's stores put in") {
        kalah::TranspositionTable tt(1 << 20);
        CHECK(tt.usage_permille() == 0);
        tt.reserve(100);
        const uint64_t entries = tt.bytes() / 16;
        auto key = [](uint64_t i) {
            return kalah::TTKey::from_parts(i * 0x9e3779b97f4a7c15ull + 1, uint32_t(i));
        };
        for (uint64_t i = 0; i < entries / 2; ++i) tt.store(key(i), -1, 1, 0, 1);
        for (uint64_t i = 0; i < entries / 2; ++i) tt.store(key(i), 0, 1, 0, 1);  // merges
        uint64_t held = 0;
        for (uint64_t i = 0; i < entries / 2; ++i) held += tt.probe(key(i)).found;
        CHECK(held > entries / 4);
        CHECK(tt.usage_permille() == int(held * 1000 / entries));
        tt.clear();
        CHECK(tt.usage_permille() == 0);
        CHECK(tt.bytes() == 0);
    }
}
