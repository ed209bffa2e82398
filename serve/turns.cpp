// The solver queue's turns (serve/turns.h).
#include "serve/turns.h"

#include <iterator>

namespace kalah::serve {

uint64_t Turns::push(const std::string& client) {
    waiting_.emplace(next_ticket_, client);
    return next_ticket_++;
}

Turns::Admission Turns::admit(const std::string& client, size_t room) {
    Admission a;
    if (waiting_.size() < room) {
        a.ticket = push(client);
        return a;
    }
    if (!waiting_.empty()) {
        // The newcomer's rank: behind its client's waiting requests, its ticket the latest.
        size_t ahead = 0;
        for (const auto& w : waiting_) ahead += w.second == client;
        const auto last = in_turn(false);
        if (Rank{ahead, turn_of(client), next_ticket_} < rank_of(last)) {
            a.displaced = last->first;
            answered(last->second);
            waiting_.erase(last);
            a.ticket = push(client);
            return a;
        }
    }
    answered(client);
    return a;
}

void Turns::remove(uint64_t ticket) { waiting_.erase(ticket); }

uint64_t Turns::turn_of(const std::string& client) const {
    const auto s = last_answered_.find(client);
    return s == last_answered_.end() ? 0 : s->second;
}

Turns::Rank Turns::rank_of(Waiting::const_iterator w) const {
    size_t ahead = 0;
    for (auto it = waiting_.begin(); it != w; ++it) ahead += it->second == w->second;
    return {ahead, turn_of(w->second), w->first};
}

Turns::Waiting::iterator Turns::in_turn(bool first) {
    auto best = waiting_.begin();
    Rank best_rank = rank_of(best);
    for (auto it = std::next(waiting_.begin()); it != waiting_.end(); ++it) {
        const Rank r = rank_of(it);
        if (first ? r < best_rank : best_rank < r) {
            best = it;
            best_rank = r;
        }
    }
    return best;
}

std::optional<uint64_t> Turns::next() {
    if (waiting_.empty()) return std::nullopt;
    const auto best = in_turn(true);
    const uint64_t ticket = best->first;
    answered(best->second);
    waiting_.erase(best);
    return ticket;
}

void Turns::answered(const std::string& client) {
    if (last_answered_.size() >= kRemembered && !last_answered_.count(client))
        last_answered_.clear();
    last_answered_[client] = next_turn_++;
}

}  // namespace kalah::serve
