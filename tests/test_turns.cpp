// The solver queue's turns (serve/turns.h) against a plain model: a client at a time in
// turn, the earliest come among equals, on fixed cases and on random sequences of arrivals,
// departures and services.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "serve/turns.h"

using kalah::serve::Turns;

TEST_SUITE("serve") {
    TEST_CASE("turns: one client's many requests do not keep another's out") {
        Turns t;
        const uint64_t a1 = t.push("a"), a2 = t.push("a"), a3 = t.push("a"), b1 = t.push("b");
        CHECK(t.waiting() == 4);
        CHECK(t.next() == a1);  // none served yet: the earliest
        CHECK(t.next() == b1);  // b never served, a just was
        CHECK(t.next() == a2);
        CHECK(t.next() == a3);
        CHECK(t.next() == std::nullopt);
        CHECK(t.waiting() == 0);
    }

    TEST_CASE("turns: served without waiting counts as a turn; a removed ticket is gone") {
        Turns t;
        t.served("a");  // a solver was free
        const uint64_t a1 = t.push("a"), b1 = t.push("b"), c1 = t.push("c");
        t.remove(b1);
        t.remove(b1);  // twice: no-op
        CHECK(t.waiting() == 2);
        CHECK(t.next() == c1);  // c never served, a was
        CHECK(t.next() == a1);
        const uint64_t c2 = t.push("c"), a2 = t.push("a");
        CHECK(t.next() == c2);  // c served before a, so c's turn comes first
        CHECK(t.next() == a2);
    }

    TEST_CASE("turns: equal to a plain model on random sequences") {
        std::mt19937_64 rng(20261204);
        for (int round = 0; round < 200; ++round) {
            Turns t;
            // The model: waiting (ticket, client) in arrival order; last turn per client.
            std::vector<std::pair<uint64_t, std::string>> waiting;
            std::map<std::string, uint64_t> last;
            uint64_t turn = 0;
            for (int step = 0; step < 300; ++step) {
                const int op = int(rng() % 10);
                const std::string client(1, char('a' + rng() % 5));
                if (op < 5) {
                    waiting.emplace_back(t.push(client), client);
                } else if (op < 6) {
                    t.served(client);
                    last[client] = ++turn;
                } else if (op < 7 && !waiting.empty()) {
                    const size_t i = rng() % waiting.size();
                    t.remove(waiting[i].first);
                    waiting.erase(waiting.begin() + long(i));
                } else {
                    const auto got = t.next();
                    if (waiting.empty()) {
                        CHECK(got == std::nullopt);
                        continue;
                    }
                    // The first waiting whose client's last turn is the smallest (0: never).
                    size_t best = 0;
                    for (size_t i = 1; i < waiting.size(); ++i)
                        if (last[waiting[i].second] < last[waiting[best].second]) best = i;
                    REQUIRE(got.has_value());
                    CHECK(*got == waiting[best].first);
                    last[waiting[best].second] = ++turn;
                    waiting.erase(waiting.begin() + long(best));
                }
                CHECK(t.waiting() == waiting.size());
            }
        }
    }
}
