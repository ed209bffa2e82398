// The campaign's MPI ranks as a command sees them: whether this process is the manager
// (rank 0) or a worker, a worker rank's whole life, and the manager's pool of workers on
// the other ranks. The same calls in every build: without MPI (mpi/no_mpi.cpp) a process
// is the one rank, the manager, with no workers on other ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "campaign/campaign.h"

namespace kalah::mpi {

// True in a build with MPI (-DKALAH_MPI=ON).
bool built_with_mpi();

// Runs `body` (a command) as this process's part of an MPI job when built with MPI and
// launched by mpirun: MPI_Init before it, MPI_Finalize after, and a non-zero status on
// one rank ends every rank at once, so that no rank waits for a message that will not
// come. Otherwise it just runs `body`.
int run_ranked(const std::function<int()>& body);

// Says, on rank 0, that every worker rank has been released (told to stop, as the pool of
// make_workers does when it is destroyed), so that a non-zero status of this command is
// an answer (a leaf refuted, leaves over their budget), not an error: run_ranked then ends
// the MPI job normally, with that status, instead of aborting every rank.
void released_workers();

// This process's rank (0 is the manager, and the only rank outside an MPI job) and the
// number of ranks: 1 outside run_ranked's MPI job.
int rank();
int ranks();

// The endgame database every rank must share: the directory, the board and rule, and
// its top layer (-1: none).
struct RankDatabase {
    std::string dir;
    int m = 6;
    Rule rule = Rule::Standard;
    int max_seeds = -1;
};

// Cross-checks of the workers' records (mpi/mpi_workers.h says how they run).
struct CrossCheck {
    double fraction = 0;  // of the bound records, 0..1
    uint64_t seed = 0;    // of the sample
    // The manager's verdict on "v(pos) >= t?"; nullopt when it ran over its budget.
    std::function<std::optional<bool>(const Board& pos, int t)> arbiter;
    // The test hook of the tests' lying worker: this rank reports the opposite of every
    // bound it proves (0: none; set by `campaign --test-lying-rank`, a hidden option).
    int lying_rank = 0;
};

// A worker rank (rank() > 0): its database compared with the manager's (collective),
// then jobs on `solver` until the manager says stop; a job that names no budget gets
// job_nodes nodes, on an empty table each when fresh_table. Returns at once when the
// databases differ (rank 0 says which rank and layer, and ends the job).
void run_worker(const RankDatabase& db, Solver& solver, uint64_t job_nodes, bool fresh_table,
                int lying_rank);

// The manager (rank 0): every rank's database compared with this one's (collective in an
// MPI job; std::runtime_error naming the rank and layer that differ), then the workers of
// ranks 1..ranks()-1, one job each in flight; nullptr when this process is the only rank.
std::unique_ptr<campaign::WorkerPool> make_workers(const RankDatabase& db, CrossCheck check);

// What the cross-checks of a pool of make_workers came to (all zero for any other pool).
struct CrossCheckAccount {
    uint64_t agreed = 0;       // records another worker's check agreed with
    uint64_t unsettled = 0;    // checks over a budget
    std::vector<int> refused;  // ranks proved wrong and given no more jobs
};
CrossCheckAccount cross_check_account(const campaign::WorkerPool& pool);

}  // namespace kalah::mpi
