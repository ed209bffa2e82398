// The transposition table's private notes (solver/tt.h is its API): the layout of an
// entry, what a probe relies on, and how the shared calls keep entries whole under
// concurrent use; the inline accessors of an entry's words. Included by tt.h and tt.cpp
// only.
#pragma once

#include <cstdint>

#include "solver/tt_key.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace kalah {

// A table of 4-entry buckets (one 64-byte cache line each).
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
// through atomics (scripts/ci/tsan.sh; it ignores the fences: results/ci.md).
//
// Either way, the shared calls never grow the table (growth rehashes everything): each
// thread tallies what its stores did, store_shared() says when the table wants to grow,
// and the caller then stops every thread and calls end_shared_phase(), which grows it alone.
// Mixing shared and plain calls is allowed only with a synchronisation point in between
// (the end of a parallel region).

// Entry words, inline for the probes the search makes at every node; not for use outside
// the table.
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
// "Concurrent use" above). asm volatile: the compiler may neither split the move nor
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

}  // namespace kalah
