// One MTD(f) pass, the test v >= beta: on the calling thread, or by a team of threads
// over the shared table (lazy SMP with ABDADA-style deferral; solver/search_impl.h).
#include <omp.h>

#include <exception>
#include <mutex>
#if defined(__SANITIZE_THREAD__)
#include <thread>
#include <vector>
#endif

#include "solver/search_impl.h"

namespace kalah {
using namespace solver_internal;
namespace {

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

}  // namespace

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
    // A pass of fewer nodes than a beat never reaches one: check the limits (and ask the
    // poll) here too, so that a call made of many small passes (annotate, pie) also stops.
    if (limits.any) check_limits();
    if (opts.poll) poll();
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
        tt.end_shared_phase(threads);
        if (state.load() == TeamState::kFinished) return result;
        // kGrowTable: the table grew in end_shared_phase(); everything stored so far is kept.
    }
}

}  // namespace kalah
