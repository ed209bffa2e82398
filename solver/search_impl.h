// The solver's inside, shared by its three files and by nothing else: the state of one
// Solver (Solver::Impl: options, table, database, counters, limits, the parallel team's
// state), the search's node types and tuning constants. solver/search.cpp is the
// null-window alpha-beta, solver/team.cpp one MTD(f) pass on one thread or a team,
// solver/solver.cpp MTD(f) and the public API (solver/solver.h).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "core/step.h"
#include "db/database.h"
#include "solver/solver.h"
#include "solver/tt.h"

namespace kalah {
namespace solver_internal {

using Clock = std::chrono::steady_clock;

constexpr int kEtcMinSeeds = 8;
constexpr int kEstimateDepth = 10;
// Parallel search, ABDADA-style deferral (SearchExperiments::defer; always on in the
// product): a thread announces the nodes with at least kBusyMinSeeds seeds (and kBusyAboveDb above
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
// The beat under a time limit or a poll (SolverOptions::poll): a budget of a tenth of a
// second must hold where a node costs up to a millisecond (a probe of a layer read through
// the block cache), so 65 k nodes between checks would overrun it by a minute.
constexpr uint64_t kTimedBeatNodes = 256;
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
// Under a time limit the presize is at most this many bytes a second left: a quarter of the
// slowest page zeroing measured (0.4 GB/s on a guest; results/serve.md).
constexpr double kFaultBytesPerSecond = 100.0 * (1 << 20);

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
inline uint64_t position_bound(int m, int s) {
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
    Clock::time_point next_poll;  // when the calling thread asks SolverOptions::poll next

    static CallLimits starting(const SolverOptions& o, uint64_t nodes) {
        CallLimits l;
        l.any = o.stop || o.node_limit || o.time_limit_seconds > 0 || o.poll;
        l.node_end = o.node_limit ? nodes + o.node_limit : 0;
        if (o.node_limit && o.node_limit < 16 * kBeatNodes)
            l.beat_mask = std::bit_floor(std::max<uint64_t>(o.node_limit / 16, 256)) - 1;
        if (o.time_limit_seconds > 0 || o.poll)
            l.beat_mask = std::min(l.beat_mask, kTimedBeatNodes - 1);
        if (o.poll)
            l.next_poll = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(o.poll_seconds));
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

}  // namespace solver_internal

struct Solver::Impl {
    using Clock = solver_internal::Clock;
    using Worker = solver_internal::Worker;
    using Expansion = solver_internal::Expansion;
    using CallLimits = solver_internal::CallLimits;
    using TeamState = solver_internal::TeamState;

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
    // Asks SolverOptions::poll when due (the calling thread only); throws SearchStopped
    // when it answers true.
    void poll() {
        const auto now = Clock::now();
        if (now < limits.next_poll) return;
        limits.next_poll = now + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(opts.poll_seconds));
        if (opts.poll()) throw SearchStopped("search interrupted");
    }
    [[gnu::noinline]] void beat(Worker& w) {
        live_nodes.fetch_add(w.nodes - w.nodes_reported, std::memory_order_relaxed);
        w.nodes_reported = w.nodes;
        if (limits.any) check_limits();
        if (w.id != 0) return;
        if (opts.poll) poll();
        if (!opts.heartbeat) return;
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
    std::atomic<uint64_t>& busy_slot(uint64_t h) {
        return busy[(h >> 1) & (solver_internal::kBusySize - 1)];
    }
    bool is_busy(const TTKey& k) {
        const uint64_t h = busy_hash(k);
        return busy_slot(h).load(std::memory_order_relaxed) == h;
    }

    Impl(int m_, Rule r, SolverOptions o)
        : m(m_), rule(r), opts(std::move(o)), tt(opts.tt_mb << 20) {
        if (opts.db) db_max = opts.db->max_seeds();
        threads = std::max(1, opts.threads);
        if (threads > 1 || !opts.experiments.plain_path) {
            busy = std::make_unique<std::atomic<uint64_t>[]>(solver_internal::kBusySize);
            for (size_t i = 0; i < solver_internal::kBusySize; ++i) busy[i].store(0);
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

}  // namespace kalah
