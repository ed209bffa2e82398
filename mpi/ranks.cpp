// The campaign's ranks in a build with MPI (mpi/ranks.h), over the transport of
// mpi/mpi_workers.h.
#include "mpi/ranks.h"

#include <stdexcept>

#include "mpi/mpi_workers.h"

namespace kalah::mpi {
namespace {

// The MPI session of this process while run_ranked runs its command under mpirun.
const Session* g_session = nullptr;
// released_workers() was called: a non-zero status is an answer, not an error.
bool g_released = false;

std::string compare_databases(const RankDatabase& db) {
    return compare_fingerprints(database_fingerprint(db.dir, db.m, db.rule, db.max_seeds));
}

}  // namespace

bool built_with_mpi() { return true; }

int run_ranked(const std::function<int()>& body) {
    if (!launched_by_mpirun()) return body();
    const Session session;
    g_session = &session;
    const int status = body();
    if (status != 0 && !g_released) Session::abort_all(status);
    g_session = nullptr;
    return status;
}

void released_workers() { g_released = true; }

int rank() { return g_session ? g_session->rank() : 0; }
int ranks() { return g_session ? g_session->size() : 1; }

void run_worker(const RankDatabase& db, Solver& solver, uint64_t job_nodes, bool fresh_table,
                int lying_rank) {
    if (!compare_databases(db).empty()) return;  // rank 0 names the difference, ends the job
    serve_jobs(solver, db.m, job_nodes, fresh_table, lying_rank);
}

std::unique_ptr<campaign::WorkerPool> make_workers(const RankDatabase& db, CrossCheck check) {
    if (!g_session) return nullptr;
    if (const std::string why = compare_databases(db); !why.empty()) throw std::runtime_error(why);
    if (ranks() <= 1) return nullptr;
    return std::make_unique<MpiWorkers>(ranks(), std::move(check));
}

CrossCheckAccount cross_check_account(const campaign::WorkerPool& pool) {
    const auto* w = dynamic_cast<const MpiWorkers*>(&pool);
    if (!w) return {};
    return {w->cross_checked(), w->unsettled(), w->refused()};
}

}  // namespace kalah::mpi
