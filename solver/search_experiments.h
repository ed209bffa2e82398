// Search features that can be switched off to measure what each is worth, in the
// experiments build only (results/solver.md, results/parallel.md; bench/ablate/). Every
// combination is exact: only the order of the search and its node count change, never a value.
#pragma once

// The product (kalah_solver) has every feature on as a compile-time constant, so its search
// reads no switch and the branches fold away. The experiments build (kalah_solver_experiments:
// solver/ compiled again with -DKALAH_EXPERIMENTS, CMakeLists.txt) has them as runtime bools,
// set by `kalah-ablate --ablate` and tests/experiments/. The two builds' SolverOptions differ:
// they carry an ABI tag there (KALAH_EXPERIMENTS_ABI on SolverOptions and Solver), so code
// compiled for one build that links the other's solver fails to link instead of mixing them.
#ifdef KALAH_EXPERIMENTS
#include <string_view>
#define KALAH_SEARCH_SWITCH bool
#define KALAH_EXPERIMENTS_ABI [[gnu::abi_tag("experiments")]]
#else
#define KALAH_SEARCH_SWITCH static constexpr bool
#define KALAH_EXPERIMENTS_ABI
#endif

namespace kalah {

struct SearchExperiments {
    // Search the TT's best move first.
    KALAH_SEARCH_SWITCH tt_move = true;
    // Then big gains, extra moves, other gains, pits nearest the store.
    KALAH_SEARCH_SWITCH ordering = true;
    // Enhanced transposition cutoffs (probe the children first).
    KALAH_SEARCH_SWITCH etc = true;
    // Parallel search only. Defer children another thread is busy with (ABDADA-style; off:
    // plain lazy SMP).
    KALAH_SEARCH_SWITCH defer = true;
    // Helpers search the root's first move in passes expected to fail high,
    KALAH_SEARCH_SWITCH follow = true;
    // and leave it to the calling thread in the other passes.
    KALAH_SEARCH_SWITCH root_defer = true;
    // A cut found past deferred moves is stored without its move.
    KALAH_SEARCH_SWITCH cut_move_rule = true;
    // A busy later child of an expected cut node is joined, not deferred.
    KALAH_SEARCH_SWITCH cut_join = true;
    // One thread: the plain search (off: a parallel team of one, to measure that path).
    KALAH_SEARCH_SWITCH plain_path = true;
};

#ifdef KALAH_EXPERIMENTS
// Switches off the feature `name` as `kalah-ablate --ablate` names it (tt-move, ordering,
// etc; parallel: defer (plain lazy SMP), follow, root-defer, cut-move, cut-join, plain (a
// team of one)). False for an unknown name.
inline bool switch_off(SearchExperiments& e, std::string_view name) {
    bool* f = name == "tt-move"      ? &e.tt_move
              : name == "ordering"   ? &e.ordering
              : name == "etc"        ? &e.etc
              : name == "defer"      ? &e.defer
              : name == "follow"     ? &e.follow
              : name == "root-defer" ? &e.root_defer
              : name == "cut-move"   ? &e.cut_move_rule
              : name == "cut-join"   ? &e.cut_join
              : name == "plain"      ? &e.plain_path
                                     : nullptr;
    if (f) *f = false;
    return f != nullptr;
}
#endif

}  // namespace kalah

#undef KALAH_SEARCH_SWITCH
