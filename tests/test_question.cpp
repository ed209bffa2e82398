// Bound questions (solver/question.h): parsing, and settle() against brute-force values on
// random positions, on one and two threads.
#include <doctest/doctest.h>

#include <random>

#include "brute_force.h"
#include "core/notation.h"
#include "random_position.h"
#include "solver/question.h"
#include "solver/solver.h"

using namespace kalah;

namespace {

// South's final margin of b under perfect play, from brute force (shares only the rules
// with the solver).
int south_value(BruteForce& bf, const Board& b) {
    const int mover = b.own_store() - b.opp_store() + bf.pits_value(ref::from_board(b));
    return b.to_move() == Side::South ? mover : -mover;
}

bool holds(const Question& q, int v) { return q.lower ? v >= q.bound : v <= q.bound; }

}  // namespace

TEST_SUITE("question") {
    TEST_CASE("questions parse as written, anything else is refused") {
        struct Good {
            const char* text;
            bool lower;
            int bound;
        };
        for (const Good g : {Good{"win", true, 1}, Good{"WIN", true, 1}, Good{"loss", false, -1},
                             Good{"v>=2", true, 2}, Good{"v > 0", true, 1}, Good{">=+4", true, 4},
                             Good{"v<=-2", false, -2}, Good{"v<3", false, 2},
                             Good{" V >= -6 ", true, -6}, Good{"v>-1", true, 0}}) {
            INFO(g.text);
            const auto q = parse_question(g.text);
            REQUIRE(q);
            CHECK(q->lower == g.lower);
            CHECK(q->bound == g.bound);
        }
        for (const char* bad : {"", "v", "v=2", "v>=", "v>=2x", "v>=+-3", "win2", "v>=5000", "draw",
                                "v=>2", "2>=v", "v>=1.5"}) {
            INFO(bad);
            CHECK_FALSE(parse_question(bad));
        }
        CHECK(Question{true, 1}.text() == ">= +1");
        CHECK(Question{false, -2}.text() == "<= -2");
        CHECK(Question{true, 1}.name() == "win");
        CHECK(Question{true, 3}.name().empty());
    }

    TEST_CASE("the test's threshold has the position's parity and decides the question") {
        // v == s (mod 2): v >= 1 <=> v >= 2 for 24 seeds; v <= 0 <=> not v >= 2.
        CHECK(Question{true, 1}.beta(24) == 2);
        CHECK(Question{true, 1}.beta(23) == 1);
        CHECK(Question{true, -3}.beta(24) == -2);
        CHECK(Question{false, 0}.beta(24) == 2);
        CHECK(Question{false, -1}.beta(24) == 0);
        CHECK(Question{false, -1}.beta(23) == 1);
        CHECK(Question{true, 4}.proved_by(true));
        CHECK_FALSE(Question{false, 4}.proved_by(true));
    }

    TEST_CASE("settle agrees with brute force on random positions, 1 and 2 threads") {
        std::mt19937 rng(20261201);
        int checked = 0, moves = 0;
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (const int threads : {1, 2}) {
                for (int m = 2; m <= 5; ++m) {
                    BruteForce bf(m, rule);
                    SolverOptions o;
                    o.tt_mb = 4;
                    o.threads = threads;
                    o.parallel_min_seeds = 0;  // the parallel search even on small positions
                    Solver solver(m, rule, o);
                    for (int k = 0; k < 12; ++k) {
                        const Board b =
                            random_position(rng, m, 2 + int(rng() % (m <= 3 ? 13 : 10)));
                        const int v = south_value(bf, b);
                        const int total = b.seeds_in_pits() + b.own_store() + b.opp_store();
                        for (int bound = -total - 1; bound <= total + 1;
                             bound += 1 + int(rng() % 3)) {
                            for (const bool lower : {true, false}) {
                                const Question q{lower, bound};
                                const BoundAnswer a = settle(solver, b, rule, q);
                                INFO(format_position(b), " ", rule_name(rule), " v ", q.text(),
                                     " (value ", v, ", ", threads, " threads)");
                                CHECK(a.proved == holds(q, v));
                                CHECK(a.lower <= v);
                                CHECK(v <= a.upper);
                                // The mover shows a move exactly when the answer is on the
                                // mover's side; the move keeps that bound, and so does v.
                                const bool south = b.to_move() == Side::South;
                                const bool mover_side =
                                    !b.over() &&
                                    (south ? (a.proved == q.lower) : (a.proved != q.lower));
                                CHECK((a.move >= 0) == mover_side);
                                if (a.move >= 0) {
                                    CHECK(a.kept.lower == south);
                                    CHECK(holds(a.kept, v));
                                    CHECK(holds(q, v) == a.proved);
                                    Board c = b;
                                    c.play(a.move, rule);
                                    CHECK(holds(a.kept, south_value(bf, c)));
                                    ++moves;
                                }
                                ++checked;
                            }
                        }
                    }
                }
            }
        }
        MESSAGE(checked, " questions settled, ", moves, " keeping moves checked");
        CHECK(checked > 1000);
    }
}
