// The campaign's MPI transport (contract and messages in mpi/mpi_workers.h).
#include "mpi/mpi_workers.h"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "campaign/audit.h"
#include "core/notation.h"
#include "db/format.h"

namespace kalah::mpi {
namespace {

constexpr int kTagJob = 1, kTagStop = 2, kTagRecord = 3;
constexpr int kRecordWords = 7;
constexpr int kJobWords = 4;

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

MpiWorkers::MpiWorkers(int size, CrossCheck check)
    : check_(std::move(check)),
      refused_(static_cast<size_t>(size), false),
      stopped_(static_cast<size_t>(size), false),
      size_(size) {}

MpiWorkers::~MpiWorkers() {
    for (int r = 1; r < size_; ++r) stop(r);
}

int MpiWorkers::capacity() const { return size_ - 1 - static_cast<int>(refused_list_.size()); }

void MpiWorkers::stop(int rank) {
    if (stopped_[static_cast<size_t>(rank)]) return;
    stopped_[static_cast<size_t>(rank)] = true;
    MPI_Send(nullptr, 0, MPI_UINT64_T, rank, kTagStop, MPI_COMM_WORLD);
}

void MpiWorkers::send(int rank, const Task& t) {
    const Cells key = t.job.pos.pits_key();
    uint64_t msg[kJobWords] = {uint64_t(key), uint64_t(key >> 64), uint64_t(int64_t(t.job.beta)),
                               t.job.budget};
    MPI_Send(msg, kJobWords, MPI_UINT64_T, rank, kTagJob, MPI_COMM_WORLD);
    running_[rank] = t;
}

// Each queued task (checks first: they hold records back) to the lowest idle worker that
// may run it.
void MpiWorkers::dispatch() {
    for (const bool checks : {true, false})
        for (size_t i = 0; i < queue_.size();) {
            const Task& t = queue_[i];
            int idle = 0;
            if (t.check == checks)
                for (int r = 1; r < size_ && !idle; ++r)
                    if (!refused_[static_cast<size_t>(r)] && !running_.count(r) && r != t.not_on)
                        idle = r;
            if (!idle) {
                ++i;
                continue;
            }
            send(idle, t);
            queue_.erase(queue_.begin() + static_cast<long>(i));
        }
}

void MpiWorkers::submit(const campaign::Job& job) {
    if (capacity() <= 0) throw std::runtime_error("every MPI worker was refused");
    const uint64_t id = next_id_++;
    jobs_[id] = Held{job, {}, 0, false};
    queue_.push_back(Task{job, id, false, 0});
    dispatch();
}

void MpiWorkers::release(uint64_t primary) {
    const auto it = jobs_.find(primary);
    ready_.emplace_back(it->second.record, it->second.worker);
    jobs_.erase(it);
}

void MpiWorkers::rerun(uint64_t primary) {
    Held& h = jobs_.at(primary);
    h.has_record = false;
    // Its check, if queued, has nothing left to check.
    std::erase_if(queue_, [&](const Task& t) { return t.check && t.primary == primary; });
    queue_.push_back(Task{h.job, primary, false, 0});
}

void MpiWorkers::refuse(int rank, const std::string& why) {
    refused_[static_cast<size_t>(rank)] = true;
    refused_list_.push_back(rank);
    std::cerr << "kalah campaign: cross-check: rank " << rank << " refused: " << why
              << "; its later records are dropped and it gets no more jobs\n";
    if (!running_.count(rank)) stop(rank);  // else once its job in flight is back
    // Its held records are dropped, their jobs run again on the others.
    for (auto& [id, h] : jobs_)
        if (h.has_record && h.worker == rank) rerun(id);
    if (capacity() == 1) {
        std::cerr << "kalah campaign: cross-check: one worker left; its records are no longer "
                     "checked\n";
        std::vector<uint64_t> unchecked;
        for (const Task& t : queue_)
            if (t.check) unchecked.push_back(t.primary);
        std::erase_if(queue_, [](const Task& t) { return t.check; });
        for (const uint64_t id : unchecked) release(id);
    }
}

void MpiWorkers::on_record(int rank, const Task& t, const campaign::JobRecord& r) {
    const auto it = jobs_.find(t.primary);
    if (it == jobs_.end()) return;
    Held& h = it->second;
    auto job_text = [&] {
        return format_position(h.job.pos) + " (v >= " + std::to_string(h.job.beta) + "?)";
    };
    auto claim_text = [](const campaign::Claim& c, int result) {
        return std::string(c.lower ? "v >= " : "v <= ") + std::to_string(result);
    };
    if (!t.check) {
        h.record = r;
        h.worker = rank;
        h.has_record = true;
        if (r.kind != campaign::JobRecord::Kind::Bound || capacity() < 2 ||
            !campaign::cross_check_sampled(check_.seed, r.key, r.beta, check_.fraction)) {
            release(t.primary);
            return;
        }
        const campaign::Claim c = campaign::record_claim(h.job.pos, r);
        if (c.impossible) {
            refuse(rank, "its record of " + job_text() + " claims " + claim_text(c, r.result) +
                             ", beyond the seeds in pits");
            return;
        }
        queue_.insert(queue_.begin(), Task{campaign::Job{h.job.pos, c.t}, t.primary, true, rank});
        return;
    }
    // The check of a held record: another worker's answer to "v >= t?".
    if (!h.has_record) return;  // dropped meanwhile
    const campaign::Claim c = campaign::record_claim(h.job.pos, h.record);
    if (r.kind != campaign::JobRecord::Kind::Bound) {  // over its budget: no verdict
        ++unsettled_;
        release(t.primary);
        return;
    }
    if ((r.result >= c.t) == c.lower) {
        ++checked_;
        release(t.primary);
        return;
    }
    const std::string dispute = "rank " + std::to_string(h.worker) + "'s record of " + job_text() +
                                " claims " + claim_text(c, h.record.result) + ", rank " +
                                std::to_string(rank) + "'s check says the opposite";
    const std::optional<bool> verdict =
        check_.arbiter ? check_.arbiter(h.job.pos, c.t) : std::nullopt;
    if (!verdict) {
        ++unsettled_;
        std::cerr << "kalah campaign: cross-check: " << dispute
                  << " and the manager's re-run ran over its budget: the job runs again\n";
        rerun(t.primary);
        return;
    }
    const int liar = *verdict == c.lower ? rank : h.worker;
    if (liar == rank) release(t.primary);  // the record stands
    refuse(liar, dispute + ", and the manager's re-run proved " + (*verdict ? "v >= " : "v < ") +
                     std::to_string(c.t));
}

campaign::JobRecord MpiWorkers::wait() {
    if (jobs_.empty() && ready_.empty()) throw std::logic_error("MpiWorkers: no job in flight");
    for (;;) {
        if (!ready_.empty()) {
            const auto [r, worker] = ready_.front();
            ready_.erase(ready_.begin());
            last_ = worker;
            return r;
        }
        if (running_.empty()) throw std::runtime_error("every MPI worker was refused");
        uint64_t msg[kRecordWords];
        MPI_Status st = await_message(MPI_ANY_SOURCE, kTagRecord);
        MPI_Recv(msg, kRecordWords, MPI_UINT64_T, st.MPI_SOURCE, kTagRecord, MPI_COMM_WORLD, &st);
        const int rank = st.MPI_SOURCE;
        const Task t = running_.at(rank);
        running_.erase(rank);
        campaign::JobRecord r;
        r.kind = msg[0] == 2 ? campaign::JobRecord::Kind::Split : campaign::JobRecord::Kind::Bound;
        r.beta = static_cast<int>(int64_t(msg[1]));
        r.result = static_cast<int>(int64_t(msg[2]));
        r.key = (Cells(msg[4]) << 64) | msg[3];
        r.nodes = msg[5];
        std::memcpy(&r.seconds, &msg[6], 8);
        if (refused_[static_cast<size_t>(rank)]) {
            // Refused while this job ran: its record is dropped (a job of the manager's runs
            // again elsewhere, a check is queued again).
            stop(rank);
            if (auto it = jobs_.find(t.primary); it != jobs_.end()) {
                if (!t.check && !it->second.has_record) rerun(t.primary);
                if (t.check && it->second.has_record) {
                    if (capacity() >= 2)
                        queue_.insert(queue_.begin(), t);
                    else
                        release(t.primary);
                }
            }
        } else {
            on_record(rank, t, r);
        }
        dispatch();
    }
}

void serve_jobs(Solver& solver, int m, uint64_t default_budget, bool fresh_table, int lying_rank) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const bool lying = lying_rank > 0 && lying_rank == rank;
    for (;;) {
        uint64_t msg[kJobWords];
        MPI_Status st = await_message(0, MPI_ANY_TAG);
        MPI_Recv(msg, kJobWords, MPI_UINT64_T, 0, st.MPI_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == kTagStop) return;
        const Cells key = (Cells(msg[1]) << 64) | msg[0];
        campaign::Job job{campaign::board_of_key(m, key), static_cast<int>(int64_t(msg[2]))};
        job.budget = msg[3];
        campaign::JobRecord r = campaign::run_job(solver, job, default_budget, fresh_table);
        if (lying && r.kind == campaign::JobRecord::Kind::Bound) {
            // The test hook (mpi/mpi_workers.h): the opposite of the bound proved.
            const int s = job.pos.seeds_in_pits();
            r.result = r.result >= r.beta ? -s : s;
        }
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
