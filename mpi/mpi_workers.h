// The campaign's workers on other MPI ranks: rank 0 is the manager, every other rank a
// worker with a solver of its own (OpenMP threads inside). Built only with MPI (CMake
// finds it); everything here is the transport behind campaign::WorkerPool, private to
// mpi/: commands call mpi/ranks.h.
#pragma once

// Messages (MPI_COMM_WORLD, arrays of uint64):
//   job    (tag kTagJob, manager -> worker): key low, key high, beta (int64), budget in
//          nodes (0: the worker's own)
//   stop   (tag kTagStop, manager -> worker, empty): leave serve_jobs
//   record (tag kTagRecord, worker -> manager): kind, beta, result (int64), key low,
//          key high, nodes, seconds (IEEE bits)
// Before any job, every rank describes its endgame database (database_fingerprint) and
// the manager refuses to start unless all are the same as its own.
//
// Cross-checks (CrossCheck::fraction > 0, at least two workers): a sampled fraction of the
// bound records (campaign::cross_check_sampled) is held back from the manager while
// another worker tests exactly what the record claims (campaign::record_claim, the job
// "v >= t?"). An answer that agrees, or a check over its budget, releases the record. When
// they disagree the manager's own solver arbitrates; the worker it proves wrong is refused:
// sent stop (after its job in flight, whose record is dropped), given no more jobs, named
// on stderr; a held record of its own is dropped and its job runs again on another worker.
// Records of a refused worker journaled before, unsampled, stay (`campaign --audit`
// re-runs records). Test hook: a worker whose rank is CrossCheck::lying_rank reports the
// opposite of every bound it proves (the tests' lying worker).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "campaign/campaign.h"
#include "mpi/ranks.h"

namespace kalah::mpi {

// True when this process runs under mpirun (Open MPI's or a PMI launcher's environment).
bool launched_by_mpirun();

// MPI_Init ... MPI_Finalize for the process's lifetime.
class Session {
  public:
    Session();
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    int rank() const { return rank_; }
    int size() const { return size_; }
    // Ends every rank at once with this exit status (after an error on one of them, so
    // that no rank waits for a message that will not come).
    [[noreturn]] static void abort_all(int status);

  private:
    int rank_ = 0, size_ = 1;
};

// The database's identity: its top layer K, then each layer's file checksum (0 for a
// layer built in memory, which is the same on every rank for the same K); {~0} for none.
std::vector<uint64_t> database_fingerprint(const std::string& dir, int m, Rule rule, int max_seeds);

// Collective: every rank passes its fingerprint; returns "" on every rank when all equal
// rank 0's, else (on rank 0) which rank and layer differ.
std::string compare_fingerprints(const std::vector<uint64_t>& mine);

// Rank 0: the workers of ranks 1..size-1, one job each in flight.
class MpiWorkers : public campaign::WorkerPool {
  public:
    explicit MpiWorkers(int size, CrossCheck check = {});
    ~MpiWorkers() override;  // tells every worker to stop
    // The workers not refused.
    int capacity() const override;
    void submit(const campaign::Job& job) override;
    campaign::JobRecord wait() override;
    int last_worker() const override { return last_; }

    uint64_t cross_checked() const { return checked_; }  // records a check agreed with
    uint64_t unsettled() const { return unsettled_; }    // checks over a budget
    const std::vector<int>& refused() const { return refused_list_; }

  private:
    // A job on a worker: the manager's (primary) or the check of a held record.
    struct Task {
        campaign::Job job;
        uint64_t primary = 0;  // the manager's job it serves
        bool check = false;
        int not_on = 0;  // a check runs on another worker than the record's
    };
    struct Held {
        campaign::Job job;  // the manager's
        campaign::JobRecord record;
        int worker = 0;  // who ran it
        bool has_record = false;
    };
    void dispatch();
    void stop(int rank);
    void send(int rank, const Task& t);
    void refuse(int rank, const std::string& why);
    void release(uint64_t primary);
    void rerun(uint64_t primary);
    void on_record(int rank, const Task& t, const campaign::JobRecord& r);

    CrossCheck check_;
    std::vector<Task> queue_;        // checks first, then the manager's jobs in order
    std::map<int, Task> running_;    // by rank
    std::map<uint64_t, Held> jobs_;  // the manager's jobs not yet returned
    std::vector<std::pair<campaign::JobRecord, int>> ready_;
    std::vector<bool> refused_, stopped_;
    std::vector<int> refused_list_;
    uint64_t next_id_ = 0, checked_ = 0, unsettled_ = 0;
    int last_ = 0;
    int size_;
};

// A worker rank: runs the jobs it receives on `solver` until told to stop; a job that
// names no budget gets default_budget nodes. A worker of rank lying_rank (> 0) lies.
void serve_jobs(Solver& solver, int m, uint64_t default_budget, bool fresh_table, int lying_rank);

}  // namespace kalah::mpi
