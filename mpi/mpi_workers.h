// The campaign's workers on other MPI ranks: rank 0 is the manager, every other rank a
// worker with a solver of its own (OpenMP threads inside). Built only with MPI (CMake
// finds it); everything here is the transport behind campaign::WorkerPool.
#pragma once

// Messages (MPI_COMM_WORLD, arrays of uint64):
//   job    (tag kTagJob, manager -> worker): key low, key high, beta (int64)
//   stop   (tag kTagStop, manager -> worker, empty): leave serve_jobs
//   record (tag kTagRecord, worker -> manager): kind, beta, result (int64), key low,
//          key high, nodes, seconds (IEEE bits)
// Before any job, every rank describes its endgame database (database_fingerprint) and
// the manager refuses to start unless all are the same as its own.

#include <cstdint>
#include <string>
#include <vector>

#include "campaign/campaign.h"

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
    explicit MpiWorkers(int size);
    ~MpiWorkers() override;  // tells every worker to stop
    int capacity() const override { return size_ - 1; }
    void submit(const campaign::Job& job) override;
    campaign::JobRecord wait() override;
    int last_worker() const override { return last_; }

  private:
    std::vector<int> idle_;
    int busy_ = 0;
    int last_ = 0;
    int size_;
};

// A worker rank: runs the jobs it receives on `solver` until told to stop.
void serve_jobs(Solver& solver, int m);

}  // namespace kalah::mpi
