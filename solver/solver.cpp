// Exact solver: fail-soft null-window alpha-beta on pits-only positions, MTD(f) driver.
#include "solver/solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "db/database.h"
#include "solver/tt.h"

namespace kalah {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kEtcMinSeeds = 8;
constexpr int kEstimateDepth = 10;

// One move from a node, played on a copy.
struct Child {
    Board b;      // the position after the move, stores cleared (unless over)
    int gain;     // mover's store minus opponent's after the move (final margin if over)
    int pit;
    int order;    // higher is searched earlier
    bool extra;   // same side moves again: value = gain + v(b); else gain - v(b)
};

// Number of ways to put at most s seeds in 2m pits: an upper bound on the positions a
// search from s seeds can meet (sizes the TT for small problems).
uint64_t position_bound(int m, int s) {
    double c = 1;
    for (int i = 1; i <= 2 * m; ++i) c = c * (s + i) / i;
    return c > 1e15 ? uint64_t(1e15) : static_cast<uint64_t>(c);
}

}  // namespace

struct Solver::Impl {
    int m;
    Rule rule;
    SolverOptions opts;
    TranspositionTable tt;
    SolverStats stats;
    uint64_t nodes = 0;
    int db_max = -1;

    Impl(int m_, Rule r, SolverOptions o)
        : m(m_), rule(r), opts(std::move(o)), tt(opts.tt_mb << 20) {
        if (opts.db) db_max = opts.db->max_seeds();
    }

    int search(const Board& b, int alpha, int beta);
    int estimate(const Board& b, int depth, int alpha, int beta) const;
    int mtdf(const Board& pits, int guess, bool report);
    int pits_value_guess(const Board& b, int guess, bool report);
};

// b: pits only (stores zero), both rows non-empty. Contract in solver.h.
int Solver::Impl::search(const Board& b, int alpha, int beta) {
    ++nodes;
    const int s = b.seeds_in_pits();
    if (s <= db_max) {
        // The one place the endgame database is consulted.
        const int v = opts.db->probe(b);
        tt.store(TTKey::of(b), v, v, -1, 1);
        return v;
    }
    int lo = -s, hi = s;
    if (hi <= alpha) return hi;
    if (lo >= beta) return lo;
    const TTKey key = TTKey::of(b);
    const TTProbe e = tt.probe(key);
    if (e.found) {
        lo = std::max(lo, e.lower);
        hi = std::min(hi, e.upper);
        if (lo >= beta) return lo;
        if (hi <= alpha) return hi;
        if (lo == hi) return lo;
    }
    const uint64_t nodes_before = nodes;

    Child kids[kMaxPits];
    int n = 0;
    int best = -128, best_pit = -1;
    for (unsigned mask = b.legal_mask(); mask; mask &= mask - 1) {
        const int p = __builtin_ctz(mask);
        Child& c = kids[n];
        c.b = b;
        const MoveResult r = c.b.play(p, rule);
        c.pit = p;
        if (r.over) {
            // View unchanged, rows swept: the margin is final.
            const int v = c.b.own_store() - c.b.opp_store();
            if (v > best) best = v, best_pit = p;
            continue;
        }
        c.extra = r.extra;
        // Stores were zero before the move, and only the mover's store grows.
        c.gain = r.extra ? c.b.own_store() : c.b.opp_store();
        c.b = c.b.without_stores();
        tt.prefetch(TTKey::of(c.b));  // the child's probe comes soon: hide the cache miss
        if (opts.use_ordering)
            c.order = r.extra ? 200 + p : r.captured ? 100 + r.captured : p;
        else
            c.order = -p;
        if (opts.use_tt_move && p == e.move) c.order = 1000;
        ++n;
    }
    if (best >= beta) {
        tt.store(key, best, 127, best_pit, nodes - nodes_before);
        return best;
    }
    // Insertion sort, highest order first (at most 6 children).
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && kids[j].order > kids[j - 1].order; --j)
            std::swap(kids[j], kids[j - 1]);

    if (opts.use_etc && s >= kEtcMinSeeds) {
        // A child's stored bound may already refute this node (value >= beta). Near the
        // leaves the extra probes cost more than the nodes they save.
        for (int i = 0; i < n; ++i) {
            const Child& c = kids[i];
            const TTProbe ce = tt.probe(TTKey::of(c.b));
            if (!ce.found) continue;
            const int v = c.extra ? c.gain + ce.lower : c.gain - ce.upper;
            if (v >= beta) {
                tt.store(key, v, 127, c.pit, nodes - nodes_before);
                return v;
            }
        }
    }

    for (int i = 0; i < n; ++i) {
        const Child& c = kids[i];
        const int a = std::max(alpha, best);
        const int v = c.extra ? c.gain + search(c.b, a - c.gain, beta - c.gain)
                              : c.gain - search(c.b, c.gain - beta, c.gain - a);
        if (v > best) {
            best = v;
            best_pit = c.pit;
            if (best >= beta) break;
        }
    }
    const uint64_t searched = nodes - nodes_before;
    if (best >= beta)
        tt.store(key, best, 127, best_pit, searched);
    else if (best <= alpha)
        tt.store(key, -127, best, best_pit, searched);
    else
        tt.store(key, best, best, best_pit, searched);
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
        const MoveResult r = c.play(p, rule);
        int v;
        if (r.over) {
            v = c.own_store() - c.opp_store();
        } else if (r.extra) {
            const int g = c.own_store();
            v = g + estimate(c.without_stores(), depth - 1, alpha - g, beta - g);
        } else {
            const int g = c.opp_store();
            v = g - estimate(c.without_stores(), depth - 1, g - beta, g - alpha);
        }
        if (v > best) best = v;
        if (best > alpha) alpha = best;
        if (alpha >= beta) break;
    }
    return best;
}

int Solver::Impl::mtdf(const Board& pits, int guess, bool report) {
    const int s = pits.seeds_in_pits();
    int lower = -s, upper = s;
    int g = std::clamp(guess, -s, s);
    if ((g - s) & 1) g += g < s ? 1 : -1;
    const auto t0 = Clock::now();
    const uint64_t n0 = nodes;
    int pass = 0;
    while (lower < upper) {
        const int beta = g == lower ? g + 2 : g;  // test v >= beta; beta == s (mod 2)
        const int r = search(pits, beta - 1, beta);
        if (r >= beta)
            lower = r;
        else
            upper = r;
        g = r;
        ++pass;
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
    const Board pits = b.without_stores();
    const int s = pits.seeds_in_pits();
    if (s <= db_max) return opts.db->probe(pits);
    tt.reserve(position_bound(m, s));
    const auto t0 = Clock::now();
    const uint64_t n0 = nodes;
    const int v = mtdf(pits, guess, report);
    stats.nodes += nodes - n0;
    stats.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    return v;
}

Solver::Solver(int m, Rule rule, SolverOptions opts)
    : impl_(std::make_unique<Impl>(m, rule, std::move(opts))) {}
Solver::~Solver() = default;

int Solver::pits_value(const Board& b) {
    if (impl_->opts.guess || b.over()) return impl_->pits_value_guess(b, impl_->opts.guess.value_or(0), true);
    return impl_->pits_value_guess(b, impl_->estimate(b.without_stores(), kEstimateDepth, -1000, 1000), true);
}

namespace {
// South's final margin from a position's mover's-view margin.
int south_margin(const Board& b, int mover_margin) {
    return b.to_move() == Side::South ? mover_margin : -mover_margin;
}
int store_diff(const Board& b) { return b.own_store() - b.opp_store(); }
}  // namespace

int Solver::value(const Board& b) {
    if (b.over()) return south_margin(b, store_diff(b) + b.seeds_in_row_own() - b.seeds_in_row_opp());
    return south_margin(b, store_diff(b) + pits_value(b));
}

std::vector<MoveValue> Solver::move_values(const Board& b) {
    std::vector<MoveValue> out;
    if (b.over()) return out;
    const int v = impl_->pits_value_guess(b, impl_->opts.guess.value_or(0), false);
    for (int p : b.legal_moves()) {
        Board c = b;
        const MoveResult r = c.play(p, impl_->rule);
        int margin;  // c's mover's view, stores included
        if (r.over) {
            margin = store_diff(c);
        } else {
            const Board pits = b.without_stores();
            Board cp = pits;
            cp.play(p, impl_->rule);
            const int gain = r.extra ? cp.own_store() : cp.opp_store();
            const int guess = r.extra ? v - gain : gain - v;
            margin = store_diff(c) + impl_->pits_value_guess(c, guess, false);
        }
        out.push_back({p, south_margin(c, margin), format_move(b.to_move(), p, r)});
    }
    return out;
}

std::vector<PlayedMove> Solver::principal_variation(const Board& start) {
    std::vector<PlayedMove> pv;
    Board b = start;
    int v = b.over() ? 0 : impl_->pits_value_guess(b, impl_->opts.guess.value_or(0), false);
    while (!b.over()) {
        const Board pits = b.without_stores();
        // Try the TT's best move first, then the others, until one keeps the value.
        const TTProbe e = impl_->tt.probe(TTKey::of(pits));
        std::vector<int> order;
        if (e.move >= 0 && pits.own_pit(e.move) > 0) order.push_back(e.move);
        for (int p : pits.legal_moves())
            if (p != e.move) order.push_back(p);
        bool found = false;
        for (int p : order) {
            Board cp = pits;
            const MoveResult r = cp.play(p, impl_->rule);
            int cv = 0, child_v;
            if (r.over) {
                child_v = store_diff(cp);
            } else {
                const int gain = r.extra ? cp.own_store() : cp.opp_store();
                cv = impl_->pits_value_guess(cp, r.extra ? v - gain : gain - v, false);
                child_v = r.extra ? gain + cv : gain - cv;
            }
            if (child_v != v) continue;
            const Side side = b.to_move();
            b.play(p, impl_->rule);
            pv.push_back({side, p, r, format_move(side, p, r)});
            v = cv;
            found = true;
            break;
        }
        if (!found) throw std::logic_error("principal_variation: no move keeps the value");
    }
    return pv;
}

const SolverStats& Solver::stats() const { return impl_->stats; }

void Solver::clear() {
    impl_->tt.clear();
    impl_->stats = {};
}

}  // namespace kalah
