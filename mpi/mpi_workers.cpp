// The campaign's MPI transport (contract and messages in mpi/mpi_workers.h).
#include "mpi/mpi_workers.h"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "db/format.h"

namespace kalah::mpi {
namespace {

constexpr int kTagJob = 1, kTagStop = 2, kTagRecord = 3;
constexpr int kRecordWords = 7;

// Waits for a message from `source` with `tag` (either may be MPI_ANY_*) by probing with
// short sleeps: a blocking MPI_Recv busy-polls in Open MPI, and the manager's core (or an
// idle worker's) would be taken from the searches of the other ranks on the same machine.
MPI_Status await_message(int source, int tag) {
    MPI_Status st;
    for (int flag = 0;;) {
        MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &st);
        if (flag) return st;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

}  // namespace

bool launched_by_mpirun() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
           std::getenv("PMIX_RANK") != nullptr;
}

Session::Session() {
    int provided = 0;
    // Only the calling thread makes MPI calls; OpenMP threads search inside a job.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Session::~Session() { MPI_Finalize(); }

void Session::abort_all(int status) {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);
}

std::vector<uint64_t> database_fingerprint(const std::string& dir, int m, Rule rule,
                                           int max_seeds) {
    if (max_seeds < 0) return {~uint64_t(0)};
    std::vector<uint64_t> f{static_cast<uint64_t>(max_seeds)};
    for (int s = 0; s <= max_seeds; ++s) {
        uint64_t sum = 0;
        const std::string path =
            (std::filesystem::path(dir) / db::layer_file_name(m, rule, s)).string();
        try {
            sum = db::LayerFile::open(path, m, rule, s)->header().file_checksum;
        } catch (const std::exception&) {
            sum = 0;  // built in memory
        }
        f.push_back(sum);
    }
    return f;
}

std::string compare_fingerprints(const std::vector<uint64_t>& mine) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t n = mine.size();
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    std::vector<uint64_t> ref(n);
    if (rank == 0) ref = mine;
    MPI_Bcast(ref.data(), static_cast<int>(n), MPI_UINT64_T, 0, MPI_COMM_WORLD);
    // The first differing entry (0 = the top layer, k = layer k - 1), -1 if none.
    int differ = -1;
    for (size_t i = 0; i < std::max<size_t>(n, mine.size()) && differ < 0; ++i)
        if (i >= n || i >= mine.size() || ref[i] != mine[i]) differ = static_cast<int>(i);
    std::vector<int> all(static_cast<size_t>(size));
    MPI_Gather(&differ, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    int bad = 0;
    std::string why;
    if (rank == 0)
        for (int r = 1; r < size && why.empty(); ++r)
            if (all[static_cast<size_t>(r)] >= 0) {
                const int at = all[static_cast<size_t>(r)];
                why = "rank " + std::to_string(r) + "'s endgame database differs from rank 0's (" +
                      (at == 0 ? std::string("its top layer or its presence")
                               : "layer " + std::to_string(at - 1)) +
                      ")";
                bad = 1;
            }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return bad && rank != 0 ? "the endgame databases differ between ranks" : why;
}

MpiWorkers::MpiWorkers(int size) : size_(size) {
    for (int r = size - 1; r >= 1; --r) idle_.push_back(r);
}

MpiWorkers::~MpiWorkers() {
    for (int r = 1; r < size_; ++r) MPI_Send(nullptr, 0, MPI_UINT64_T, r, kTagStop, MPI_COMM_WORLD);
}

void MpiWorkers::submit(const campaign::Job& job) {
    if (idle_.empty()) throw std::logic_error("MpiWorkers: no idle worker");
    const int r = idle_.back();
    idle_.pop_back();
    const Cells key = job.pos.pits_key();
    uint64_t msg[3] = {uint64_t(key), uint64_t(key >> 64), uint64_t(int64_t(job.beta))};
    MPI_Send(msg, 3, MPI_UINT64_T, r, kTagJob, MPI_COMM_WORLD);
    ++busy_;
}

campaign::JobRecord MpiWorkers::wait() {
    if (busy_ == 0) throw std::logic_error("MpiWorkers: no job in flight");
    uint64_t msg[kRecordWords];
    MPI_Status st = await_message(MPI_ANY_SOURCE, kTagRecord);
    MPI_Recv(msg, kRecordWords, MPI_UINT64_T, st.MPI_SOURCE, kTagRecord, MPI_COMM_WORLD, &st);
    --busy_;
    idle_.push_back(st.MPI_SOURCE);
    last_ = st.MPI_SOURCE;
    campaign::JobRecord r;
    r.kind = msg[0] == 2 ? campaign::JobRecord::Kind::Split : campaign::JobRecord::Kind::Bound;
    r.beta = static_cast<int>(int64_t(msg[1]));
    r.result = static_cast<int>(int64_t(msg[2]));
    r.key = (Cells(msg[4]) << 64) | msg[3];
    r.nodes = msg[5];
    std::memcpy(&r.seconds, &msg[6], 8);
    return r;
}

void serve_jobs(Solver& solver, int m) {
    for (;;) {
        uint64_t msg[3];
        MPI_Status st = await_message(0, MPI_ANY_TAG);
        MPI_Recv(msg, 3, MPI_UINT64_T, 0, st.MPI_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == kTagStop) return;
        const Cells key = (Cells(msg[1]) << 64) | msg[0];
        const campaign::Job job{campaign::board_of_key(m, key), static_cast<int>(int64_t(msg[2]))};
        const campaign::JobRecord r = campaign::run_job(solver, job);
        uint64_t out[kRecordWords] = {uint64_t(r.kind),
                                      uint64_t(int64_t(r.beta)),
                                      uint64_t(int64_t(r.result)),
                                      uint64_t(r.key),
                                      uint64_t(r.key >> 64),
                                      r.nodes,
                                      0};
        std::memcpy(&out[6], &r.seconds, 8);
        MPI_Send(out, kRecordWords, MPI_UINT64_T, 0, kTagRecord, MPI_COMM_WORLD);
    }
}

}  // namespace kalah::mpi
