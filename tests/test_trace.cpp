// The job trace of a campaign (campaign/trace.*): a line per journaled record, as the
// journal's, across resumes and torn lines; a log of another format moved aside.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "campaign/campaign.h"
#include "campaign/journal.h"
#include "campaign/trace.h"
#include "campaign_fixtures.h"
#include "solver/solver.h"
#include "temp_dir.h"

using namespace kalah;
using namespace kalah::campaign;
using test_campaign::check_line_against_journal;
using test_campaign::Interrupted;
using test_campaign::job_options;
using test_campaign::read_trace_file;
using test_campaign::StoppingWorkers;
using test_campaign::Trace;
using test_files::TempDir;

TEST_SUITE("campaign") {
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

}  // TEST_SUITE
