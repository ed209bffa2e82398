// A resumable proof campaign: the manager's loop (MTD(f) over a proof tree of jobs), the
// transport to workers, and the in-process worker.
#pragma once

// The manager (Campaign) keeps the proof tree (campaign/tree.h) and the journal
// (campaign/journal.h). It drives the root to its exact value MTD(f)-style: each pass
// settles one question "v(root) >= beta?" (ProofTree::next_beta), by handing the
// most-proving jobs to a WorkerPool and applying each finished job's record: first
// appended to the journal (fsync), then applied to the tree, so that the tree is always a
// function of the journal. A kill at any moment loses only the jobs in flight.
//
// WorkerPool is the whole of the transport: an in-process pool runs its jobs on the
// calling thread (LocalWorkers); a distributed one (e.g. MPI ranks) only has to ship a Job
// out and a JobRecord back. The manager keeps up to capacity() jobs in flight, each on a
// distinct position.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "campaign/journal.h"
#include "campaign/tree.h"
#include "solver/solver.h"

namespace kalah::campaign {

class WorkerPool {
  public:
    virtual ~WorkerPool() = default;
    // Jobs that may be in flight at once.
    virtual int capacity() const = 0;
    virtual void submit(const Job& job) = 0;
    // The record of one submitted job (kind Bound, or Split when it exceeded its budget);
    // blocks until one is done.
    virtual JobRecord wait() = 0;
};

// Runs one job: test(pos, beta) with a node budget on a solver of its own (its table kept
// from job to job: it holds only proven bounds, SearchStopped leaves it exact).
JobRecord run_job(Solver& solver, const Job& job);

// One worker in this process: submit() queues, wait() runs the job.
class LocalWorkers : public WorkerPool {
  public:
    LocalWorkers(int m, Rule rule, const SolverOptions& opts);  // opts.node_limit: the budget
    int capacity() const override { return 1; }
    void submit(const Job& job) override;
    JobRecord wait() override;
    const Solver& solver() const { return solver_; }

  private:
    Solver solver_;
    std::vector<Job> queue_;
};

// The manager's loop over any tree: runs jobs on `pool` until the root's value is exact and
// returns it. Each finished job's record goes to on_record (which makes it durable) and is
// then applied to the tree; after_job runs after each (may be empty). guess: the first
// pass's threshold (ProofTree::next_beta); passes counts the passes settled.
int solve_tree(ProofTree& tree, WorkerPool& pool, int guess,
               const std::function<void(const JobRecord&)>& on_record,
               const std::function<void(int beta, bool pass_done)>& after_job,
               int* passes = nullptr);

// Where a campaign stands: from the journal, and what this run added.
struct Progress {
    uint64_t jobs = 0, splits = 0, nodes = 0;  // every record of the journal
    double job_seconds = 0;                    // summed over the journal's jobs
    uint64_t run_jobs = 0, run_nodes = 0;      // this run only
    double run_seconds = 0;                    // wall time of this run
    uint64_t open_jobs = 0;  // positions not expanded whose value is not known (job candidates)
    uint64_t tree_positions = 0, expanded = 0;
    int root_lo = 0, root_hi = 0;
    int beta = 0;    // the pass's question: v >= beta (0 before the first)
    int passes = 0;  // MTD(f) passes finished in this run
};

// One line for stderr: "campaign: jobs 120 (+30, 0 open), splits 14, nodes ..., root [lo, hi]".
std::string progress_line(const Progress& p);
// The CSV header and one row (campaign directory's progress.csv).
std::string progress_csv_header();
std::string progress_csv_row(const Progress& p);

class Campaign {
  public:
    // Replays the journal's records into a fresh tree. Throws ContradictionError.
    Campaign(Journal& journal, const db::Database* db);

    // Runs jobs until the root's value is exact and returns it. guess: the first pass's
    // threshold (South's margin at the start, which is the root's pits value). on_progress
    // is called after every job at most every progress_seconds, and at the end of a pass.
    int run(WorkerPool& pool, int guess, const std::function<void(const Progress&)>& on_progress,
            double progress_seconds = 2);

    Progress progress() const;
    const ProofTree& tree() const { return tree_; }

  private:
    Journal& journal_;
    ProofTree tree_;
    Progress totals_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace kalah::campaign
