// A campaign's runs (campaign/campaign.*): jobs and their budgets, values against the
// solver, the static first cut, resumes after an interruption, bound questions and the ETA.
#include <doctest/doctest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "brute_force.h"
#include "campaign/campaign.h"
#include "campaign/journal.h"
#include "campaign/tree.h"
#include "campaign_fixtures.h"
#include "oracle_workers.h"
#include "random_position.h"
#include "solver/question.h"
#include "solver/solver.h"
#include "temp_dir.h"

using namespace kalah;
using namespace kalah::campaign;
using test_campaign::Interrupted;
using test_campaign::job_options;
using test_campaign::no_job_twice;
using test_campaign::OracleWorkers;
using test_campaign::StoppingWorkers;
using test_files::TempDir;

TEST_SUITE("campaign") {
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

}  // TEST_SUITE
