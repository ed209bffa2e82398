// Transposition table of exact bounds on pit values, keyed on the full pits of a position.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/board.h"
#include "core/huge_pages.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace kalah {

// The key of a pits-only position, mover's view: the 2m pit counts (each < 128) packed
// one byte each, the mover's pits P0..Pm-1 in bytes 0..m-1 and the opponent's Q0..Qm-1 in
// bytes m..2m-1 (the store byte of Board::cells removed). 2m <= 12 bytes: `lo` holds bytes
// 0..7, `hi` bytes 8..11. Two different positions of the same m never share a key.
// `hash` mixes lo and hi once for the key's bucket (and the parallel search's busy
// table): a search probes, prefetches and stores a key several times, and mixing it anew
// each time cost more than carrying it (results/solver.md, "A key carries its hash").
// Build keys with of() or from_parts(), never field by field. No member
// initializers: a node's expansion holds a dozen keys it fills before use.
struct TTKey {
    uint64_t lo;
    uint32_t hi;
    uint64_t hash;
    static TTKey of(const Board& b);                    // b's pits (stores ignored)
    static TTKey of_pits(const Board& b);               // the same, for b with empty stores
    static TTKey from_parts(uint64_t lo, uint32_t hi);  // the key of those bytes
};

// What a probe found. Bounds are on the exact pit value v (mover's view):
// lower <= v <= upper. Without an entry: found = false, lower = -127, upper = 127.
struct TTProbe {
    bool found = false;
    int lower = -127;
    int upper = 127;
    int move = -1;  // best (or refuting) pit, -1 if none
};

// Entry words (layout in TranspositionTable below), inline for the probes the search
// makes at every node; not for use outside the table.
namespace tt_detail {
constexpr uint64_t kUsed = uint64_t(1) << 56;
constexpr int kNoMove = 7;
inline int lower_of(uint64_t w1) { return int((w1 >> 32) & 0xff) - 128; }
inline int upper_of(uint64_t w1) { return int((w1 >> 40) & 0xff) - 128; }
inline int move_of(uint64_t w1) {
    int m = int((w1 >> 48) & 7);
    return m == kNoMove ? -1 : m;
}
// What a probe returns for a matching entry with this word 1.
inline TTProbe found_entry(uint64_t w1) {
    TTProbe r;
    r.found = true;
    r.lower = lower_of(w1);
    r.upper = upper_of(w1);
    r.move = move_of(w1);
    return r;
}
inline bool matches(const uint64_t w0, const uint64_t w1, const TTKey& k) {
    return (w1 & kUsed) && w0 == k.lo && uint32_t(w1) == k.hi;
}

// One entry as a single aligned 16-byte move each way (atomic on processors with AVX; see
// "Concurrent use" in tt.h). asm volatile: the compiler may neither split the move nor
// repeat or drop it.
#if defined(__x86_64__)
inline __m128i load_entry(const void* p) {
    __m128i v;
    asm volatile("movdqa %1, %0" : "=x"(v) : "m"(*static_cast<const __m128i*>(p)));
    return v;
}
inline uint64_t word0(__m128i v) { return uint64_t(_mm_cvtsi128_si64(v)); }
inline uint64_t word1(__m128i v) { return uint64_t(_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v))); }
inline void store_entry(void* p, uint64_t w0, uint64_t w1) {
    const __m128i v = _mm_set_epi64x(int64_t(w1), int64_t(w0));
    asm volatile("movdqa %1, %0" : "=m"(*static_cast<__m128i*>(p)) : "x"(v));
}
#else
// Never called: TranspositionTable::atomic16_supported() is false here.
inline void load_entry(const void*, uint64_t& w0, uint64_t& w1) { w0 = w1 = 0; }
inline void store_entry(void*, uint64_t, uint64_t) {}
#endif

}  // namespace tt_detail

// A table of 4-entry buckets (one 64-byte cache line each) that grows by itself.
//
// Entry layout, 16 bytes = two 64-bit words:
//   word 0, bits  0..63  key bytes 0..7 (TTKey::lo)
//   word 1, bits  0..31  key bytes 8..11 (TTKey::hi)
//           bits 32..39  lower bound + 128 (an int8 value)
//           bits 40..47  upper bound + 128
//           bits 48..50  best pit (0..5), 7 = none
//           bits 51..55  log2(nodes searched under this entry + 1), capped at 31
//           bit  56      used (an empty entry is all zero)
//           bits 57..62  bucket version, 6 of its 24 bits (see "Concurrent use")
//           bit  63      bucket write lock (entry 0 only; see "Concurrent use")
// The whole key is stored, so a probe never returns another position's bounds.
// Bounds are true bounds on the exact value, independent of any search window, so entries
// never go stale: they stay valid across MTD(f) passes and across searches of the same
// (m, rule). A store for a key already present merges: the tighter of each bound is kept.
// Replacement: a new key goes into an empty slot of its bucket, else over the entry with
// the smallest subtree (log2 nodes), so the most expensive results survive.
//
// Memory: the table starts small (reserve()) and grows fourfold, rehashing every entry,
// up to its byte budget, as its own policy decides (solver/tt_growth.h); pages come zeroed
// from the OS (mmap, transparent huge pages requested), so nothing is touched before it
// is used and a query on a small board stays fast.
//
// Concurrent use: probe()/store() are for one thread at a time (no atomics: the
// single-thread search pays nothing). probe_shared()/store_shared() may run concurrently
// from any number of threads, in one of two ways (Sharing, fixed for a table's life):
//
// kAtomic16 (the default on x86-64 processors with AVX): every entry is read and written
// whole, as one aligned 16-byte SSE move. Intel (SDM vol. 3A, 9.1.1) and AMD (APM vol. 2,
// 7.3.2) guarantee that on processors reporting AVX such moves to cacheable memory are
// atomic, so a probe sees each entry either before or after any store, never half of
// each. A store reads the bucket's four entries, merges or picks its victim as store()
// does, and writes back the one entry it changed. Two stores racing on one bucket can
// lose one's update or place the same key twice; every entry is still some store's whole
// entry, holding true bounds of its own key, which is all a probe relies on. No locks and
// no read-modify-write instructions, so the parallel search pays far less over the plain
// one than with the seqlock below (results/parallel.md, "Shared entries moved whole by
// 16-byte SSE moves"). ThreadSanitizer cannot see these moves, so its builds use the
// seqlock (the tests exercise both ways).
//
// kSeqlock (elsewhere, and under ThreadSanitizer): every access to the table's words is a
// C++ atomic (relaxed unless said), so there is no data race, and a bucket is a seqlock:
//   - bit 63 of entry 0's word 1 is the bucket's write lock;
//   - bits 57..62 of entry i's word 1 hold bits 6i..6i+5 of the bucket's 24-bit version.
// store_shared() takes the lock with a compare-and-swap (acquire), issues a release
// fence, rewrites the bucket, and in one release store of entry 0's word 1 clears the lock
// and bumps the version (spread over all four words 1). probe_shared() loads entry 0's
// word 1 (acquire; retries while locked), copies the bucket, issues an acquire fence and
// re-reads the four words 1: if any differs, a store overlapped the copy and it reads
// again. So a probe never uses a torn or half-written entry (it would need 2^24 stores
// to one bucket during one copy to be fooled), readers never write the cache line, and two
// stores never interleave. ThreadSanitizer checks that the searches touch the table only
// through atomics (scripts/tsan.sh; it ignores the fences: results/ci.md).
//
// Either way, the shared calls never grow the table (growth rehashes everything): each
// thread tallies what its stores did, store_shared() says when the table wants to grow,
// and the caller then stops every thread and calls end_shared_phase(), which grows it alone.
// Mixing shared and plain calls is allowed only with a synchronisation point in between
// (the end of a parallel region).
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
