// The experiments build's search (kalah_solver_experiments, solver/search_experiments.h):
// every feature switched off is exact, and the parallel variants kept for measurement (a
// team of one, the older order, plain lazy SMP) give the single-thread values. Built into
// kalah_experiment_tests, apart from kalah_tests, which tests the product's search.
#include <doctest/doctest.h>

#include <iterator>
#include <random>
#include <vector>

#include "core/notation.h"
#include "parallel_checks.h"
#include "random_position.h"
#include "solver/solver.h"

#ifndef KALAH_EXPERIMENTS
#error "tests/experiments/ is compiled for the experiments build (KALAH_EXPERIMENTS)"
#endif

using kalah::Board;
using kalah::Rule;
using kalah::Solver;
using kalah::SolverOptions;
using parallel_checks::check_team_start;
using parallel_checks::quick;
using parallel_checks::with_threads;

namespace {

SolverOptions small_tt() {
    SolverOptions o;
    o.tt_mb = 64;
    return o;
}

// Plain lazy SMP (`kalah-ablate --ablate defer`): a second parallel algorithm, whose values
// must agree with the product's.
SolverOptions lazy_smp(int threads, size_t tt_mb = 64) {
    SolverOptions o = with_threads(threads, tt_mb);
    o.experiments.defer = false;
    return o;
}

}  // namespace

TEST_SUITE("solver-experiments") {
    TEST_CASE("each search feature switched off gives the same values") {
        for (int off = 0; off < 3; ++off) {
            CAPTURE(off);
            std::mt19937 rng(99);
            SolverOptions o = small_tt();
            (off == 0   ? o.experiments.etc
             : off == 1 ? o.experiments.ordering
                        : o.experiments.tt_move) = false;
            Solver a(5, Rule::Standard, small_tt()), b(5, Rule::Standard, o);
            CHECK(a.value(Board::start(5, 2)) == b.value(Board::start(5, 2)));
            for (int t = 0; t < 100; ++t) {
                const Board p = random_position(rng, 5, 10 + int(rng() % 10));
                CHECK(a.value(p) == b.value(p));
            }
        }
    }

    TEST_CASE("the --ablate names switch off their feature, and only those") {
        const char* names[] = {"tt-move",    "ordering", "etc",      "defer", "follow",
                               "root-defer", "cut-move", "cut-join", "plain"};
        for (size_t i = 0; i < std::size(names); ++i) {
            CAPTURE(names[i]);
            kalah::SearchExperiments e;
            REQUIRE(kalah::switch_off(e, names[i]));
            const bool on[] = {e.tt_move,    e.ordering,      e.etc,      e.defer,     e.follow,
                               e.root_defer, e.cut_move_rule, e.cut_join, e.plain_path};
            for (size_t j = 0; j < std::size(on); ++j) CHECK(on[j] == (i != j));
        }
        kalah::SearchExperiments e;
        CHECK_FALSE(kalah::switch_off(e, "nothing"));
        CHECK_FALSE(kalah::switch_off(e, ""));
    }
}

TEST_SUITE("parallel-experiments") {
    TEST_CASE(
        "start positions: a team of one, the older order, plain lazy SMP give the "
        "single-thread values, both rules") {
        const std::vector<parallel_checks::Game> games = parallel_checks::start_games();
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (const auto& g : games) {
                CAPTURE(g.m);
                CAPTURE(g.n);
                CAPTURE(kalah::rule_name(rule));
                const Board start = Board::start(g.m, g.n);
                const int v = Solver(g.m, rule, with_threads(1)).value(start);
                // One thread through the parallel code path (a team of one, `--ablate
                // plain`): shared-table calls and busy marks, the same value.
                // Nothing is shared or busy in a team of one, so it searches the plain
                // search's tree: a node lost or counted twice where the team sums its
                // threads' counts shows as a different total. Both in a table of the size
                // it starts at (4 MiB), which never grows: a growth restarts the team's
                // pass (a few nodes searched again), not the plain search's.
                SolverOptions team_of_one = with_threads(1, 4);
                team_of_one.experiments.plain_path = false;
                Solver team(g.m, rule, team_of_one);
                Solver plain(g.m, rule, with_threads(1, 4));
                CHECK(team.value(start) == v);
                CHECK(plain.value(start) == v);
                CHECK(team.stats().nodes == plain.stats().nodes);
                // T = 3: deferral without the root, cut-move and cut-join rules
                // (`--ablate root-defer,cut-move,cut-join`), the order before e0555b8;
                // T = 4: plain lazy SMP.
                SolverOptions older = with_threads(3);
                older.experiments.root_defer = older.experiments.cut_move_rule =
                    older.experiments.cut_join = false;
                for (const SolverOptions& o : {older, lazy_smp(4)}) {
                    CAPTURE(o.threads);
                    check_team_start(g.m, rule, start, v, o);
                }
            }
        }
        // A published value (reference-values.md), empty-capture.
        CHECK(Solver(6, Rule::EmptyCapture, lazy_smp(4)).value(Board::start(6, 2)) == 10);
    }

    TEST_CASE(
        "random positions: value and every move's value agree for plain lazy SMP at "
        "T = 4 and T = 1") {
        const int kPositions = quick() ? 60 : 300;
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 4; m <= 6; ++m) {
                std::mt19937 rng(777 + m);
                std::vector<Board> positions;
                for (int i = 0; i < kPositions / 6; ++i)
                    positions.push_back(random_position(rng, m, 6 + int(rng() % 16)));
                // Each value and every move's value, from one long-lived solver (so TT
                // reuse across queries is tested too). Each solver runs its batch alone:
                // OpenMP threads spinning between parallel regions would slow the others.
                auto answers = [&](const SolverOptions& o, size_t step) {
                    Solver s(m, rule, o);
                    std::vector<std::vector<int>> out;
                    for (size_t i = 0; i < positions.size(); i += step) {
                        std::vector<int> a = {s.value(positions[i])};
                        for (const auto& mv : s.move_values(positions[i])) a.push_back(mv.value);
                        out.push_back(a);
                    }
                    return out;
                };
                // T = 4 (oversubscribed on 2 cores) with a 1 MiB table (heavy replacement)
                // on every fourth position.
                const auto one = answers(with_threads(1, 64), 4);
                const auto four = answers(lazy_smp(4, 1), 4);
                for (size_t i = 0; i < one.size(); ++i) {
                    CAPTURE(kalah::format_position(positions[4 * i]));
                    CAPTURE(kalah::rule_name(rule));
                    CHECK(four[i] == one[i]);
                }
            }
        }
    }
}
