// CLI `show`: replay, JSON output and one test per bad-input class (message + exit 2).
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace {

// Bad input: exit status 2, nothing on stdout, exactly one line on stderr that contains
// `needle` (the words naming the problem).
void check_bad_input(const std::string& args, const std::string& needle) {
    CAPTURE(args);
    auto r = run_kalah("show " + args);
    CAPTURE(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(!r.err.empty());
    CHECK(r.err.back() == '\n');
    CHECK(r.err.find(needle) != std::string::npos);
}

}  // namespace

TEST_SUITE("cli") {
    TEST_CASE("show replays and annotates moves") {
        auto r = run_kalah("show --moves \"A3 A6\" --json");
        CHECK(r.status == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j.at("moves") == std::vector<std::string>{"A3+", "A6"});
        CHECK(j.at("position") == "4,4,0,5,5,0/5,5,5,5,4,4/2,0/B");
        CHECK(j.at("to_move") == "B");
        CHECK(j.at("over") == false);
    }

    TEST_CASE("show reports the score of a finished game") {
        auto r = run_kalah("show --position 1/1/0,0/A --moves A1 --json");
        CHECK(r.status == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j.at("moves") == std::vector<std::string>{"A1#"});
        CHECK(j.at("over") == true);
        CHECK(j.at("score") == std::vector<int>{1, 1});
        CHECK(r.err.empty());
    }

    TEST_CASE("bad input: malformed position") {
        check_bad_input("--position 4,4/4,4", "4 '/'-separated fields");
    }
    TEST_CASE("bad input: wrong number of pits") {
        check_bad_input("--position 4,4,4/4,4/0,0/A", "3 A pits but 2 B pits");
        check_bad_input("--position 1,1,1,1,1,1,1/1,1,1,1,1,1,1/0,0/A", "7 pits per side");
    }
    TEST_CASE("bad input: negative count") {
        check_bad_input("--position 4,-1/4,4/0,0/A", "negative seed count of A2");
        check_bad_input("--position 4,1/4,4/0,-3/A", "negative store of B");
    }
    TEST_CASE("bad input: non-numeric count") {
        check_bad_input("--position 4,x/4,4/0,0/A", "non-numeric seed count of A2");
        check_bad_input("--position 4,4/4,4/0,0z/A", "non-numeric store of B");
    }
    TEST_CASE("bad input: too many seeds") {
        check_bad_input("--position 100,4/4,4/0,30/A", "142 seeds");
        check_bad_input("--pits 6 --seeds 11", "132 seeds");
    }
    TEST_CASE("bad input: illegal move") {
        check_bad_input("--moves \"A3+ A3\"", "illegal");
        check_bad_input("--moves B1", "out of turn");
    }
    TEST_CASE("bad input: unknown move text") {
        check_bad_input("--moves \"A3+ Z9\"", "Z9");
        check_bad_input("--moves A7", "A7");
        check_bad_input("--moves A3?", "unknown suffix");
    }
    TEST_CASE("bad input: move after the game ended") {
        check_bad_input("--position 1/1/0,0/A --moves \"A1 B1\"", "after the game ended");
    }
    TEST_CASE("bad input: wrong suffix") {
        check_bad_input("--moves \"A3x2\"", "wrong suffix: the move is A3+");
        check_bad_input("--moves \"A3+ A6+\"", "wrong suffix: the move is A6");
    }
    TEST_CASE("bad input: unknown rule") { check_bad_input("--rule foo", "unknown rule 'foo'"); }
    TEST_CASE("bad input: unknown option") { check_bad_input("--frobnicate", "frobnicate"); }
    TEST_CASE("bad input: a stray word is not ignored") {
        check_bad_input("1/1/0,0/A", "1/1/0,0/A");
    }
    TEST_CASE("bad input: --pits/--seeds out of range") {
        check_bad_input("--pits 7 --seeds 4", "--pits must be 1..6");
        check_bad_input("--pits 0 --seeds 4", "--pits must be 1..6");
        check_bad_input("--pits 6 --seeds 0", "--seeds must be at least 1");
        check_bad_input("--pits 6 --seeds -2", "--seeds must be at least 1");
        check_bad_input("--pits six --seeds 4", "pits");
    }
}

TEST_SUITE("cli") {
    // The command list of `kalah --help` (and of `kalah` alone, on stderr with exit 2):
    // every command named there answers its own --help, and the summaries line up.
    TEST_CASE("kalah --help lists every command, each answering --help") {
        auto r = run_kalah("--help");
        CAPTURE(r.err);
        REQUIRE(r.status == 0);
        auto at = r.out.find("commands:\n");
        REQUIRE(at != std::string::npos);
        std::vector<std::string> names;
        size_t column = 0;
        std::istringstream lines(r.out.substr(at + 10));
        for (std::string line; std::getline(lines, line) && !line.empty();) {
            CAPTURE(line);
            REQUIRE(line.rfind("  ", 0) == 0);
            size_t end = line.find(' ', 2);
            REQUIRE(end != std::string::npos);
            size_t summary = line.find_first_not_of(' ', end);
            REQUIRE(summary != std::string::npos);
            CHECK(summary >= end + 2);
            if (column == 0) column = summary;
            CHECK(summary == column);
            names.push_back(line.substr(2, end - 2));
        }
        CHECK(names.size() >= 10);
        CHECK(std::find(names.begin(), names.end(), "verify-certificate") != names.end());
        for (const auto& name : names) {
            CAPTURE(name);
            auto h = run_kalah(name + " --help");
            CHECK(h.status == 0);
            CHECK(h.out.find("usage: kalah " + name) != std::string::npos);
        }
        auto bare = run_kalah("");
        CHECK(bare.status == 2);
        CHECK(bare.out.empty());
        CHECK(bare.err.find("commands:\n") != std::string::npos);
    }
}
