// Shared by the campaign tests (test_tree.cpp, test_campaign.cpp, test_trace.cpp,
// test_cmd_campaign.cpp, test_audit.cpp): job options, a worker pool that stops as a kill
// would, the check that no job ran twice, and trace.csv parsed and checked against the journal.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "campaign/campaign.h"
#include "campaign/journal.h"
#include "solver/solver.h"
#include "temp_dir.h"

namespace test_campaign {

using namespace kalah;
using namespace kalah::campaign;

using PairSet = std::set<std::pair<std::pair<uint64_t, uint64_t>, int>>;
inline std::pair<uint64_t, uint64_t> split_key(Cells k) { return {uint64_t(k >> 64), uint64_t(k)}; }

// True when no (position, beta) pair occurs twice among the records.
inline bool no_job_twice(const std::vector<JobRecord>& rs) {
    PairSet seen;
    for (const auto& r : rs)
        if (!seen.insert({split_key(r.key), r.beta}).second) return false;
    return true;
}

inline SolverOptions job_options(uint64_t budget) {
    SolverOptions o;
    o.tt_mb = 16;
    o.threads = 1;
    o.node_limit = budget;
    return o;
}

// Stops the run (as a kill would) after `after` jobs: the record is dropped, like a job in
// flight when the process dies.
struct Interrupted {};
class StoppingWorkers : public LocalWorkers {
  public:
    StoppingWorkers(int m, Rule rule, const SolverOptions& o, int after)
        : LocalWorkers(m, rule, o), left_(after) {}
    JobRecord wait() override {
        if (left_-- == 0) throw Interrupted{};
        return LocalWorkers::wait();
    }

  private:
    int left_;
};

// One line of trace.csv (campaign/trace.h), parsed.
struct TraceLine {
    uint64_t record = 0;
    double run_started = 0, submitted = 0, finished = 0;
    int worker = 0, in_flight = 0, pass_beta = 0, beta = 0;
    std::string kind;
    int result = 0, seeds = 0, depth = 0;
    int64_t after = 0;
    uint64_t nodes = 0;
    double seconds = 0;
};
struct Trace {
    std::string header;
    std::vector<TraceLine> lines;
    int bad = 0;  // lines that do not parse
};

inline Trace read_trace_file(const std::string& path) {
    Trace t;
    std::istringstream in(test_files::slurp(path));
    std::getline(in, t.header);
    t.header += "\n";
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> f;
        std::stringstream ls(line);
        for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
        if (f.size() != 15) {
            ++t.bad;
            continue;
        }
        try {
            TraceLine l;
            l.record = std::stoull(f[0]);
            l.run_started = std::stod(f[1]);
            l.submitted = std::stod(f[2]);
            l.finished = std::stod(f[3]);
            l.worker = std::stoi(f[4]);
            l.in_flight = std::stoi(f[5]);
            l.pass_beta = std::stoi(f[6]);
            l.beta = std::stoi(f[7]);
            l.kind = f[8];
            l.result = std::stoi(f[9]);
            l.seeds = std::stoi(f[10]);
            l.depth = std::stoi(f[11]);
            l.after = std::stoll(f[12]);
            l.nodes = std::stoull(f[13]);
            l.seconds = std::stod(f[14]);
            t.lines.push_back(l);
        } catch (const std::exception&) {
            ++t.bad;
        }
    }
    return t;
}

// The line agrees with the journal's record of the same index.
inline void check_line_against_journal(const TraceLine& l, const std::vector<JobRecord>& rs,
                                       int m) {
    REQUIRE(l.record < rs.size());
    const JobRecord& r = rs[l.record];
    CHECK(l.nodes == r.nodes);
    CHECK(l.beta == r.beta);
    CHECK(l.result == r.result);
    CHECK(l.kind == (r.kind == JobRecord::Kind::Split ? "split" : "bound"));
    CHECK(std::abs(l.seconds - r.seconds) <= 1e-6);
    CHECK(l.seeds == board_of_key(m, r.key).seeds_in_pits());
    CHECK(l.after < int64_t(l.record));
    // The split that added the position is a split record of the journal; the root has
    // none, and it is the only position at depth 0.
    if (l.after >= 0) CHECK(rs[size_t(l.after)].kind == JobRecord::Kind::Split);
    CHECK((l.after == -1) == (l.depth == 0));
    if (l.depth == 0) CHECK(l.beta == l.pass_beta);  // the root's own question
    CHECK(l.run_started <= l.submitted);
    CHECK(l.submitted <= l.finished);
    CHECK(l.in_flight >= 1);
}

}  // namespace test_campaign
