// Audits of a campaign's journal: records re-run on this machine and compared with what
// they claim. A checksum proves a record was written whole, not that the search behind it
// was right or honest (a worker of a distributed campaign may be faulty or lie); a record
// re-run gives the same answer or exposes it.
#pragma once

#include <cstdint>
#include <vector>

#include "campaign/journal.h"
#include "campaign/tree.h"
#include "solver/solver.h"

namespace kalah::campaign {

// One record re-run. A bound record of "v(pos) >= beta?" with result r claims v >= r when
// r >= beta and v <= r otherwise; the audit tests exactly that claim (one null-window test
// at r, or at the least value above r of the position's parity), so a record that claims
// more than the truth disagrees even when its answer to beta is right.
struct AuditCheck {
    enum class Outcome { Agrees, Disagrees, OverBudget };
    size_t index = 0;  // the record's index in the journal
    Board pos;         // pits only, South to move (the journal's keys)
    int beta = 0, claimed = 0;
    bool claimed_lower = true;  // v >= claimed; else v <= claimed
    Outcome outcome = Outcome::Agrees;
    int got = 0;  // the re-run's result (a bound on the other side of the claim when it disagrees)
    uint64_t nodes = 0;
};

// What a bound record claims, as one null-window test: a record of "v >= beta?" with
// result r claims v >= r when r >= beta (lower; the claim is "v >= t" with t = r) and v <= r
// otherwise (the claim is "not v >= t" with t the least value above r of the position's
// parity). `impossible`: the seed count s alone refutes it (v is within [-s, s]).
struct Claim {
    int t = 0;
    bool lower = true;
    bool impossible = false;
};
Claim record_claim(const Board& pos, const JobRecord& r);

// Whether a distributed campaign cross-checks the job "v(pits) >= beta?" (on another
// worker): a hash of (seed, position, beta) below `fraction` of its range, so that a worker
// that does not know the seed cannot tell which of its answers are checked.
bool cross_check_sampled(uint64_t seed, Cells key, int beta, double fraction);

// The records to audit: every bound record near the root and `sample` of the other bound
// records chosen at random with `seed`, in journal order. Near the root: a position at most
// `near` moves deeper (the tree's least depth) than the shallowest position of any bound
// record. The positions above are split (a campaign's jobs finish only a few moves down),
// so these are the top-most finished jobs, the ones the root's bounds rest on most
// directly. *depth_cut (if given) is set to that depth (-1 when no bound record is placed).
// Positions the tree does not place (a replay cut short) count as far from the root.
std::vector<size_t> audit_choice(const std::vector<JobRecord>& records, const ProofTree& tree,
                                 size_t sample, uint64_t seed, int near, int* depth_cut = nullptr);

// Re-runs record `index` on `solver` (its node limit is the audit's budget: over it, the
// outcome is OverBudget, not a verdict).
AuditCheck audit_record(Solver& solver, int m, const std::vector<JobRecord>& records, size_t index);

}  // namespace kalah::campaign
