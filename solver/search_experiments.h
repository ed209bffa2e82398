// Search features that can be switched off to measure what each is worth (`kalah solve
// --ablate`; results/solver.md, results/parallel.md). Every combination is exact: only
// the order of the search and its node count change, never a value.
#pragma once

namespace kalah {

struct SearchExperiments {
    bool tt_move = true;   // search the TT's best move first
    bool ordering = true;  // then big gains, extra moves, other gains, pits nearest the store
    bool etc = true;       // enhanced transposition cutoffs (probe the children first)
    // Parallel search only:
    bool defer = true;   // defer children another thread is busy with (ABDADA-style)
    bool follow = true;  // helpers search the root's first move in passes expected to fail high
    bool root_defer =
        true;  // helpers leave the root's first move to the caller in the other passes
    bool cut_move_rule = true;  // a cut found past deferred moves is stored without its move
    bool cut_join = true;  // a busy later child of an expected cut node is joined, not deferred
    // One thread: the plain search (off: a parallel team of one, to measure that path).
    bool plain_path = true;
};

}  // namespace kalah
