// Transposition table of exact bounds on pit values, keyed on the full pits of a position.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/huge_pages.h"
#include "solver/tt_entry.h"
#include "solver/tt_key.h"

namespace kalah {

// A table of 4-entry buckets (one 64-byte cache line each) that grows by itself.
//
// The entry's 16-byte layout, what a probe may rely on, and how the shared calls keep
// entries whole under concurrent use (the seqlock or 16-byte atomic moves): the
// table's private notes, solver/tt_entry.h.
//
// Memory: the table starts small (reserve()) and grows fourfold, rehashing every entry,
// up to its byte budget, as its own policy decides (solver/tt_growth.h); pages come zeroed
// from the OS (mmap, transparent huge pages requested), so nothing is touched before it
// is used and a query on a small board stays fast.
//
// Concurrent use: probe()/store() are for one thread at a time (no atomics: the
// single-thread search pays nothing). probe_shared()/store_shared() may run concurrently
// from any number of threads (Sharing below, fixed for a table's life). The shared calls
// never grow the table: each thread tallies what its stores did, store_shared() says when
// the table wants to grow, and the caller then stops every thread and calls
// end_shared_phase(), which grows it alone. Mixing shared and plain calls is allowed only
// with a synchronisation point in between (the end of a parallel region).
class TranspositionTable {
  public:
    // How probe_shared()/store_shared() keep entries whole (see "Concurrent use"). kAuto:
    // kAtomic16 where the processor guarantees it and the build is not under
    // ThreadSanitizer, else kSeqlock. Asking for kAtomic16 where it is not guaranteed
    // gives kSeqlock.
    enum class Sharing { kAuto, kSeqlock, kAtomic16 };
    explicit TranspositionTable(size_t max_bytes, Sharing sharing = Sharing::kAuto);
    ~TranspositionTable();
    TranspositionTable(const TranspositionTable&) = delete;
    TranspositionTable& operator=(const TranspositionTable&) = delete;

    // --- Size and contents (no concurrent calls) ---
    // Makes room for about `positions` entries, within a small initial size and the
    // budget; never shrinks, keeps the contents.
    void reserve(uint64_t positions);
    // Grows to `bytes` (a whole number of buckets, at most the budget; never shrinks),
    // rehashing every entry; with threads > 1 and a table of 16 MiB or more, that many
    // threads touch the fresh pages and rehash, each its share. resize(max_bytes()) takes
    // the whole budget at once, so that the table never grows during a search.
    void resize(size_t bytes, int threads = 1);
    void clear();  // frees the table: empty, zero bytes, the budget kept
    size_t bytes() const { return buckets_ * sizeof(Bucket); }
    size_t max_bytes() const { return max_bytes_; }
    // Entries in use per thousand (counting shared stores once end_shared_phase() has run).
    int usage_permille() const {
        return buckets_ ? int(used_ * 1000 / (uint64_t(buckets_) * 4)) : 0;
    }

    // --- One thread ---
    TTProbe probe(const TTKey& k) const {
        if (!buckets_) return TTProbe{};
        return find(*bucket_of(k), k);
    }
    // Starts loading k's bucket into the cache (a hint; no effect on contents).
    void prefetch(const TTKey& k) const {
        if (buckets_) __builtin_prefetch(bucket_of(k));
    }
    // Records lower <= v <= upper (use -127 / 127 for "no bound") and the best pit (-1:
    // none) for k, after a search of `nodes` nodes; may grow the table.
    void store(const TTKey& k, int lower, int upper, int move, uint64_t nodes);

    // --- Any number of threads at once (see "Concurrent use") ---
    // Inline, with the 16-byte path, like probe(): the search probes at every node.
    TTProbe probe_shared(const TTKey& k) const {
        if (!buckets_) return TTProbe{};
        if (atomic16_) return probe_atomic16(k);
        return probe_seqlock(k);
    }
    // What one thread's shared stores did since it last reported them: each thread keeps
    // its own, so that the counts cost no shared writes.
    struct Tally {
        uint64_t fresh = 0;   // empty slots filled
        uint64_t stores = 0;  // calls
        uint64_t costly = 0;  // costly entries evicted
    };
    // store() for concurrent use; never grows the table. Every few thousand stores it
    // reports `tally` (as report() does) and returns true when the table wants to grow:
    // the caller should then stop every thread and call end_shared_phase().
    bool store_shared(const TTKey& k, int lower, int upper, int move, uint64_t nodes, Tally& tally);
    // Adds `tally` to the counts of the current shared phase and clears it (thread-safe);
    // true when the table wants to grow. Each thread reports its tally when it stops.
    bool report(Tally& tally);
    // After the threads stopped: takes in the counts they reported, and grows the table
    // (with `threads` threads) if its policy says so. Everything stored is kept.
    void end_shared_phase(int threads);

    // Whether the shared calls use whole-entry atomic moves (kAtomic16) or the seqlock.
    bool atomic16() const { return atomic16_; }
    // Whether this processor guarantees atomic aligned 16-byte moves (x86-64 with AVX).
    static bool atomic16_supported();

  private:
    struct Entry {
        uint64_t w0;
        uint64_t w1;
    };
    struct alignas(64) Bucket {
        Entry e[4];
    };
    // What a store did to its bucket.
    enum Outcome { kMerged = 0, kFilled = 1, kEvicted = 2, kEvictedCostly = 3 };
    // Inline: called for every probe, store and prefetch.
    Bucket* bucket_of(const TTKey& k) const {
        return &table_[static_cast<uint64_t>((static_cast<unsigned __int128>(k.hash) * buckets_) >>
                                             64)];
    }
    // Buckets the byte budget allows (at least one).
    size_t budget_buckets() const { return std::max<size_t>(max_bytes_ / sizeof(Bucket), 1); }
    // Would the table grow with these counts beyond its own (tt_growth.h)?
    bool wants_growth(uint64_t more_used, uint64_t more_stores, uint64_t more_costly) const;
    // Rehashes every entry into a new table of `buckets` buckets; with touch_threads > 1
    // and `buckets` a multiple of the old count (a growth), that many threads fault its
    // pages in and rehash, each its share. If memory runs out while growing, keeps the
    // current table and stops growing (max_bytes_ shrinks to it).
    void rehash(size_t buckets, int touch_threads = 1);
    // Places a whole entry (rehash); tells whether it filled an empty slot. Only touches
    // the entry's own bucket.
    bool insert(const Entry& e);
    static TTProbe find(const Bucket& b, const TTKey& k) {  // k's entry in b, if any
        for (const Entry& e : b.e)
            if (tt_detail::matches(e.w0, e.w1, k)) return tt_detail::found_entry(e.w1);
        return TTProbe{};
    }
    // Merges or places k's entry in b (no growth): what it did, and the entry it wrote.
    struct Placed {
        Outcome outcome;
        int slot;
    };
    static Placed update(Bucket& b, const TTKey& k, int lower, int upper, int move, int lognodes);
    TTProbe probe_atomic16(const TTKey& k) const {
        using namespace tt_detail;
        const Bucket* b = bucket_of(k);
        for (const Entry& e : b->e) {
#if defined(__x86_64__)
            // Word 1 is taken out of the register only for an entry whose word 0 matches.
            const __m128i v = load_entry(&e);
            if (word0(v) != k.lo) continue;
            const uint64_t w0 = k.lo, w1 = word1(v);
#else
            uint64_t w0, w1;
            load_entry(&e, w0, w1);
#endif
            if (matches(w0, w1, k)) return found_entry(w1);
        }
        return TTProbe{};
    }
    TTProbe probe_seqlock(const TTKey& k) const;
    Outcome store_atomic16(const TTKey& k, int lower, int upper, int move, uint64_t nodes);
    Outcome store_seqlock(const TTKey& k, int lower, int upper, int move, uint64_t nodes);
    uint64_t lock(Bucket* b) const;  // spins until locked; returns entry 0's word 1

    // Budget and sharing.
    size_t max_bytes_;
    bool atomic16_;
    // The table.
    size_t buckets_ = 0;
    HugePages memory_;         // the table's pages
    Bucket* table_ = nullptr;  // memory_.data()
    // The growth policy's counts.
    uint64_t used_ = 0;    // entries in use
    uint64_t stores_ = 0;  // stores since clear()
    uint64_t costly_ = 0;  // costly evictions since the last resize
    // The shared phase's reported tallies, not yet added to the counts above (end_shared_phase()).
    std::atomic<uint64_t> shared_fresh_{0};
    std::atomic<uint64_t> shared_stores_{0};
    std::atomic<uint64_t> shared_costly_{0};
};

}  // namespace kalah
