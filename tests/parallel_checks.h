// The parallel solver's checks, shared by the product's tests (test_parallel.cpp) and the
// experiments build's (experiments/test_search_experiments.cpp): solver options that run
// the team even on small positions, and one parallel solve of a start position checked
// against the single-thread value.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/board.h"
#include "solver/solver.h"

namespace parallel_checks {

// The node count of a progress line of an MTD(f) pass, "pass 2: test v >= +4: v <= +2,
// bounds [+2, +2], 3559532 nodes, 0.66 s": the nodes of the search so far.
inline uint64_t nodes_of_pass_line(const std::string& line) {
    const size_t end = line.find(" nodes, ");
    REQUIRE(end != std::string::npos);
    const size_t start = line.rfind(' ', end - 1) + 1;
    return std::stoull(line.substr(start, end - start));
}

// Parallel even on small positions (the default searches those with one thread).
inline kalah::SolverOptions with_threads(int threads, size_t tt_mb = 64) {
    kalah::SolverOptions o;
    o.tt_mb = tt_mb;
    o.threads = threads;
    o.parallel_min_seeds = 0;
    return o;
}

// Under ThreadSanitizer (a TSan build's ctest sets KALAH_TSAN_QUICK: tests/suites.cmake) the
// largest boards are left out to keep the run to a few minutes; everything else is the same.
inline bool quick() { return std::getenv("KALAH_TSAN_QUICK") != nullptr; }

// The start positions Kalah(m,n) the team tests solve, both test binaries alike.
struct Game {
    int m, n;
};
inline std::vector<Game> start_games() {
    std::vector<Game> games = {{4, 1}, {4, 2}, {4, 3}, {4, 4}, {5, 2}, {5, 3}, {6, 2}};
    if (!quick()) games.push_back({6, 3});
    return games;
}

// Solves `start` with the team of options o (o.progress is replaced) and checks it against
// v, the single-thread value: the same value; the search's node count (summed over its
// threads) is the one its MTD(f) passes reported as they went (every pass's nodes, no
// more, counted once; and the passes' counts only grow); its PV replays to v.
inline void check_team_start(int m, kalah::Rule rule, const kalah::Board& start, int v,
                             kalah::SolverOptions o) {
    std::vector<uint64_t> pass_nodes;
    o.progress = [&](const std::string& line) { pass_nodes.push_back(nodes_of_pass_line(line)); };
    kalah::Solver par(m, rule, o);
    CHECK(par.value(start) == v);
    REQUIRE(!pass_nodes.empty());
    CHECK(std::is_sorted(pass_nodes.begin(), pass_nodes.end()));
    CHECK(par.stats().nodes == pass_nodes.back());
    kalah::Board b = start;
    for (const auto& mv : par.principal_variation(start)) b.play(mv.pit, rule);
    REQUIRE(b.over());
    // Game over: the rows are swept into the stores.
    CHECK(b.store(kalah::Side::South) - b.store(kalah::Side::North) == v);
}

}  // namespace parallel_checks
