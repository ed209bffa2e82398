// Transposition table of exact bounds on pit values, keyed on the full pits of a position.
#pragma once

#include <algorithm>
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
// each time was 15% of the instructions (callgrind, Kalah(6,3); results/solver.md, "A key
// carries its hash"). Build keys with of() or from_parts(), never field by field. No member
// initializers: a node's expansion holds a dozen keys it fills before use.
struct TTKey {
    uint64_t lo;
    uint32_t hi;
    uint64_t hash;
    static TTKey of(const Board& b);                      // b's pits (stores ignored)
    static TTKey of_pits(const Board& b);                 // the same, for b with empty stores
    static TTKey from_parts(uint64_t lo, uint32_t hi);   // the key of those bytes
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

// Fixed-size table of 4-entry buckets (one 64-byte cache line each).
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
// Memory: the table starts small (sized by reserve()) and grows fourfold, rehashing,
// when three quarters of its entries are in use and the search has stored at least half
// as many entries as the grown table will hold, and, for a growth past kCheapBytes, when
// it has been evicting costly results (needs_growth()), up to the byte budget; pages
// come zeroed from the OS (mmap, transparent huge pages requested), so nothing is
// touched before it is used and a query on a small board stays fast.
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
// 16-byte SSE moves" and "Probes inline"). ThreadSanitizer cannot see these moves, so its
// builds use the seqlock (the tests exercise both ways).
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
// Either way, the shared calls never grow the table (growth rehashes everything) and do
// not count used entries: the parallel search counts them per thread, and when the table
// should grow (add_used()) it stops every thread, grows the table alone, and resumes.
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

    // Makes room for about `positions` entries (rounded up to a power of two of buckets,
    // at most the byte budget and at most the initial size); keeps the contents.
    void reserve(uint64_t positions);
    // Takes the whole byte budget now (pages are still touched only when used), so the
    // table never grows during the search: for long parallel searches, where every
    // growth stops the team (results/parallel.md, "Long parallel searches take the whole
    // table budget at once").
    void reserve_budget();
    // What a store did to its bucket.
    enum Outcome { kMerged = 0, kFilled = 1, kEvicted = 2, kEvictedCostly = 3 };
    // What one thread's store_shared() calls did, since it last reported them (add_used()).
    struct StoreCounts {
        uint64_t fresh = 0;   // empty slots filled
        uint64_t stores = 0;  // calls
        uint64_t costly = 0;  // costly entries evicted
    };
    // For parallel searches: store_shared() filled `fresh` empty slots and evicted
    // `costly` costly entries in `stores` calls (which the table itself does not count);
    // records them and tells whether the table should now grow.
    bool add_used(uint64_t fresh, uint64_t stores, uint64_t costly) {
        used_ += fresh;
        stores_ += stores;
        costly_ += costly;
        return needs_growth(0, 0, 0);
    }
    // Would the table want to grow with `more` entries in use, `more_stores` stores and
    // `more_costly` costly evictions beyond what it has counted? Growth policy:
    // - the table is over three quarters full and the budget allows four times the size;
    // - the stores since clear() are at least half the grown table's entries: short
    //   searches stay in a small table, since fresh memory is expensive to touch the first
    //   time (results/solver.md, "The machine's memory"), more than a short search loses
    //   to replacement;
    // - a growth past kCheapBytes needs evidence that the table is too small: since its
    //   last resize, evictions of entries whose subtree had at least 2^kCostlyLog2 nodes
    //   number at least 1/kCostlyShare of its entries. Replacement keeps the largest
    //   subtrees, so a table that only evicts small ones loses little, while the larger
    //   table costs its first touches and more cache misses (results/solver.md, "A growth
    //   past 16 MiB needs costly evictions").
    // - a growth past kFarBytes needs much more: costly evictions at least 1/kFarShare of
    //   the entries. A random read grows dearer with the table (BM_DependentRead), and a
    //   search that evicts few large subtrees loses more to the larger table than it gains,
    //   while one that evicts many needs it (results/solver.md, "Table growth past 256 MiB
    //   needs costly evictions of half its entries"). How dear the larger table is depends
    //   on the host.
    static constexpr size_t kCheapBytes = size_t(16) << 20;
    static constexpr size_t kFarBytes = size_t(256) << 20;
    static constexpr int kCostlyLog2 = 4;
    static constexpr uint64_t kCostlyShare = 128;
    static constexpr uint64_t kFarShare = 2;
    bool needs_growth(uint64_t more, uint64_t more_stores, uint64_t more_costly) const {
        return growth_wanted(buckets_, used_ + more, stores_ + more_stores, costly_ + more_costly,
                             max_bytes_);
    }
    // The policy above as a pure function: should a table of `buckets` buckets (four
    // entries each) with a budget of `max_bytes` grow, with `used` entries in use,
    // `stores` stores since clear() and `costly` costly evictions since its last resize?
    static bool growth_wanted(uint64_t buckets, uint64_t used, uint64_t stores, uint64_t costly,
                              size_t max_bytes) {
        const uint64_t entries = buckets * 4;
        const uint64_t grown_bytes = buckets * 4 * sizeof(Bucket);
        return used * 4 > entries * 3 && grown_bytes <= max_bytes && stores * 2 >= entries * 4 &&
               (grown_bytes <= kCheapBytes ||
                costly * (grown_bytes <= kFarBytes ? kCostlyShare : kFarShare) >= entries);
    }
    // Fourfold, rehashing (no concurrent calls). For a parallel search (threads > 1)
    // growing to kTouchBytes or more, `threads` threads touch the fresh pages and rehash
    // the entries, each its share (first touches are most of a growth's cost: on this
    // machine up to 2.4 s a GiB of memory the host has not backed yet), which shortens the
    // stops of the team even at 16 MiB (results/parallel.md, "Growth touched and rehashed
    // by all threads"). Fourfold rather than straight to the whole budget: with the
    // costly-eviction rule above it is as fast or faster, and no single growth stops the
    // team for long (results/parallel.md, "Growth fourfold at every thread count").
    void grow(int threads = 1);
    static constexpr size_t kTouchBytes = size_t(16) << 20;
    void clear();

    // Inline, with the 16-byte path of probe_shared(): as calls, the register saves of
    // probe_shared()'s seqlock path cost 16 instructions a probe more than probe(). Kalah(6,3)
    // on one thread, plain and parallel code path: 3,720.6 M and 4,011.9 M instructions
    // with calls, 3,649.4 M and 3,804.9 M inline, with the store counts kept by
    // store_shared() (callgrind; results/parallel.md, "Probes inline: the parallel path's
    // extra instructions 7.8% -> 4.3%").
    TTProbe probe(const TTKey& k) const {
        if (!buckets_) return TTProbe{};
        return find(*bucket_of(k), k);
    }
    TTProbe probe_shared(const TTKey& k) const {
        if (!buckets_) return TTProbe{};
        if (atomic16_) return probe_atomic16(k);
        return probe_seqlock(k);
    }
    // Starts loading k's bucket into the cache (a hint; no effect on contents).
    void prefetch(const TTKey& k) const {
        if (buckets_) __builtin_prefetch(bucket_of(k));
    }
    // Records lower <= v <= upper (use -127 / 127 for "no bound") and the best pit (-1:
    // none) for k, after a search of `nodes` nodes.
    void store(const TTKey& k, int lower, int upper, int move, uint64_t nodes);
    // Adds what it did to `counts` (for add_used()).
    void store_shared(const TTKey& k, int lower, int upper, int move, uint64_t nodes,
                      StoreCounts& counts);

    // Whether the shared calls use whole-entry atomic moves (kAtomic16) or the seqlock.
    bool atomic16() const { return atomic16_; }
    // Whether this processor guarantees atomic aligned 16-byte moves (x86-64 with AVX).
    static bool atomic16_supported();

    size_t bytes() const { return buckets_ * sizeof(Bucket); }
    size_t max_bytes() const { return max_bytes_; }

private:
    struct Entry {
        uint64_t w0;
        uint64_t w1;
    };
    struct alignas(64) Bucket {
        Entry e[4];
    };
    // Inline: called for every probe, store and prefetch (it was 7% of a profile as a call).
    Bucket* bucket_of(const TTKey& k) const {
        return &table_[static_cast<uint64_t>((static_cast<unsigned __int128>(k.hash) * buckets_) >>
                                             64)];
    }
    // Buckets the byte budget allows (at least one).
    size_t budget_buckets() const { return std::max<size_t>(max_bytes_ / sizeof(Bucket), 1); }
    // Rehashes every entry into a new table of `buckets` buckets; with touch_threads > 1
    // and `buckets` a multiple of the old count (a growth), that many threads fault its
    // pages in and rehash, each its share. If memory runs out while growing, keeps the
    // current table and stops growing (max_bytes_ shrinks to it).
    void resize(size_t buckets, int touch_threads = 1);
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
    uint64_t lock(Bucket* b) const;   // spins until locked; returns entry 0's word 1

    size_t max_bytes_;
    bool atomic16_;
    size_t buckets_ = 0;
    uint64_t used_ = 0;        // entries in use
    uint64_t stores_ = 0;      // stores since clear() (growth policy)
    uint64_t costly_ = 0;      // costly evictions since the last resize (growth policy)
    HugePages memory_;         // the table's pages
    Bucket* table_ = nullptr;  // memory_.data()
};

}  // namespace kalah
