// `kalah build-db` and `kalah verify-db` run as commands (cli/cmd_db.cpp): their options,
// bad input refused in one line, the lower layers mapped, damaged files reported.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "db/format.h"
#include "temp_dir.h"

namespace {

using kalah::Rule;
namespace db = kalah::db;
using test_files::slurp;
using test_files::spit;
using test_files::TempDir;

}  // namespace

TEST_SUITE("db") {
    TEST_CASE("cli: build-db and verify-db, bad input and damaged files") {
        TempDir dir("cli");
        const std::string d = dir.path.string();
        auto r = run_kalah("build-db --pits 3 --max-seeds 8 --threads 2 --dir " + d);
        CHECK(r.status == 0);
        CHECK(r.err.find("layer 8/8") != std::string::npos);
        r = run_kalah("verify-db --dir " + d);
        CHECK(r.status == 0);
        CHECK(r.out.find("OK: 9 layer files") != std::string::npos);
        for (const char* bad : {"build-db --pits 7 --max-seeds 3", "build-db --pits 3",
                                "build-db --pits 3 --max-seeds 3 --rule nope",
                                "build-db --pits 6 --max-seeds 40 --memory-gb 1",
                                "verify-db --dir /nonexistent/kalah"}) {
            CAPTURE(bad);
            r = run_kalah(std::string(bad) + " --dir " + d + "/x");
            if (std::string(bad).find("verify") != std::string::npos) r = run_kalah(bad);
            CAPTURE(r.err);
            CHECK(r.status == 2);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
        // --threads beyond 4 per core or negative, --memory-gb not a positive finite number.
        const std::string too_many = std::to_string(4 * omp_get_num_procs() + 1);
        const std::string most = std::to_string(4 * omp_get_num_procs());
        const std::vector<std::string> bad_inputs = {
            "build-db --pits 3 --max-seeds 3 --threads " + too_many,
            "build-db --pits 3 --max-seeds 3 --threads -1",
            "build-db --pits 3 --max-seeds 3 --threads 2000000000",
            "build-db --pits 3 --max-seeds 3 --memory-gb 0",
            "build-db --pits 3 --max-seeds 3 --memory-gb -1",
            "build-db --pits 3 --max-seeds 3 --memory-gb inf",
            "build-db --pits 3 --max-seeds 3 --memory-gb nan",
            "build-db --pits 3 --max-seeds 3 --block-entries 1023",
            "build-db --pits 3 --max-seeds 3 --block-entries 16777217",
            "build-db --pits 3 --max-seeds 3 --block-entries -5",
            "build-db --pits 3 --max-seeds 3 --block-entries 99999999999",
            "build-db --pits 3 --max-seeds 3 --zstd-level 0",
            "build-db --pits 3 --max-seeds 3 --zstd-level 20",
            "build-db --pits 3 --max-seeds 3 --lower-layers bogus",
            "build-db --pits 3 --max-seeds 3 --lower-layers mapped --no-packed-twins",
            "verify-db --threads " + too_many,
            "verify-db --threads -1"};
        for (const std::string& bad : bad_inputs) {
            CAPTURE(bad);
            r = run_kalah(bad + " --dir " + d);
            CAPTURE(r.err);
            CHECK(r.status == 2);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
        r = run_kalah("verify-db --threads " + most + " --dir " + d);
        CHECK(r.status == 0);
        // The lower layers mapped from their twins: the same files, the choice logged.
        TempDir mapped("cli-mapped");
        r = run_kalah("build-db --pits 3 --max-seeds 8 --threads 2 --lower-layers mapped --dir " +
                      mapped.path.string());
        CHECK(r.status == 0);
        CHECK(r.err.find("lower layers mapped from their packed twins\n") != std::string::npos);
        for (int s = 0; s <= 8; ++s)
            CHECK(slurp(dir.file(3, Rule::Standard, s)) ==
                  slurp(mapped.file(3, Rule::Standard, s)));
        spit(dir.file(3, Rule::Standard, 6), "not a database");
        r = run_kalah("verify-db --dir " + d);
        CHECK(r.status == 1);
        CHECK(r.err.find(db::layer_file_name(3, Rule::Standard, 6) + ": ") != std::string::npos);
    }
}
