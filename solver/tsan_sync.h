// Happens-before annotations for ThreadSanitizer around OpenMP regions (no-ops otherwise).
#pragma once

// GCC's libgomp is not built with ThreadSanitizer, so TSan cannot see that the start of a
// parallel region orders the master's earlier writes before the team's reads, nor that the
// closing barrier orders the team's writes before the master's later reads. Code that
// opens a region calls tsan_release(&x) before it and tsan_acquire(&x) first thing in
// each thread; each thread calls tsan_release(&y) last and the master tsan_acquire(&y)
// after the region. Everything else (the TT's bucket locks, the stop flag) uses C++
// atomics, which TSan checks as usual.
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
namespace kalah {
inline void tsan_release(void* p) { __tsan_release(p); }
inline void tsan_acquire(void* p) { __tsan_acquire(p); }
}  // namespace kalah
#else
namespace kalah {
inline void tsan_release(void*) {}
inline void tsan_acquire(void*) {}
}  // namespace kalah
#endif
