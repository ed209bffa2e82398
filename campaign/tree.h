// The manager's proof tree: the top of the game graph, bounds per position, and the choice
// of the next job by proof and disproof numbers.
#pragma once

// Nodes are pits-only positions (mover's view, stores zero; campaign/journal.h keys),
// transpositions merged: the game graph has no cycles (a move either banks a seed or moves
// seeds towards the mover's store), so the tree is a DAG. Every node carries proven bounds
// lo <= v <= hi on its pits value v (solver/solver.h), from the jobs run on it and, once it
// is expanded, from its moves: a move with gain g is worth g when it ends the game, g +
// v(child) after an extra move (the same player moves again) and g - v(child) otherwise,
// and v is the best move's worth (core/step.h, MoveStep). Children the endgame database holds are
// exact at once.
//
// A question "v(p) >= beta?" is an OR over p's moves: an extra move asks its child
// "v(c) >= beta - g?", another move asks the negation of "v(c) >= g - beta + 1?". Proof and
// disproof numbers (pn, dn) count the jobs that could still prove or disprove a question:
// 0/inf once the bounds decide it, 1/1 at a position not expanded yet (a job), and at an
// expanded position pn = the least pn of a move, dn = the sum of the moves' dn (a move's
// pn/dn are its child question's, swapped when negated). The next job is the most-proving
// one: from the root, always into the move with the least pn (the first on a tie), down to
// a position not expanded; everything is a function of the tree, and the tree a function of
// the journal's records (apply()), so a resumed campaign makes the same choices.
//
// With several workers, jobs are chosen while others are in flight. Each job in flight is
// assumed to come back with the answer its choice hoped for (the answer that moves the root
// towards the answer the pass expects: MTD(f) expects a pass at or below its guess to
// prove and one above it to fail), so the next job is the one a single worker would run
// after it: a job the proof still needs if the hopes hold, rather than the next-best
// alternative of an OR node (the "virtual win" of job-level proof-number search). A job
// chosen for another root question (an earlier pass) is not assumed to answer, only
// blocked. Only when the assumptions leave no job (they settle the root's question, or
// every way to it is blocked) is a speculative job chosen with every job in flight blocked
// instead (inf/inf). The assumptions steer the choice only; bounds come from records
// alone.
//
// The state is rebuilt from records only: a bound record tightens a position's bounds
// (kept also for positions not in the tree yet), a split record expands it.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "campaign/journal.h"
#include "core/board.h"
#include "core/step.h"

namespace kalah::db {
class Database;
}

namespace kalah::campaign {

// Records that cannot all be true (a damaged journal with valid checksums, or a wrong
// search result); what() names the position.
struct ContradictionError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A job: one null-window test of a position (pits only, South to move) with a budget.
struct Job {
    Board pos;
    int beta = 0;
    // How select() chose it (not sent to workers): the answer to "v(pos) >= beta?" it hoped
    // for, the root's threshold it was chosen for, and whether it is a speculative job
    // (chosen with the jobs in flight blocked, their hopes leaving no job).
    bool hoped = true;
    int root_beta = 0;
    bool speculative = false;
    // Its node budget (ProofTree::set_budget_growth); 0: the worker's own (--job-nodes).
    // Sent to the worker with the job; not journaled (a record is a proven fact whatever
    // budget found it).
    uint64_t budget = 0;
};

class ProofTree {
  public:
    // The campaign's root is the start of Kalah(m,n), or the position after p's line
    // (campaign/line.h); db (may be null) resolves positions it holds without jobs.
    ProofTree(const CampaignParams& p, const db::Database* db);
    // A tree rooted at another position (pits only; for tests of the split logic); its
    // frame is the identity (the root's pits value read as South's margin).
    ProofTree(const CampaignParams& p, const db::Database* db, const Board& root);

    // Applies a record (a job's result). Throws ContradictionError.
    void apply(const JobRecord& r);

    // The choice's weight of a job at a position not expanded: `growth` to the power of its
    // seeds above the database's top layer (or above 40 seeds below the root's; capped at
    // 10^15, which sums of weights stay far below), instead of 1, so that proof and
    // disproof numbers count expected work rather than jobs and the choice goes deep
    // (towards positions with fewer seeds) before wide. 1 (the default): every job weighs
    // one. Steers select() only; pass_jobs() and proof_numbers() still count jobs.
    void set_leaf_growth(double growth) { leaf_growth_ = growth; }
    // How the descent orders a node's moves of equal proof number: by the solver's static
    // move order (captures of 8 or more, extra moves, moves that bank, the rest; the pit
    // nearest the store first: solver/search.cpp, Impl::expand), the order in which its
    // alpha-beta search would try them, instead of pit order. On by default.
    void set_engine_order(bool on) { engine_order_ = on; }
    // Stickiness (the 1+epsilon trick of Pawlewicz & Lew, 2007): the descent stays in the
    // move it worked in last (the move whose subtree holds the latest record applied) while
    // that move's proof number is at most (1 + eps) times the least of the node's moves,
    // instead of moving to a sibling as soon as a split makes the move heavier. A function
    // of the journal (record order), so a resumed campaign makes the same choices. 0: off.
    void set_stickiness(double eps) { stickiness_ = eps; }
    // A static first cut: positions with more seeds in pits than this are split by the
    // manager without a job (solve_tree journals a split record of 0 nodes), for the top
    // of a proof where no job could finish within its budget. Default: no cut.
    void set_split_above(int seeds) { split_above_ = seeds; }
    int split_above() const { return split_above_; }
    // Budgets that grow towards the root: a job at a position with s seeds in pits gets
    // `base` x growth^(s - b) nodes (b as leaf weights count seeds from; capped at 2^50), so
    // that the large jobs near the root, which would split anyway, run long enough to
    // finish instead of losing their work to a split. 1 (the default): every job gets the
    // worker's own budget (Job::budget 0).
    void set_budget_growth(double growth, uint64_t base) {
        budget_growth_ = growth;
        budget_base_ = base;
    }
    uint64_t job_budget(const Board& pits) const;

    // Whether the bounds decide "v(root) >= beta?".
    bool decided(int beta) const;
    // The most-proving job for "v(root) >= beta?" among positions not in flight, or nothing
    // when the question is decided or every job that could help is in flight. `expect` is
    // the answer the pass expects; it matters only with jobs in flight (see above).
    std::optional<Job> select(int beta, bool expect = true);
    // Marks a job from select() (its beta of its position's parity) as handed to a worker:
    // select() passes its position by and assumes its hoped answer; or a position as back
    // (its record applied or not).
    void set_in_flight(const Job& job);
    void clear_in_flight(const Board& pos);
    // The threshold of the next MTD(f) pass over the campaign: a value of the root's parity
    // in (lo, hi], the guess when it is there, else the bound next to it (lo + 2 after a
    // pass that raised lo, hi after one that lowered hi). Requires root_lo() < root_hi().
    int next_beta(int guess) const;

    // The root's bounds on its pits value (its mover's view); frame() maps them to South's
    // margin at the start.
    int root_lo() const { return nodes_[0].lo; }
    int root_hi() const { return nodes_[0].hi; }
    const Board& root() const { return nodes_[0].pos; }
    const RootFrame& frame() const { return frame_; }
    size_t size() const { return nodes_.size(); }
    size_t expanded() const { return expanded_; }
    // Positions not expanded whose value is not exact: where jobs may still be run.
    size_t open_positions() const;
    // Root moves whose worth is proven to equal the root's exact value (pits, 0-based), and
    // their notation; empty when the root is not exact or was never expanded.
    std::vector<int> best_moves() const;

    // The root's moves with the proven bounds on their worth (the root's pits value after
    // the move, from the root mover's view: frame() maps it to South's margin), in pit
    // order; empty before the root is expanded.
    struct MoveBounds {
        int pit = 0;
        int lo = 0, hi = 0;
    };
    std::vector<MoveBounds> root_moves() const;
    // The root mover's first turns with their proven bounds (the same view as root_moves):
    // a move that gives an extra move is followed into its position's moves while the tree
    // has expanded it, so "A1+ A2" is one turn; a turn whose extra-move position is not
    // expanded yet ends at that move. Pits 0-based, in the order played; in pit order.
    struct TurnBounds {
        std::vector<int> pits;
        int lo = 0, hi = 0;
    };
    std::vector<TurnBounds> root_turns() const;

    // Bounds on v of any position in the tree or named by a record (for tests).
    std::pair<int, int> bounds(const Board& pits) const;

    // Where a position sits in the tree (for the job trace, campaign/trace.h): the least
    // number of moves from the root to it among the paths the tree holds, and the index of
    // the record (0-based, in the order apply() saw them: the journal's order) whose split
    // added it to the tree, -1 for the root. Nothing for a position not in the tree.
    struct Place {
        int depth = 0;
        int64_t added_by = -1;
    };
    std::optional<Place> place(const Board& pits) const;

    // How many jobs the question "v(root) >= beta?" may still take if no job is split,
    // jobs in flight counted as open: `least` = min(proof number, disproof number, most),
    // the jobs of the cheapest way to settle it (transpositions may count twice); `most` =
    // the distinct (position, threshold) questions not expanded and not decided that the
    // question still reaches through undecided moves. 0/0 when it is decided.
    struct PassJobs {
        uint64_t least = 0, most = 0;
    };
    PassJobs pass_jobs(int beta) const;
    // The proof and disproof numbers of "v(root) >= beta?", jobs in flight counted as jobs
    // still to finish (0/inf once proven, inf/0 once refuted).
    std::pair<uint64_t, uint64_t> proof_numbers(int beta) const;

    // Read-only access to the DAG, for the certificate writer (campaign/certificate.h).
    struct Edge {
        MoveStep step;  // the move ends the game (worth step.gain exactly) or leads to child
        int pit = 0;
        int child = -1;
        int order = 0;  // the solver's static move order (higher: tried earlier)
    };
    struct Node {
        Board pos;
        int seeds = 0;
        int lo = 0, hi = 0;          // proven bounds (jobs and moves)
        int job_lo = 0, job_hi = 0;  // proven by jobs on this position (or the database)
        bool expanded = false;
        int depth = 0;          // least moves from the root (the paths held so far)
        int64_t added_by = -1;  // the record whose split added it (Place)
        int64_t touched = -1;   // the latest record applied to it or below it (stickiness)
        std::vector<Edge> edges;
        std::vector<int> parents;
    };
    // Node i (0: the root; children by Edge::child).
    const Node& node(int i) const { return nodes_[i]; }
    const db::Database* database() const { return db_; }
    const CampaignParams& params() const { return params_; }

  private:
    struct Fact {
        int lo, hi;
        bool split = false;
    };
    struct KeyHash {
        size_t operator()(Cells k) const {
            const uint64_t h =
                (uint64_t(k) ^ (uint64_t(k >> 64) * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
            return size_t(h ^ (h >> 29));
        }
    };
    struct Numbers {
        uint64_t pn, dn;
    };
    // How numbers() counts a position in flight: as a job still to finish (1/1), as blocked
    // (inf/inf: no second job there), or as answered as hoped where that answer decides the
    // question asked (blocked otherwise).
    enum class InFlight { Count, Block, Assume };

    using Memo = std::unordered_map<uint64_t, Numbers>;

    // Finds or creates (with the facts known of it) the node of a position `depth` moves
    // from the root by one path.
    int node_of(const Board& pits, int depth);
    void lower_depth(int i, int depth);  // a shorter path found: lowers i and its subtree
    void expand(int i);
    void update(int i);  // recomputes lo/hi from jobs and moves; propagates to parents
    void touch(int i);   // marks i and its ancestors as touched by the record being applied
    // Normalises "v >= beta" to the least beta' >= beta of the node's parity.
    static int normal_beta(int seeds, int beta);
    Numbers numbers(int i, int beta, Memo& memo, InFlight mode) const;
    // select()'s descent from the root with one way of counting the jobs in flight.
    std::optional<Job> descend(int beta, bool expect, InFlight mode);
    std::pair<int, int> edge_bounds(const Edge& e) const;

    uint64_t leaf_weight(const Node& n) const;
    int seeds_base() const;  // leaf_weight's and job_budget's seeds of exponent 0

    CampaignParams params_;
    RootFrame frame_;
    const db::Database* db_;
    double leaf_growth_ = 1;
    bool engine_order_ = true;
    double stickiness_ = 0;
    int split_above_ = kMaxSeeds;
    double budget_growth_ = 1;
    uint64_t budget_base_ = 0;
    std::vector<Node> nodes_;
    size_t expanded_ = 0;
    std::unordered_map<Cells, int, KeyHash> index_;
    std::unordered_map<Cells, Fact, KeyHash> facts_;
    Memo memo_;              // numbers() of one select()
    int assume_for_ = 0;     // the root threshold of the select() under way (InFlight::Assume)
    int64_t applying_ = -1;  // index of the record apply() is applying
    int64_t applied_ = 0;    // records applied so far
    std::unordered_map<Cells, Job, KeyHash> in_flight_;  // as select() chose them
};

}  // namespace kalah::campaign
