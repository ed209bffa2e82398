// The manager's proof tree (contract and choice rule in campaign/tree.h).
#include "campaign/tree.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_set>

#include "core/notation.h"
#include "db/database.h"

namespace kalah::campaign {
namespace {

constexpr uint64_t kInf = std::numeric_limits<uint64_t>::max() / 4;
uint64_t add_capped(uint64_t a, uint64_t b) { return std::min(kInf, a + b); }

// The solver's static move order (solver/search.cpp, Impl::expand; higher is tried
// earlier): moves that bank 8 or more seeds without an extra move, then extra moves, then
// the other moves by what they bank, the pit nearest the store first among equals.
int static_order(const MoveStep& st, int pit) {
    if (st.gain >= 8 && !st.extra) return 300 + 8 * st.gain + pit;
    if (st.extra) return 200 + pit;
    if (st.gain > 0) return 100 + 8 * st.gain + pit;
    return pit;
}

}  // namespace

ProofTree::ProofTree(const CampaignParams& p, const db::Database* db)
    : ProofTree(p, db, root_frame(p).board) {
    frame_ = root_frame(p);
}

ProofTree::ProofTree(const CampaignParams& p, const db::Database* db, const Board& root)
    : params_(p), db_(db) {
    frame_.board = root;
    node_of(root.without_stores(), 0);
}

int ProofTree::normal_beta(int seeds, int beta) { return round_up(seeds, beta); }

int ProofTree::node_of(const Board& pits, int depth) {
    const Cells key = pits.pits_key();
    if (auto it = index_.find(key); it != index_.end()) {
        lower_depth(it->second, depth);
        return it->second;
    }
    Node n;
    n.depth = depth;
    n.added_by = applying_;
    n.pos = board_of_key(params_.m, key);
    n.seeds = n.pos.seeds_in_pits();
    n.job_lo = -n.seeds;
    n.job_hi = n.seeds;
    if (n.pos.over()) {
        n.job_lo = n.job_hi = n.pos.seeds_in_row_own() - n.pos.seeds_in_row_opp();
    } else if (db_ && n.seeds <= db_->max_seeds()) {
        n.job_lo = n.job_hi = db_->probe(n.pos);
    }
    bool split = false;
    if (auto f = facts_.find(key); f != facts_.end()) {
        n.job_lo = std::max(n.job_lo, f->second.lo);
        n.job_hi = std::min(n.job_hi, f->second.hi);
        split = f->second.split;
        if (n.job_lo > n.job_hi)
            throw ContradictionError("the journal's bounds on " + format_position(n.pos) +
                                     " contradict the endgame database");
    }
    n.lo = n.job_lo;
    n.hi = n.job_hi;
    const int i = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(n));
    index_.emplace(key, i);
    if (split) expand(i);
    return i;
}

void ProofTree::lower_depth(int start, int depth) {
    std::vector<std::pair<int, int>> work{{start, depth}};
    while (!work.empty()) {
        const auto [i, d] = work.back();
        work.pop_back();
        if (d >= nodes_[i].depth) continue;
        nodes_[i].depth = d;
        for (const Edge& e : nodes_[i].edges)
            if (!e.step.over) work.push_back({e.child, d + 1});
    }
}

void ProofTree::expand(int i) {
    if (nodes_[i].expanded) return;
    nodes_[i].expanded = true;
    ++expanded_;
    std::vector<Edge> edges;
    const Board pos = nodes_[i].pos;
    for (const int pit : pos.legal_moves()) {
        Board c = pos;
        Edge e;
        e.step = play_step_from_pits(c, pit, params_.rule);
        e.pit = pit;
        e.order = static_order(e.step, pit);
        if (!e.step.over) {
            e.child = node_of(c.without_stores(), nodes_[i].depth + 1);  // may grow nodes_
            nodes_[e.child].parents.push_back(i);
        }
        edges.push_back(e);
    }
    nodes_[i].edges = std::move(edges);
    update(i);
}

std::pair<int, int> ProofTree::edge_bounds(const Edge& e) const {
    if (e.step.over) return {e.step.gain, e.step.gain};
    const Node& c = nodes_[e.child];
    return {e.step.lower(c.lo, c.hi), e.step.upper(c.lo, c.hi)};
}

void ProofTree::update(int start) {
    std::vector<int> work{start};
    while (!work.empty()) {
        const int i = work.back();
        work.pop_back();
        Node& n = nodes_[i];
        int lo = n.job_lo, hi = n.job_hi;
        if (n.expanded) {
            int dlo = std::numeric_limits<int>::min(), dhi = std::numeric_limits<int>::min();
            for (const Edge& e : n.edges) {
                const auto [elo, ehi] = edge_bounds(e);
                dlo = std::max(dlo, elo);
                dhi = std::max(dhi, ehi);
            }
            lo = std::max(lo, dlo);
            hi = std::min(hi, dhi);
        }
        if (lo > hi)
            throw ContradictionError("contradictory bounds on " + format_position(n.pos) + ": [" +
                                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
        const bool changed = lo != n.lo || hi != n.hi;
        n.lo = lo;
        n.hi = hi;
        if (changed) work.insert(work.end(), n.parents.begin(), n.parents.end());
    }
}

void ProofTree::apply(const JobRecord& r) {
    applying_ = applied_++;
    const Board pos = board_of_key(params_.m, r.key);
    const int s = pos.seeds_in_pits();
    auto [it, fresh] = facts_.try_emplace(r.key, Fact{-s, s, false});
    Fact& f = it->second;
    if (r.kind == JobRecord::Kind::Split) {
        f.split = true;
    } else if (r.result >= r.beta) {
        f.lo = std::max(f.lo, round_up(s, r.result));
    } else {
        f.hi = std::min(f.hi, round_down(s, r.result));
    }
    if (f.lo > f.hi)
        throw ContradictionError("contradictory job results on " + format_position(pos) + ": [" +
                                 std::to_string(f.lo) + ", " + std::to_string(f.hi) + "]");
    const auto found = index_.find(r.key);
    if (found == index_.end()) return;  // kept in facts_ for when the position is reached
    const int i = found->second;
    nodes_[i].job_lo = std::max(nodes_[i].job_lo, f.lo);
    nodes_[i].job_hi = std::min(nodes_[i].job_hi, f.hi);
    if (f.split) expand(i);  // no-op when expanded already; updates otherwise
    update(i);
    touch(i);
}

void ProofTree::touch(int start) {
    std::vector<int> work{start};
    while (!work.empty()) {
        const int i = work.back();
        work.pop_back();
        if (nodes_[i].touched == applying_) continue;
        nodes_[i].touched = applying_;
        work.insert(work.end(), nodes_[i].parents.begin(), nodes_[i].parents.end());
    }
}

ProofTree::Numbers ProofTree::numbers(int i, int beta, Memo& memo, InFlight mode) const {
    const Node& n = nodes_[i];
    beta = normal_beta(n.seeds, beta);
    if (n.lo >= beta) return {0, kInf};
    if (n.hi < beta) return {kInf, 0};
    if (!n.expanded) {
        if (mode == InFlight::Count) return {1, 1};
        const auto it = in_flight_.find(n.pos.pits_key());
        if (it == in_flight_.end()) {
            const uint64_t w = leaf_weight(n);
            return {w, w};
        }
        // "v >= b" hoped true answers "v >= beta" for beta <= b; hoped false, for beta >= b.
        if (mode == InFlight::Assume && it->second.root_beta == assume_for_) {
            const Job& f = it->second;
            if (f.hoped && beta <= f.beta) return {0, kInf};
            if (!f.hoped && beta >= f.beta) return {kInf, 0};
        }
        // A job in flight may settle this question, but no second job should be sent here.
        return {kInf, kInf};
    }
    const uint64_t memo_key = (uint64_t(i) << 10) | uint64_t(beta + 512);
    if (auto it = memo.find(memo_key); it != memo.end()) return it->second;
    Numbers out{kInf, 0};
    for (const Edge& e : nodes_[i].edges) {
        Numbers m;
        if (e.step.over) {
            m = e.step.gain >= beta ? Numbers{0, kInf} : Numbers{kInf, 0};
        } else {
            const Numbers c = numbers(e.child, e.step.child_beta(beta), memo, mode);
            m = e.step.extra ? c : Numbers{c.dn, c.pn};
        }
        out.pn = std::min(out.pn, m.pn);
        out.dn = add_capped(out.dn, m.dn);
    }
    memo.emplace(memo_key, out);
    return out;
}

int ProofTree::seeds_base() const {
    // Exponents from the database's top (or 40 seeds below the root, whichever is higher)
    // keep the weights of a whole campaign apart below the cap.
    return std::max(db_ ? db_->max_seeds() + 1 : 0, nodes_[0].seeds - 40);
}

uint64_t ProofTree::leaf_weight(const Node& n) const {
    if (leaf_growth_ <= 1) return 1;
    const double w = std::pow(leaf_growth_, std::max(0, n.seeds - seeds_base()));
    return static_cast<uint64_t>(std::clamp(w, 1.0, 1e15));
}

uint64_t ProofTree::job_budget(const Board& pits) const {
    if (budget_growth_ <= 1 || budget_base_ == 0) return 0;
    const double w = std::pow(budget_growth_, std::max(0, pits.seeds_in_pits() - seeds_base()));
    const double cap = double(uint64_t(1) << 50);
    return static_cast<uint64_t>(std::clamp(double(budget_base_) * w, 1.0, cap));
}

ProofTree::PassJobs ProofTree::pass_jobs(int beta) const {
    if (decided(beta)) return {};
    // most: a walk over the undecided questions, each (node, threshold) once.
    std::unordered_set<uint64_t> seen;
    std::vector<std::pair<int, int>> work{{0, normal_beta(nodes_[0].seeds, beta)}};
    uint64_t most = 0;
    while (!work.empty()) {
        const auto [i, b] = work.back();
        work.pop_back();
        const Node& n = nodes_[i];
        if (n.lo >= b || n.hi < b) continue;
        if (!seen.insert((uint64_t(i) << 10) | uint64_t(b + 512)).second) continue;
        if (!n.expanded) {
            ++most;
            continue;
        }
        for (const Edge& e : n.edges) {
            if (e.step.over) continue;
            const int cb = e.step.child_beta(b);
            work.push_back({e.child, normal_beta(nodes_[e.child].seeds, cb)});
        }
    }
    const auto [pn, dn] = proof_numbers(beta);
    return {std::min({pn, dn, most}), most};
}

std::pair<uint64_t, uint64_t> ProofTree::proof_numbers(int beta) const {
    Memo memo;
    const Numbers root = numbers(0, beta, memo, InFlight::Count);
    return {root.pn, root.dn};
}

std::optional<Job> ProofTree::select(int beta, bool expect) {
    assume_for_ = normal_beta(nodes_[0].seeds, beta);
    if (auto job = descend(beta, expect, InFlight::Assume)) return job;
    // Nothing is in flight (the same descent), or the hopes of the jobs in flight leave no
    // job: speculate past them.
    if (in_flight_.empty()) return std::nullopt;
    auto job = descend(beta, expect, InFlight::Block);
    if (job) job->speculative = true;
    return job;
}

std::optional<Job> ProofTree::descend(int beta, bool want, InFlight mode) {
    memo_.clear();
    int i = 0;
    for (;;) {
        const Node& n = nodes_[i];
        beta = normal_beta(n.seeds, beta);
        if (n.lo >= beta || n.hi < beta) {
            if (i == 0) return std::nullopt;
            throw std::logic_error("campaign: descended into a decided question");
        }
        if (!n.expanded) {
            if (in_flight_.count(n.pos.pits_key())) return std::nullopt;
            return Job{n.pos, beta, want, assume_for_, false, job_budget(n.pos)};
        }
        // The move with the least proof number (on a tie, the first in the engine's order,
        // or in pit order); with stickiness, the move last worked in while its proof number
        // is within (1 + eps) of that least one.
        uint64_t best = kInf + 1;
        int next = -1, next_beta = 0, next_order = 0;
        bool next_extra = false;
        uint64_t sticky_pn = kInf;
        int sticky = -1, sticky_beta = 0;
        int64_t sticky_touched = -1;
        bool sticky_extra = false;
        for (const Edge& e : n.edges) {
            if (e.step.over) continue;
            const int b = e.step.child_beta(beta);
            const Numbers c = numbers(e.child, b, memo_, mode);
            const uint64_t pn = e.step.extra ? c.pn : c.dn;
            const int order = engine_order_ ? e.order : 0;
            if (pn < best || (pn == best && order > next_order))
                best = pn, next = e.child, next_beta = b, next_extra = e.step.extra,
                next_order = order;
            const int64_t t = nodes_[e.child].touched;
            if (pn > 0 && pn < kInf && t > sticky_touched)
                sticky_touched = t, sticky = e.child, sticky_pn = pn, sticky_beta = b,
                sticky_extra = e.step.extra;
        }
        if (stickiness_ > 0 && sticky >= 0 && sticky != next && best > 0 && best < kInf &&
            double(sticky_pn) <= double(best) * (1 + stickiness_)) {
            next = sticky, next_beta = sticky_beta, next_extra = sticky_extra;
        }
        // Assumed answers can prove a question its bounds leave open (only the root's: the
        // descent enters only moves of 0 < pn < inf, whose questions are open); real
        // numbers cannot.
        if (best == 0 && mode == InFlight::Assume) return std::nullopt;
        if (next < 0 || best == 0)
            throw std::logic_error("campaign: no undecided move at an undecided position");
        if (best >= kInf) return std::nullopt;  // every job that could help is in flight
        i = next;
        beta = next_beta;
        // The child's question answered true proves the move after an extra move, refutes
        // it otherwise.
        if (!next_extra) want = !want;
    }
}

bool ProofTree::decided(int beta) const {
    const Node& r = nodes_[0];
    beta = normal_beta(r.seeds, beta);
    return r.lo >= beta || r.hi < beta;
}

void ProofTree::set_in_flight(const Job& job) { in_flight_[job.pos.pits_key()] = job; }

void ProofTree::clear_in_flight(const Board& pos) { in_flight_.erase(pos.pits_key()); }

int ProofTree::next_beta(int guess) const {
    const Node& r = nodes_[0];
    const int g = round_up(r.seeds, std::clamp(guess, -r.seeds - 2, r.seeds + 2));
    if (g > r.lo && g <= r.hi) return g;
    return g <= r.lo ? r.lo + 2 : r.hi;
}

size_t ProofTree::open_positions() const {
    size_t n = 0;
    for (const Node& x : nodes_) n += !x.expanded && x.lo < x.hi;
    return n;
}

std::vector<int> ProofTree::best_moves() const {
    const Node& r = nodes_[0];
    std::vector<int> out;
    if (r.lo != r.hi || !r.expanded) return out;
    for (const Edge& e : r.edges)
        if (edge_bounds(e).first == r.lo) out.push_back(e.pit);
    return out;
}

std::vector<ProofTree::MoveBounds> ProofTree::root_moves() const {
    std::vector<MoveBounds> out;
    for (const Edge& e : nodes_[0].edges) {
        const auto [lo, hi] = edge_bounds(e);
        out.push_back({e.pit, lo, hi});
    }
    return out;
}

std::vector<ProofTree::TurnBounds> ProofTree::root_turns() const {
    std::vector<TurnBounds> out;
    std::vector<int> played;
    // gain: what the turn's earlier moves put in the stores (the root mover's view); an
    // extra move's position is seen from the same mover, so its moves' bounds add to it.
    auto walk = [&](auto&& self, int node, int gain) -> void {
        for (const Edge& e : nodes_[node].edges) {
            played.push_back(e.pit);
            if (e.step.extra && !e.step.over && nodes_[e.child].expanded) {
                self(self, e.child, gain + e.step.gain);
            } else {
                const auto [lo, hi] = edge_bounds(e);
                out.push_back({played, gain + lo, gain + hi});
            }
            played.pop_back();
        }
    };
    walk(walk, 0, 0);
    return out;
}

std::optional<ProofTree::Place> ProofTree::place(const Board& pits) const {
    const auto it = index_.find(pits.pits_key());
    if (it == index_.end()) return std::nullopt;
    return Place{nodes_[it->second].depth, nodes_[it->second].added_by};
}

std::pair<int, int> ProofTree::bounds(const Board& pits) const {
    const Cells key = pits.pits_key();
    if (auto it = index_.find(key); it != index_.end())
        return {nodes_[it->second].lo, nodes_[it->second].hi};
    const int s = pits.seeds_in_pits();
    if (auto f = facts_.find(key); f != facts_.end()) return {f->second.lo, f->second.hi};
    return {-s, s};
}

}  // namespace kalah::campaign
