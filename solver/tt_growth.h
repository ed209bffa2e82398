// The transposition table's growth policy: when a table grows fourfold (tt.cpp alone
// applies it; a header of its own so that the tests can check it as a pure function).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kalah::tt_growth {

// A table grows fourfold when all of these hold:
// - it is over three quarters full and the budget allows four times the size;
// - the stores since clear() are at least half the grown table's entries: short searches
//   stay in a small table, since fresh memory is expensive to touch the first time
//   (results/solver.md, "The machine's memory");
// - a growth past kCheapBytes needs evidence that the table is too small: since its last
//   resize, evictions of entries whose subtree had at least 2^kCostlyLog2 nodes number at
//   least 1/kCostlyShare of its entries. Replacement keeps the largest subtrees, so a
//   table that only evicts small ones loses little, while the larger table costs its first
//   touches and more cache misses (results/solver.md, "A growth past 16 MiB needs costly
//   evictions");
// - a growth past kFarBytes needs costly evictions of at least 1/kFarShare of the entries:
//   a random read grows dearer with the table, so only a search that evicts many large
//   subtrees gains from it (results/solver.md, "Table growth past 256 MiB needs costly
//   evictions of half its entries").
constexpr size_t kCheapBytes = size_t(16) << 20;
constexpr size_t kFarBytes = size_t(256) << 20;
constexpr int kCostlyLog2 = 4;
constexpr uint64_t kCostlyShare = 128;
constexpr uint64_t kFarShare = 2;
constexpr size_t kBucketBytes = 64;  // four 16-byte entries

// Should a table of `buckets` buckets with a budget of `max_bytes` grow, with `used`
// entries in use, `stores` stores since clear() and `costly` costly evictions since its
// last resize?
inline bool wanted(uint64_t buckets, uint64_t used, uint64_t stores, uint64_t costly,
                   size_t max_bytes) {
    const uint64_t entries = buckets * 4;
    const uint64_t grown_bytes = buckets * 4 * kBucketBytes;
    return used * 4 > entries * 3 && grown_bytes <= max_bytes && stores * 2 >= entries * 4 &&
           (grown_bytes <= kCheapBytes ||
            costly * (grown_bytes <= kFarBytes ? kCostlyShare : kFarShare) >= entries);
}

// A growth to at least this many bytes is touched and rehashed by every thread of a
// parallel search, each its share: first touches are most of a growth's cost, and the
// team waits for it (results/parallel.md, "Growth touched and rehashed by all threads").
// Fourfold rather than straight to the whole budget, so that no single growth stops the
// team for long (results/parallel.md, "Growth fourfold at every thread count").
constexpr size_t kTouchBytes = size_t(16) << 20;

// A shared store reports its thread's tally every this many stores.
constexpr uint64_t kReportStores = 4096;

}  // namespace kalah::tt_growth
