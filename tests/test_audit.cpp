// `kalah campaign --audit` (campaign/audit.*): an honest journal agrees; forged records,
// chosen at random or near the root, are re-run and found.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "campaign/journal.h"
#include "campaign/tree.h"
#include "campaign_fixtures.h"
#include "cli_runner.h"
#include "solver/solver.h"
#include "temp_dir.h"

using namespace kalah;
using namespace kalah::campaign;
using test_campaign::job_options;
using test_files::TempDir;

TEST_SUITE("campaign") {
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
