// Solver: brute-force reference values, published values, PV replay, MTD(f) guesses, CLI.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "brute_force.h"
#include "cli_runner.h"
#include "core/notation.h"
#include "random_position.h"
#include "reference_engine.h"
#include "solver/solver.h"

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
        const int kQueries =
            std::getenv("KALAH_QUERIES") ? std::atoi(std::getenv("KALAH_QUERIES")) : 400;
        std::mt19937 rng(12345);
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 4; m <= 6; ++m) {
                BruteForce bf(m, rule);
                Solver s(m, rule, small_tt());
                for (int t = 0; t < kQueries; ++t) {
                    const Board b = random_position(rng, m,
                                                    2 + int(rng() % (m == 4   ? 15
                                                                     : m == 5 ? 13
                                                                              : 11)));
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

    TEST_CASE(
        "a one-bucket table (constant replacement and bound merging) agrees with brute force") {
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

    TEST_CASE(
        "a poll or a time limit is checked every 256 nodes; a time limit bounds the presize") {
        // Kalah(4,5) takes about 2 M nodes: a poll asked at every check (poll_seconds 0)
        // that answers true the third time stops the call within a few hundred nodes, not
        // at the 65 k nodes of a check without it.
        for (int threads : {1, 2}) {
            CAPTURE(threads);
            SolverOptions o = small_tt();
            o.threads = threads;
            o.parallel_min_seeds = 0;
            o.poll_seconds = 0;
            int asked = 0;
            o.poll = [&asked] { return ++asked == 3; };
            Solver s(4, Rule::Standard, o);
            CHECK_THROWS_AS(s.value(Board::start(4, 5)), kalah::SearchStopped);
            CHECK(asked == 3);
            // One thread: three beats of 256 nodes at most. Two: the helper runs on until it
            // sees the stop, as far as the scheduler lets it while the caller waits, but a
            // check every 65 k nodes would have taken the caller alone past 2 x 65,536.
            CHECK(s.stats().nodes < (threads == 1 ? 8 * 256 : 2 * 65536));
            s.set_poll({});
            CHECK(s.value(Board::start(4, 3)) ==
                  Solver(4, Rule::Standard, small_tt()).value(Board::start(4, 3)));
        }
        // Kalah(6,6) without a database is presized to the whole table at once, but under a
        // time limit of 50 ms to what the kernel can fault in within a quarter of it.
        SolverOptions o;
        o.tt_mb = 512;
        o.time_limit_seconds = 0.05;
        Solver s(6, Rule::Standard, o);
        CHECK_THROWS_AS(s.value(Board::start(6, 6)), kalah::SearchStopped);
        CHECK(s.stats().tt_bytes <= (size_t(64) << 20));
    }

    TEST_CASE("CLI solve and query") {
        auto r = run_kalah("solve --pits 4 --seeds 3 --rule empty-capture --json --tt-mb 16");
        CHECK(r.status == 0);
        {
            const auto j = nlohmann::json::parse(r.out);
            // The published value of Kalah(4,3), empty-capture (reference-values.md).
            CHECK(j.at("value") == 8);
            CHECK(j.at("result") == "W");
            CHECK(j.at("pits") == 4);
            CHECK(j.at("seeds") == 3);
            // The principal variation replays to the value, from its first move on.
            const auto pv = j.at("pv").get<std::string>();
            REQUIRE(!j.at("best").empty());
            CHECK(pv.rfind(j.at("best")[0].get<std::string>() + " ", 0) == 0);
            kalah::Board b = kalah::Board::start(4, 3);
            kalah::replay(b, pv, Rule::EmptyCapture);
            REQUIRE(b.over());
            CHECK(b.store(kalah::Side::South) - b.store(kalah::Side::North) == 8);
            CHECK(j.at("score") ==
                  std::vector<int>{b.store(kalah::Side::South), b.store(kalah::Side::North)});
            CHECK(j.at("nodes").get<uint64_t>() > 0);
            CHECK(j.at("seconds").is_number());
            CHECK(j.at("nodes_per_second").is_number());
        }
        CHECK(r.err.find("pass 1") != std::string::npos);

        // Every move's value agrees with the brute force.
        r = run_kalah("query --pits 4 --seeds 3 --moves \"A2+ A4\" --json --tt-mb 64");
        CHECK(r.status == 0);
        {
            const auto j = nlohmann::json::parse(r.out);
            CHECK(j.at("to_move") == "B");
            BruteForce bf4(4, Rule::Standard);
            ref::Pos p = ref::start(4, 3);
            ref::play(p, 1, Rule::Standard);
            ref::play(p, 3, Rule::Standard);
            CHECK(j.at("value") == bf4.value(p));
            const auto legal = ref::legal(p);
            REQUIRE(j.at("moves").size() == legal.size());
            size_t i = 0;
            for (int pit : legal) {
                ref::Pos q = p;
                ref::play(q, pit, Rule::Standard);
                const auto& mv = j.at("moves")[i++];
                CHECK(mv.at("move").get<std::string>().rfind("B" + std::to_string(pit + 1), 0) ==
                      0);
                CHECK(mv.at("value") == bf4.value(q));
                CHECK(mv.at("best") == (bf4.value(q) == bf4.value(p)));
            }
        }

        r = run_kalah("query --pits 3 --seeds 2 --rule empty-capture --json");
        CHECK(r.status == 0);
        BruteForce bf(3, Rule::EmptyCapture);
        const int v = bf.value(ref::start(3, 2));
        CHECK(nlohmann::json::parse(r.out).at("value") == v);

        r = run_kalah("query --position 0,0,0/1,2,0/5,10/A --json");
        CHECK(r.status == 0);
        {
            const auto j = nlohmann::json::parse(r.out);
            CHECK(j.at("over") == true);
            CHECK(j.at("value") == -8);
            CHECK(j.at("moves").empty());
            CHECK(j.at("score") == std::vector<int>{5, 13});
        }

        r = run_kalah("solve --pits 3 --seeds 2 --db /nonexistent");
        CHECK(r.status == 0);
        CHECK(r.err.find("no endgame database (") != std::string::npos);
    }

    TEST_CASE("CLI bad input: one line, exit 2") {
        for (const char* args :
             {"solve --pits 9 --seeds 4", "solve --pits 6 --seeds 0", "solve --pits 6 --seeds 11",
              "solve --threads 0", "query --pits 3 --seeds 2 --threads -1", "solve --tt-mb 0",
              "solve --ablate nothing", "query --position 1,2/3",
              "query --pits 3 --seeds 3 --moves B1", "solve --bogus"}) {
            CAPTURE(args);
            auto r = run_kalah(args);
            CHECK(r.status == 2);
            CHECK(r.out.empty());
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
    }
}
