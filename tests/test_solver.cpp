// Solver: brute-force reference values, published values, PV replay, MTD(f) guesses, CLI.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <initializer_list>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>

#include "brute_force.h"
#include "cli_runner.h"
#include "core/notation.h"
#include "random_position.h"
#include "reference_engine.h"
#include "solver/solver.h"
#include "solver/tt.h"

using kalah::Board;
using kalah::Rule;
using kalah::Side;
using kalah::Solver;
using kalah::SolverOptions;

namespace {

SolverOptions small_tt() {
    SolverOptions o;
    o.tt_mb = 64;
    return o;
}

}  // namespace

TEST_SUITE("solver") {
    TEST_CASE("TT key holds every pit count exactly") {
        std::mt19937 rng(7);
        for (int m = 1; m <= 6; ++m) {
            for (int t = 0; t < 200; ++t) {
                const Board b = random_position(rng, m, int(rng() % 100) + 2);
                const kalah::TTKey k = kalah::TTKey::of(b);
                auto byte = [&](int i) {
                    return i < 8 ? int((k.lo >> (8 * i)) & 0xff) : int((k.hi >> (8 * (i - 8))) & 0xff);
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

    TEST_CASE("TT reserve_budget takes the whole budget at once and keeps the contents") {
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
        tt.reserve_budget();
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
        tt.reserve_budget();  // already there: no change
        CHECK(tt.bytes() == tt.max_bytes());
    }

    TEST_CASE("TT growth policy: store count up to kCheapBytes, costly evictions past it") {
        using TT = kalah::TranspositionTable;
        const size_t budget = TT::kFarBytes * 16;
        // A table whose fourfold growth would take `grown` bytes (64-byte buckets of four
        // 16-byte entries), full, with twice its entries stored: does it want to grow?
        auto wanted = [&](size_t grown, uint64_t costly, size_t max_bytes) {
            const uint64_t buckets = grown / 4 / 64;
            const uint64_t entries = buckets * 4;
            return TT::growth_wanted(buckets, entries, 2 * entries, costly, max_bytes);
        };
        auto entries_before = [](size_t grown) { return uint64_t(grown / 4 / 16); };
        // Up to kCheapBytes: fill and store count alone.
        CHECK(wanted(TT::kCheapBytes, 0, budget));
        {
            const uint64_t buckets = TT::kCheapBytes / 4 / 64, entries = buckets * 4;
            CHECK_FALSE(TT::growth_wanted(buckets, entries * 3 / 4, 2 * entries, 0, budget));
            CHECK_FALSE(TT::growth_wanted(buckets, entries, 2 * entries - 1, 0, budget));
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
        using TT = kalah::TranspositionTable;
        TT tt(TT::kCheapBytes * 4);
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

    TEST_CASE("solve agrees with brute force on small boards, both rules") {
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 1; m <= 4; ++m) {
                for (int n = 1; n <= (m <= 2 ? 6 : m == 3 ? 5 : 3); ++n) {
                    CAPTURE(m);
                    CAPTURE(n);
                    CAPTURE(kalah::rule_name(rule));
                    BruteForce bf(m, rule);
                    Solver s(m, rule, small_tt());
                    CHECK(s.value(Board::start(m, n)) == bf.value(ref::start(m, n)));
                }
            }
        }
    }

    TEST_CASE("query agrees with brute force on random positions, m = 4, 5, 6") {
        const int kQueries = std::getenv("KALAH_QUERIES") ? std::atoi(std::getenv("KALAH_QUERIES")) : 400;
        std::mt19937 rng(12345);
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 4; m <= 6; ++m) {
                BruteForce bf(m, rule);
                Solver s(m, rule, small_tt());
                for (int t = 0; t < kQueries; ++t) {
                    const Board b = random_position(rng, m, 2 + int(rng() % (m == 4 ? 15 : m == 5 ? 13 : 11)));
                    CAPTURE(kalah::format_position(b));
                    CAPTURE(kalah::rule_name(rule));
                    REQUIRE(s.value(b) == bf.value(ref::from_board(b)));
                    for (const auto& mv : s.move_values(b)) {
                        ref::Pos q = ref::from_board(b);
                        ref::play(q, mv.pit, rule);
                        REQUIRE(mv.value == bf.value(q));
                    }
                }
            }
        }
    }

    TEST_CASE("a one-bucket table (constant replacement and bound merging) agrees with brute force") {
        // With 64 MiB the table never fills in the other tests; here every store competes
        // for the same four entries, so replacement and merging decide what the search sees.
        SolverOptions tiny;
        tiny.tt_mb = 0;
        std::mt19937 rng(777);
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 4; m <= 5; ++m) {
                BruteForce bf(m, rule);
                Solver s(m, rule, tiny);
                for (int t = 0; t < 60; ++t) {
                    const Board b = random_position(rng, m, 2 + int(rng() % 12));
                    CAPTURE(kalah::format_position(b));
                    CAPTURE(kalah::rule_name(rule));
                    REQUIRE(s.value(b) == bf.value(ref::from_board(b)));
                }
            }
            Solver s(4, rule, tiny);
            BruteForce bf(4, rule);
            for (int n = 1; n <= 3; ++n)
                CHECK(s.value(Board::start(4, n)) == bf.value(ref::start(4, n)));
        }
    }

    TEST_CASE("published values (empty-capture) and rules.md example 7") {
        // W/L/D of Table 10 for m <= 3 (+1 win, -1 loss, 0 draw), margins for m >= 4.
        const int wld[3][6] = {{0, -1, 1, -1, 1, 0}, {1, -1, -1, -1, 1, 1}, {0, 1, 1, 1, 1, -1}};
        for (int m = 1; m <= 3; ++m) {
            for (int n = 1; n <= 6; ++n) {
                CAPTURE(m);
                CAPTURE(n);
                Solver s(m, Rule::EmptyCapture, small_tt());
                const int v = s.value(Board::start(m, n));
                CHECK((v > 0) - (v < 0) == wld[m - 1][n - 1]);
            }
        }
        struct Known {
            int m, n, value;
        };
        const Known known[] = {{4, 1, 2}, {4, 2, 6}, {4, 3, 8}, {4, 4, 2}, {5, 1, 0},
                               {5, 2, 0}, {5, 3, 8}, {6, 1, 2}, {6, 2, 10}};
        for (const Known& k : known) {
            CAPTURE(k.m);
            CAPTURE(k.n);
            Solver s(k.m, Rule::EmptyCapture, small_tt());
            CHECK(s.value(Board::start(k.m, k.n)) == k.value);
        }
        Solver ec(4, Rule::EmptyCapture, small_tt()), st(4, Rule::Standard, small_tt());
        CHECK(ec.value(Board::start(4, 3)) == 8);
        CHECK(st.value(Board::start(4, 3)) == 6);
    }

    TEST_CASE("the principal variation replays to the value, every move keeping it") {
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (auto [m, n] : {std::pair{3, 3}, {4, 3}, {4, 4}, {5, 2}, {6, 2}}) {
                CAPTURE(m);
                CAPTURE(n);
                Solver s(m, rule, small_tt());
                const Board start = Board::start(m, n);
                const int v = s.value(start);
                ref::Pos p = ref::start(m, n);
                Board b = start;
                for (const auto& mv : s.principal_variation(start)) {
                    REQUIRE_FALSE(ref::over(p));
                    REQUIRE(mv.side == (p.south_to_move ? Side::South : Side::North));
                    ref::play(p, mv.pit, rule);
                    // Each position of the line has the root's value (South's margin), by a
                    // solver that has not seen the line.
                    b.play(mv.pit, rule);
                    Solver fresh(m, rule, small_tt());
                    REQUIRE(fresh.value(b) == v);
                }
                REQUIRE(ref::over(p));
                CHECK(p.store_a - p.store_b == v);
            }
        }
    }

    TEST_CASE("MTD(f) gives the same value from guesses far off") {
        for (int guess : {-48, -20, -3, 0, 1, 7, 30, 48}) {
            CAPTURE(guess);
            SolverOptions o = small_tt();
            o.guess = guess;
            Solver s(4, Rule::EmptyCapture, o);
            CHECK(s.value(Board::start(4, 4)) == 2);
            Solver t(5, Rule::EmptyCapture, o);
            CHECK(t.value(Board::start(5, 3)) == 8);
        }
    }

    TEST_CASE("each search feature switched off gives the same values") {
        for (int off = 0; off < 3; ++off) {
            CAPTURE(off);
            std::mt19937 rng(99);
            SolverOptions o = small_tt();
            (off == 0 ? o.use_etc : off == 1 ? o.use_ordering : o.use_tt_move) = false;
            Solver a(5, Rule::Standard, small_tt()), b(5, Rule::Standard, o);
            CHECK(a.value(Board::start(5, 2)) == b.value(Board::start(5, 2)));
            for (int t = 0; t < 100; ++t) {
                const Board p = random_position(rng, 5, 10 + int(rng() % 10));
                CHECK(a.value(p) == b.value(p));
            }
        }
    }

    TEST_CASE("test(b, beta) is a true fail-soft bound on brute force, both rules") {
        std::mt19937 rng(99);
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            BruteForce bf(5, rule);
            Solver s(5, rule, small_tt());
            for (int t = 0; t < 150; ++t) {
                const Board b = random_position(rng, 5, 2 + int(rng() % 12));
                const int v = bf.pits_value(ref::from_board(b));
                const int seeds = b.without_stores().seeds_in_pits();
                const int beta = -seeds - 2 + int(rng() % (2 * seeds + 5));
                CAPTURE(kalah::format_position(b));
                CAPTURE(beta);
                const int r = s.test(b, beta);
                if (r >= beta)
                    REQUIRE(v >= r);
                else
                    REQUIRE(v <= r);
                REQUIRE((v >= beta) == (r >= beta));
            }
        }
    }

    TEST_CASE("cooperative stop: node limit, time limit and flag stop; the solver stays exact") {
        // Kalah(4,5) takes about 2 M nodes.
        const Board start = Board::start(4, 5);
        SolverOptions plain = small_tt();
        const int exact = Solver(4, Rule::Standard, plain).value(start);
        for (int threads : {1, 2}) {
            CAPTURE(threads);
            SolverOptions o = small_tt();
            o.threads = threads;
            o.parallel_min_seeds = 0;
            o.node_limit = 200000;
            Solver s(4, Rule::Standard, o);
            // The limit ends each call.
            CHECK_THROWS_AS(s.value(start), kalah::SearchStopped);
            CHECK(s.stats().nodes >= 200000);
            CHECK(s.stats().nodes < 200000 + uint64_t(threads) * 3 * 65536);
            CHECK_THROWS_AS(s.move_values(start), kalah::SearchStopped);

            std::atomic<bool> stop{true};
            SolverOptions f = small_tt();
            f.threads = threads;
            f.parallel_min_seeds = 0;
            f.stop = &stop;
            Solver flagged(4, Rule::Standard, f);
            CHECK_THROWS_AS(flagged.value(start), kalah::SearchStopped);
            stop = false;
            // Stopped again after some work, from another thread, then resumed: what was
            // proven before each stop is kept and true, so the same solver is still exact.
            std::thread stopper([&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                stop = true;
            });
            CHECK_THROWS_AS(flagged.value(start), kalah::SearchStopped);
            stopper.join();
            stop = false;
            CHECK(flagged.value(start) == exact);

            SolverOptions tl = small_tt();
            tl.threads = threads;
            tl.parallel_min_seeds = 0;
            tl.time_limit_seconds = 1e-6;
            Solver timed(4, Rule::Standard, tl);
            CHECK_THROWS_AS(timed.value(start), kalah::SearchStopped);
            // A search of small passes (below the first heartbeat, 65 k nodes) stops too:
            // every pass checks the limits when it starts.
            CHECK_THROWS_AS(timed.value(Board::start(4, 1)), kalah::SearchStopped);
            stop = true;
            CHECK_THROWS_AS(flagged.value(Board::start(4, 1)), kalah::SearchStopped);
            stop = false;
            CHECK(flagged.value(Board::start(4, 1)) ==
                  Solver(4, Rule::Standard, plain).value(Board::start(4, 1)));
        }
    }

    TEST_CASE("CLI solve and query") {
        auto r = run_kalah("solve --pits 4 --seeds 3 --rule empty-capture --json --tt-mb 16");
        CHECK(r.status == 0);
        CHECK(r.out.find("\"value\": 8") != std::string::npos);
        CHECK(r.out.find("\"result\": \"W\"") != std::string::npos);
        CHECK(r.out.find("\"pits\": 4, \"seeds\": 3") != std::string::npos);
        for (const char* f : {"\"best\": ", "\"pv\": ", "\"nodes\": ", "\"seconds\": ",
                              "\"nodes_per_second\": "})
            CHECK(r.out.find(f) != std::string::npos);
        CHECK(r.err.find("pass 1") != std::string::npos);

        // Every move's value agrees with the brute force.
        r = run_kalah("query --pits 4 --seeds 3 --moves \"A2+ A4\" --json --tt-mb 64");
        CHECK(r.status == 0);
        CHECK(r.out.find("\"to_move\": \"B\"") != std::string::npos);
        {
            BruteForce bf4(4, Rule::Standard);
            ref::Pos p = ref::start(4, 3);
            ref::play(p, 1, Rule::Standard);
            ref::play(p, 3, Rule::Standard);
            CHECK(r.out.find("\"value\": " + std::to_string(bf4.value(p)) + ",") !=
                  std::string::npos);
            for (int pit : ref::legal(p)) {
                ref::Pos q = p;
                ref::play(q, pit, Rule::Standard);
                // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "..." + string&&.
                std::string needle = "{\"move\": \"B";
                needle += std::to_string(pit + 1);
                const size_t at = r.out.find(needle);
                REQUIRE(at != std::string::npos);
                const size_t val = r.out.find("\"value\": ", at);
                CHECK(std::atoi(r.out.c_str() + val + 9) == bf4.value(q));
            }
        }

        r = run_kalah("query --pits 3 --seeds 2 --rule empty-capture --json");
        CHECK(r.status == 0);
        BruteForce bf(3, Rule::EmptyCapture);
        const int v = bf.value(ref::start(3, 2));
        CHECK(r.out.find("\"value\": " + std::to_string(v) + ",") != std::string::npos);

        r = run_kalah("query --position 0,0,0/1,2,0/5,10/A --json");
        CHECK(r.status == 0);
        CHECK(r.out.find("\"over\": true") != std::string::npos);
        CHECK(r.out.find("\"value\": -8") != std::string::npos);
        CHECK(r.out.find("\"moves\": []") != std::string::npos);
        CHECK(r.out.find("\"score\": [5, 13]") != std::string::npos);

        r = run_kalah("solve --pits 3 --seeds 2 --db /nonexistent");
        CHECK(r.status == 0);
        CHECK(r.err.find("no endgame database (") != std::string::npos);
    }

    TEST_CASE("CLI bad input: one line, exit 2") {
        for (const char* args :
             {"solve --pits 9 --seeds 4", "solve --pits 6 --seeds 0", "solve --pits 6 --seeds 11",
              "solve --threads 0", "query --pits 3 --seeds 2 --threads -1",
              "solve --tt-mb 0", "solve --ablate nothing",
              "query --position 1,2/3", "query --pits 3 --seeds 3 --moves B1",
              "solve --bogus"}) {
            CAPTURE(args);
            auto r = run_kalah(args);
            CHECK(r.status == 2);
            CHECK(r.out.empty());
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
    }
}
