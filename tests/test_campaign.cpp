// The proof campaign: the split logic against brute force, campaign values against the
// solver, the journal's round trip and damage handling, and kill -9 of `kalah campaign`.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "brute_force.h"
#include "campaign/campaign.h"
#include "campaign/journal.h"
#include "campaign/trace.h"
#include "campaign/tree.h"
#include "cli_runner.h"
#include "oracle_workers.h"
#include "random_position.h"
#include "solver/question.h"
#include "solver/solver.h"
#include "temp_dir.h"

using namespace kalah;
using namespace kalah::campaign;
using test_campaign::OracleWorkers;
using test_files::TempDir;

namespace {

using PairSet = std::set<std::pair<std::pair<uint64_t, uint64_t>, int>>;
std::pair<uint64_t, uint64_t> split_key(Cells k) { return {uint64_t(k >> 64), uint64_t(k)}; }

// True when no (position, beta) pair occurs twice among the records.
bool no_job_twice(const std::vector<JobRecord>& rs) {
    PairSet seen;
    for (const auto& r : rs)
        if (!seen.insert({split_key(r.key), r.beta}).second) return false;
    return true;
}

SolverOptions job_options(uint64_t budget) {
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

Trace read_trace_file(const std::string& path) {
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
void check_line_against_journal(const TraceLine& l, const std::vector<JobRecord>& rs, int m) {
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

}  // namespace

TEST_SUITE("campaign") {
    TEST_CASE("split logic: proof trees over random positions reach the brute-force value") {
        std::mt19937 rng(20261201);
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 2; m <= 4; ++m) {
                BruteForce bf(m, rule);
                for (int t = 0; t < 40; ++t) {
                    const int seeds = 4 + int(rng() % (m == 4 ? 10 : 12));
                    const Board pos = random_position(rng, m, seeds).without_stores();
                    const int want = bf.pits_value(ref::from_board(pos));
                    ProofTree tree(CampaignParams{m, 10, rule}, nullptr, pos);
                    OracleWorkers oracle(bf, rng(), int(rng() % 4));
                    oracle.capacity_ = 1 + int(rng() % 3);  // several jobs in flight, out of order
                    std::vector<JobRecord> records;
                    const int guess = int(rng() % 9) - 4;
                    const int got = solve_tree(
                        tree, oracle, guess,
                        [&](const JobRecord& r, const Dispatch&) { records.push_back(r); }, {});
                    INFO("m ", m, " ", format_position(pos), " rule ", rule_name(rule));
                    CHECK(got == want);
                    CHECK(tree.root_lo() == want);
                    CHECK(tree.root_hi() == want);
                    CHECK(no_job_twice(records));
                    // Every bound the tree holds is true.
                    for (const auto& r : records) {
                        const Board b = board_of_key(m, r.key);
                        const auto [lo, hi] = tree.bounds(b);
                        const int v = bf.pits_value(ref::from_board(b));
                        CHECK(lo <= v);
                        CHECK(v <= hi);
                    }
                    // The records alone rebuild the same tree.
                    ProofTree again(CampaignParams{m, 10, rule}, nullptr, pos);
                    for (const auto& r : records) again.apply(r);
                    CHECK(again.root_lo() == want);
                    CHECK(again.root_hi() == want);
                    CHECK(again.size() == tree.size());
                }
            }
        }
    }

    TEST_CASE("leaf growth: the choice goes into the open move with the fewest seeds") {
        // After one split, every open move is a job of its own; weighed by growth^seeds, the
        // most-proving job is at the child with the fewest seeds in pits (deep before wide),
        // where every job weighing one takes the first open move.
        std::mt19937 rng(17);
        int differ = 0;
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int t = 0; t < 300; ++t) {
                const Board pos = random_position(rng, 5, 8 + int(rng() % 8)).without_stores();
                ProofTree tree(CampaignParams{5, 10, rule}, nullptr, pos);
                tree.set_leaf_growth(4);
                JobRecord split;
                split.kind = JobRecord::Kind::Split;
                split.key = pos.pits_key();
                tree.apply(split);
                int least = 1000, first = -1;
                for (const int pit : pos.legal_moves()) {
                    Board c = pos;
                    if (c.play(pit, rule).over || c.without_stores().over()) continue;
                    least = std::min(least, c.seeds_in_pits());
                    if (first < 0) first = c.seeds_in_pits();
                }
                const int beta = tree.next_beta(0);
                if (least == 1000 || tree.decided(beta)) continue;
                const std::optional<Job> job = tree.select(beta);
                REQUIRE(job);
                INFO(format_position(pos), " beta ", beta);
                CHECK(job->pos.seeds_in_pits() == least);
                differ += first != least;
            }
        }
        CHECK(differ > 20);  // positions where the weights change the choice
    }

    TEST_CASE("split logic: expanding a position and its exact moves gives its value") {
        // One level by hand: expand, then make every child exact with two bound records.
        std::mt19937 rng(7);
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            BruteForce bf(4, rule);
            for (int t = 0; t < 200; ++t) {
                const Board pos = random_position(rng, 4, 4 + int(rng() % 14)).without_stores();
                ProofTree tree(CampaignParams{4, 10, rule}, nullptr, pos);
                JobRecord split;
                split.kind = JobRecord::Kind::Split;
                split.key = pos.pits_key();
                tree.apply(split);
                for (const int pit : pos.legal_moves()) {
                    Board c = pos;
                    if (c.play(pit, rule).over) continue;
                    const Board child = c.without_stores();
                    const int v = bf.pits_value(ref::from_board(child));
                    JobRecord lo, hi;
                    lo.key = hi.key = child.pits_key();
                    lo.beta = lo.result = v;         // v >= v: succeeds with v
                    hi.beta = v + 1, hi.result = v;  // v >= v + 1: fails with v
                    tree.apply(lo);
                    tree.apply(hi);
                }
                INFO(format_position(pos));
                CHECK(tree.root_lo() == bf.pits_value(ref::from_board(pos)));
                CHECK(tree.root_hi() == tree.root_lo());
            }
        }
    }

    TEST_CASE(
        "split logic: a job chosen with others in flight is the one chosen after their hopes") {
        // The twin of select()'s assumption: a copy of the tree given the last job's hoped
        // answer as a record (it stays in flight in the copy, as does the other job out)
        // makes the same choice, unless that answer settles the question or either choice
        // had to speculate past the hopes.
        std::mt19937 rng(20261202);
        int compared = 0, settled = 0, closer = 0, speculated = 0, two_out = 0;
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 3; m <= 4; ++m) {
                BruteForce bf(m, rule);
                for (int t = 0; t < 600; ++t) {
                    const int seeds = 6 + int(rng() % (m == 4 ? 10 : 8));
                    const Board pos = random_position(rng, m, seeds).without_stores();
                    ProofTree tree(CampaignParams{m, 10, rule}, nullptr, pos);
                    OracleWorkers oracle(bf, rng(), 2);
                    const int beta = int(rng() % 9) - 4;
                    const bool expect = rng() % 2;
                    // Grow the tree: mostly splits, some true bounds.
                    for (int k = int(rng() % 16); k > 0 && !tree.decided(beta); --k) {
                        const std::optional<Job> job = tree.select(beta, expect);
                        REQUIRE(job);
                        oracle.submit(*job);
                        JobRecord r = oracle.wait();
                        if (rng() % 4) r.kind = JobRecord::Kind::Split;
                        tree.apply(r);
                    }
                    if (tree.decided(beta)) continue;
                    // One or two jobs out; the copy is given the last one's hoped answer.
                    std::vector<Job> out;
                    for (int j = 1 + int(rng() % 2); j > 0; --j) {
                        const std::optional<Job> job = tree.select(beta, expect);
                        if (!job) break;
                        tree.set_in_flight(*job);
                        out.push_back(*job);
                    }
                    REQUIRE(!out.empty());
                    two_out += out.size() == 2;
                    const Job& last = out.back();
                    const std::optional<Job> next = tree.select(beta, expect);
                    INFO("m ", m, " ", format_position(pos), " rule ", rule_name(rule), " beta ",
                         beta, " expect ", expect, " last out ", format_position(last.pos));
                    for (const Job& o : out)
                        if (next) CHECK(next->pos.pits_key() != o.pos.pits_key());

                    // The tree after the last job's answer, hoped or not (nothing when the
                    // tree's own bounds rule that answer out).
                    auto answered = [&](bool yes) -> std::optional<ProofTree> {
                        ProofTree copy = tree;
                        JobRecord r;
                        r.key = last.pos.pits_key();
                        r.beta = last.beta;
                        r.result = yes ? last.beta : last.beta - 1;
                        try {
                            copy.apply(r);
                        } catch (const ContradictionError&) {
                            return std::nullopt;
                        }
                        return copy;
                    };
                    std::optional<ProofTree> hoped = answered(last.hoped);
                    const std::optional<ProofTree> other = answered(!last.hoped);
                    // The hoped answer leaves the root's number towards the expected answer
                    // (the jobs it still takes) no larger than the other answer would.
                    if (hoped && other) {
                        auto toward = [&](const ProofTree& answered_tree) {
                            const auto [pn, dn] = answered_tree.proof_numbers(beta);
                            return expect ? pn : dn;
                        };
                        CHECK(toward(*hoped) <= toward(*other));
                        closer += toward(*hoped) < toward(*other);
                    }
                    if (!hoped) continue;  // the hope is impossible by what the tree knows
                    if (hoped->decided(beta)) {
                        ++settled;
                        continue;
                    }
                    const std::optional<Job> twin = hoped->select(beta, expect);
                    if (!next || next->speculative || !twin || twin->speculative) {
                        ++speculated;
                        continue;
                    }
                    ++compared;
                    CHECK(format_position(next->pos) == format_position(twin->pos));
                    CHECK(next->beta == twin->beta);
                    CHECK(next->hoped == twin->hoped);
                }
            }
        }
        CHECK(compared > 400);
        CHECK(settled > 300);
        CHECK(closer > 800);
        CHECK(two_out > 300);
        CHECK(speculated > 20);
    }

    TEST_CASE("a job stops near a small node budget") {
        // Limits are checked every 256 nodes or more often under a budget below 1 M nodes
        // (solver.cpp, Worker::beat_mask), not only every 65 k.
        for (const uint64_t budget : {uint64_t(1000), uint64_t(3000), uint64_t(20000)}) {
            Solver solver(5, Rule::Standard, job_options(budget));
            CHECK_THROWS_AS(solver.test(Board::start(5, 4), 10), SearchStopped);
            CHECK(solver.stats().nodes >= budget);
            CHECK(solver.stats().nodes <= budget + std::max<uint64_t>(256, budget / 16));
            const JobRecord r = run_job(solver, Job{Board::start(5, 4), 10}, budget);
            CHECK(r.kind == JobRecord::Kind::Split);
            CHECK(r.nodes <= budget + std::max<uint64_t>(256, budget / 16));
        }
    }

    TEST_CASE("campaign values equal the solver's on small boards, with jobs split") {
        struct Case {
            int m, n;
            uint64_t budget;
        };
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (const Case c : {Case{3, 3, 2000}, Case{4, 3, 2000}, Case{4, 4, 2000},
                                 Case{5, 3, 3000}, Case{3, 6, 2000}})
                for (const double growth : {1.0, 2.0}) {
                    TempDir dir("campaign");
                    Solver solver(c.m, rule, job_options(0));
                    const int want = solver.pits_value(Board::start(c.m, c.n));
                    std::string damage;
                    Journal j =
                        Journal::open(dir.path.string(), CampaignParams{c.m, c.n, rule}, damage);
                    CHECK(damage.empty());
                    Campaign camp(j, nullptr);
                    camp.set_leaf_growth(growth);
                    LocalWorkers workers(c.m, rule, job_options(c.budget));
                    INFO("Kalah(", c.m, ",", c.n, ") ", rule_name(rule), " leaf growth ", growth);
                    CHECK(camp.run(workers, 0, {}) == want);
                    if (c.m >= 4 && c.n >= 4) CHECK(camp.progress().splits > 0);
                    CHECK(no_job_twice(j.records()));
                    // A second run finds the value in the journal and runs nothing.
                    Campaign again(j, nullptr);
                    CHECK(again.tree().root_lo() == want);
                    CHECK(again.tree().root_hi() == want);
                }
        }
    }

    TEST_CASE("budgets that grow towards the root: each job gets base x growth^seeds") {
        const CampaignParams p{4, 4, Rule::Standard};
        ProofTree tree(p, nullptr);
        CHECK(tree.job_budget(Board::start(4, 4)) == 0);  // no growth: the worker's own
        tree.set_budget_growth(2, 1000);
        // No database: seeds count from 40 below the root's 32, i.e. from 0.
        CHECK(tree.job_budget(Board::start(4, 4)) == 1000ull << 32);
        Board b = Board::start(4, 4);
        b.play(0, Rule::Standard);
        CHECK(tree.job_budget(b.without_stores()) == 1000ull << b.seeds_in_pits());
        tree.set_budget_growth(4, 1000);
        CHECK(tree.job_budget(Board::start(4, 4)) == uint64_t(1) << 50);  // the cap
        const std::optional<Job> job = tree.select(0);
        REQUIRE(job);
        CHECK(job->budget == tree.job_budget(job->pos));
    }

    TEST_CASE("budgets that grow towards the root: same values, and large ones split less") {
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            const int want = Solver(4, rule, job_options(0)).pits_value(Board::start(4, 4));
            uint64_t splits[2] = {};
            int k = 0;
            for (const double growth : {1.0, 2.0}) {
                TempDir dir("budget");
                std::string damage;
                Journal j = Journal::open(dir.path.string(), CampaignParams{4, 4, rule}, damage);
                Campaign camp(j, nullptr);
                camp.set_budget_growth(growth, 2000);
                LocalWorkers workers(4, rule, job_options(2000));
                INFO(rule_name(rule), " budget growth ", growth);
                CHECK(camp.run(workers, 0, {}) == want);
                CHECK(no_job_twice(j.records()));
                splits[k++] = camp.progress().splits;
            }
            // 2000 nodes split Kalah(4,4) at the top; 2000 x 2^32 (the root's) never do: the
            // job's budget reached its solver.
            CHECK(splits[0] > 0);
            CHECK(splits[1] == 0);
        }
    }

    TEST_CASE("a static first cut splits the top without jobs; the values stay the solver's") {
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (const int cut : {20, 26, 30}) {
                TempDir dir("cut");
                const int want = Solver(4, rule, job_options(0)).pits_value(Board::start(4, 4));
                std::string damage;
                Journal j = Journal::open(dir.path.string(), CampaignParams{4, 4, rule}, damage);
                Campaign camp(j, nullptr);
                camp.set_split_above(cut);
                LocalWorkers workers(4, rule, job_options(100000));
                INFO(rule_name(rule), " cut above ", cut);
                CHECK(camp.run(workers, 0, {}) == want);
                CHECK(no_job_twice(j.records()));
                int statics = 0;
                for (const JobRecord& r : j.records()) {
                    const int s = board_of_key(4, r.key).seeds_in_pits();
                    // No job ran above the cut: those records are splits of 0 nodes.
                    if (s > cut) {
                        CHECK(r.kind == JobRecord::Kind::Split);
                        CHECK(r.nodes == 0);
                        ++statics;
                    }
                }
                CHECK(statics > 0);
                // A resumed campaign replays the static splits like any other.
                Campaign again(j, nullptr);
                CHECK(again.tree().root_lo() == want);
                CHECK(again.tree().root_hi() == want);
            }
        }
    }

    TEST_CASE("an interrupted campaign resumes without running a finished job again") {
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            TempDir dir("resume");
            const CampaignParams p{4, 4, rule};
            const int want = Solver(4, rule, job_options(0)).pits_value(Board::start(4, 4));
            std::mt19937 rng(rule == Rule::Standard ? 1 : 2);
            int value = 1000;
            for (int run = 0; run < 400 && value == 1000; ++run) {
                std::string damage;
                Journal j = Journal::open(dir.path.string(), p, damage);
                Campaign camp(j, nullptr);
                // A fresh worker each run (an empty table, as after a kill).
                StoppingWorkers workers(4, rule, job_options(2000), 1 + int(rng() % 30));
                try {
                    value = camp.run(workers, 0, {});
                } catch (const Interrupted&) {
                }
            }
            CHECK(value == want);
            const JournalContents c = read_journal((dir.path / kJournalName).string());
            CHECK(c.damage.empty());
            CHECK(c.records.size() > 12);
            CHECK(no_job_twice(c.records));
        }
    }

    TEST_CASE("journal: records round-trip byte-exact through a file") {
        TempDir dir("journal");
        const CampaignParams p{5, 4, Rule::EmptyCapture};
        std::mt19937 rng(3);
        std::vector<JobRecord> written;
        {
            std::string damage;
            Journal j = Journal::open(dir.path.string(), p, damage);
            for (int i = 0; i < 100; ++i) {
                JobRecord r;
                const Board b = random_position(rng, 5, 2 + int(rng() % 39)).without_stores();
                const int s = b.seeds_in_pits();
                r.kind = rng() % 2 ? JobRecord::Kind::Bound : JobRecord::Kind::Split;
                r.key = b.pits_key();
                r.beta = -s + int(rng() % (2 * s + 1));
                r.result = r.kind == JobRecord::Kind::Bound ? -s + int(rng() % (2 * s + 1)) : 0;
                r.nodes = (uint64_t(rng()) << 20) + rng();
                r.seconds = double(rng()) / 1000.0;
                j.append(r);
                written.push_back(r);
            }
        }
        const std::string path = (dir.path / kJournalName).string();
        const JournalContents c = read_journal(path);
        INFO(c.damage);
        CHECK(c.damage.empty());
        CHECK(c.params == p);
        REQUIRE(c.records.size() == written.size());
        for (size_t i = 0; i < written.size(); ++i) {
            CHECK(c.records[i].kind == written[i].kind);
            CHECK(c.records[i].key == written[i].key);
            CHECK(c.records[i].beta == written[i].beta);
            CHECK(c.records[i].result == written[i].result);
            CHECK(c.records[i].nodes == written[i].nodes);
            CHECK(c.records[i].seconds == written[i].seconds);
            CHECK(board_of_key(5, written[i].key).pits_key() == written[i].key);
        }
        CHECK(test_files::slurp(path).size() == kJournalHeaderBytes + 100 * kRecordBytes);
        CHECK(test_files::slurp(path).substr(0, kJournalHeaderBytes) == journal_header(p));
    }

    TEST_CASE("journal: a torn or damaged tail is reported and cut off, never used") {
        const CampaignParams p{4, 4, Rule::Standard};
        auto make = [&](TempDir& dir, int n) {
            std::string damage;
            Journal j = Journal::open(dir.path.string(), p, damage);
            std::mt19937 rng(5);
            for (int i = 0; i < n; ++i) {
                JobRecord r;
                r.key = random_position(rng, 4, 8 + i % 20).without_stores().pits_key();
                r.beta = i % 5;
                r.result = i % 7;
                j.append(r);
            }
            return (dir.path / kJournalName).string();
        };
        SUBCASE("a torn last record") {
            for (const size_t cut : {size_t(1), size_t(20), kRecordBytes - 1}) {
                TempDir dir("torn");
                const std::string path = make(dir, 10);
                std::filesystem::resize_file(path, kJournalHeaderBytes + 10 * kRecordBytes - cut);
                std::string damage;
                Journal j = Journal::open(dir.path.string(), p, damage);
                CHECK(damage.find("torn record at the end") != std::string::npos);
                CHECK(damage.find("truncated to 9 good records") != std::string::npos);
                CHECK(j.records().size() == 9);
                CHECK(std::filesystem::file_size(path) == kJournalHeaderBytes + 9 * kRecordBytes);
                // Appending after the cut gives a clean journal.
                JobRecord r;
                r.key = Board::start(4, 4).pits_key();
                j.append(r);
                const JournalContents c = read_journal(path);
                CHECK(c.damage.empty());
                CHECK(c.records.size() == 10);
            }
        }
        SUBCASE("any flipped byte of a record ends the good part there") {
            std::mt19937 rng(9);
            for (int t = 0; t < 30; ++t) {
                TempDir dir("flip");
                const std::string path = make(dir, 10);
                std::string bytes = test_files::slurp(path);
                const size_t rec = rng() % 10, at = rng() % kRecordBytes;
                bytes[kJournalHeaderBytes + rec * kRecordBytes + at] ^= char(1 + rng() % 255);
                test_files::spit(path, bytes);
                std::string damage;
                Journal j = Journal::open(dir.path.string(), p, damage);
                CHECK(damage.find("record " + std::to_string(rec + 1) + " of 10 is damaged") !=
                      std::string::npos);
                CHECK(j.records().size() == rec);
            }
        }
        SUBCASE("a record moved to another place does not check out") {
            TempDir dir("swap");
            const std::string path = make(dir, 3);
            std::string bytes = test_files::slurp(path);
            std::swap_ranges(bytes.begin() + kJournalHeaderBytes,
                             bytes.begin() + kJournalHeaderBytes + kRecordBytes,
                             bytes.begin() + kJournalHeaderBytes + kRecordBytes);
            test_files::spit(path, bytes);
            CHECK(read_journal(path).records.empty());
        }
        SUBCASE("a checksummed record of an impossible position is refused") {
            JobRecord r;
            r.key = Board::start(4, 4).pits_key() | (Cells(1) << (8 * 4));  // a store byte set
            unsigned char buf[kRecordBytes];
            encode_record(r, 42, 0, buf);
            JobRecord back;
            CHECK(decode_record(buf, 42, 0, p, back).find("bad position") != std::string::npos);
            r.key = Board::start(4, 4).pits_key();
            r.result = 40;  // more than the 32 seeds
            encode_record(r, 42, 0, buf);
            CHECK(decode_record(buf, 42, 0, p, back) == "result out of range");
            r.result = 0;
            encode_record(r, 42, 0, buf);
            CHECK(decode_record(buf, 42, 0, p, back) == "");
        }
    }

    TEST_CASE("journal: bad headers, other parameters and a second manager are refused") {
        TempDir dir("header");
        const CampaignParams p{4, 3, Rule::Standard};
        const std::string path = (dir.path / kJournalName).string();
        std::string damage;
        {
            Journal j = Journal::open(dir.path.string(), p, damage);
            CHECK_THROWS_AS(Journal::open(dir.path.string(), p, damage), JournalError);
        }
        CHECK_THROWS_AS(
            Journal::open(dir.path.string(), CampaignParams{4, 4, Rule::Standard}, damage),
            JournalMismatch);
        CHECK_THROWS_AS(
            Journal::open(dir.path.string(), CampaignParams{4, 3, Rule::EmptyCapture}, damage),
            JournalMismatch);
        const std::string good = test_files::slurp(path);
        for (size_t at = 0; at < kJournalHeaderBytes; ++at) {
            std::string bad = good;
            bad[at] ^= 0x10;
            test_files::spit(path, bad);
            CHECK_THROWS_AS(read_journal(path), JournalError);
        }
        test_files::spit(path, good.substr(0, 30));
        CHECK_THROWS_AS(read_journal(path), JournalError);
        test_files::spit(path, good);
        CHECK_NOTHROW(Journal::open(dir.path.string(), p, damage));
    }

    TEST_CASE("trace: a line per journaled record, as the journal's, appended across resumes") {
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            TempDir dir("trace");
            const CampaignParams p{4, 4, rule};
            const std::string path = (dir.path / kTraceName).string();
            std::mt19937 rng(rule == Rule::Standard ? 11 : 12);
            int value = 1000, runs = 0;
            std::set<double> runs_seen;
            for (int run = 0; run < 400 && value == 1000; ++run) {
                std::string damage;
                Journal j = Journal::open(dir.path.string(), p, damage);
                const size_t before = j.records().size();
                const size_t lines_before = read_trace_file(path).lines.size();
                Campaign camp(j, nullptr);
                camp.trace_to(dir.path.string());
                StoppingWorkers workers(4, rule, job_options(2000), 1 + int(rng() % 30));
                try {
                    value = camp.run(workers, 0, {});
                } catch (const Interrupted&) {
                }
                ++runs;
                CHECK(camp.trace_error().empty());
                // This run's lines: one per record it journaled, after the earlier ones.
                const Trace t = read_trace_file(path);
                CHECK(t.bad == (run > 3 ? 1 : 0));
                REQUIRE(t.lines.size() == j.records().size());
                CHECK(t.lines.size() - lines_before == j.records().size() - before);
                for (size_t i = 0; i < t.lines.size(); ++i) CHECK(t.lines[i].record == i);
                for (size_t i = lines_before; i < t.lines.size(); ++i)
                    runs_seen.insert(t.lines[i].run_started);
                if (run == 3) {
                    // A torn last line (a kill mid-write): the next run ends it and appends.
                    std::ofstream(path, std::ios::app) << "12,17";
                }
            }
            CHECK(value == Solver(4, rule, job_options(0)).pits_value(Board::start(4, 4)));
            const Trace t = read_trace_file(path);
            CHECK(t.header == trace_csv_header());
            CHECK(t.bad == 1);  // the torn line, alone on its line
            const JournalContents c = read_journal((dir.path / kJournalName).string());
            REQUIRE(t.lines.size() == c.records.size());
            for (size_t i = 0; i < t.lines.size(); ++i) {
                CHECK(t.lines[i].record == i);
                check_line_against_journal(t.lines[i], c.records, 4);
                CHECK(t.lines[i].worker == 0);
                CHECK(t.lines[i].in_flight == 1);
            }
            MESSAGE(runs, " runs, ", runs_seen.size(), " of them journaled records");
            CHECK(runs_seen.size() >= 2);
        }
    }

    TEST_CASE("trace: a file of another format is moved aside, a new one started") {
        TempDir dir("trace_old");
        const std::string path = (dir.path / kTraceName).string();
        test_files::spit(path, "old,columns\n1,2\n");
        CHECK(prepare_csv_log(path, trace_csv_header()) == "");
        CHECK(test_files::slurp(path) == trace_csv_header());
        int old = 0;
        for (const auto& e : std::filesystem::directory_iterator(dir.path))
            if (e.path().filename().string().starts_with("trace.csv.") &&
                test_files::slurp(e.path().string()) == "old,columns\n1,2\n")
                ++old;
        CHECK(old == 1);
        // A log of the right header without a final newline gets one; nothing else changes.
        test_files::spit(path, trace_csv_header() + "1,2");
        CHECK(prepare_csv_log(path, trace_csv_header()) == "");
        CHECK(test_files::slurp(path) == trace_csv_header() + "1,2\n");
    }

    TEST_CASE("ETA: unknown before any job, a range lo <= hi during a run, 0 once exact") {
        TempDir dir("eta");
        const CampaignParams p{5, 3, Rule::Standard};
        std::string damage;
        Journal j = Journal::open(dir.path.string(), p, damage);
        Campaign camp(j, nullptr);
        CHECK_FALSE(camp.progress().eta.known);
        CHECK(progress_line(camp.progress()).find("ETA ?") != std::string::npos);
        // The tree alone: no measured job, nothing known; one open job at the root.
        JobSizes none;
        CHECK_FALSE(pass_eta(camp.tree(), 2, none, 1).known);
        CHECK(camp.tree().pass_jobs(2).least == 1);
        CHECK(camp.tree().pass_jobs(2).most == 1);
        int seen = 0;
        LocalWorkers workers(5, Rule::Standard, job_options(3000));
        const int value = camp.run(
            workers, 0,
            [&](const Progress& pr) {
                ++seen;
                const std::string line = progress_line(pr);
                if (pr.root_lo == pr.root_hi) {
                    CHECK(line.find("ETA 0 (value exact)") != std::string::npos);
                    return;
                }
                REQUIRE(pr.eta.known);
                CHECK(pr.eta.lo <= pr.eta.hi);
                CHECK(pr.eta.jobs_least >= 1);
                CHECK(pr.eta.jobs_least <= pr.eta.jobs_most);
                CHECK(pr.eta.workers == 1);
                CHECK(line.find("ETA ") != std::string::npos);
                CHECK(line.find("ETA ?") == std::string::npos);
                CHECK(progress_csv_row(pr).find(",,,,") == std::string::npos);
            },
            0);
        CHECK(seen > 10);
        CHECK(value == Solver(5, Rule::Standard, job_options(0)).pits_value(Board::start(5, 3)));
        CHECK(camp.progress().eta.known);
        // More workers: no longer, and the job counts of the pass do not change.
        JobSizes sizes;
        for (const auto& r : j.records()) sizes.add(r.seconds);
        ProofTree half(p, nullptr);
        for (size_t i = 0; i < j.records().size() / 2; ++i) half.apply(j.records()[i]);
        if (half.root_lo() < half.root_hi()) {
            const int beta = half.next_beta(0);
            const Eta one = pass_eta(half, beta, sizes, 1), four = pass_eta(half, beta, sizes, 4);
            CHECK(one.lo <= one.hi);
            CHECK(four.lo <= one.lo);
            CHECK(four.hi <= one.hi);
            CHECK(four.jobs_most == one.jobs_most);
        }
        // Quantiles by nearest rank.
        JobSizes q;
        for (const double x : {4.0, 1.0, 3.0, 2.0}) q.add(x);
        CHECK(q.quantile(0.25) == 1.0);
        CHECK(q.quantile(0.75) == 3.0);
        CHECK(q.quantile(1.0) == 4.0);
    }

    TEST_CASE("kalah campaign: value as solve's, resume, bad directories") {
        TempDir dir("cli");
        const std::string d = (dir.path / "c").string();
        const std::string args =
            "campaign --pits 4 --seeds 3 --rule empty-capture --db /nonexistent "
            "--tt-mb 16 --threads 2 --job-nodes 2000 --dir " +
            d;
        CliResult r = run_kalah(args + " --json -q");
        REQUIRE(r.status == 0);
        auto j = nlohmann::json::parse(r.out);
        CHECK(j["value"] == 8);  // rules.md, worked example 7
        CHECK(j["result"] == "W");
        CHECK(j["pits"] == 4);
        CHECK(j["rule"] == "empty-capture");
        CHECK(j["position"] == "3,3,3,3/3,3,3,3/0,0/A");
        CHECK(j["jobs"].get<int>() == j["jobs_run"].get<int>());
        CHECK(j["splits"].get<int>() > 0);
        CHECK(j["eta_lo_seconds"] == 0);
        // The trace: a line per job; progress.csv with its ETA columns.
        CHECK(read_trace_file(d + "/" + kTraceName).lines.size() == j["jobs_run"].get<size_t>());
        CHECK(test_files::slurp(d + "/progress.csv").starts_with(progress_csv_header()));
        // Run again: everything is in the journal, nothing is added to the trace.
        r = run_kalah(args + " --json -q");
        REQUIRE(r.status == 0);
        j = nlohmann::json::parse(r.out);
        CHECK(j["value"] == 8);
        CHECK(j["jobs_run"] == 0);
        CHECK(read_trace_file(d + "/" + kTraceName).lines.size() == j["jobs"].get<size_t>());
        // --status reads the directory without the board options.
        r = run_kalah("campaign --status --db /nonexistent --dir " + d);
        CHECK(r.status == 0);
        CHECK(r.out.find("Kalah(4,3), rule empty-capture") != std::string::npos);
        CHECK(r.out.find("root: value +8 (W for South)") != std::string::npos);
        CHECK(r.out.find("ETA 0 (value exact)") != std::string::npos);
        // Other parameters on the same directory: one line, exit 2.
        r = run_kalah("campaign --pits 4 --seeds 4 --rule empty-capture --db /nonexistent --dir " +
                      d);
        CHECK(r.status == 2);
        CHECK(r.err.find("is a campaign of Kalah(4,3), rule empty-capture, not Kalah(4,4)") !=
              std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        // A torn tail: one line, cut off, the value again.
        const std::string journal = d + "/" + kJournalName;
        const auto size = std::filesystem::file_size(journal);
        std::filesystem::resize_file(journal, size - 7);
        r = run_kalah(args + " --json -q");
        CHECK(r.status == 0);
        CHECK(r.err.find("torn record at the end (41 bytes); truncated to") != std::string::npos);
        CHECK(nlohmann::json::parse(r.out)["value"] == 8);
        CHECK(nlohmann::json::parse(r.out)["jobs_run"].get<int>() >= 1);
        {
            // The record cut off is run again under the same index: its last line is the
            // journal's.
            const JournalContents c = read_journal(journal);
            std::map<uint64_t, TraceLine> last;
            for (const TraceLine& l : read_trace_file(d + "/" + kTraceName).lines)
                last[l.record] = l;
            CHECK(last.size() == c.records.size());
            for (const auto& [k, l] : last) check_line_against_journal(l, c.records, 4);
        }
        // Not a journal: one line, exit 1, nothing written.
        test_files::spit(journal, "not a journal" + std::string(100, '.'));
        r = run_kalah(args + " -q");
        CHECK(r.status == 1);
        CHECK(r.err.find("not a campaign journal (bad magic)") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        r = run_kalah("campaign --status --dir " + d);
        CHECK(r.status == 1);
        CHECK(r.err.find("bad magic") != std::string::npos);
        // Missing options.
        r = run_kalah("campaign --pits 4 --seeds 3");
        CHECK(r.status == 2);
        CHECK(r.err.find("--dir is required") != std::string::npos);
        r = run_kalah("campaign --dir " + d);
        CHECK(r.status == 2);
        r = run_kalah("campaign --status --dir " + (dir.path / "none").string());
        CHECK(r.status == 1);
        CHECK(r.err.find("cannot open") != std::string::npos);
        r = run_kalah(args + " --job-nodes 5");
        CHECK(r.status == 2);
    }

    TEST_CASE("kalah campaign --status: the ETA of the next pass, ? before any job") {
        TempDir dir("status_eta");
        const std::string d = (dir.path / "c").string();
        const CampaignParams p{4, 4, Rule::Standard};
        {
            std::string damage;
            Journal j = Journal::open(d, p, damage);
        }
        CliResult r = run_kalah("campaign --status --db /nonexistent --dir " + d);
        CHECK(r.status == 0);
        CHECK(r.out.find("ETA ? for the pass v >= ") != std::string::npos);
        r = run_kalah("campaign --status --db /nonexistent --json --dir " + d);
        REQUIRE(r.status == 0);
        auto j = nlohmann::json::parse(r.out);
        CHECK(j["eta_lo_seconds"].is_null());
        CHECK(j["eta_hi_seconds"].is_null());
        // Twenty jobs in: a range.
        {
            std::string damage;
            Journal jn = Journal::open(d, p, damage);
            Campaign camp(jn, nullptr);
            StoppingWorkers workers(4, Rule::Standard, job_options(2000), 20);
            CHECK_THROWS_AS(camp.run(workers, 0, {}), Interrupted);
            REQUIRE(camp.progress().root_lo < camp.progress().root_hi);
        }
        for (const std::string guess : {"", " --guess 0"}) {
            r = run_kalah("campaign --status --db /nonexistent --dir " + d + guess);
            CHECK(r.status == 0);
            CHECK(r.out.find("ETA ") != std::string::npos);
            CHECK(r.out.find("ETA ?") == std::string::npos);
            CHECK(r.out.find("jobs, 1 worker) for the pass v >= ") != std::string::npos);
            r = run_kalah("campaign --status --db /nonexistent --json --dir " + d + guess);
            REQUIRE(r.status == 0);
            j = nlohmann::json::parse(r.out);
            CHECK(j["jobs"] == 20);
            CHECK(j["eta_lo_seconds"].get<double>() <= j["eta_hi_seconds"].get<double>());
            CHECK(j["eta_pass_jobs"][0].get<int>() >= 1);
            CHECK(j["eta_pass_jobs"][0].get<int>() <= j["eta_pass_jobs"][1].get<int>());
            CHECK(j["eta_workers"] == 1);
            if (!guess.empty()) {
                // The pass the run would ask next, with the run's guess.
                std::string damage;
                Journal jn = Journal::open(d, p, damage);
                Campaign camp(jn, nullptr);
                CHECK(j["pass_beta"] == camp.tree().next_beta(0));
            }
        }
    }

    TEST_CASE("kalah campaign killed with SIGKILL at random moments resumes to the same value") {
        TempDir dir("kill");
        const std::string d = (dir.path / "c").string();
        const std::string journal = d + "/" + kJournalName;
        const int want = Solver(4, Rule::Standard, job_options(0)).pits_value(Board::start(4, 4));
        const uint64_t seed = std::random_device{}();
        CAPTURE(seed);
        std::mt19937_64 rng(seed);
        // A run's moment of death is tied to its progress, not to the clock, so that a fast
        // machine (where the whole campaign takes a few milliseconds) is killed as surely as
        // a slow one: each run dies once its journal has grown by a random 1..1500 bytes
        // (the whole journal is ~15 KB), then a random 0..2 ms later, which lands some kills
        // in the middle of a write.
        const auto journal_size = [&] {
            std::error_code ec;
            const auto n = std::filesystem::file_size(journal, ec);
            return ec ? uintmax_t(0) : n;
        };
        int kills = 0;
        for (int t = 0; t < 12; ++t) {
            CAPTURE(t);
            const uintmax_t target = journal_size() + 1 + rng() % 1500;
            const pid_t pid = spawn_kalah_quiet({"campaign", "--pits", "4", "--seeds", "4", "--db",
                                                 "/nonexistent", "--tt-mb", "16", "--threads", "2",
                                                 "--job-nodes", "2000", "-q", "--dir", d});
            REQUIRE(pid >= 0);
            int status = 0;
            bool exited = false;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
            while (journal_size() < target) {
                if (::waitpid(pid, &status, WNOHANG) == pid) {
                    exited = true;
                    break;
                }
                REQUIRE(std::chrono::steady_clock::now() < deadline);
                ::usleep(100);
            }
            if (!exited) {
                ::usleep(useconds_t(rng() % 2000));
                ::kill(pid, SIGKILL);
                ::waitpid(pid, &status, 0);
            }
            if (WIFSIGNALED(status)) {
                ++kills;
            } else {
                REQUIRE(WIFEXITED(status));
                CHECK(WEXITSTATUS(status) == 0);
                break;  // finished before the kill
            }
        }
        MESSAGE("killed the campaign ", kills, " times");
        CHECK(kills >= 6);
        const CliResult r = run_kalah(
            "campaign --pits 4 --seeds 4 --db /nonexistent --tt-mb 16 "
            "--threads 2 --job-nodes 2000 -q --json --dir " +
            d);
        REQUIRE(r.status == 0);
        CHECK(nlohmann::json::parse(r.out)["value"] == want);
        const JournalContents c = read_journal(d + "/" + kJournalName);
        CHECK(c.damage.empty());
        CHECK(no_job_twice(c.records));
        // The trace survives the kills: a kill tears at most one line, and may cost the
        // line of a record it journaled; every line that parses is the journal's.
        const Trace t = read_trace_file(d + "/" + kTraceName);
        CHECK(t.header == trace_csv_header());
        CHECK(t.bad <= kills);
        CHECK(t.lines.size() + size_t(kills) >= c.records.size());
        for (const TraceLine& l : t.lines) check_line_against_journal(l, c.records, 4);
        // Splits are finished jobs too: journaled, or a resumed run would split them again.
        CHECK(std::count_if(c.records.begin(), c.records.end(), [](const JobRecord& x) {
                  return x.kind == JobRecord::Kind::Split;
              }) > 0);
    }

    TEST_CASE(
        "bound campaigns settle each question as the exact value says; the exact "
        "campaign resumes over their journal") {
        struct Case {
            int m, n;
            uint64_t budget;
        };
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (const Case c : {Case{3, 3, 2000}, Case{4, 3, 2000}, Case{4, 4, 2000}}) {
                const int want =
                    Solver(c.m, rule, job_options(0)).pits_value(Board::start(c.m, c.n));
                for (const int bound :
                     {want - 3, want - 2, want - 1, want, want + 1, want + 2, 1, -1}) {
                    for (const bool lower : {true, false}) {
                        const Question q{lower, bound};
                        INFO("Kalah(", c.m, ",", c.n, ") ", rule_name(rule), " v ", q.text(),
                             " (value ", want, ")");
                        TempDir dir("bound");
                        const CampaignParams p{c.m, c.n, rule};
                        std::string damage;
                        Journal j = Journal::open(dir.path.string(), p, damage);
                        Campaign camp(j, nullptr);
                        LocalWorkers workers(c.m, rule, job_options(c.budget));
                        const bool proved = camp.settle(workers, q, {});
                        CHECK(proved == (lower ? want >= bound : want <= bound));
                        const int lo = camp.tree().root_lo(), hi = camp.tree().root_hi();
                        CHECK(lo <= want);
                        CHECK(want <= hi);
                        // The bounds alone decide the question (what a resumed run reads).
                        CHECK(camp.tree().decided(q.beta(2 * c.m * c.n)));
                        const size_t bound_jobs = j.records().size();
                        // The exact value over the bound's journal: every record kept, no job
                        // run twice, and the bounds of the replay are those proved.
                        Campaign again(j, nullptr);
                        CHECK(again.tree().root_lo() == lo);
                        CHECK(again.tree().root_hi() == hi);
                        LocalWorkers fresh(c.m, rule, job_options(c.budget));
                        CHECK(again.run(fresh, bound, {}) == want);
                        CHECK(j.records().size() >= bound_jobs);
                        CHECK(no_job_twice(j.records()));
                    }
                }
            }
        }
    }

    TEST_CASE(
        "a bound campaign with jobs in flight and out-of-order answers settles its question") {
        // Two jobs out at once, answers in random order and random fail-soft bounds
        // (OracleWorkers): the hoped answer of the question (prove for a lower bound,
        // refute for an upper one) steers the choice, never the answer.
        std::mt19937 rng(31);
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            const int m = 4;
            BruteForce bf(m, rule);
            for (int t = 0; t < 30; ++t) {
                const Board root = random_position(rng, m, 8 + int(rng() % 6)).without_stores();
                if (root.over()) continue;
                const int want = bf.pits_value(ref::from_board(root));
                const int bound = want - 2 + int(rng() % 5);
                const Question q{rng() % 2 == 0, bound};
                ProofTree tree(CampaignParams{m, 4, rule}, nullptr, root);
                OracleWorkers workers(bf, uint32_t(rng()), 3);
                workers.capacity_ = 2;
                const int beta = q.beta(root.seeds_in_pits());
                std::vector<JobRecord> records;
                solve_tree(
                    tree, workers, beta,
                    [&](const JobRecord& r, const Dispatch&) { records.push_back(r); }, {}, nullptr,
                    OnePass{beta, q.lower});
                INFO(format_position(root), " v ", q.text(), " value ", want);
                CHECK(tree.decided(beta));
                CHECK(q.proved_by(tree.root_lo() >= beta) ==
                      (q.lower ? want >= bound : want <= bound));
                CHECK(no_job_twice(records));
            }
        }
    }

    TEST_CASE("a bound campaign interrupted at random resumes to the same answer") {
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            TempDir dir("bound-resume");
            const CampaignParams p{4, 4, rule};
            const int want = Solver(4, rule, job_options(0)).pits_value(Board::start(4, 4));
            const Question q{true, want};  // tight: the hardest bound to prove
            std::mt19937 rng(rule == Rule::Standard ? 5 : 6);
            std::optional<bool> proved;
            int interrupted = 0;
            for (int run = 0; run < 400 && !proved; ++run) {
                std::string damage;
                Journal j = Journal::open(dir.path.string(), p, damage);
                Campaign camp(j, nullptr);
                StoppingWorkers workers(4, rule, job_options(2000), 1 + int(rng() % 10));
                try {
                    proved = camp.settle(workers, q, {});
                } catch (const Interrupted&) {
                    ++interrupted;
                }
            }
            REQUIRE(proved);
            CHECK(*proved);
            CHECK(interrupted > 0);
            const JournalContents c = read_journal((dir.path / kJournalName).string());
            CHECK(no_job_twice(c.records));
        }
    }

    TEST_CASE("kalah solve --prove and kalah campaign --prove answer as the exact value says") {
        TempDir dir("prove-cli");
        for (const char* rule : {"standard", "empty-capture"}) {
            const std::string common = std::string(" --pits 4 --seeds 3 --rule ") + rule +
                                       " --db /nonexistent --tt-mb 16 -q --json";
            const CliResult exact = run_kalah("solve" + common);
            REQUIRE(exact.status == 0);
            const int want = nlohmann::json::parse(exact.out)["value"];
            int k = 0;
            for (const int bound : {want - 2, want, want + 2}) {
                for (const std::string op : {">=", "<"}) {
                    const bool truth = op == ">=" ? want >= bound : want < bound;
                    const std::string q = "'v" + op + std::to_string(bound) + "'";
                    for (const char* threads : {"1", "2"}) {
                        INFO(rule, " ", q, " value ", want, " threads ", threads);
                        const CliResult s =
                            run_kalah("solve" + common + " --threads " + threads + " --prove " + q);
                        REQUIRE(s.status == 0);
                        const auto js = nlohmann::json::parse(s.out);
                        CHECK(js["proved"] == truth);
                        CHECK(js["lower"].get<int>() <= want);
                        CHECK(js["upper"].get<int>() >= want);
                    }
                    const std::string d =
                        (dir.path / (std::string(rule) + std::to_string(k++))).string();
                    const CliResult cr = run_kalah(
                        "campaign" + common + " --job-nodes 1000 --prove " + q + " --dir " + d);
                    REQUIRE(cr.status == 0);
                    const auto jc = nlohmann::json::parse(cr.out);
                    CHECK(jc["proved"] == truth);
                    CHECK(jc["bound"].get<std::string>().substr(0, 2) ==
                          (op == ">=" ? ">=" : "<="));
                    // --status names the question's answer from the journal alone.
                    const CliResult st =
                        run_kalah("campaign --status --json --db /nonexistent -q --prove " + q +
                                  " --dir " + d);
                    REQUIRE(st.status == 0);
                    CHECK(nlohmann::json::parse(st.out)["proved"] == truth);
                    // In text, the ETA names what is settled: the value, or else the question.
                    const CliResult stt = run_kalah("campaign --status --db /nonexistent --prove " +
                                                    q + " --dir " + d);
                    REQUIRE(stt.status == 0);
                    const bool root_exact = stt.out.find("root: value in [") == std::string::npos;
                    CHECK(stt.out.find(root_exact ? "ETA 0 (value exact)"
                                       : truth    ? "ETA 0 (question proved)"
                                               : "ETA 0 (question refuted)") != std::string::npos);
                    // The exact value resumed over the bound's journal.
                    const CliResult ex =
                        run_kalah("campaign" + common + " --job-nodes 1000 --dir " + d);
                    REQUIRE(ex.status == 0);
                    CHECK(nlohmann::json::parse(ex.out)["value"] == want);
                }
            }
        }
        const CliResult bad = run_kalah("solve --pits 4 --seeds 3 --prove 'v=2'");
        CHECK(bad.status == 2);
        CHECK(bad.err.find("--prove") != std::string::npos);
        const CliResult bad2 =
            run_kalah("campaign --pits 4 --seeds 3 --dir /tmp/never-made --prove 'draw'");
        CHECK(bad2.status == 2);
    }

    TEST_CASE("campaign --audit: an honest journal agrees, forged records are found") {
        TempDir dir("audit");
        const std::string d = (dir.path / "c").string();
        const std::string common = " --db /nonexistent --tt-mb 16 --threads 1 -q";
        REQUIRE(
            run_kalah("campaign --pits 4 --seeds 4 --job-nodes 2000 --dir " + d + common).status ==
            0);
        const JournalContents honest = read_journal(d + "/" + kJournalName);
        size_t bounds = 0;
        for (const JobRecord& r : honest.records) bounds += r.kind == JobRecord::Kind::Bound;
        REQUIRE(bounds > 4);
        // A record tested at its fail-soft result (beyond its pass's threshold) may take more
        // nodes than its job did: a budget no record of this board exceeds.
        const CliResult ok =
            run_kalah("campaign --audit 1000 --json --job-nodes 1000000 --dir " + d + common);
        REQUIRE(ok.status == 0);
        const auto jo = nlohmann::json::parse(ok.out);
        CHECK(jo["audited"] == bounds);
        CHECK(jo["over_budget"] == 0);
        CHECK(jo["agree"] == bounds);
        CHECK(jo["disagree"] == 0);

        // Forge each bound record in turn (one at a time, in a copy of the journal with
        // valid checksums): claim one parity step more than the truth on its side.
        Solver truth(4, Rule::Standard, job_options(0));
        int forged = 0;
        for (size_t k = 0; k < honest.records.size(); ++k) {
            if (honest.records[k].kind != JobRecord::Kind::Bound) continue;
            if (k % 3 != 0 && forged > 0) continue;  // a spread of records, not all of them
            std::vector<JobRecord> rs = honest.records;
            JobRecord& r = rs[k];
            const int v = truth.pits_value(board_of_key(4, r.key));
            r.result = r.result >= r.beta ? v + 2 : v - 2;  // v >= v + 2, or v <= v - 2: false
            const std::string fd = (dir.path / ("forged" + std::to_string(k))).string();
            {
                std::string damage;
                Journal j = Journal::open(fd, CampaignParams{4, 4, Rule::Standard}, damage);
                for (const JobRecord& x : rs) j.append(x);
            }
            // A false claim may take more nodes to refute than the job took: a larger budget.
            const CliResult a =
                run_kalah("campaign --audit 1000 --json --job-nodes 1000000 --dir " + fd + common);
            INFO("record ", k, " forged: ", a.out);
            CHECK(nlohmann::json::parse(a.out)["over_budget"] == 0);
            CHECK(a.status == 1);
            const auto ja = nlohmann::json::parse(a.out);
            // Found as a disagreement of that record, or as a contradiction of the replay.
            bool named = !ja["contradiction"].is_null();
            for (const auto& x : ja["disagreements"]) named = named || x["record"] == k;
            CHECK(named);
            CHECK(a.err.find("kalah campaign: audit:") != std::string::npos);
            ++forged;
        }
        CHECK(forged > 2);

        // The case: a journal whose one record claims the root's v >= 30 of a +2 board.
        const std::string rd = (dir.path / "root30").string();
        {
            std::string damage;
            Journal j = Journal::open(rd, CampaignParams{4, 4, Rule::Standard}, damage);
            JobRecord r;
            r.kind = JobRecord::Kind::Bound;
            r.beta = 2;
            r.result = 30;
            r.key = Board::start(4, 4).pits_key();
            j.append(r);
        }
        const CliResult a = run_kalah("campaign --audit 0 --job-nodes 2000 --dir " + rd + common);
        CHECK(a.status == 1);
        CHECK(a.err.find("claims v >= +30") != std::string::npos);
    }

    TEST_CASE("campaign --audit 0: a forged record near the root is always re-run and found") {
        TempDir dir("audit-near");
        const std::string d = (dir.path / "c").string();
        const std::string common = " --db /nonexistent --tt-mb 16 --threads 1 -q";
        REQUIRE(
            run_kalah("campaign --pits 4 --seeds 4 --job-nodes 2000 --dir " + d + common).status ==
            0);
        const JournalContents honest = read_journal(d + "/" + kJournalName);
        // The records' depths in the replayed tree. Near the root, for --audit: the bound
        // records of the two least depths that hold any (the positions above are split).
        ProofTree tree(CampaignParams{4, 4, Rule::Standard}, nullptr);
        for (const JobRecord& r : honest.records) tree.apply(r);
        int least = 1000;
        for (const JobRecord& r : honest.records)
            if (r.kind == JobRecord::Kind::Bound)
                least = std::min(least, tree.place(board_of_key(4, r.key)).value().depth);
        Solver truth(4, Rule::Standard, job_options(0));
        int forged = 0;
        for (size_t k = 0; k < honest.records.size(); ++k) {
            const JobRecord& h = honest.records[k];
            if (h.kind != JobRecord::Kind::Bound) continue;
            const auto place = tree.place(board_of_key(4, h.key));
            if (!place || place->depth > least + 1) continue;
            // A plausible lie (one parity step beyond the truth, on the record's side) that
            // the replay does not contradict by itself in every case: only a re-run finds it.
            std::vector<JobRecord> rs = honest.records;
            const int v = truth.pits_value(board_of_key(4, h.key));
            rs[k].result = h.result >= h.beta ? v + 2 : v - 2;
            const std::string fd = (dir.path / ("near" + std::to_string(k))).string();
            {
                std::string damage;
                Journal j = Journal::open(fd, CampaignParams{4, 4, Rule::Standard}, damage);
                for (const JobRecord& x : rs) j.append(x);
            }
            // No random record: whatever the seed, the near ones are re-run.
            for (const int seed : {1, 2}) {
                const CliResult a =
                    run_kalah("campaign --audit 0 --audit-seed " + std::to_string(seed) +
                              " --json --job-nodes 1000000 --dir " + fd + common);
                INFO("record ", k, " (depth ", place->depth, ") forged, seed ", seed, ": ", a.out,
                     a.err);
                CHECK(a.status == 1);
                const auto ja = nlohmann::json::parse(a.out);
                CHECK(ja["near_root_depth"] == least + 1);
                bool named = false;
                for (const auto& x : ja["disagreements"]) named = named || x["record"] == k;
                CHECK(named);
            }
            ++forged;
        }
        CHECK(forged >= 3);
    }

}  // TEST_SUITE
