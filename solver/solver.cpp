// Exact solver: MTD(f) over the null-window passes of solver/team.cpp, and the public
// API of solver/solver.h (values, moves, principal variations, limits, statistics).
#include "solver/solver.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "solver/book.h"
#include "solver/known.h"
#include "solver/search_impl.h"

namespace kalah {
using namespace solver_internal;

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
    if (s - std::max(db_max, 0) >= kPresizeSeeds) {
        // The whole budget at once; under a time limit no more than the kernel can give in
        // a quarter of the time left: its first nodes fault in every page of the table
        // before a limit check (1 GiB took 3.4 s on a guest zeroing 0.4 GB/s). The table
        // grows past that as a search without the presize does.
        size_t bytes = tt.max_bytes();
        if (limits.deadline) {
            const double left =
                std::chrono::duration<double>(*limits.deadline - Clock::now()).count();
            bytes = std::min(bytes, size_t(std::max(0.0, left) * kFaultBytesPerSecond));
        }
        tt.resize(bytes);
    }
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

void Solver::set_poll(std::function<bool()> poll) { impl_->opts.poll = std::move(poll); }

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

std::optional<KnownValue> Solver::known_value(const Board& b) const {
    return kalah::known_value(b, impl_->rule, impl_->opts.book, impl_->opts.db);
}

std::optional<KnownAnswer> Solver::known(const Board& b) const {
    return known_answer(b, impl_->rule, impl_->opts.book, impl_->opts.db);
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
