// The campaign's ranks in a build without MPI (mpi/ranks.h): this process is the one rank,
// the manager, with no workers on other ranks.
#include <stdexcept>

#include "mpi/ranks.h"

namespace kalah::mpi {

bool built_with_mpi() { return false; }
int run_ranked(const std::function<int()>& body) { return body(); }
void released_workers() {}
int rank() { return 0; }
int ranks() { return 1; }

void run_worker(const RankDatabase&, Solver&, uint64_t, bool, int) {
    // rank() is never above 0 here, so no command calls this.
    throw std::logic_error("kalah was built without MPI: no worker ranks");
}

std::unique_ptr<campaign::WorkerPool> make_workers(const RankDatabase&, CrossCheck) {
    return nullptr;
}

CrossCheckAccount cross_check_account(const campaign::WorkerPool&) { return {}; }

}  // namespace kalah::mpi
