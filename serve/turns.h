// The order in which the requests waiting for a solver are served (serve/api.cpp's
// solver pool), and which of them may wait: round-robin over clients, so that neither one
// client's many requests nor a flood from many clients keeps another's out. A waiting
// request's rank is (its client's requests waiting ahead of it, its client's turn, its
// arrival): every client's first waiting request before any client's second, and among
// those the client whose turn is oldest first, then the earliest come. A client's turn is
// the last time one of its requests was answered by the pool: handed a solver, or refused
// a place in the queue (the queue full, or its place taken); 0 if never (or forgotten). A
// request whose budget runs out while it waits does not count: a client kept waiting by
// others' searches is not pushed back for it. A flood's clients are refused again and
// again, so a client that asks now and then comes before them; when the queue is full, a
// newcomer takes the place of the waiting request ranked last if it ranks before it.
// Not thread-safe: the pool calls it under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace kalah::serve {

class Turns {
  public:
    // A request of `client` starts waiting: its ticket (no bound on the waiting).
    uint64_t push(const std::string& client);

    // What became of a request that asked to wait (admit).
    struct Admission {
        std::optional<uint64_t> ticket;     // it waits with this ticket; nullopt: refused
        std::optional<uint64_t> displaced;  // the waiting request whose place it took
    };
    // A request of `client` asks to wait, at most `room` requests waiting: it waits if
    // fewer wait; else it takes the place of the waiting request ranked last (which
    // leaves unserved, its client marked answered) if it ranks before it; else it is
    // refused and its client marked answered.
    Admission admit(const std::string& client, size_t room);

    // A waiting request stops waiting unserved (cancelled, past its budget); no-op if
    // it is not waiting. Its client's turn is not changed (answered() does that).
    void remove(uint64_t ticket);
    // The request served now, taken out of the waiting ones; its client is marked
    // answered. nullopt when none waits.
    std::optional<uint64_t> next();
    // A request of `client` was handed a solver without waiting (a solver was free and
    // nobody waited): its client's turn.
    void answered(const std::string& client);
    size_t waiting() const { return waiting_.size(); }

  private:
    using Waiting = std::map<uint64_t, std::string>;  // ticket (arrival order) -> client
    // (requests of its client waiting ahead, its client's turn, its ticket): the least is
    // served first.
    using Rank = std::tuple<size_t, uint64_t, uint64_t>;
    // The client's last turn: 0 if never answered (or forgotten).
    uint64_t turn_of(const std::string& client) const;
    Rank rank_of(Waiting::const_iterator w) const;
    // The waiting request served first (first = true) or last; waiting_ not empty.
    Waiting::iterator in_turn(bool first);

    // Past this many clients remembered, the memory of who was answered is dropped: the
    // order stays fair among those waiting then, and the map stays small.
    static constexpr size_t kRemembered = 4096;
    Waiting waiting_;
    std::map<std::string, uint64_t> last_answered_;  // client -> its last turn (1, 2, ...)
    uint64_t next_ticket_ = 0, next_turn_ = 1;
};

}  // namespace kalah::serve
