// The campaign manager's loop and the in-process worker (contract in campaign/campaign.h).
#include "campaign/campaign.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <stdexcept>
#include <tuple>

namespace kalah::campaign {
namespace {
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}
// Forwards to a pool and sums the time spent in wait(): the rest of a run's loop is the
// manager's own time (journal fsync, tree updates, choice of jobs), which the ETA counts.
class TimedPool : public WorkerPool {
  public:
    explicit TimedPool(WorkerPool& p) : pool_(p) {}
    int capacity() const override { return pool_.capacity(); }
    void submit(const Job& job) override { pool_.submit(job); }
    JobRecord wait() override {
        const auto t0 = Clock::now();
        JobRecord r = pool_.wait();
        waited += since(t0);
        return r;
    }
    int last_worker() const override { return pool_.last_worker(); }
    double waited = 0;

  private:
    WorkerPool& pool_;
};

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}
}  // namespace

JobRecord run_job(Solver& solver, const Job& job, uint64_t default_budget, bool fresh_table) {
    if (fresh_table) solver.clear_table();
    solver.set_limits(job.budget ? job.budget : default_budget, 0);
    JobRecord r;
    r.key = job.pos.pits_key();
    r.beta = job.beta;
    const uint64_t n0 = solver.stats().nodes;
    const auto t0 = Clock::now();
    try {
        r.result = solver.test(job.pos, job.beta);
        r.kind = JobRecord::Kind::Bound;
    } catch (const SearchStopped&) {
        r.kind = JobRecord::Kind::Split;
        r.result = 0;
    }
    r.nodes = solver.stats().nodes - n0;
    r.seconds = since(t0);
    return r;
}

LocalWorkers::LocalWorkers(int m, Rule rule, const SolverOptions& opts)
    : solver_(m, rule, opts), budget_(opts.node_limit) {}

void LocalWorkers::submit(const Job& job) {
    if (!queue_.empty()) throw std::logic_error("LocalWorkers: one job at a time");
    queue_.push_back(job);
}

JobRecord LocalWorkers::wait() {
    if (queue_.empty()) throw std::logic_error("LocalWorkers: no job submitted");
    const Job job = queue_.back();
    queue_.clear();
    return run_job(solver_, job, budget_, fresh_);
}

Campaign::Campaign(Journal& journal, const db::Database* db)
    : journal_(journal),
      tree_(journal.params(), db),
      start_(Clock::now()),
      start_unix_(unix_now()) {
    for (const JobRecord& r : journal.records()) {
        tree_.apply(r);
        ++totals_.jobs;
        totals_.splits += r.kind == JobRecord::Kind::Split;
        totals_.nodes += r.nodes;
        totals_.job_seconds += r.seconds;
        sizes_.add(r.seconds);
    }
    std::tie(totals_.root_lo, totals_.root_hi) =
        tree_.frame().margins(tree_.root_lo(), tree_.root_hi());
    totals_.frame = tree_.frame();
}

void Campaign::trace_to(const std::string& dir) { trace_ = std::make_unique<TraceWriter>(dir); }

std::string Campaign::trace_error() const { return trace_ ? trace_->error() : ""; }

Progress Campaign::progress() const {
    Progress p = totals_;
    p.run_seconds = since(start_);
    std::tie(p.root_lo, p.root_hi) = tree_.frame().margins(tree_.root_lo(), tree_.root_hi());
    p.tree_positions = tree_.size();
    p.expanded = tree_.expanded();
    p.open_jobs = tree_.open_positions();
    // The pass under way asks next_beta(guess) until it is decided (its bounds move only
    // inside (lo, hi] by the root's parity steps), and then the next pass does.
    if (p.root_lo == p.root_hi)
        p.eta.known = true;
    else if (only_beta_)
        p.eta = pass_eta(tree_, *only_beta_, sizes_, workers_, manager_per_job_);
    else if (guess_)
        p.eta = pass_eta(tree_, tree_.next_beta(*guess_), sizes_, workers_, manager_per_job_);
    return p;
}

int solve_tree(ProofTree& tree, WorkerPool& pool, int guess,
               const std::function<void(const JobRecord&, const Dispatch&)>& on_record,
               const std::function<void(int beta, bool pass_done)>& after_job, int* passes,
               std::optional<OnePass> only) {
    const int m = tree.root().pits();
    // MTD(f) expects a pass at or below the guess (of the root's parity) to prove, one above
    // it to fail: the answer select() hopes for while jobs are in flight.
    const int expect_up_to = guess + ((guess - tree.root().seeds_in_pits()) & 1);
    int in_flight = 0;
    // How each job out was handed out (positions in flight are distinct).
    std::map<Cells, Dispatch> out;
    auto finish_one = [&] {
        const JobRecord r = pool.wait();
        --in_flight;
        Dispatch d;
        if (auto it = out.find(r.key); it != out.end()) {
            d = it->second;
            out.erase(it);
        }
        d.finished = Clock::now();
        d.worker = pool.last_worker();
        on_record(r, d);  // durable first: the tree is a function of the journal
        tree.clear_in_flight(board_of_key(m, r.key));
        tree.apply(r);
    };
    while (only ? !tree.decided(only->beta) : tree.root_lo() < tree.root_hi()) {
        // Step 1. The pass's question, from the bounds alone (a resumed run asks the same).
        const int beta = only ? only->beta : tree.next_beta(guess);
        const bool expect = only ? only->expect : beta <= expect_up_to;
        // Step 2. Settle it: keep the workers busy with the most-proving jobs, apply each
        // result as it comes back.
        while (!tree.decided(beta)) {
            while (in_flight < pool.capacity()) {
                const std::optional<Job> job = tree.select(beta, expect);
                if (!job) break;
                if (job->pos.seeds_in_pits() > tree.split_above()) {
                    // The static cut: split at once, journaled as any split.
                    JobRecord r;
                    r.kind = JobRecord::Kind::Split;
                    r.key = job->pos.pits_key();
                    r.beta = job->beta;
                    Dispatch d;
                    d.pass_beta = beta;
                    d.place = tree.place(job->pos).value_or(ProofTree::Place{});
                    d.submitted = d.finished = Clock::now();
                    d.in_flight = in_flight + 1;
                    on_record(r, d);
                    tree.apply(r);
                    continue;
                }
                tree.set_in_flight(*job);
                Dispatch d;
                d.pass_beta = beta;
                d.place = tree.place(job->pos).value_or(ProofTree::Place{});
                d.submitted = Clock::now();
                pool.submit(*job);
                d.in_flight = ++in_flight;
                out[job->pos.pits_key()] = d;
            }
            if (tree.decided(beta)) break;  // settled by a static split's exact moves
            if (in_flight == 0) throw std::logic_error("campaign: an open question without a job");
            finish_one();
            if (after_job) after_job(beta, false);
        }
        if (passes) ++*passes;
        if (after_job) after_job(beta, true);
    }
    // Jobs still out are proven facts too: keep them rather than run them again later.
    while (in_flight > 0) finish_one();
    return tree.root_lo();
}

int Campaign::run(WorkerPool& pool, int guess,
                  const std::function<void(const Progress&)>& on_progress,
                  double progress_seconds) {
    const RootFrame& f = tree_.frame();
    return f.margin(run_passes(pool, f.value(guess), std::nullopt, on_progress, progress_seconds));
}

bool Campaign::settle(WorkerPool& pool, const Question& q,
                      const std::function<void(const Progress&)>& on_progress,
                      double progress_seconds) {
    // The same question on the root's pits value (at the start: South to move, stores
    // empty, so v(root) is South's margin).
    const Question qv = tree_.frame().question(q);
    const int beta = qv.beta(tree_.root().seeds_in_pits());
    run_passes(pool, beta, OnePass{beta, qv.lower}, on_progress, progress_seconds);
    return qv.proved_by(tree_.root_lo() >= beta);
}

int Campaign::run_passes(WorkerPool& pool, int guess, std::optional<OnePass> only,
                         const std::function<void(const Progress&)>& on_progress,
                         double progress_seconds) {
    auto last = Clock::now();
    const auto run_start = Clock::now();
    TimedPool timed(pool);
    workers_ = pool.capacity();
    guess_ = guess;
    only_beta_ = only ? std::optional<int>(only->beta) : std::nullopt;
    // Steady-clock times of this run as UNIX times (campaign/trace.h).
    auto unix_of = [&](Clock::time_point t) {
        return start_unix_ + std::chrono::duration<double>(t - start_).count();
    };
    auto on_record = [&](const JobRecord& r, const Dispatch& d) {
        journal_.append(r);
        ++totals_.jobs;
        ++totals_.run_jobs;
        totals_.splits += r.kind == JobRecord::Kind::Split;
        totals_.nodes += r.nodes;
        totals_.run_nodes += r.nodes;
        totals_.job_seconds += r.seconds;
        sizes_.add(r.seconds);
        if (trace_) {
            TraceRow t;
            t.record = journal_.records().size() - 1;
            t.run_started = start_unix_;
            t.submitted = unix_of(d.submitted);
            t.finished = unix_of(d.finished);
            t.worker = d.worker;
            t.in_flight = d.in_flight;
            t.pass_beta = d.pass_beta;
            t.job = r;
            t.seeds = board_of_key(tree_.root().pits(), r.key).seeds_in_pits();
            t.depth = d.place.depth;
            t.after = d.place.added_by;
            trace_->append(t);
        }
    };
    auto after_job = [&](int beta, bool pass_done) {
        totals_.beta = beta;
        manager_per_job_ = (since(run_start) - timed.waited) / double(totals_.run_jobs);
        if (on_progress && (pass_done || since(last) >= progress_seconds)) {
            on_progress(progress());
            last = Clock::now();
        }
    };
    return solve_tree(tree_, timed, guess, on_record, after_job, &totals_.passes, only);
}

double JobSizes::quantile(double q) const {
    if (!sorted_) {
        std::sort(sizes_.begin(), sizes_.end());
        sorted_ = true;
    }
    // Nearest rank: the smallest size with at least a fraction q of the sizes at or below.
    const size_t n = sizes_.size();
    const auto rank = static_cast<size_t>(std::ceil(std::clamp(q, 0.0, 1.0) * double(n)));
    return sizes_[std::min(n - 1, rank == 0 ? 0 : rank - 1)];
}

Eta pass_eta(const ProofTree& tree, int beta, const JobSizes& sizes, int workers,
             double manager_per_job) {
    Eta e;
    e.workers = std::max(1, workers);
    e.manager_per_job = std::max(0.0, manager_per_job);
    if (tree.decided(beta)) {
        e.known = true;
        return e;
    }
    if (sizes.count() == 0) return e;
    const ProofTree::PassJobs jobs = tree.pass_jobs(beta);
    e.jobs_least = jobs.least;
    e.jobs_most = jobs.most;
    const uint64_t w = uint64_t(e.workers);
    // The manager handles one job at a time: its time per job is a floor under the
    // workers' (lo), and is added to it where they would overlap (hi).
    const double c = e.manager_per_job;
    e.lo =
        std::max(sizes.quantile(0.25) * double((jobs.least + w - 1) / w), c * double(jobs.least));
    e.hi = sizes.quantile(0.75) * double((jobs.most + w - 1) / w) + c * double(jobs.most);
    e.known = true;
    return e;
}

std::string duration_text(double s) {
    char buf[32];
    if (s < 1)
        std::snprintf(buf, sizeof buf, "%.2f s", s);
    else if (s < 10)
        std::snprintf(buf, sizeof buf, "%.1f s", s);
    else if (s < 90)
        std::snprintf(buf, sizeof buf, "%.0f s", s);
    else if (s < 90 * 60)
        std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
    else if (s < 48 * 3600)
        std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
    else
        std::snprintf(buf, sizeof buf, "%.1f d", s / 86400);
    return buf;
}

std::string eta_text(const Eta& e, bool exact) {
    if (exact) return "ETA 0 (value exact)";
    if (!e.known) return "ETA ?";
    char buf[160];
    std::snprintf(buf, sizeof buf, "ETA %s..%s (this pass: %llu..%llu jobs, %d worker%s)",
                  duration_text(e.lo).c_str(), duration_text(e.hi).c_str(),
                  static_cast<unsigned long long>(e.jobs_least),
                  static_cast<unsigned long long>(e.jobs_most), e.workers,
                  e.workers == 1 ? "" : "s");
    return buf;
}

std::string progress_line(const Progress& p) {
    char buf[640];
    const double nps = p.run_seconds > 0 ? p.run_nodes / p.run_seconds : 0;
    std::snprintf(
        buf, sizeof buf,
        "campaign: jobs %llu (+%llu this run, %llu open), splits %llu, tree %llu "
        "positions, nodes %llu, %.0f nodes/s, root [%+d, %+d], passes %d, test v %s %+d, "
        "%.1f s, %s",
        static_cast<unsigned long long>(p.jobs), static_cast<unsigned long long>(p.run_jobs),
        static_cast<unsigned long long>(p.open_jobs), static_cast<unsigned long long>(p.splits),
        static_cast<unsigned long long>(p.tree_positions), static_cast<unsigned long long>(p.nodes),
        nps, p.root_lo, p.root_hi, p.passes, p.frame.sign > 0 ? ">=" : "<=",
        p.frame.sign > 0 ? p.frame.offset + p.beta : p.frame.offset - p.beta, p.run_seconds,
        eta_text(p.eta, p.root_lo == p.root_hi).c_str());
    return buf;
}

std::string progress_csv_header() {
    return "utc,run_seconds,jobs,run_jobs,open_jobs,splits,tree_positions,nodes,run_nodes,"
           "nodes_per_second,job_seconds,root_lo,root_hi,beta,workers,pass_jobs_least,"
           "pass_jobs_most,eta_lo_seconds,eta_hi_seconds\n";
}

std::string progress_csv_row(const Progress& p) {
    char when[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    // The ETA columns are empty while it is unknown.
    char eta[120] = ",,,,";
    if (p.eta.known)
        std::snprintf(eta, sizeof eta, "%d,%llu,%llu,%.3f,%.3f", p.eta.workers,
                      static_cast<unsigned long long>(p.eta.jobs_least),
                      static_cast<unsigned long long>(p.eta.jobs_most), p.eta.lo, p.eta.hi);
    char buf[520];
    const double nps = p.run_seconds > 0 ? p.run_nodes / p.run_seconds : 0;
    std::snprintf(
        buf, sizeof buf, "%s,%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.0f,%.3f,%d,%d,%d,%s\n", when,
        p.run_seconds, static_cast<unsigned long long>(p.jobs),
        static_cast<unsigned long long>(p.run_jobs), static_cast<unsigned long long>(p.open_jobs),
        static_cast<unsigned long long>(p.splits),
        static_cast<unsigned long long>(p.tree_positions), static_cast<unsigned long long>(p.nodes),
        static_cast<unsigned long long>(p.run_nodes), nps, p.job_seconds, p.root_lo, p.root_hi,
        p.beta, eta);
    return buf;
}

}  // namespace kalah::campaign
