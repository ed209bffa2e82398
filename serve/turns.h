// The order in which the requests waiting for a solver are served (serve/api.cpp's
// solver pool): a client at a time in turn, so that one client's many requests cannot
// keep another's out. Next is the waiting request whose client was served longest ago (a
// client never served, or forgotten, before any served), the earliest come among equals.
// Not thread-safe: the pool calls it under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kalah::serve {

class Turns {
  public:
    // A request of `client` starts waiting: its ticket.
    uint64_t push(const std::string& client);
    // A waiting request stops waiting unserved (cancelled, past its budget); no-op if
    // it is not waiting.
    void remove(uint64_t ticket);
    // The request served now, taken out of the waiting ones; its client is marked served.
    // nullopt when none waits.
    std::optional<uint64_t> next();
    // A request of `client` served without waiting (a solver was free, nobody waited).
    void served(const std::string& client);
    size_t waiting() const { return waiting_.size(); }

  private:
    // Past this many clients remembered, the memory of who was served is dropped: the
    // order stays fair among those waiting then, and the map stays small.
    static constexpr size_t kRemembered = 4096;
    std::map<uint64_t, std::string> waiting_;      // ticket (arrival order) -> client
    std::map<std::string, uint64_t> last_served_;  // client -> its last turn (1, 2, ...)
    uint64_t next_ticket_ = 0, next_turn_ = 1;
};

}  // namespace kalah::serve
