// The exact search: fail-soft null-window alpha-beta on pits-only positions over the
// exact table, with the parallel team's busy marks (solver/search_impl.h).
#include <algorithm>

#include "solver/search_impl.h"

namespace kalah {
using namespace solver_internal;

// Plays every legal move of b (pits only, s seeds): children above the database get
// their TT key, an order (higher is searched earlier) and a TT prefetch; children in the
// database are set apart (and prefetched there if prefetch_db); moves that end the game
// give their final margin at once.
void Solver::Impl::expand(const Board& b, int s, Expansion& x, bool prefetch_db) const {
    x.n = x.ne = 0;
    x.best = -128;
    x.best_pit = -1;
    for (unsigned mask = b.legal_mask(); mask; mask &= mask - 1) {
        const int p = __builtin_ctz(mask);
        Child& c = x.kids[x.n];
        c.b = b;
        // The move's result and gain as core/step.h defines them, kept in the Child's fields
        // (no MoveStep built here: this loop is the search's hottest).
        const MoveResult r = c.b.play(p, rule);
        const int gain = gain_from_pits(c.b, r);
        c.pit = p;
        if (r.over) {
            // The margin is final.
            if (gain > x.best) x.best = gain, x.best_pit = p;
            continue;
        }
        c.gain = gain;
        c.extra = r.extra;
        c.b = c.b.without_stores();
        // b's stores are empty: the seeds the move banked left the pits.
        if (s - c.gain <= db_max) {
            if (prefetch_db) opts.db->prefetch(c.b);
            x.exact[x.ne++] = c;
            continue;
        }
        c.key = TTKey::of_pits(c.b);
        tt.prefetch(c.key);  // the child's probe comes soon: hide the cache miss
        if (opts.experiments.ordering)
            // Moves that bank 8 or more seeds (sown into the store and captured), then
            // extra moves, then the other moves by what they bank, moves that bank nothing
            // last; ties go to the pit nearest the store (results/solver.md, "Moves ordered
            // by their gain").
            c.order = c.gain >= 8 && !c.extra ? 300 + 8 * c.gain + p
                      : c.extra               ? 200 + p
                      : c.gain > 0            ? 100 + 8 * c.gain + p
                                              : p;
        else
            c.order = -p;
        ++x.n;
    }
}

// The TT calls of the plain (Par false) or the parallel search. A parallel store that
// finds the table wanting to grow stops the team (TeamState::kGrowTable) so that it can grow.
template <bool Par>
TTProbe Solver::Impl::tt_probe(const TTKey& k) const {
    return Par ? tt.probe_shared(k) : tt.probe(k);
}

template <bool Par>
void Solver::Impl::tt_store(Worker& w, const TTKey& k, int lo, int hi, int move, uint64_t n) {
    if constexpr (Par) {
        if (tt.store_shared(k, lo, hi, move, n, w.tally)) {
            TeamState expected = TeamState::kSearching;
            state.compare_exchange_strong(expected, TeamState::kGrowTable);
        }
    } else
        tt.store(k, lo, hi, move, n);
}

// Probes x's children in the database (all at once) and raises best / best_pit to the
// best of their values.
void Solver::Impl::resolve_exact(const Expansion& x, int& best, int& best_pit) const {
    if (x.ne == 0) return;
    const Board* boards[kMaxPits];
    int dv[kMaxPits];
    for (int i = 0; i < x.ne; ++i) boards[i] = &x.exact[i].b;
    opts.db->probe_many(boards, x.ne, dv);
    for (int i = 0; i < x.ne; ++i) {
        const Child& c = x.exact[i];
        const int v = c.step().value(dv[i]);
        if (v > best) best = v, best_pit = c.pit;
    }
}

// The search order of x's children as indices into x.kids, highest order first, the TT's
// move (tt_move) before all: an insertion sort of one-byte indices (at most 6 children),
// cheaper than moving the 48-byte children themselves.
void Solver::Impl::order_children(const Expansion& x, int tt_move, uint8_t* idx) const {
    int order[kMaxPits];
    for (int i = 0; i < x.n; ++i) {
        order[i] = opts.experiments.tt_move && x.kids[i].pit == tt_move ? 1000 : x.kids[i].order;
        int j = i;
        for (; j > 0 && order[i] > order[idx[j - 1]]; --j) idx[j] = idx[j - 1];
        idx[j] = uint8_t(i);
    }
}

// Enhanced transposition cutoff: a child's stored bound may already refute the node
// (value >= beta). Returns the first such value in search order and its move in *pit, or
// INT_MIN if no child's bound refutes it.
template <bool Par>
int Solver::Impl::etc_refutation(const Expansion& x, const uint8_t* idx, int beta, int* pit) const {
    for (int i = 0; i < x.n; ++i) {
        const Child& c = x.kids[idx[i]];
        const TTProbe ce = tt_probe<Par>(c.key);
        if (!ce.found) continue;
        const int v = c.step().lower(ce.lower, ce.upper);
        if (v >= beta) {
            *pit = c.pit;
            return v;
        }
    }
    return INT_MIN;
}

// Announces a node as busy (parallel search only) for as long as the mark lives. A mark is
// only a hint, so it is taken and released with plain loads and stores, not a
// compare-and-swap (a locked instruction at most nodes): two threads that race for a slot
// at worst lose a mark, which only changes an order.
struct Solver::Impl::BusyMark {
    std::atomic<uint64_t>* slot = nullptr;
    uint64_t h = 0;
    void take(std::atomic<uint64_t>& s, uint64_t hash) {
        if (s.load(std::memory_order_relaxed) != 0) return;
        s.store(hash, std::memory_order_relaxed);
        slot = &s, h = hash;
    }
    ~BusyMark() {
        if (slot && slot->load(std::memory_order_relaxed) == h)
            slot->store(0, std::memory_order_relaxed);
    }
};

// Searches x's children in the order idx (first: the first child's expansion, or null)
// until one reaches beta, raising best / best_pit. With `defer`, busy children wait until
// the others are searched (see kBusyMinSeeds). Returns false if another thread finished
// the pass meanwhile: best is then garbage and nothing must be stored.
template <bool Par>
bool Solver::Impl::search_children(Worker& w, const Board& b, const Expansion& x,
                                   const uint8_t* idx, const Expansion* first, bool defer,
                                   int alpha, int beta, bool cut, int& best, int& best_pit) {
    const int n = x.n;
    const bool at_root = &b == w.root;
    // At an expected cut node below the root, busy later children are joined, not deferred.
    const bool join_busy = cut && !at_root && opts.experiments.cut_join;
    int deferred[kMaxPits];
    int nd = 0;
    for (int k = 0; k < n + nd; ++k) {
        const int i = k < n ? idx[k] : deferred[k - n];
        const Child& c = x.kids[i];
        // A later child waits if it is busy (unless join_busy); a node's first child waits
        // only for helpers: at the root as root_first says, elsewhere when it is busy.
        if (defer && k < n &&
            (k > 0 ? !join_busy && is_busy(c.key)
                   : w.id > 0 && (at_root && w.root_first != Worker::RootFirst::kIfBusy
                                      ? w.root_first == Worker::RootFirst::kDefer
                                      : is_busy(c.key)))) {
            deferred[nd++] = i;
            continue;
        }
        const int a = std::max(alpha, best);
        const Expansion* xc = first && i == idx[0] ? first : nullptr;
        // The child's expected type: an extra move keeps this node's, any other flips it.
        // Two call sites, one per kind of move, so that each folds the step's arithmetic.
        const MoveStep st = c.step();
        int v;
        if (st.extra) {
            const MoveStep::Window cw = st.child_window(a, beta);
            v = st.value(search<Par>(w, c.b, c.key, cw.alpha, cw.beta, xc, cut));
        } else {
            const MoveStep::Window cw = st.child_window(a, beta);
            v = st.value(search<Par>(w, c.b, c.key, cw.alpha, cw.beta, xc, !cut));
        }
        // Another thread finished the pass: v may be garbage; unwind storing nothing.
        if (Par && state.load(std::memory_order_relaxed) != TeamState::kSearching) return false;
        if (v > best) {
            best = v;
            best_pit = c.pit;
            if (best >= beta) {
                // A cut found while better-ordered moves were deferred (another thread was
                // busy in them) is stored without its move, keeping the move stored before.
                // Such a move is often a weak one that just clears this pass's beta: stored
                // as the node's first try, it fails the next pass and sends that pass
                // through subtrees one thread never enters (results/parallel.md, "A cut found
                // past deferred moves stored without its move"). One thread never defers.
                if (k < n && nd > 0 && opts.experiments.cut_move_rule) best_pit = -1;
                break;
            }
        }
    }
    return true;
}

// Stores a node's fail-soft result: a lower bound if it failed high, an upper bound if it
// failed low, else the exact value. A fail-low node stores no move: every move failed,
// and the one with the best fail-soft bound is no better a first try than the move already
// stored (a cut move from an earlier pass, which the merge keeps; results/solver.md, "Equal
// captures nearest the store first; fail-low nodes store no move").
template <bool Par>
void Solver::Impl::store_result(Worker& w, const TTKey& key, int alpha, int beta, int best,
                                int best_pit, uint64_t searched) {
    if (best >= beta)
        tt_store<Par>(w, key, best, 127, best_pit, searched);
    else if (best <= alpha)
        tt_store<Par>(w, key, -127, best, -1, searched);
    else
        tt_store<Par>(w, key, best, best, best_pit, searched);
}

// b: pits only (stores zero), both rows non-empty; key = TTKey::of(b). Contract in solver.h.
// Par: one of several threads searching the same pass (the shared TT calls; gives up,
// returning garbage and storing nothing, as soon as `stop` is set).
template <bool Par>
int Solver::Impl::search(Worker& w, const Board& b, const TTKey& key, int alpha, int beta,
                         const Expansion* pre, bool cut) {
    // Step 1. Count the node. Inside the database (only when the search starts there:
    // children in it are resolved by their parent, step 3) the value is probed.
    if ((++w.nodes & w.beat_mask) == 0) beat(w);
    const int s = b.seeds_in_pits();
    if (s <= db_max) {
        const int v = opts.db->probe(b);
        tt_store<Par>(w, key, v, v, -1, 1);
        return v;
    }

    // Step 2. Bounds from the seeds in play, then from the TT.
    int lo = -s, hi = s;
    if (hi <= alpha) return hi;
    if (lo >= beta) return lo;
    const TTProbe e = tt_probe<Par>(key);
    if (e.found) {
        lo = std::max(lo, e.lower);
        hi = std::min(hi, e.upper);
        if (lo >= beta) return lo;
        if (hi <= alpha) return hi;
        if (lo == hi) return lo;
    }
    const uint64_t nodes_before = w.nodes;

    // Step 3. The moves (unless the parent expanded this node): those that end the game
    // and those into the database are resolved at once.
    Expansion local;
    if (!pre) expand(b, s, local, false);
    const Expansion& x = pre ? *pre : local;
    int best = x.best, best_pit = x.best_pit;
    resolve_exact(x, best, best_pit);
    if (best >= beta) {
        tt_store<Par>(w, key, best, 127, best_pit, w.nodes - nodes_before);
        return best;
    }

    // Step 4. Move order.
    uint8_t idx[kMaxPits];
    order_children(x, e.move, idx);

    // Step 5. The first child is searched next, and its own children's buckets are the
    // misses it will wait for: expand it now (it gets the expansion and does not play its
    // moves again), so that those loads travel while this node waits for its children's
    // (step 6). One DRAM latency then covers two levels of a cut path instead of one.
    Expansion first;
    const bool have_first = x.n > 0 && s >= kEtcMinSeeds;
    if (have_first) expand(x.kids[idx[0]].b, s - x.kids[idx[0]].gain, first, true);

    // Step 6. Enhanced transposition cutoff; near the leaves the extra probes cost more
    // than the nodes they save.
    if (opts.experiments.etc && s >= kEtcMinSeeds) {
        int pit;
        const int v = etc_refutation<Par>(x, idx, beta, &pit);
        if (v != INT_MIN) {
            tt_store<Par>(w, key, v, 127, pit, w.nodes - nodes_before);
            return v;
        }
    }

    // Step 7. Announce this node as busy (parallel search only; released on every return).
    BusyMark mark;
    const bool defer =
        Par && s >= kBusyMinSeeds && s >= db_max + kBusyAboveDb && opts.experiments.defer;
    if (defer) mark.take(busy_slot(busy_hash(key)), busy_hash(key));

    // Step 8. The children, then the result into the TT.
    if (!search_children<Par>(w, b, x, idx, have_first ? &first : nullptr, defer, alpha, beta, cut,
                              best, best_pit))
        return 0;
    store_result<Par>(w, key, alpha, beta, best, best_pit, w.nodes - nodes_before);
    return best;
}

// First MTD(f) guess: depth-limited alpha-beta (no TT, not counted as nodes), scoring
// the seeds banked so far and nothing for the seeds left in pits. Only a heuristic: the
// MTD(f) result does not depend on it, only the number of passes does.
int Solver::Impl::estimate(const Board& b, int depth, int alpha, int beta) const {
    if (depth == 0) return 0;
    int best = -1000;
    for (int p : b.legal_moves()) {
        Board c = b;
        const MoveStep st = play_step_from_pits(c, p, rule);
        int v = st.gain;
        if (!st.over) {
            const MoveStep::Window cw = st.child_window(alpha, beta);
            v = st.value(estimate(c.without_stores(), depth - 1, cw.alpha, cw.beta));
        }
        if (v > best) best = v;
        if (best > alpha) alpha = best;
        if (alpha >= beta) break;
    }
    return best;
}

template int Solver::Impl::search<false>(Worker&, const Board&, const TTKey&, int, int,
                                         const Expansion*, bool);
template int Solver::Impl::search<true>(Worker&, const Board&, const TTKey&, int, int,
                                        const Expansion*, bool);

}  // namespace kalah
