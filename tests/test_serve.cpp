// The web API of `kalah serve` in-process (serve/server.h, no HTTP): its answers against a
// brute-force minimax, its parameter parser's 400 messages, its queue's 503 and the
// cancellation of a waiting or searching request.
#include <doctest/doctest.h>

#if KALAH_HAS_SERVE
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "brute_force.h"
#include "random_position.h"
#include "serve/server.h"

namespace {
using kalah::serve::Api;
using kalah::serve::ApiReply;
using kalah::serve::ServeConfig;
using Params = std::multimap<std::string, std::string>;
using nlohmann::json;

ServeConfig small_config() {
    ServeConfig c;
    c.tt_mb = 4;
    c.budget_ms = 600 * 1000;  // no budget stop unless a case asks for one
    return c;
}

// The hardest start a test can afford to leave running: far beyond any budget here.
const Params kHard = {{"pits", "6"}, {"seeds", "6"}};

// Waits (without a time limit: ctest's timeout is the bound) until `api` shows the load.
void wait_for_load(const Api& api, int searching, int waiting) {
    for (;;) {
        const auto l = api.load();
        if (l.searching == searching && l.waiting == waiting) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

std::string error_of(const ApiReply& r) { return json::parse(r.body).value("error", ""); }
}  // namespace

TEST_SUITE("serve") {
    TEST_CASE("query: every value and move value equals brute force") {
        Api api(small_config());
        std::mt19937 rng(33);
        for (kalah::Rule rule : {kalah::Rule::Standard, kalah::Rule::EmptyCapture}) {
            for (int m : {2, 3, 4}) {
                BruteForce bf(m, rule);
                for (int i = 0; i < 12; ++i) {
                    const kalah::Board b = random_position(rng, m, 2 + int(rng() % (3 * m)));
                    const ApiReply r = api.get(
                        "query", {{"position", kalah::format_position(b)},
                                  {"rule", kalah::rule_name(rule)}});
                    REQUIRE(r.status == 200);
                    const json j = json::parse(r.body);
                    const ref::Pos p = ref::from_board(b);
                    CHECK(j["value"].get<int>() == bf.value(p));
                    const std::vector<int> mv = bf.move_values(p);
                    size_t legal = 0;
                    for (int v : mv) legal += v != -1000;
                    REQUIRE(j["moves"].size() == legal);
                    for (const auto& move : j["moves"]) {
                        const int pit = move["move"].get<std::string>()[1] - '1';
                        CHECK(move["value"].get<int>() == mv[pit]);
                    }
                }
            }
        }
    }

    TEST_CASE("show and query agree on the position a game record reaches") {
        Api api(small_config());
        const Params p = {{"pits", "3"}, {"seeds", "2"}, {"moves", "A1 B3"}};
        const ApiReply s = api.get("show", p), q = api.get("query", p);
        REQUIRE(s.status == 200);
        REQUIRE(q.status == 200);
        CHECK(json::parse(s.body)["position"] == json::parse(q.body)["position"]);
    }

    TEST_CASE("parameters: each bad one is a 400 that names it") {
        Api api(small_config());
        struct Case {
            Params params;
            std::string endpoint, names;
        };
        const std::vector<Case> cases = {
            {{{"pits", "x"}, {"seeds", "3"}}, "query", "'pits'"},
            {{{"pits", "7"}, {"seeds", "3"}}, "query", "'pits'"},
            {{{"pits", "3 "}, {"seeds", "3"}}, "query", "'pits'"},
            {{{"pits", "3"}, {"seeds", "-1"}}, "query", "'seeds'"},
            {{{"pits", "3"}, {"seeds", "99999999999999999999"}}, "query", "'seeds'"},
            {{{"pits", "3"}}, "query", "'seeds'"},
            {{{"pits", "3"}, {"seeds", "3"}, {"rule", "chess"}}, "query", "'rule'"},
            {{{"pits", "3"}, {"seeds", "3"}, {"moves", "A9"}}, "query", "'moves'"},
            {{{"pits", "3"}, {"seeds", "3"}, {"colour", "red"}}, "query", "'colour'"},
            {{{"pits", "3"}, {"seeds", "3"}, {"pits", "3"}}, "query", "'pits'"},
            {{{"pits", "3"}, {"seeds", "3"}, {"rule", ""}}, "query", "'rule'"},
            {{{"pits", "3"}, {"seeds", "3"}, {"rule", "std\n"}}, "query", "'rule'"},
            {{{"pits", "3"}, {"seeds", "3"}, {"rule", std::string(300, 's')}}, "query", "'rule'"},
            {{{"position", "1,2/3"}}, "query", "'position'"},
            {{{"pits", "3"}, {"seeds", "3"}, {"level", "god"}}, "move", "'level'"},
            {{{"pits", "3"}, {"seeds", "3"}, {"seed", "12a"}}, "move", "'seed'"},
            {{{"pits", "3"}, {"seeds", "3"}, {"level", "easy"}}, "query", "'level'"},
        };
        for (const Case& c : cases) {
            const ApiReply r = api.get(c.endpoint, c.params);
            INFO(c.endpoint, " -> ", r.body);
            CHECK(r.status == 400);
            CHECK(error_of(r).find(c.names) != std::string::npos);
        }
        // What a parameter means is what the CLI's option of the same name means.
        const ApiReply ok = api.get("move", {{"pits", "3"}, {"seeds", "3"}, {"level", "easy"},
                                             {"seed", "18446744073709551615"}});
        CHECK(ok.status == 200);
        CHECK(api.get("query", {{"seeds", "3"}}).status == 400);
        CHECK(api.get("query", {}).status == 400);
    }

    TEST_CASE("queue: past the waiting requests the answer is 503, at once") {
        ServeConfig c = small_config();
        c.queue = 1;
        Api api(c);
        std::atomic<bool> cancel_a{false}, cancel_b{false};
        ApiReply a, b;
        std::thread ta([&] { a = api.get("query", kHard, &cancel_a); });
        wait_for_load(api, 1, 0);
        std::thread tb([&] { b = api.get("query", kHard, &cancel_b); });
        wait_for_load(api, 1, 1);
        const ApiReply full = api.get("query", kHard);
        CHECK(full.status == 503);
        CHECK(error_of(full).find("busy") != std::string::npos);
        // The waiting request leaves the queue when its client goes; the searching one
        // keeps its solver until then.
        cancel_b = true;
        tb.join();
        CHECK(b.status == 499);
        CHECK(api.load().searching == 1);
        cancel_a = true;
        ta.join();
        CHECK(a.status == 499);
        wait_for_load(api, 0, 0);
        // The solver is free again and answers the next request in full.
        CHECK(api.get("query", {{"pits", "3"}, {"seeds", "2"}}).status == 200);
    }

    TEST_CASE("budget: a search past it answers unknown and frees the solver") {
        ServeConfig c = small_config();
        c.budget_ms = 50;
        Api api(c);
        const ApiReply r = api.get("query", kHard);
        REQUIRE(r.status == 200);
        const json j = json::parse(r.body);
        CHECK(j["unknown"] == true);
        CHECK(j["budget_ms"] == 50);
        CHECK(api.load().searching == 0);
    }
}
#endif
