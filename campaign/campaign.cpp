// The campaign manager's loop and the in-process worker (contract in campaign/campaign.h).
#include "campaign/campaign.h"

#include <cstdio>
#include <ctime>
#include <stdexcept>

namespace kalah::campaign {
namespace {
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}
}  // namespace

JobRecord run_job(Solver& solver, const Job& job) {
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

LocalWorkers::LocalWorkers(int m, Rule rule, const SolverOptions& opts) : solver_(m, rule, opts) {}

void LocalWorkers::submit(const Job& job) {
    if (!queue_.empty()) throw std::logic_error("LocalWorkers: one job at a time");
    queue_.push_back(job);
}

JobRecord LocalWorkers::wait() {
    if (queue_.empty()) throw std::logic_error("LocalWorkers: no job submitted");
    const Job job = queue_.back();
    queue_.clear();
    return run_job(solver_, job);
}

Campaign::Campaign(Journal& journal, const db::Database* db)
    : journal_(journal), tree_(journal.params(), db), start_(Clock::now()) {
    for (const JobRecord& r : journal.records()) {
        tree_.apply(r);
        ++totals_.jobs;
        totals_.splits += r.kind == JobRecord::Kind::Split;
        totals_.nodes += r.nodes;
        totals_.job_seconds += r.seconds;
    }
    totals_.root_lo = tree_.root_lo();
    totals_.root_hi = tree_.root_hi();
}

Progress Campaign::progress() const {
    Progress p = totals_;
    p.run_seconds = since(start_);
    p.root_lo = tree_.root_lo();
    p.root_hi = tree_.root_hi();
    p.tree_positions = tree_.size();
    p.expanded = tree_.expanded();
    p.open_jobs = tree_.open_positions();
    return p;
}

int solve_tree(ProofTree& tree, WorkerPool& pool, int guess,
               const std::function<void(const JobRecord&)>& on_record,
               const std::function<void(int beta, bool pass_done)>& after_job, int* passes) {
    const int m = tree.root().pits();
    int in_flight = 0;
    auto finish_one = [&] {
        const JobRecord r = pool.wait();
        --in_flight;
        on_record(r);  // durable first: the tree is a function of the journal
        tree.set_in_flight(board_of_key(m, r.key), false);
        tree.apply(r);
    };
    while (tree.root_lo() < tree.root_hi()) {
        // Step 1. The pass's question, from the bounds alone (a resumed run asks the same).
        const int beta = tree.next_beta(guess);
        // Step 2. Settle it: keep the workers busy with the most-proving jobs, apply each
        // result as it comes back.
        while (!tree.decided(beta)) {
            while (in_flight < pool.capacity()) {
                const std::optional<Job> job = tree.select(beta);
                if (!job) break;
                tree.set_in_flight(job->pos, true);
                pool.submit(*job);
                ++in_flight;
            }
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
    auto last = Clock::now();
    auto on_record = [&](const JobRecord& r) {
        journal_.append(r);
        ++totals_.jobs;
        ++totals_.run_jobs;
        totals_.splits += r.kind == JobRecord::Kind::Split;
        totals_.nodes += r.nodes;
        totals_.run_nodes += r.nodes;
        totals_.job_seconds += r.seconds;
    };
    auto after_job = [&](int beta, bool pass_done) {
        totals_.beta = beta;
        if (on_progress && (pass_done || since(last) >= progress_seconds)) {
            on_progress(progress());
            last = Clock::now();
        }
    };
    return solve_tree(tree_, pool, guess, on_record, after_job, &totals_.passes);
}

std::string progress_line(const Progress& p) {
    char buf[400];
    const double nps = p.run_seconds > 0 ? p.run_nodes / p.run_seconds : 0;
    std::snprintf(
        buf, sizeof buf,
        "campaign: jobs %llu (+%llu this run, %llu open), splits %llu, tree %llu "
        "positions, nodes %llu, %.0f nodes/s, root [%+d, %+d], passes %d, test v >= %+d, "
        "%.1f s",
        static_cast<unsigned long long>(p.jobs), static_cast<unsigned long long>(p.run_jobs),
        static_cast<unsigned long long>(p.open_jobs), static_cast<unsigned long long>(p.splits),
        static_cast<unsigned long long>(p.tree_positions), static_cast<unsigned long long>(p.nodes),
        nps, p.root_lo, p.root_hi, p.passes, p.beta, p.run_seconds);
    return buf;
}

std::string progress_csv_header() {
    return "utc,run_seconds,jobs,run_jobs,open_jobs,splits,tree_positions,nodes,run_nodes,"
           "nodes_per_second,job_seconds,root_lo,root_hi,beta\n";
}

std::string progress_csv_row(const Progress& p) {
    char when[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char buf[400];
    const double nps = p.run_seconds > 0 ? p.run_nodes / p.run_seconds : 0;
    std::snprintf(
        buf, sizeof buf, "%s,%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.0f,%.3f,%d,%d,%d\n", when,
        p.run_seconds, static_cast<unsigned long long>(p.jobs),
        static_cast<unsigned long long>(p.run_jobs), static_cast<unsigned long long>(p.open_jobs),
        static_cast<unsigned long long>(p.splits),
        static_cast<unsigned long long>(p.tree_positions), static_cast<unsigned long long>(p.nodes),
        static_cast<unsigned long long>(p.run_nodes), nps, p.job_seconds, p.root_lo, p.root_hi,
        p.beta);
    return buf;
}

}  // namespace kalah::campaign
