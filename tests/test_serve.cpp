// The web API of `kalah serve` in-process (serve/api.h, no HTTP): its answers against a
// brute-force minimax, its parameter parser's 400 messages, its queue's 503 and the
// cancellation of a waiting or searching request.
#include <doctest/doctest.h>

#if KALAH_HAS_SERVE
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "analysis/reports.h"
#include "brute_force.h"
#include "random_position.h"
#include "serve/api.h"
#include "solver/solver.h"

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

// A stream's status and events, parsed. `on_event` (optional) sees each event as it comes
// and answers as Emit does (false: the reader is gone).
struct Streamed {
    ApiReply reply;
    std::vector<json> events;
};
Streamed stream(Api& api, const Params& p, const std::atomic<bool>* cancel = nullptr,
                const std::function<bool(const json&)>& on_event = {}) {
    Streamed s;
    s.reply = api.stream("analysis", p, cancel, [&](const std::string& object) {
        if (object.empty()) return true;  // "are events wanted?" (HttpCall::emit): yes
        // One JSON object a line, no newline: what a server-sent event's data line holds.
        CHECK(object.find('\n') == std::string::npos);
        s.events.push_back(json::parse(object));
        return on_event ? on_event(s.events.back()) : true;
    });
    return s;
}

// The one solver of `api` held by a stream of kHard until release(): what a waiting
// request queues behind.
struct HeldSolver {
    Api& api;
    std::atomic<bool> cancel{false};
    Streamed held;
    std::thread hold;
    explicit HeldSolver(Api& a) : api(a), hold([this] { held = stream(api, kHard, &cancel); }) {
        wait_for_load(api, 1, 0);
    }
    // Ends the stream; its status (499: cancelled).
    int release() {
        cancel = true;
        hold.join();
        return held.reply.status;
    }
};

// The fields of query's answer that are values: without "nodes", "seconds" (and "event").
json values_of(json j) {
    j.erase("nodes");
    j.erase("seconds");
    j.erase("event");
    return j;
}

// Kalah(6,4) from the start under empty-capture: +10 (rules.md, "Value"), far beyond the
// budgets these cases give when searched (without the opening books).
const Params kSixFour = {{"pits", "6"}, {"seeds", "4"}, {"rule", "empty-capture"}};
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
                    const ApiReply r = api.get("query", {{"position", kalah::format_position(b)},
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
        const ApiReply ok = api.get(
            "move",
            {{"pits", "3"}, {"seeds", "3"}, {"level", "easy"}, {"seed", "18446744073709551615"}});
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

    TEST_CASE("queue: the wait counts in the budget; past it 503, the solver still held") {
        ServeConfig c = small_config();
        c.budget_ms = 200;
        c.stream_budget_ms = 600 * 1000;
        Api api(c);
        // A stream holds the one solver far longer than a request's budget.
        HeldSolver held(api);
        std::atomic<bool> done{false};
        ApiReply waited;
        std::thread t([&] {
            waited = api.get("query", kHard, kalah::serve::Caller(nullptr, "other"));
            done = true;
        });
        // Answered by itself, not by the stream's end (bounded: a hang fails the case).
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!done && std::chrono::steady_clock::now() < give_up)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        CHECK(done);
        CHECK(api.load().searching == 1);
        CHECK(held.release() == 499);
        t.join();
        CHECK(waited.status == 503);
        CHECK(error_of(waited).find("within the budget of 200 ms") != std::string::npos);
    }

    TEST_CASE("queue: requests of two clients waiting behind a stream are all served") {
        ServeConfig c = small_config();
        c.queue = 8;
        c.stream_budget_ms = 600 * 1000;
        Api api(c);
        HeldSolver held(api);
        // Client a queues three requests, then client b one; each is a small search.
        std::mutex mu;
        std::vector<std::string> order;
        std::vector<std::thread> waiting;
        const std::vector<std::string> who = {"a1", "a2", "a3", "b1"};
        for (size_t i = 0; i < who.size(); ++i) {
            const std::string name = who[i];
            waiting.emplace_back([&, name] {
                const Params p = {{"pits", "4"}, {"seeds", "3"}, {"moves", "A1"}};
                const ApiReply r =
                    api.get("query", p, kalah::serve::Caller(nullptr, name.substr(0, 1)));
                CHECK(r.status == 200);
                std::lock_guard<std::mutex> lock(mu);
                order.push_back(name);
            });
            wait_for_load(api, 1, int(i) + 1);
        }
        held.release();
        for (auto& t : waiting) t.join();
        // Every one served (the order of their answers is the threads'; the order of turns
        // is serve/turns.h's, tested in tests/test_turns.cpp).
        CHECK(order.size() == 4);
    }

    TEST_CASE("queue: a client that asks now and then gets a flood's place") {
        ServeConfig c = small_config();
        c.queue = 2;
        Api api(c);
        using kalah::serve::Caller;
        const Params small = {{"pits", "4"}, {"seeds", "3"}, {"moves", "A1"}};
        // Clients f and g were answered before (f first); then a one-shot search of h
        // holds the one solver and f and g fill the queue. (The turns of a flood's
        // refusals: tests/test_turns.cpp.)
        CHECK(api.get("query", small, Caller(nullptr, "f")).status == 200);
        CHECK(api.get("query", small, Caller(nullptr, "g")).status == 200);
        std::atomic<bool> stop_h{false}, stop_f{false}, stop_g{false};
        ApiReply h, f, g;
        std::thread th([&] { h = api.get("query", kHard, Caller(&stop_h, "h")); });
        wait_for_load(api, 1, 0);
        std::thread tf([&] { f = api.get("query", kHard, Caller(&stop_f, "f")); });
        wait_for_load(api, 1, 1);
        std::thread tg([&] { g = api.get("query", kHard, Caller(&stop_g, "g")); });
        wait_for_load(api, 1, 2);
        // Client n, never answered, takes the place of g's waiting request (g was
        // answered last), which answers 503 at once; n is served first when the solver
        // is free.
        ApiReply n;
        std::thread tn([&] { n = api.get("query", small, Caller(nullptr, "n")); });
        tg.join();
        CHECK(g.status == 503);
        CHECK(error_of(g).find("took this one's place") != std::string::npos);
        wait_for_load(api, 1, 2);
        stop_h = true;
        th.join();
        CHECK(h.status == 499);
        tn.join();
        CHECK(n.status == 200);
        CHECK(json::parse(n.body).contains("value"));
        stop_f = true;
        tf.join();
        CHECK(f.status == 499);
        wait_for_load(api, 0, 0);
    }

    TEST_CASE("stream: yields its solver to a waiting one-shot request") {
        ServeConfig c = small_config();
        c.stream_budget_ms = 600 * 1000;
        c.budget_ms = 60 * 1000;  // the request waits past any hold; without a yield, 503
        Api api(c);
        using kalah::serve::Caller;
        std::atomic<bool> cancel{false};
        Streamed held;
        std::thread hold([&] { held = stream(api, kHard, &cancel); });
        wait_for_load(api, 1, 0);
        const ApiReply r = api.get("query", {{"pits", "4"}, {"seeds", "3"}, {"moves", "A1"}},
                                   Caller(nullptr, "other"));
        CHECK(r.status == 200);
        CHECK(json::parse(r.body).contains("value"));
        hold.join();  // ended by itself: the yield
        CHECK(held.reply.status == 200);
        REQUIRE(!held.events.empty());
        const json& last = held.events.back();
        CHECK(last["event"] == "unknown");
        CHECK(last["reason"].get<std::string>().find("yielded the solver") != std::string::npos);
        // A stream does not yield to a waiting stream: the second waits until the first
        // is cancelled.
        std::atomic<bool> cancel_a{false}, cancel_b{false};
        Streamed a, b;
        std::thread ta([&] { a = stream(api, kHard, &cancel_a); });
        wait_for_load(api, 1, 0);
        std::thread tb([&] { b = stream(api, kHard, &cancel_b); });
        wait_for_load(api, 1, 1);
        std::this_thread::sleep_for(2 * kalah::serve::kStreamHold);
        CHECK(api.load().waiting == 1);
        cancel_a = true;
        ta.join();
        CHECK(a.reply.status == 499);
        wait_for_load(api, 1, 0);
        cancel_b = true;
        tb.join();
        CHECK(b.reply.status == 499);
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

    TEST_CASE("books: Kalah(6,4)'s start under each rule from its built-in book, no search") {
        for (const kalah::Rule rule : {kalah::Rule::Standard, kalah::Rule::EmptyCapture}) {
            CAPTURE(kalah::rule_name(rule));
            const Params p = {{"pits", "6"}, {"seeds", "4"}, {"rule", kalah::rule_name(rule)}};
            ServeConfig c = small_config();
            c.budget_ms = 50;
            {
                Api api(c);
                const ApiReply r = api.get("query", p);
                REQUIRE(r.status == 200);
                const json j = json::parse(r.body);
                REQUIRE(j.contains("value"));
                CHECK(j["value"] == (rule == kalah::Rule::Standard ? 8 : 10));  // results/table.csv
                CHECK(j["nodes"] == 0);
                // The page labels it so (web/app.js): from the book, not the database.
                CHECK(j.value("source", "") == "book");
            }
            // Without the books the same request is a search, unknown within the budget.
            c.books = false;
            Api api(c);
            const ApiReply r = api.get("query", p);
            REQUIRE(r.status == 200);
            CHECK(json::parse(r.body)["unknown"] == true);
        }
    }

    TEST_CASE("budget: the unknown answer holds the bounds its search proved") {
        ServeConfig c = small_config();
        c.budget_ms = 300;
        c.books = false;  // a search, not the opening book's answer
        Api api(c);
        const ApiReply r = api.get("query", kSixFour);
        REQUIRE(r.status == 200);
        const json j = json::parse(r.body);
        REQUIRE(j["unknown"] == true);
        INFO(r.body);
        CHECK(j["lower"].get<int>() <= 10);
        CHECK(j["upper"].get<int>() >= 10);
        CHECK(j["moves"].size() == 6);
    }

    TEST_CASE(
        "analysis stream: every bound holds the exact value, bounds only tighten, the "
        "last event is query's answer") {
        Api api(small_config());
        std::mt19937 rng(34);
        int open_bounds = 0, move_events = 0;
        for (kalah::Rule rule : {kalah::Rule::Standard, kalah::Rule::EmptyCapture}) {
            for (int m : {3, 4, 5}) {
                for (int i = 0; i < 8; ++i) {
                    const kalah::Board b = random_position(rng, m, 4 + int(rng() % (4 * m)));
                    const Params p = {{"position", kalah::format_position(b)},
                                      {"rule", kalah::rule_name(rule)}};
                    const Streamed s = stream(api, p);
                    REQUIRE(s.reply.status == 200);
                    CHECK(s.reply.body.empty());
                    REQUIRE(!s.events.empty());
                    const json& last = s.events.back();
                    INFO(p.begin()->second, " ", last.dump());
                    REQUIRE(last["event"] == "value");
                    const ApiReply q = api.get("query", p);
                    REQUIRE(q.status == 200);
                    CHECK(values_of(last) == values_of(json::parse(q.body)));
                    const int value = last["value"];
                    std::map<std::string, int> move_value;
                    for (const auto& mv : last["moves"]) move_value[mv["move"]] = mv["value"];
                    // The position's bounds, then each move's, tightening; every one holds
                    // its exact value.
                    int lo = -1000, hi = 1000;
                    std::map<std::string, std::pair<int, int>> move_bounds;
                    bool moves_started = false;
                    for (size_t k = 0; k + 1 < s.events.size(); ++k) {
                        const json& e = s.events[k];
                        const int l = e["lower"], u = e["upper"];
                        CHECK(l <= u);
                        if (e["event"] == "bound") {
                            CHECK(!moves_started);
                            CHECK(l >= lo);
                            CHECK(u <= hi);
                            lo = l;
                            hi = u;
                            CHECK(l <= value);
                            CHECK(value <= u);
                            open_bounds += l < u;
                        } else {
                            REQUIRE(e["event"] == "move");
                            moves_started = true;
                            ++move_events;
                            const std::string mv = e["move"];
                            REQUIRE(move_value.count(mv) == 1);
                            auto [it, first] = move_bounds.try_emplace(mv, -1000, 1000);
                            CHECK(l >= it->second.first);
                            CHECK(u <= it->second.second);
                            it->second = {l, u};
                            CHECK(l <= move_value[mv]);
                            CHECK(move_value[mv] <= u);
                        }
                    }
                    // Every move ends proven exact before the last event.
                    CHECK(move_bounds.size() == move_value.size());
                    for (const auto& [mv, lu] : move_bounds) {
                        CHECK(lu.first == move_value[mv]);
                        CHECK(lu.second == move_value[mv]);
                    }
                    CHECK(lo == value);
                    CHECK(hi == value);
                }
            }
        }
        // The sample streamed bounds before values (not only final answers).
        CHECK(open_bounds > 20);
        CHECK(move_events > 100);
    }

    TEST_CASE("analysis stream: a finished game is one event, query's answer") {
        Api api(small_config());
        const Params p = {{"position", "0,0,0/1,2,0/5,4/A"}};
        const Streamed s = stream(api, p);
        REQUIRE(s.reply.status == 200);
        REQUIRE(s.events.size() == 1);
        CHECK(s.events[0]["event"] == "value");
        CHECK(values_of(s.events[0]) == values_of(json::parse(api.get("query", p).body)));
    }

    TEST_CASE("analysis stream: bad input is one status and no event") {
        Api api(small_config());
        CHECK(Api::streams("analysis"));
        CHECK(!Api::streams("query"));
        const Streamed bad = stream(api, {{"pits", "3"}, {"seeds", "x"}});
        CHECK(bad.reply.status == 400);
        CHECK(error_of(bad.reply).find("'seeds'") != std::string::npos);
        CHECK(bad.events.empty());
        const Streamed unknown_name =
            stream(api, {{"pits", "3"}, {"seeds", "3"}, {"level", "easy"}});
        CHECK(unknown_name.reply.status == 400);
        CHECK(unknown_name.events.empty());
        size_t events = 0;
        const ApiReply none = api.stream("query", {{"pits", "3"}, {"seeds", "3"}}, nullptr,
                                         [&](const std::string&) { return ++events, true; });
        CHECK(none.status == 404);
        CHECK(events == 0);
    }

    TEST_CASE("analysis stream: a reader that wants no events (HEAD) gets no search") {
        Api api(small_config());
        std::vector<std::string> asked;
        auto no_events = [&](const std::string& object) {
            asked.push_back(object);
            return false;
        };
        const Params small = {{"pits", "4"}, {"seeds", "3"}};
        const ApiReply r = api.stream("analysis", small, nullptr, no_events);
        CHECK(asked == std::vector<std::string>{""});  // asked once, and no event searched for
        CHECK(r.status == 499);
        CHECK(api.load().searching == 0);
        // Bad input is still its status, before the question.
        asked.clear();
        const Params bad = {{"pits", "4"}, {"seeds", "x"}};
        CHECK(api.stream("analysis", bad, nullptr, no_events).status == 400);
        CHECK(asked.empty());
    }

    TEST_CASE("analysis stream: a cancel, or a reader gone, stops the search") {
        Api api(small_config());
        // The cancel flag set while it searches: the search stops without another event
        // and the solver is free.
        std::atomic<bool> cancel{false};
        Streamed c;
        std::thread t([&] { c = stream(api, kHard, &cancel); });
        wait_for_load(api, 1, 0);
        cancel = true;
        t.join();
        CHECK(c.reply.status == 499);
        for (const json& e : c.events) CHECK(e["event"] == "bound");
        CHECK(api.load().searching == 0);
        // Emit answering false: the stream ends at that event, whichever it is.
        const Params small = {{"pits", "4"}, {"seeds", "3"}};
        for (size_t stop_at : {1, 2, 3, 5}) {
            size_t seen = 0;
            const Streamed g =
                stream(api, small, nullptr, [&](const json&) { return ++seen < stop_at; });
            CHECK(g.reply.status == 499);
            CHECK(g.events.size() == stop_at);
            CHECK(api.load().searching == 0);
        }
        // And the same stream read to its end has more events than those.
        CHECK(stream(api, small).events.size() > 5);
    }

    TEST_CASE("analysis stream: at its own budget the last event is unknown with the bounds") {
        ServeConfig c = small_config();
        c.budget_ms = 1;  // the request budget: not the stream's
        c.stream_budget_ms = 400;
        c.books = false;  // a search, not the opening book's answer
        Api api(c);
        const Streamed s = stream(api, kSixFour);
        REQUIRE(s.reply.status == 200);
        REQUIRE(!s.events.empty());
        const json& last = s.events.back();
        INFO(last.dump());
        CHECK(last["event"] == "unknown");
        CHECK(last["unknown"] == true);
        CHECK(last["budget_ms"] == 400);
        CHECK(last["lower"].get<int>() <= 10);
        CHECK(last["upper"].get<int>() >= 10);
        // The last bound streamed is the one the unknown answer gives.
        if (s.events.size() > 1) {
            const json& before = s.events[s.events.size() - 2];
            if (before["event"] == "bound") {
                CHECK(before["lower"] == last["lower"]);
                CHECK(before["upper"] == last["upper"]);
            }
        }
    }
}

// query_stream and query_report stopped at any point (a node limit standing in for the
// budget) leave bounds that hold the exact values, for either side to move.
TEST_SUITE("serve") {
    TEST_CASE("query_stream, query_report: the bounds of a stopped search hold the exact values") {
        std::mt19937 rng(35);
        int stopped = 0, tightened[2] = {0, 0};  // [streamed]
        for (kalah::Rule rule : {kalah::Rule::Standard, kalah::Rule::EmptyCapture}) {
            kalah::SolverOptions exact_opts;
            exact_opts.tt_mb = 4;
            kalah::Solver exact(4, rule, exact_opts);
            for (int i = 0; i < 40; ++i) {
                const kalah::Board b = random_position(rng, 4, 14 + int(rng() % 10));
                INFO(kalah::format_position(b));
                const int v = exact.value(b);
                const auto mv = exact.move_values(b);
                const kalah::analysis::QueryBounds seed_only(b, rule);
                for (bool streamed : {true, false}) {
                    kalah::SolverOptions o;
                    o.tt_mb = 4;
                    o.node_limit = 300 + rng() % 3000;
                    kalah::Solver limited(4, rule, o);
                    kalah::analysis::QueryBounds bounds(b, rule);
                    try {
                        if (streamed)
                            kalah::analysis::query_stream(
                                limited, bounds, [](const kalah::analysis::Json&) { return true; });
                        else
                            kalah::analysis::query_report(limited, b, rule, &bounds);
                    } catch (const kalah::SearchStopped&) {
                        ++stopped;
                        // Stopped in the position's own search, past its first pass.
                        tightened[streamed] += !bounds.exact() && (bounds.lower > seed_only.lower ||
                                                                   bounds.upper < seed_only.upper);
                    }
                    CHECK(bounds.lower <= v);
                    CHECK(v <= bounds.upper);
                    REQUIRE(mv.size() == bounds.moves.size());
                    for (size_t k = 0; k < mv.size(); ++k) {
                        CHECK(bounds.moves[k].text == mv[k].text);
                        CHECK(bounds.moves[k].lower <= mv[k].value);
                        CHECK(mv[k].value <= bounds.moves[k].upper);
                    }
                }
            }
        }
        // Enough searches stopped, and enough of those with bounds past the seed count's.
        CHECK(stopped > 20);
        CHECK(tightened[0] > 5);
        CHECK(tightened[1] > 5);
    }
}
#endif
