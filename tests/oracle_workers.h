// A campaign worker that answers from brute force (tests only): splits and fail-soft
// bounds at random, as real jobs may return them.
#pragma once

#include <algorithm>
#include <random>
#include <vector>

#include "brute_force.h"
#include "campaign/campaign.h"

namespace test_campaign {

using namespace kalah;
using namespace kalah::campaign;

// A worker answering from brute force: a position with more than `keep_seeds` seeds is
// split with probability one half, any other gets a fail-soft bound drawn at random
// between the threshold and the exact value (what a real test() may return).
class OracleWorkers : public WorkerPool {
  public:
    OracleWorkers(BruteForce& bf, uint32_t seed, int keep_seeds)
        : bf_(bf), rng_(seed), keep_(keep_seeds) {}
    int capacity() const override { return capacity_; }
    void submit(const Job& job) override { queue_.push_back(job); }
    JobRecord wait() override {
        // Finish the jobs out of order when several are in flight.
        const size_t k = rng_() % queue_.size();
        const Job job = queue_[k];
        queue_.erase(queue_.begin() + static_cast<long>(k));
        JobRecord r;
        r.key = job.pos.pits_key();
        r.beta = job.beta;
        r.nodes = 1;
        if (job.pos.seeds_in_pits() > keep_ && rng_() % 2) {
            r.kind = JobRecord::Kind::Split;
            return r;
        }
        const int v = bf_.pits_value(ref::from_board(job.pos));
        const int s = job.pos.seeds_in_pits();
        // v >= beta: any r in [beta, v]; else any r in [v, beta - 1] (within [-s, s]).
        const int lo = v >= job.beta ? std::max(job.beta, -s) : v;
        const int hi = v >= job.beta ? v : std::min(job.beta - 1, s);
        r.result = lo + static_cast<int>(rng_() % static_cast<uint32_t>(hi - lo + 1));
        return r;
    }
    int capacity_ = 1;

  private:
    BruteForce& bf_;
    std::mt19937 rng_;
    int keep_;
    std::vector<Job> queue_;
};

}  // namespace test_campaign
