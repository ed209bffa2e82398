// Exact solver: fail-soft null-window alpha-beta on pits-only positions, MTD(f) driver.
#include "solver/solver.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <mutex>

#include "solver/book.h"
#if defined(__SANITIZE_THREAD__)
#include <thread>
#endif

#include "core/step.h"
#include "db/database.h"
#include "solver/tt.h"

namespace kalah {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kEtcMinSeeds = 8;
constexpr int kEstimateDepth = 10;
// Parallel search, ABDADA-style deferral (SearchExperiments::defer, on by default): a
// thread announces the nodes with at least kBusyMinSeeds seeds (and kBusyAboveDb above
// the database) it is searching in a small table of busy positions; at such a node, a
// child that another thread is busy with is searched last, when its result is likely in
// the TT. Only the order changes, never the result (a collision in the busy table only
// defers a move). Which children wait:
// - A node's first child: never for the calling thread (ABDADA's eldest brother); for a
//   helper when it is busy, so that helpers do not follow the calling thread down its path
//   in lockstep (results/parallel.md, "Helpers defer a busy first child").
// - The root's first child, for helpers: searched too in a pass expected to fail high (its
//   root is a cut node; Worker::RootFirst::kFollow; results/parallel.md, "Helpers follow
//   the root's first move in passes expected to fail high"), deferred even before it is
//   busy in the other passes (RootFirst::kDefer): the calling thread marks it only after
//   expanding the root, so a helper would often get there first and the two would search
//   its subtree together (results/parallel.md, "Root's first move deferred in passes
//   expected to fail low").
// - At a node expected to be a cut node (below the root; the root's type is the pass's
//   expectation, a move that passes the turn flips it, an extra move keeps it), a busy
//   later move is joined, not deferred: the move another thread is in is the likely cut,
//   and deferring it sends the thread into siblings one thread never searches; joined, the
//   two split the all-nodes below it (results/parallel.md, "A busy later move joined at
//   expected cut nodes").
// Marks from 24 seeds: below that a mark costs more than the duplicate search it saves
// (results/parallel.md, "Busy marks from 24 seeds"). With layers 0..22 or 0..26 every
// searched node of Kalah(5,5) and Kalah(6,4) has 23 or more seeds.
constexpr int kBusyMinSeeds = 24;
// With a database, marks only from this many seeds above its top layer: the nodes just
// above the database are most of a search and their subtrees are a few nodes, so their
// marks cost (shared cache lines written at every node, read by the other thread) and
// save nothing; the split that saves nodes is made near the root (results/parallel.md,
// "Busy marks only from 10 seeds above the database").
constexpr int kBusyAboveDb = 10;
constexpr size_t kBusySize = size_t(1) << 16;
// Every this many nodes a thread adds its count to the pass's live total, and the calling
// thread checks whether a heartbeat is due (a clock read per 65 k nodes costs nothing).
constexpr uint64_t kBeatNodes = uint64_t(1) << 16;
// A search from a position with at least this many seeds above the database (or in all,
// without one) takes the whole TT budget at once instead of growing it: the searches of
// whole games of Kalah(6,4) and larger without a database fill any default table, and
// there a small early table evicts what later passes need (results/solver.md, "One-thread
// searches of 44 or more seeds take the whole table budget"). Kalah(5,4) (40 seeds) and
// the bench positions (at most 42 seeds) keep growing. So do smaller parallel searches
// (each growth stops the team and restarts the pass): given the
// whole budget, a small one touched pages all over a 1 GiB table and became slow
// (results/parallel.md, "Small parallel searches grow their table again").
constexpr int kPresizeSeeds = 44;

// Runs f(0), .., f(threads - 1) at once, f(0) on the calling thread: an OpenMP parallel
// region. Under ThreadSanitizer plain std::threads instead: GCC's libgomp is not built
// with TSan, which therefore cannot see the ordering its fork and barrier provide and
// would report the region's argument passing as races. Everything inside the region (TT
// locks, state flags, counters) is the same code either way.
template <class F>
void run_team(int threads, F&& f) {
#if defined(__SANITIZE_THREAD__)
    std::vector<std::thread> team;
    for (int i = 1; i < threads; ++i) team.emplace_back([&f, i] { f(i); });
    f(0);
    for (std::thread& t : team) t.join();
#else
#pragma omp parallel num_threads(threads)
    f(omp_get_thread_num());
#endif
}

// Per-thread search state.
struct Worker {
    uint64_t nodes = 0;
    // The thread calls beat() when (nodes & beat_mask) == 0: every kBeatNodes nodes, or
    // more often under a small node limit (CallLimits), so that a job of a proof
    // campaign with a budget of a few thousand nodes stops near its budget.
    uint64_t beat_mask = kBeatNodes - 1;
    uint64_t nodes_reported = 0;  // part of `nodes` already added to Impl::live_nodes
    // What this thread's shared TT stores did, not yet reported to the table (parallel only).
    TranspositionTable::Tally tally;
    int id = 0;                   // 0: the calling thread; > 0: a helper of the parallel search
    const Board* root = nullptr;  // parallel only: the pass's root
    // Parallel only: what the helpers do with the root's first child. kFollow: search it
    // too (the pass is expected to fail high: its root is then a cut node, and the other
    // root moves are only speculation); kDefer: defer it even when it is not busy yet (the
    // pass is expected to fail low); kIfBusy: defer it if busy, like any first child.
    enum class RootFirst : uint8_t { kIfBusy, kFollow, kDefer } root_first = RootFirst::kIfBusy;
};

// One move from a node, played on a copy.
struct Child {
    Board b;    // the position after the move, stores cleared (unless over)
    TTKey key;  // b's TT key, computed once (prefetch, ETC probe, busy check, its search)
    int gain;   // the move's gain (core/step.h)
    int pit;
    int order;   // higher is searched earlier
    bool extra;  // same side moves again
    // The move's step: the node's value is step().value(v(b)).
    MoveStep step() const {
        MoveStep s;
        s.gain = gain;
        s.extra = extra;
        return s;
    }
};

// A node's moves, played: the children to search, the children in the database, and the
// best of the moves that end the game. A node's first child is expanded by its parent
// (to prefetch the grandchildren's TT buckets early) and handed down, not played twice.
struct Expansion {
    Child kids[kMaxPits];   // above the database: searched
    Child exact[kMaxPits];  // in the database: probed, all at once
    int n = 0;
    int ne = 0;
    int best = -128;  // best final margin of a move that ends the game, -128 if none
    int best_pit = -1;
};

// Number of ways to put at most s seeds in 2m pits: an upper bound on the positions a
// search from s seeds can meet (sizes the TT for small problems).
uint64_t position_bound(int m, int s) {
    double c = 1;
    for (int i = 1; i <= 2 * m; ++i) c = c * (s + i) / i;
    return c > 1e15 ? uint64_t(1e15) : static_cast<uint64_t>(c);
}

// The limits of one public call (SolverOptions::stop, node_limit, time_limit_seconds),
// counted from its start.
struct CallLimits {
    bool any = false;       // some limit is set: the beats check them
    uint64_t node_end = 0;  // stop at this node count (Solver::Impl::nodes); 0: no limit
    // Worker::beat_mask of the call's searches: kBeatNodes - 1, or under a node limit below
    // 16 kBeatNodes a power of two minus one near limit / 16 (at least 255), so that a
    // limit of a few thousand nodes is overrun by at most a sixteenth (and by 255 nodes).
    uint64_t beat_mask = kBeatNodes - 1;
    std::optional<Clock::time_point> deadline;

    static CallLimits starting(const SolverOptions& o, uint64_t nodes) {
        CallLimits l;
        l.any = o.stop || o.node_limit || o.time_limit_seconds > 0;
        l.node_end = o.node_limit ? nodes + o.node_limit : 0;
        if (o.node_limit && o.node_limit < 16 * kBeatNodes)
            l.beat_mask = std::bit_floor(std::max<uint64_t>(o.node_limit / 16, 256)) - 1;
        if (o.time_limit_seconds > 0)
            l.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(o.time_limit_seconds));
        return l;
    }
};

// What the threads of a parallel pass are doing: searching, or stopping because one of
// them finished the pass, because the table must grow (the pass then restarts on the
// grown table), or because one failed with an exception (search_pass rethrows it).
enum class TeamState : int { kSearching, kFinished, kGrowTable, kFailed };

}  // namespace

struct Solver::Impl {
    // Options.
    int m;
    Rule rule;
    SolverOptions opts;
    int threads = 1;  // opts.threads, at least 1

    // Table.
    TranspositionTable tt;

    // Database.
    int db_max = -1;  // opts.db's top layer; -1 without a database

    // Team of a parallel pass: its state, and the positions its threads are busy with (a
    // hash, never 0, of the key, or 0 if free).
    std::atomic<TeamState> state{TeamState::kSearching};
    std::unique_ptr<std::atomic<uint64_t>[]> busy;

    // Counters: nodes and statistics; for the heartbeat, the nodes of the current pass
    // reported so far by its threads, the pass's test, when the whole search started and
    // when the next beat is due.
    SolverStats stats;
    uint64_t nodes = 0;
    std::atomic<uint64_t> live_nodes{0};
    int pass_beta = 0, pass_no = 0;
    Clock::time_point search_t0, next_beat;
    uint64_t search_n0 = 0;

    // The current public call's limits; set when it starts (Call).
    CallLimits limits;
    bool in_call = false;
    // Marks a public call: the outermost one sets the limits, so that a call made by
    // another (value -> pits_value) does not restart them.
    class Call {
      public:
        explicit Call(Impl& impl) : s_(impl), outer_(!impl.in_call) {
            if (!outer_) return;
            s_.limits = CallLimits::starting(s_.opts, s_.nodes);
            s_.in_call = true;
        }
        ~Call() {
            if (outer_) s_.in_call = false;
        }
        Call(const Call&) = delete;
        Call& operator=(const Call&) = delete;

      private:
        Impl& s_;
        bool outer_;
    };
    // Throws SearchStopped when a limit is reached (from any thread: inside the parallel
    // region the exception stops the team and is rethrown by search_pass).
    void check_limits() const {
        if (opts.stop && opts.stop->load(std::memory_order_relaxed))
            throw SearchStopped("search stopped");
        if (limits.node_end &&
            nodes + live_nodes.load(std::memory_order_relaxed) >= limits.node_end)
            throw SearchStopped("search stopped at its node limit");
        if (limits.deadline && Clock::now() >= *limits.deadline)
            throw SearchStopped("search stopped at its time limit");
    }
    [[gnu::noinline]] void beat(Worker& w) {
        live_nodes.fetch_add(w.nodes - w.nodes_reported, std::memory_order_relaxed);
        w.nodes_reported = w.nodes;
        if (limits.any) check_limits();
        if (w.id != 0 || !opts.heartbeat) return;
        const auto now = Clock::now();
        if (now < next_beat) return;
        next_beat = now + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(opts.heartbeat_seconds));
        const double el = std::chrono::duration<double>(now - search_t0).count();
        const uint64_t n = nodes - search_n0 + live_nodes.load(std::memory_order_relaxed);
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "pass %d: testing v >= %+d; %.1f M nodes, %.2f M nodes/s, table %zu of "
                      "%zu MiB, %.1f s",
                      pass_no + 1, pass_beta, n / 1e6, el > 0 ? n / el / 1e6 : 0.0,
                      tt.bytes() >> 20, tt.max_bytes() >> 20, el);
        opts.heartbeat(buf);
    }
    static uint64_t busy_hash(const TTKey& k) { return k.hash | 1; }
    std::atomic<uint64_t>& busy_slot(uint64_t h) { return busy[(h >> 1) & (kBusySize - 1)]; }
    bool is_busy(const TTKey& k) {
        const uint64_t h = busy_hash(k);
        return busy_slot(h).load(std::memory_order_relaxed) == h;
    }

    Impl(int m_, Rule r, SolverOptions o)
        : m(m_), rule(r), opts(std::move(o)), tt(opts.tt_mb << 20) {
        if (opts.db) db_max = opts.db->max_seeds();
        threads = std::max(1, opts.threads);
        if (threads > 1 || !opts.experiments.plain_path) {
            busy = std::make_unique<std::atomic<uint64_t>[]>(kBusySize);
            for (size_t i = 0; i < kBusySize; ++i) busy[i].store(0);
        }
    }

    void expand(const Board& b, int s, Expansion& x, bool prefetch_db) const;
    // The steps of search(), inlined into it (the hot path).
    struct BusyMark;
    template <bool Par>
    [[gnu::always_inline]] inline TTProbe tt_probe(const TTKey& k) const;
    template <bool Par>
    [[gnu::always_inline]] inline void tt_store(Worker& w, const TTKey& k, int lo, int hi, int move,
                                                uint64_t n);
    [[gnu::always_inline]] inline void resolve_exact(const Expansion& x, int& best,
                                                     int& best_pit) const;
    [[gnu::always_inline]] inline void order_children(const Expansion& x, int tt_move,
                                                      uint8_t* idx) const;
    template <bool Par>
    [[gnu::always_inline]] inline int etc_refutation(const Expansion& x, const uint8_t* idx,
                                                     int beta, int* pit) const;
    template <bool Par>
    [[gnu::always_inline]] inline bool search_children(Worker& w, const Board& b,
                                                       const Expansion& x, const uint8_t* idx,
                                                       const Expansion* first, bool defer,
                                                       int alpha, int beta, bool cut, int& best,
                                                       int& best_pit);
    template <bool Par>
    [[gnu::always_inline]] inline void store_result(Worker& w, const TTKey& key, int alpha,
                                                    int beta, int best, int best_pit,
                                                    uint64_t searched);
    template <bool Par>
    int search(Worker& w, const Board& b, const TTKey& key, int alpha, int beta,
               const Expansion* pre = nullptr, bool cut = false);
    int search_pass(int beta, const Board& pits, bool expect_high);
    int estimate(const Board& b, int depth, int alpha, int beta) const;
    int mtdf(const Board& pits, int guess, bool report);
    int pits_value_guess(const Board& b, int guess, bool report);
    int test_pits(const Board& pits, int beta, bool expect_high);
    template <class F>
    int measured(int s, F&& run);
};

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

// One MTD(f) pass: the test v >= beta. With several threads (lazy SMP): every thread
// searches the whole pass over the shared TT; the first to finish gives the result (a
// true fail-soft bound, like any thread's would be) and stops the others.
//
// Why lazy SMP: MTD(f) passes are null-window searches whose results are exact bounds
// stored in the TT, so what one thread stores, the others find. It needs no split points
// and no change to the search contract, and its result is exactly the single-thread one by
// construction (any thread's finished pass is a proven bound). Threads that search in the
// same order run in lockstep through the same subtrees; the ABDADA-style deferral of busy
// children (experiments.defer) splits them. Schemes that search siblings at once (Young Brothers
// Wait) meet the same positions in both threads, as nothing tells one thread that the
// other is already inside one, which is what the busy marks do. The measurements behind
// the choice: results/parallel.md, "Lazy SMP with ABDADA-style deferral chosen" and
// "Young Brothers Wait and a waiting helper measured against deferral".
int Solver::Impl::search_pass(int beta, const Board& pits, bool expect_high) {
    // A pass of fewer than 65 k nodes never reaches a heartbeat: check the limits here too,
    // so that a call made of many small passes (annotate, pie) also stops.
    if (limits.any) check_limits();
    pass_beta = beta;
    live_nodes.store(0);
    if ((threads == 1 && opts.experiments.plain_path) ||
        pits.seeds_in_pits() < opts.parallel_min_seeds) {
        Worker w;
        w.beat_mask = limits.beat_mask;
        const int r = search<false>(w, pits, TTKey::of(pits), beta - 1, beta);
        nodes += w.nodes;
        return r;
    }
    for (;;) {
        state.store(TeamState::kSearching);
        live_nodes.store(0);
        int result = 0;
        std::atomic<uint64_t> total{0};
        // An exception (a damaged database block met by a probe, a failed allocation) must
        // not leave the parallel region, where it would terminate the process: the first
        // one is kept, kFailed stops every thread, and it is rethrown after the region.
        std::exception_ptr error;
        std::mutex error_mutex;
        run_team(threads, [&](int id) noexcept {
            try {
                Worker w;
                w.beat_mask = limits.beat_mask;
                w.id = id;
                w.root = &pits;
                if (expect_high && opts.experiments.follow)
                    w.root_first = Worker::RootFirst::kFollow;
                else if (opts.experiments.root_defer)
                    w.root_first = Worker::RootFirst::kDefer;
                // The root's expected type is the pass's: a cut node if it should fail high.
                const int r =
                    search<true>(w, pits, TTKey::of(pits), beta - 1, beta, nullptr, expect_high);
                // Only a thread that completed its search can move `state` from kSearching:
                // a thread that gave up did so because it had already moved.
                TeamState expected = TeamState::kSearching;
                if (state.compare_exchange_strong(expected, TeamState::kFinished)) result = r;
                total.fetch_add(w.nodes);
                tt.report(w.tally);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
                state.store(TeamState::kFailed);
            }
        });
        nodes += total;
        if (error) std::rethrow_exception(error);
        tt.settle(threads);
        if (state.load() == TeamState::kFinished) return result;
        // kGrowTable: the table grew in settle(); everything stored so far is kept.
    }
}

int Solver::Impl::mtdf(const Board& pits, int guess, bool report) {
    const int s = pits.seeds_in_pits();
    int lower = -s, upper = s;
    int g = std::clamp(guess, -s, s);
    if ((g - s) & 1) g += g < s ? 1 : -1;
    const auto t0 = Clock::now();
    const uint64_t n0 = nodes;
    int pass = 0;
    bool expect_high = true;
    while (lower < upper) {
        pass_no = pass;
        const int beta = g == lower ? g + 2 : g;  // test v >= beta; beta == s (mod 2)
        // The first test (v >= the guess) and a test just after a failed-low one (v >= that
        // bound) succeed when the guess or bound is the value: expect those to fail high
        // (results/parallel.md, "Helpers follow the root's first move in passes expected
        // to fail high").
        const int r = search_pass(beta, pits, expect_high);
        expect_high = r < beta;
        if (r >= beta)
            lower = r;
        else
            upper = r;
        g = r;
        ++pass;
        if (opts.on_pass)
            opts.on_pass({pass, beta, r, lower, upper, nodes - n0,
                          std::chrono::duration<double>(Clock::now() - t0).count()});
        if (report && opts.progress) {
            char buf[200];
            std::snprintf(buf, sizeof buf,
                          "pass %d: test v >= %+d: %s %+d, bounds [%+d, %+d], %llu nodes, %.2f s",
                          pass, beta, r >= beta ? "v >=" : "v <=", r, lower, upper,
                          static_cast<unsigned long long>(nodes - n0),
                          std::chrono::duration<double>(Clock::now() - t0).count());
            opts.progress(buf);
        }
    }
    return lower;
}

int Solver::Impl::pits_value_guess(const Board& b, int guess, bool report) {
    if (b.over()) return b.seeds_in_row_own() - b.seeds_in_row_opp();
    if (opts.book)
        if (const auto v = opts.book->pits_value(b)) return *v;
    const Board pits = b.without_stores();
    const int s = pits.seeds_in_pits();
    if (s <= db_max) return opts.db->probe(pits);
    return measured(s, [&] { return mtdf(pits, guess, report); });
}

// Runs one search from a position of s seeds above the database: sizes the table, starts
// the heartbeat's clock, and adds the search's nodes and times to the statistics, those
// of a stopped search too (its finished passes are in `nodes`, the stopped one's reported
// nodes in `live_nodes`).
template <class F>
int Solver::Impl::measured(int s, F&& run) {
    tt.reserve(position_bound(m, s));
    if (s - std::max(db_max, 0) >= kPresizeSeeds) tt.resize(tt.max_bytes());
    const auto t0 = Clock::now();
    const std::clock_t c0 = std::clock();
    const uint64_t n0 = nodes;
    search_t0 = t0;
    search_n0 = n0;
    next_beat = t0 + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(opts.heartbeat_seconds));
    auto account = [&](uint64_t unfinished) {
        stats.cpu_seconds += double(std::clock() - c0) / CLOCKS_PER_SEC;
        stats.nodes += nodes + unfinished - n0;
        stats.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
        stats.tt_bytes = tt.bytes();
        live_nodes.store(0);
    };
    int v;
    try {
        v = run();
    } catch (const SearchStopped&) {
        account(live_nodes.load());
        throw;
    }
    account(0);
    return v;
}

void Solver::set_book(const Book* book) { impl_->opts.book = book; }

void Solver::set_pass_hook(std::function<void(const MtdPass&)> hook) {
    impl_->opts.on_pass = std::move(hook);
}

Solver::Solver(int m, Rule rule, SolverOptions opts)
    : impl_(std::make_unique<Impl>(m, rule, std::move(opts))) {}
Solver::~Solver() = default;

void Solver::set_limits(uint64_t node_limit, double time_limit_seconds) {
    impl_->opts.node_limit = node_limit;
    impl_->opts.time_limit_seconds = time_limit_seconds;
}

int Solver::pits_value(const Board& b) {
    Impl::Call call(*impl_);
    if (impl_->opts.guess || b.over())
        return impl_->pits_value_guess(b, impl_->opts.guess.value_or(0), true);
    if (impl_->opts.book)
        if (const auto v = impl_->opts.book->pits_value(b)) return *v;
    return impl_->pits_value_guess(
        b, impl_->estimate(b.without_stores(), kEstimateDepth, -1000, 1000), true);
}

int Solver::estimate(const Board& b) const {
    if (b.over()) return b.seeds_in_row_own() - b.seeds_in_row_opp();
    return impl_->estimate(b.without_stores(), kEstimateDepth, -1000, 1000);
}

namespace {
// South's final margin from a position's mover's-view margin.
int south_margin(const Board& b, int mover_margin) {
    return b.to_move() == Side::South ? mover_margin : -mover_margin;
}
int store_diff(const Board& b) { return b.own_store() - b.opp_store(); }
}  // namespace

int Solver::value(const Board& b) {
    Impl::Call call(*impl_);
    if (b.over())
        return south_margin(b, store_diff(b) + b.seeds_in_row_own() - b.seeds_in_row_opp());
    return south_margin(b, store_diff(b) + pits_value(b));
}

std::vector<MoveValue> Solver::move_values(const Board& b) {
    Impl::Call call(*impl_);
    std::vector<MoveValue> out;
    if (b.over()) return out;
    const int v = impl_->pits_value_guess(b, impl_->opts.guess.value_or(0), false);
    for (int p : b.legal_moves()) {
        Board c = b;
        const MoveStep st = play_step(c, p, impl_->rule);
        int margin = store_diff(c);  // c's mover's view, stores included
        if (!st.over) margin += impl_->pits_value_guess(c, st.child_value(v), false);
        out.push_back({p, south_margin(c, margin), format_move(b.to_move(), p, st.result())});
    }
    return out;
}

std::vector<PlayedMove> Solver::principal_variation(const Board& start) {
    Impl::Call call(*impl_);
    // Whether the pits value of c (stores zero, game not over) is at least beta, beta of
    // c's parity: one null-window test, not a whole MTD(f).
    auto at_least = [&](const Board& c, int beta, bool expect_high) {
        return impl_->test_pits(c, beta, expect_high) >= beta;
    };
    std::vector<PlayedMove> pv;
    Board b = start;
    int v = b.over() ? 0 : impl_->pits_value_guess(b, impl_->opts.guess.value_or(0), false);
    while (!b.over()) {
        const Board pits = b.without_stores();
        // Try the TT's best move first, then the others, until one keeps the value. v is
        // the largest child value, so a child keeps it iff its value is at least v: one
        // null-window test of the child decides, and then gives the child's exact value.
        const TTProbe e = impl_->tt.probe(TTKey::of(pits));
        std::vector<int> order;
        if (e.move >= 0 && pits.own_pit(e.move) > 0) order.push_back(e.move);
        for (int p : pits.legal_moves())
            if (p != e.move) order.push_back(p);
        bool found = false;
        for (int p : order) {
            const bool first = p == order.front();
            Board cp = pits;
            const MoveStep st = play_step_from_pits(cp, p, impl_->rule);
            int cv = 0;
            if (st.over) {
                if (st.gain != v) continue;
            } else {
                // The move keeps v iff st.value(cv) >= v: the child's test at child_beta
                // (of the child's parity), negated after a move that passes the turn.
                const Board child = cp.without_stores();
                const int cb = round_up(child.seeds_in_pits(), st.child_beta(v));
                if (at_least(child, cb, st.extra ? first : !first) != st.extra) continue;
                cv = st.child_value(v);
            }
            const Side side = b.to_move();
            b.play(p, impl_->rule);
            pv.push_back({side, p, st.result(), format_move(side, p, st.result())});
            v = cv;
            found = true;
            break;
        }
        if (!found) throw std::logic_error("principal_variation: no move keeps the value");
    }
    return pv;
}

// Solver::test of a pits-only position whose game is not over (a book's value, a database
// probe, a bound from the seed count alone, or one measured pass).
int Solver::Impl::test_pits(const Board& pits, int beta, bool expect_high) {
    // The exact value answers any test: v >= v if v >= beta, v <= v otherwise.
    if (opts.book)
        if (const auto v = opts.book->pits_value(pits)) return *v;
    const int s = pits.seeds_in_pits();
    if (s <= db_max) return opts.db->probe(pits);
    if (beta > s) return s;     // v <= s < beta: fails low
    if (beta <= -s) return -s;  // v >= -s >= beta: succeeds
    return measured(s, [&] { return search_pass(beta, pits, expect_high); });
}

int Solver::test(const Board& b, int beta) {
    Impl::Call call(*impl_);
    if (b.over()) return b.seeds_in_row_own() - b.seeds_in_row_opp();
    return impl_->test_pits(b.without_stores(), beta, true);
}

int Solver::table_move(const Board& b) const {
    if (b.over()) return -1;
    const Board pits = b.without_stores();
    const TTProbe e = impl_->tt.probe(TTKey::of(pits));
    return e.move >= 0 && e.move < b.pits() && pits.own_pit(e.move) > 0 ? e.move : -1;
}

const SolverStats& Solver::stats() const { return impl_->stats; }

void Solver::clear_table() { impl_->tt.clear(); }

void Solver::clear() {
    impl_->tt.clear();
    impl_->stats = {};
}

}  // namespace kalah
