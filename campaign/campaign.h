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
#include <optional>
#include <string>
#include <vector>

#include "campaign/journal.h"
#include "campaign/trace.h"
#include "campaign/tree.h"
#include "solver/question.h"
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
    // Who ran the job of the last wait() (the trace's worker: an MPI rank, 0 in-process).
    virtual int last_worker() const { return 0; }
};

// How a finished job was handed out and returned (the trace's columns, campaign/trace.h).
struct Dispatch {
    std::chrono::steady_clock::time_point submitted, finished;
    int worker = 0;
    int in_flight = 1;       // jobs out right after it was handed out, itself included
    int pass_beta = 0;       // the root question of the pass it was chosen for
    ProofTree::Place place;  // where its position was in the tree when it was chosen
};

// Runs one job: test(pos, beta) with a node budget on a solver of its own (its table kept
// from job to job: it holds only proven bounds, SearchStopped leaves it exact). The budget
// is job.budget, or default_budget when that is 0; it replaces the solver's limits
// (Solver::set_limits: no time limit) for this and later calls. fresh_table: the table is
// emptied first, so that the record is proved by this job's search alone (a proof-grade
// record: no bound carried from another job enters it).
JobRecord run_job(Solver& solver, const Job& job, uint64_t default_budget,
                  bool fresh_table = false);

// One worker in this process: submit() queues, wait() runs the job.
class LocalWorkers : public WorkerPool {
  public:
    // opts.node_limit: the budget of a job that names none.
    LocalWorkers(int m, Rule rule, const SolverOptions& opts);
    int capacity() const override { return 1; }
    void submit(const Job& job) override;
    JobRecord wait() override;
    const Solver& solver() const { return solver_; }
    // Each job on an empty table (run_job's fresh_table).
    void set_fresh_table(bool fresh) { fresh_ = fresh; }

  private:
    Solver solver_;
    bool fresh_ = false;
    uint64_t budget_;
    std::vector<Job> queue_;
};

// The manager's loop over any tree: runs jobs on `pool` until the root's value is exact and
// returns it. Each finished job's record goes to on_record (which makes it durable), with
// how it was handed out, and is then applied to the tree; after_job runs after each (may
// be empty). guess: the first pass's threshold (ProofTree::next_beta); passes counts the
// passes settled.
//
// With `only` set, runs the one pass that settles "v(root) >= only->beta?" instead (a
// bound question, solver/question.h), hoping for the answer only->expect, and returns
// when the bounds decide it (the value then is the root's lower bound, not exact).
struct OnePass {
    int beta = 0;
    bool expect = true;
};
int solve_tree(ProofTree& tree, WorkerPool& pool, int guess,
               const std::function<void(const JobRecord&, const Dispatch&)>& on_record,
               const std::function<void(int beta, bool pass_done)>& after_job,
               int* passes = nullptr, std::optional<OnePass> only = std::nullopt);

// ETA of the current pass, a range. The pass "v(root) >= beta?" may still take between
// `least` and `most` jobs if none is split (ProofTree::pass_jobs). With P workers and sizes
// measured over every job of the campaign so far (JobSizes), it ends after at least
// ceil(least / P) jobs one after another of the 25th-percentile size (lo) and at most
// ceil(most / P) of the 75th-percentile size (hi). The manager's own time per job c (its
// fsync, tree updates and choice, measured over this run; 0 when not measured) bounds lo
// from below by least * c and is added to hi as most * c. Not known: whether jobs will be
// split (each split adds its moves' jobs), whether the next pass settles the root, how
// long the jobs in flight have still to run, and sizes that change as the tree deepens;
// see results/campaign.md, ETA. Unknown ("ETA ?") before any job has been measured.
struct Eta {
    bool known = false;
    double lo = 0, hi = 0;  // seconds
    uint64_t jobs_least = 0, jobs_most = 0;
    int workers = 1;
    double manager_per_job = 0;  // seconds (c above)
};

// The journal's per-job seconds, for the ETA's quantiles. add() is O(1) (a campaign replays
// its whole journal through it at start); the sizes are sorted when a quantile is asked.
class JobSizes {
  public:
    void add(double seconds) { sizes_.push_back(seconds), sorted_ = false; }
    // The q-quantile (0..1, nearest rank) of the seconds added; requires count() > 0.
    double quantile(double q) const;
    size_t count() const { return sizes_.size(); }

  private:
    mutable std::vector<double> sizes_;
    mutable bool sorted_ = true;
};

// Where a campaign stands: from the journal, and what this run added.
struct Progress {
    uint64_t jobs = 0, splits = 0, nodes = 0;  // every record of the journal
    double job_seconds = 0;                    // summed over the journal's jobs
    uint64_t run_jobs = 0, run_nodes = 0;      // this run only
    double run_seconds = 0;                    // wall time of this run
    uint64_t open_jobs = 0;  // positions not expanded whose value is not known (job candidates)
    uint64_t tree_positions = 0, expanded = 0;
    int root_lo = 0, root_hi = 0;  // South's margin at the start (the root's frame applied)
    int beta = 0;  // the pass's question on the root's pits value: v >= beta (0 before the first)
    RootFrame frame;  // the root's (campaign/line.h): the identity without a line
    int passes = 0;   // MTD(f) passes finished in this run
    Eta eta;          // of the pass under way (or next); unknown outside run()
};

Eta pass_eta(const ProofTree& tree, int beta, const JobSizes& sizes, int workers,
             double manager_per_job = 0);
// "ETA 12 s..3.5 min" (with the jobs and workers it assumes), "ETA ?" or "ETA 0 (exact)".
std::string eta_text(const Eta& e, bool exact);
// A duration for people: "0.25 s", "8.2 s", "14 min", "3.1 h", "2.5 d".
std::string duration_text(double seconds);

// One line for stderr: "campaign: jobs 120 (+30, 0 open), splits 14, nodes ..., root [lo, hi]".
std::string progress_line(const Progress& p);
// The CSV header and one row (campaign directory's progress.csv).
std::string progress_csv_header();
std::string progress_csv_row(const Progress& p);

class Campaign {
  public:
    // Replays the journal's records into a fresh tree. Throws ContradictionError.
    Campaign(Journal& journal, const db::Database* db);

    // Appends a line per journaled record to dir/trace.csv from now on (campaign/trace.h).
    void trace_to(const std::string& dir);
    // The trace's first write error ("" when none, or when there is no trace).
    std::string trace_error() const;

    // Runs jobs until the root's value is exact and returns it as South's margin at the
    // start (the root's frame applied). guess: the first pass's threshold, South's margin
    // at the start. on_progress
    // is called after every job at most every progress_seconds, and at the end of a pass.
    int run(WorkerPool& pool, int guess, const std::function<void(const Progress&)>& on_progress,
            double progress_seconds = 2);
    // Runs jobs until the root's bounds settle the question q about South's margin at the
    // start (solver/question.h; after the root's line, if any) and returns whether it is
    // proved (true) or refuted. The
    // journal's records are the same kind as run()'s: a later run() (the exact value)
    // or another question resumes over them.
    bool settle(WorkerPool& pool, const Question& q,
                const std::function<void(const Progress&)>& on_progress,
                double progress_seconds = 2);

    Progress progress() const;
    const ProofTree& tree() const { return tree_; }
    // ProofTree::set_leaf_growth: how the choice weighs a job by its seeds.
    void set_leaf_growth(double growth) { tree_.set_leaf_growth(growth); }
    // ProofTree::set_stickiness and set_engine_order: how the choice keeps to a move.
    void set_stickiness(double eps) { tree_.set_stickiness(eps); }
    void set_engine_order(bool on) { tree_.set_engine_order(on); }
    // ProofTree::set_split_above: the static first cut.
    void set_split_above(int seeds) { tree_.set_split_above(seeds); }
    // ProofTree::set_budget_growth: budgets that grow towards the root.
    void set_budget_growth(double growth, uint64_t base) { tree_.set_budget_growth(growth, base); }

  private:
    int run_passes(WorkerPool& pool, int guess, std::optional<OnePass> only,
                   const std::function<void(const Progress&)>& on_progress,
                   double progress_seconds);

    Journal& journal_;
    ProofTree tree_;
    Progress totals_;
    JobSizes sizes_;
    int workers_ = 1;
    double manager_per_job_ = 0;    // this run's (Eta)
    std::optional<int> guess_;      // run()'s: the ETA is of the pass next_beta(guess) asks
    std::optional<int> only_beta_;  // settle()'s: the ETA is of its one pass
    std::chrono::steady_clock::time_point start_;
    double start_unix_ = 0;
    std::unique_ptr<TraceWriter> trace_;
};

}  // namespace kalah::campaign
