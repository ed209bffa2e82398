// Transposition table: key packing, bucket hashing, bound merging and replacement.
#include "solver/tt.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "solver/tt_growth.h"

namespace kalah {
namespace {

using namespace tt_detail;

constexpr uint64_t kLock = uint64_t(1) << 63;  // in entry 0's word 1 only

inline int log2_nodes(uint64_t nodes) {
    int l = 64 - __builtin_clzll(nodes + 1) - 1;
    return std::min(l, 31);
}

inline uint64_t pack(const TTKey& k, int lower, int upper, int move, int lognodes) {
    return uint64_t(k.hi) | (uint64_t(lower + 128) << 32) | (uint64_t(upper + 128) << 40) |
           (uint64_t(move < 0 ? kNoMove : move) << 48) | (uint64_t(lognodes) << 51) | kUsed;
}
inline int lognodes_of(uint64_t w1) { return int((w1 >> 51) & 31); }

// A key's bucket hash (two rounds of multiply-xorshift).
inline uint64_t mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

bool use_atomic16(TranspositionTable::Sharing sharing) {
    using Sharing = TranspositionTable::Sharing;
#if defined(__SANITIZE_THREAD__)
    // The production path, kAtomic16, cannot be checked by ThreadSanitizer, so under TSan
    // kAuto picks the seqlock. TSan instruments the loads and stores the compiler emits;
    // kAtomic16 moves every entry with one SSE instruction in inline asm
    // (tt_detail::load_entry/store_entry), which TSan never sees, so it would check none of
    // the table's accesses. And their atomicity is a processor guarantee (tt.h, "Concurrent
    // use") outside the C++ memory model: as plain C++ accesses TSan would report every
    // concurrent probe and store as a race. The TSan build's searches thus check the
    // seqlock and everything around the table (busy table, flags, counters, growth); the
    // 16-byte path is checked for torn or foreign entries by the "shared TT" test of
    // tests/test_parallel.cpp, which TSan runs too without seeing its moves.
    if (sharing == Sharing::kAuto) return false;
#endif
    return sharing != Sharing::kSeqlock && TranspositionTable::atomic16_supported();
}

}  // namespace

TTKey TTKey::from_parts(uint64_t lo, uint32_t hi) {
    TTKey k;
    k.lo = lo;
    k.hi = hi;
    k.hash = mix(lo ^ mix(hi + 0x9e3779b97f4a7c15ull));
    return k;
}

TTKey TTKey::of(const Board& b) { return of_pits(b.without_stores()); }

TTKey TTKey::of_pits(const Board& b) {
    // The stores are zero, so the cells are the pits key (Board::pits_key) as they are:
    // the search's children are stripped of their stores before they get their key, so
    // they need not be masked again.
    assert(b.own_store() == 0 && b.opp_store() == 0);
    const Cells c = b.cells();
    const int m = b.pits();
    const Cells own_mask = (Cells(1) << (8 * m)) - 1;
    // Byte m (the mover's store) is zero in pits_key, so shifting down by one byte moves
    // the opponent's pits to bytes m..2m-1 and the (zero) opponent's store to byte 2m.
    const Cells packed = (c & own_mask) | ((c >> 8) & ~own_mask);
    return from_parts(static_cast<uint64_t>(packed), static_cast<uint32_t>(packed >> 64));
}

bool TranspositionTable::atomic16_supported() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx");
#else
    return false;
#endif
}

TranspositionTable::TranspositionTable(size_t max_bytes, Sharing sharing)
    : max_bytes_(max_bytes), atomic16_(use_atomic16(sharing)) {}

TranspositionTable::~TranspositionTable() { clear(); }

void TranspositionTable::reserve(uint64_t positions) {
    // Twice the positions in entries, a power of two of buckets, at most kInitialBytes:
    // beyond that the table grows as it fills.
    constexpr uint64_t kInitialBytes = uint64_t(4) << 20;
    uint64_t want = 1024;
    while (want * 4 < positions * 2 && (want * 2) * sizeof(Bucket) <= kInitialBytes) want *= 2;
    want = std::min<uint64_t>(want, budget_buckets());
    if (want > buckets_) rehash(want);
}

void TranspositionTable::resize(size_t bytes, int threads) {
    const size_t buckets = std::min(std::max<size_t>(bytes / sizeof(Bucket), 1), budget_buckets());
    if (buckets <= buckets_) return;
    rehash(buckets,
           threads > 1 && buckets * sizeof(Bucket) >= tt_growth::kTouchBytes ? threads : 1);
}

void TranspositionTable::clear() {
    memory_ = HugePages();
    table_ = nullptr;
    buckets_ = 0;
    used_ = 0;
    stores_ = 0;
    costly_ = 0;
    shared_fresh_ = 0;
    shared_stores_ = 0;
    shared_costly_ = 0;
}

bool TranspositionTable::wants_growth(uint64_t more_used, uint64_t more_stores,
                                      uint64_t more_costly) const {
    return tt_growth::wanted(buckets_, used_ + more_used, stores_ + more_stores,
                             costly_ + more_costly, max_bytes_);
}

void TranspositionTable::rehash(size_t buckets, int touch_threads) {
    static_assert(sizeof(Bucket) == tt_growth::kBucketBytes);
    // Huge pages, untouched until used (core/huge_pages.h): every probe is a random
    // access, and with 4 KiB pages most would also miss the TLB (results/solver.md, "Huge
    // pages, a 1 GiB default table").
    HugePages fresh;
    try {
        fresh = HugePages(buckets * sizeof(Bucket));
    } catch (const std::bad_alloc&) {
        // Growing failed: keep searching in the table we have and stop growing, rather
        // than lose the search. Without any table there is nothing to fall back on.
        if (!table_) throw;
        max_bytes_ = buckets_ * sizeof(Bucket);
        return;
    }
    const Bucket* old = table_;
    const size_t old_buckets = buckets_;
    HugePages old_memory = std::move(memory_);  // freed after the rehash
    memory_ = std::move(fresh);
    table_ = static_cast<Bucket*>(memory_.data());
    buckets_ = buckets;
    used_ = 0;
    costly_ = 0;
    // With several threads, each faults in a share of the fresh pages (the kernel zeroes
    // each; one write a 4 KiB page, so that it works whether or not the kernel gave huge
    // pages) and rehashes into it. That needs the new size to be a multiple r of the old
    // one, which every growth is: old bucket i's entries can only go to new buckets
    // r*i .. r*i + r - 1 (bucket_of() takes the high word of hash * buckets), so thread t
    // rehashes a range of old buckets into its own range of new ones, and no two threads
    // write one bucket. Other resizes run on this thread.
    const size_t ratio = old_buckets && buckets % old_buckets == 0 ? buckets / old_buckets : 0;
    const int team = touch_threads > 1 && ratio ? touch_threads : 1;
    std::vector<uint64_t> filled(team, 0);
    auto work = [&](int t) {
        const size_t lo = old_buckets * t / team, hi = old_buckets * (t + 1) / team;
        if (team > 1) {
            // The pages that begin inside this thread's share of the new buckets: every
            // byte a thread writes is in its own share, even where a share ends mid-page.
            char* const base = reinterpret_cast<char*>(table_);
            const size_t first = (lo * ratio * sizeof(Bucket) + 4095) / 4096;
            const size_t last = (hi * ratio * sizeof(Bucket) + 4095) / 4096;
            for (size_t i = first; i < last; ++i) static_cast<volatile char*>(base)[i * 4096] = 0;
        }
        uint64_t f = 0;
        for (size_t i = lo; i < hi; ++i)
            for (const Entry& e : old[i].e)
                if (e.w1 & kUsed) f += insert(e);
        filled[t] = f;
    };
    std::vector<std::thread> threads;
    for (int t = 1; t < team; ++t) threads.emplace_back(work, t);
    work(0);
    for (std::thread& th : threads) th.join();
    for (uint64_t f : filled) used_ += f;
}

bool TranspositionTable::insert(const Entry& e) {
    Bucket* b = bucket_of(TTKey::from_parts(e.w0, uint32_t(e.w1)));
    Entry* victim = nullptr;
    for (Entry& x : b->e)
        if (!victim || (victim->w1 & kUsed &&
                        (!(x.w1 & kUsed) || lognodes_of(x.w1) < lognodes_of(victim->w1))))
            victim = &x;
    const bool fills = !(victim->w1 & kUsed);
    *victim = e;
    return fills;
}

TranspositionTable::Placed TranspositionTable::update(Bucket& b, const TTKey& k, int lower,
                                                      int upper, int move, int lognodes) {
    Entry* victim = nullptr;
    for (Entry& e : b.e) {
        if (matches(e.w0, e.w1, k)) {
            lower = std::max(lower, lower_of(e.w1));
            upper = std::min(upper, upper_of(e.w1));
            if (move < 0) move = move_of(e.w1);
            lognodes = std::max(lognodes, lognodes_of(e.w1));
            assert(lower <= upper);
            e.w1 = pack(k, lower, upper, move, lognodes);
            return {kMerged, int(&e - b.e)};
        }
        if (!victim || (victim->w1 & kUsed &&
                        (!(e.w1 & kUsed) || lognodes_of(e.w1) < lognodes_of(victim->w1))))
            victim = &e;
    }
    const Outcome done = !(victim->w1 & kUsed)                               ? kFilled
                         : lognodes_of(victim->w1) >= tt_growth::kCostlyLog2 ? kEvictedCostly
                                                                             : kEvicted;
    victim->w0 = k.lo;
    victim->w1 = pack(k, lower, upper, move, lognodes);
    return {done, int(victim - b.e)};
}

void TranspositionTable::store(const TTKey& k, int lower, int upper, int move, uint64_t nodes) {
    if (!buckets_) return;
    const Outcome done = update(*bucket_of(k), k, lower, upper, move, log2_nodes(nodes)).outcome;
    used_ += done == kFilled;
    costly_ += done == kEvictedCostly;
    ++stores_;
    if (wants_growth(0, 0, 0)) rehash(buckets_ * 4);
}

uint64_t TranspositionTable::lock(Bucket* b) const {
    std::atomic_ref<uint64_t> word(b->e[0].w1);
    uint64_t cur = word.load(std::memory_order_relaxed);
    for (;;) {
        if (cur & kLock) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            cur = word.load(std::memory_order_relaxed);
            continue;
        }
        if (word.compare_exchange_weak(cur, cur | kLock, std::memory_order_acquire,
                                       std::memory_order_relaxed))
            return cur;
    }
}

// Bits 57..62 of word 1 of entry i hold bits 6i..6i+5 of the bucket's 24-bit version.
constexpr int kVersionShift = 57;
constexpr uint64_t kVersionMask = uint64_t(63) << kVersionShift;

inline uint64_t load_relaxed(uint64_t& w) {
    return std::atomic_ref<uint64_t>(w).load(std::memory_order_relaxed);
}
inline void store_relaxed(uint64_t& w, uint64_t v) {
    std::atomic_ref<uint64_t>(w).store(v, std::memory_order_relaxed);
}

TranspositionTable::Outcome TranspositionTable::store_atomic16(const TTKey& k, int lower, int upper,
                                                               int move, uint64_t nodes) {
    Bucket* b = bucket_of(k);
    Bucket copy;
#if defined(__x86_64__)
    // Each entry copied whole (two instructions), not split into its words.
    for (int i = 0; i < 4; ++i)
        _mm_store_si128(reinterpret_cast<__m128i*>(&copy.e[i]), load_entry(&b->e[i]));
#else
    for (int i = 0; i < 4; ++i) load_entry(&b->e[i], copy.e[i].w0, copy.e[i].w1);
#endif
    const Placed p = update(copy, k, lower, upper, move, log2_nodes(nodes));
    store_entry(&b->e[p.slot], copy.e[p.slot].w0, copy.e[p.slot].w1);
    return p.outcome;
}

TTProbe TranspositionTable::probe_seqlock(const TTKey& k) const {
    Bucket* b = bucket_of(k);
    Bucket copy;
    // Seqlock read: copy the bucket, then check that no store locked it or completed
    // meanwhile (the lock bit is clear and every word 1, which carries the version, is
    // unchanged). Otherwise read again. The copy is used only once it is consistent.
    for (;;) {
        const uint64_t w = std::atomic_ref<uint64_t>(b->e[0].w1).load(std::memory_order_acquire);
        if (w & kLock) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            continue;
        }
        copy.e[0].w1 = w;
        copy.e[0].w0 = load_relaxed(b->e[0].w0);
        for (int i = 1; i < 4; ++i) {
            copy.e[i].w0 = load_relaxed(b->e[i].w0);
            copy.e[i].w1 = load_relaxed(b->e[i].w1);
        }
        std::atomic_thread_fence(std::memory_order_acquire);
        bool same = load_relaxed(b->e[0].w1) == w;
        for (int i = 1; i < 4 && same; ++i) same = load_relaxed(b->e[i].w1) == copy.e[i].w1;
        if (same) break;
    }
    return find(copy, k);
}

bool TranspositionTable::store_shared(const TTKey& k, int lower, int upper, int move,
                                      uint64_t nodes, Tally& tally) {
    if (!buckets_) return false;
    const Outcome done = atomic16_ ? store_atomic16(k, lower, upper, move, nodes)
                                   : store_seqlock(k, lower, upper, move, nodes);
    tally.fresh += done == kFilled;
    tally.costly += done == kEvictedCostly;
    return ++tally.stores == tt_growth::kReportStores && report(tally);
}

bool TranspositionTable::report(Tally& tally) {
    const uint64_t f =
        shared_fresh_.fetch_add(tally.fresh, std::memory_order_relaxed) + tally.fresh;
    const uint64_t st =
        shared_stores_.fetch_add(tally.stores, std::memory_order_relaxed) + tally.stores;
    const uint64_t co =
        shared_costly_.fetch_add(tally.costly, std::memory_order_relaxed) + tally.costly;
    tally = {};
    return wants_growth(f, st, co);
}

void TranspositionTable::end_shared_phase(int threads) {
    used_ += shared_fresh_.exchange(0);
    stores_ += shared_stores_.exchange(0);
    costly_ += shared_costly_.exchange(0);
    if (wants_growth(0, 0, 0)) resize(bytes() * 4, threads);
}

TranspositionTable::Outcome TranspositionTable::store_seqlock(const TTKey& k, int lower, int upper,
                                                              int move, uint64_t nodes) {
    Bucket* b = bucket_of(k);
    Bucket copy;
    const uint64_t w = lock(b);
    // Readers may copy the bucket while we write it; the release fence orders the lock
    // bit before our writes, so a reader that sees any of them also sees the lock bit
    // or the new version when it re-checks.
    std::atomic_thread_fence(std::memory_order_release);
    uint32_t version = 0;
    for (int i = 0; i < 4; ++i) {
        copy.e[i].w0 = load_relaxed(b->e[i].w0);
        copy.e[i].w1 = i == 0 ? w : load_relaxed(b->e[i].w1);
        version |= uint32_t((copy.e[i].w1 & kVersionMask) >> kVersionShift) << (6 * i);
    }
    const Outcome done = update(copy, k, lower, upper, move, log2_nodes(nodes)).outcome;
    version = (version + 1) & 0xffffff;
    for (int i = 0; i < 4; ++i)
        copy.e[i].w1 = (copy.e[i].w1 & ~kVersionMask & ~kLock) |
                       (uint64_t((version >> (6 * i)) & 63) << kVersionShift);
    for (int i = 0; i < 4; ++i) {
        store_relaxed(b->e[i].w0, copy.e[i].w0);
        if (i > 0) store_relaxed(b->e[i].w1, copy.e[i].w1);
    }
    // Unlock and publish the new version in one release store.
    std::atomic_ref<uint64_t>(b->e[0].w1).store(copy.e[0].w1, std::memory_order_release);
    return done;
}

}  // namespace kalah
