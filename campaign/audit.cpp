#include "campaign/audit.h"

#include <algorithm>
#include <random>

#include "core/step.h"

namespace kalah::campaign {

std::vector<size_t> audit_choice(const std::vector<JobRecord>& records, const ProofTree& tree,
                                 size_t sample, uint64_t seed, int near) {
    const int m = tree.root().pits();
    std::vector<size_t> chosen, rest;
    for (size_t i = 0; i < records.size(); ++i) {
        if (records[i].kind != JobRecord::Kind::Bound) continue;
        const auto place = tree.place(board_of_key(m, records[i].key));
        (place && place->depth <= near ? chosen : rest).push_back(i);
    }
    std::mt19937_64 rng(seed);
    // A partial Fisher-Yates shuffle: the first `sample` of `rest` uniformly at random.
    const size_t k = std::min(sample, rest.size());
    for (size_t i = 0; i < k; ++i) {
        const size_t j = i + static_cast<size_t>(rng() % (rest.size() - i));
        std::swap(rest[i], rest[j]);
    }
    chosen.insert(chosen.end(), rest.begin(), rest.begin() + static_cast<long>(k));
    std::sort(chosen.begin(), chosen.end());
    return chosen;
}

AuditCheck audit_record(Solver& solver, int m, const std::vector<JobRecord>& records,
                        size_t index) {
    const JobRecord& r = records.at(index);
    AuditCheck a;
    a.index = index;
    a.pos = board_of_key(m, r.key);
    a.beta = r.beta;
    a.claimed = r.result;
    a.claimed_lower = r.result >= r.beta;
    const int s = a.pos.seeds_in_pits();
    // The claim as one test "v >= t?": v >= claimed, or v <= claimed <=> not v >= t.
    const int t = round_up(s, a.claimed_lower ? r.result : r.result + 1);
    // Claims the seed count alone refutes (v is within [-s, s]).
    if (a.claimed_lower && t > s) {
        a.outcome = AuditCheck::Outcome::Disagrees;
        a.got = s;
        return a;
    }
    if (!a.claimed_lower && t <= -s) {
        a.outcome = AuditCheck::Outcome::Disagrees;
        a.got = -s;
        return a;
    }
    const uint64_t n0 = solver.stats().nodes;
    try {
        a.got = solver.test(a.pos, t);
    } catch (const SearchStopped&) {
        a.outcome = AuditCheck::Outcome::OverBudget;
        a.nodes = solver.stats().nodes - n0;
        return a;
    }
    a.nodes = solver.stats().nodes - n0;
    const bool at_least = a.got >= t;
    a.outcome = at_least == a.claimed_lower ? AuditCheck::Outcome::Agrees
                                            : AuditCheck::Outcome::Disagrees;
    return a;
}

}  // namespace kalah::campaign
