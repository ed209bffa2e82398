// `kalah campaign` run as a command (cli/cmd_campaign.cpp): values as solve's, resumes, bad
// directories, --status and its ETA, kill -9 at random moments, --prove beside solve's.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "campaign/campaign.h"
#include "campaign/journal.h"
#include "campaign/trace.h"
#include "campaign_fixtures.h"
#include "cli_runner.h"
#include "solver/solver.h"
#include "temp_dir.h"

using namespace kalah;
using namespace kalah::campaign;
using test_campaign::check_line_against_journal;
using test_campaign::Interrupted;
using test_campaign::job_options;
using test_campaign::no_job_twice;
using test_campaign::read_trace_file;
using test_campaign::StoppingWorkers;
using test_campaign::Trace;
using test_campaign::TraceLine;
using test_files::TempDir;

TEST_SUITE("campaign") {
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

}  // TEST_SUITE
