// The solver queue's turns (serve/turns.h).
#include "serve/turns.h"

namespace kalah::serve {

uint64_t Turns::push(const std::string& client) {
    waiting_.emplace(next_ticket_, client);
    return next_ticket_++;
}

void Turns::remove(uint64_t ticket) { waiting_.erase(ticket); }

std::optional<uint64_t> Turns::next() {
    if (waiting_.empty()) return std::nullopt;
    // Tickets in arrival order: the first with the smallest last turn wins ties.
    auto best = waiting_.end();
    uint64_t best_turn = 0;
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
        const auto s = last_served_.find(it->second);
        const uint64_t turn = s == last_served_.end() ? 0 : s->second;
        if (best == waiting_.end() || turn < best_turn) {
            best = it;
            best_turn = turn;
        }
    }
    const uint64_t ticket = best->first;
    served(best->second);
    waiting_.erase(best);
    return ticket;
}

void Turns::served(const std::string& client) {
    if (last_served_.size() >= kRemembered && !last_served_.count(client)) last_served_.clear();
    last_served_[client] = next_turn_++;
}

}  // namespace kalah::serve
