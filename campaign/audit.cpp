#include "campaign/audit.h"

#include <algorithm>
#include <random>

#include "core/step.h"

namespace kalah::campaign {

std::vector<size_t> audit_choice(const std::vector<JobRecord>& records, const ProofTree& tree,
                                 size_t sample, uint64_t seed, int near, int* depth_cut) {
    const int m = tree.root().pits();
    // Each bound record's depth (-1: not placed), and the least of them.
    std::vector<int> depth(records.size(), -1);
    int least = -1;
    for (size_t i = 0; i < records.size(); ++i) {
        if (records[i].kind != JobRecord::Kind::Bound) continue;
        if (const auto place = tree.place(board_of_key(m, records[i].key))) {
            depth[i] = place->depth;
            if (least < 0 || place->depth < least) least = place->depth;
        }
    }
    const int cut = least < 0 ? -1 : least + near;
    if (depth_cut) *depth_cut = cut;
    std::vector<size_t> chosen, rest;
    for (size_t i = 0; i < records.size(); ++i) {
        if (records[i].kind != JobRecord::Kind::Bound) continue;
        (depth[i] >= 0 && depth[i] <= cut ? chosen : rest).push_back(i);
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

Claim record_claim(const Board& pos, const JobRecord& r) {
    Claim c;
    c.lower = r.result >= r.beta;
    const int s = pos.seeds_in_pits();
    // v <= claimed <=> not v >= t, t the next value of the parity above the claim.
    c.t = round_up(s, c.lower ? r.result : r.result + 1);
    c.impossible = c.lower ? c.t > s : c.t <= -s;
    return c;
}

bool cross_check_sampled(uint64_t seed, Cells key, int beta, double fraction) {
    if (!(fraction > 0)) return false;
    if (fraction >= 1) return true;
    // splitmix64's finalizer over the job's words.
    auto mix = [](uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    };
    uint64_t h = mix(seed + 0x9e3779b97f4a7c15ULL);
    h = mix(h ^ uint64_t(key));
    h = mix(h ^ uint64_t(key >> 64));
    h = mix(h ^ uint64_t(int64_t(beta)));
    return double(h >> 11) * 0x1.0p-53 < fraction;
}

AuditCheck audit_record(Solver& solver, int m, const std::vector<JobRecord>& records,
                        size_t index) {
    const JobRecord& r = records.at(index);
    AuditCheck a;
    a.index = index;
    a.pos = board_of_key(m, r.key);
    a.beta = r.beta;
    a.claimed = r.result;
    const Claim claim = record_claim(a.pos, r);
    a.claimed_lower = claim.lower;
    const int t = claim.t;
    if (claim.impossible) {
        a.outcome = AuditCheck::Outcome::Disagrees;
        a.got = claim.lower ? a.pos.seeds_in_pits() : -a.pos.seeds_in_pits();
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
    a.outcome =
        at_least == a.claimed_lower ? AuditCheck::Outcome::Agrees : AuditCheck::Outcome::Disagrees;
    return a;
}

}  // namespace kalah::campaign
