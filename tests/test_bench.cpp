// `kalah bench` signature: with one thread the suite's total node count is deterministic and
// must equal bench/signature.txt. A change that alters the search updates that file and says
// so in its commit message (as Stockfish's "Bench:" line).
#include <doctest/doctest.h>

#include <string>

#include "cli_runner.h"

TEST_SUITE("bench") {
    TEST_CASE("one-thread bench node count equals the recorded signature") {
        std::string recorded = slurp_file(std::string(KALAH_SOURCE_DIR) + "/bench/signature.txt");
        REQUIRE(!recorded.empty());
        const long long expected = std::stoll(recorded);
        auto r = run_kalah("bench --threads 1");
        REQUIRE(r.status == 0);
        auto at = r.out.find("Bench: ");
        REQUIRE(at != std::string::npos);
        const long long got = std::stoll(r.out.substr(at + 7));
        CHECK_MESSAGE(got == expected, "kalah bench searched "
                                           << got << " nodes; bench/signature.txt says "
                                           << expected);
        // The per-position lines add up to the total.
        const std::string lines = r.out.substr(0, r.out.find("Total:"));
        long long sum = 0;
        for (size_t p = lines.find(" nodes "); p != std::string::npos;
             p = lines.find(" nodes ", p + 1))
            sum += std::stoll(lines.substr(p + 7));
        CHECK(sum == got);
    }

    TEST_CASE("bench rejects bad options") {
        auto r = run_kalah("bench --threads 0");
        CHECK(r.status == 2);
        CHECK(r.err.find("--threads") != std::string::npos);
        CHECK(r.out.empty());
    }
}
