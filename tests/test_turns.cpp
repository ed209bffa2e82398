// The solver queue's turns (serve/turns.h) against a plain model: round-robin over clients
// (a client's k-th waiting request after every client's (k-1)-th, the client answered
// longest ago first, the earliest come among equals), a full queue's last place taken by a
// request that ranks before it, on fixed cases and on random sequences of arrivals,
// admissions, departures and services.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "serve/turns.h"

using kalah::serve::Turns;

namespace {
using Waiting = std::vector<std::pair<uint64_t, std::string>>;  // (ticket, client), arrival order
// The model's rank of waiting[i]: (its client's requests waiting before it, its client's
// last turn, its ticket).
std::tuple<size_t, uint64_t, uint64_t> rank(const Waiting& waiting,
                                            std::map<std::string, uint64_t>& last, size_t i) {
    size_t ahead = 0;
    for (size_t j = 0; j < i; ++j) ahead += waiting[j].second == waiting[i].second;
    return {ahead, last[waiting[i].second], waiting[i].first};
}
}  // namespace

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

    TEST_CASE("turns: answered without waiting counts as a turn; a removed ticket is gone") {
        Turns t;
        t.answered("a");  // a solver was free
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

    TEST_CASE("turns: a full queue's last place goes to a client answered less recently") {
        Turns t;
        // Neither answered yet: f and g wait; n, never answered either, ties with them
        // and, come later, is refused; refused, it has had its turn.
        const auto f1 = t.admit("f", 2), g1 = t.admit("g", 2);
        REQUIRE(f1.ticket);
        REQUIRE(g1.ticket);
        CHECK(!f1.displaced);
        const auto n1 = t.admit("n", 2);
        CHECK(!n1.ticket);
        CHECK(!n1.displaced);
        // f and g served (a flood's requests answered), then waiting again.
        CHECK(t.next() == f1.ticket);
        CHECK(t.next() == g1.ticket);
        const auto f2 = t.admit("f", 2), g2 = t.admit("g", 2);
        REQUIRE(f2.ticket);
        REQUIRE(g2.ticket);
        // n, answered before both, takes the place of the one served last, g's (the
        // later turn); g, displaced, has had a turn again.
        const auto n2 = t.admit("n", 2);
        REQUIRE(n2.ticket);
        CHECK(n2.displaced == g2.ticket);
        // g asks again: just answered (displaced), it comes after everyone: refused; f,
        // its own request's equal, too.
        CHECK(!t.admit("g", 2).ticket);
        CHECK(!t.admit("f", 2).ticket);
        CHECK(t.waiting() == 2);
        CHECK(t.next() == n2.ticket);
        CHECK(t.next() == f2.ticket);
        CHECK(t.next() == std::nullopt);
        // A client does not displace its own request: equal turns.
        const auto a1 = t.admit("a", 1);
        REQUIRE(a1.ticket);
        CHECK(!t.admit("a", 1).ticket);
        CHECK(t.waiting() == 1);
        // A client's second waiting request ranks after every client's first: a newcomer
        // never answered takes its place (two requests of a never-answered client cannot
        // hold the queue against it).
        Turns q;
        const auto c1 = q.admit("c", 2), c2 = q.admit("c", 2);
        const auto n = q.admit("n", 2);
        REQUIRE(n.ticket);
        CHECK(n.displaced == c2.ticket);
        CHECK(q.next() == n.ticket);  // c was just answered (displaced)
        CHECK(q.next() == c1.ticket);
        // Room 0 refuses everyone and displaces nobody.
        Turns z;
        CHECK(!z.admit("x", 0).ticket);
        CHECK(!z.admit("y", 0).displaced);
    }

    TEST_CASE("turns: equal to a plain model on random sequences") {
        std::mt19937_64 rng(20261204);
        for (int round = 0; round < 200; ++round) {
            Turns t;
            // The model: waiting (ticket, client) in arrival order; last turn per client.
            Waiting waiting;
            std::map<std::string, uint64_t> last;
            uint64_t turn = 0;
            for (int step = 0; step < 300; ++step) {
                const int op = int(rng() % 12);
                const std::string client(1, char('a' + rng() % 5));
                if (op < 3) {
                    waiting.emplace_back(t.push(client), client);
                } else if (op < 6) {
                    // The model's admission: room, else the place of the last in rank if
                    // the newcomer (its client's waiting ahead, its turn, the latest
                    // ticket) ranks before it.
                    const size_t room = 1 + rng() % 4;
                    const Turns::Admission a = t.admit(client, room);
                    if (waiting.size() < room) {
                        REQUIRE(a.ticket.has_value());
                        CHECK(!a.displaced);
                        waiting.emplace_back(*a.ticket, client);
                        continue;
                    }
                    size_t last_i = 0;
                    for (size_t i = 1; i < waiting.size(); ++i)
                        if (rank(waiting, last, i) > rank(waiting, last, last_i)) last_i = i;
                    size_t ahead = 0;
                    for (const auto& w : waiting) ahead += w.second == client;
                    if (std::make_tuple(ahead, last[client], UINT64_MAX) <
                        rank(waiting, last, last_i)) {
                        REQUIRE(a.ticket.has_value());
                        CHECK(a.displaced == waiting[last_i].first);
                        last[waiting[last_i].second] = ++turn;
                        waiting.erase(waiting.begin() + long(last_i));
                        waiting.emplace_back(*a.ticket, client);
                    } else {
                        CHECK(!a.ticket);
                        CHECK(!a.displaced);
                        last[client] = ++turn;
                    }
                } else if (op < 7) {
                    t.answered(client);
                    last[client] = ++turn;
                } else if (op < 8 && !waiting.empty()) {
                    const size_t i = rng() % waiting.size();
                    t.remove(waiting[i].first);
                    waiting.erase(waiting.begin() + long(i));
                } else {
                    const auto got = t.next();
                    if (waiting.empty()) {
                        CHECK(got == std::nullopt);
                        continue;
                    }
                    // The waiting request of the least rank.
                    size_t best = 0;
                    for (size_t i = 1; i < waiting.size(); ++i)
                        if (rank(waiting, last, i) < rank(waiting, last, best)) best = i;
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
