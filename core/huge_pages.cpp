// HugePages: 2 MiB-aligned anonymous mmap with MADV_HUGEPAGE.
#include "core/huge_pages.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace kalah {
namespace {
constexpr size_t kHuge = size_t(2) << 20;

// The SIGBUS guard: the file mappings in use, each [begin, end) and whether a read in it
// faulted. Slots are claimed with a compare-and-swap and read by the handler without a
// lock (only atomics: async-signal-safe). A mapping beyond the slots is left unguarded.
struct GuardSlot {
    std::atomic<uintptr_t> begin{0};
    std::atomic<uintptr_t> end{0};
    std::atomic<bool> faulted{false};
};
constexpr int kGuardSlots = 1024;  // every layer of every (m, rule) a server may map
GuardSlot g_guard[kGuardSlots];

void on_sigbus(int sig, siginfo_t* info, void*) {
    const auto at = reinterpret_cast<uintptr_t>(info->si_addr);
    for (GuardSlot& g : g_guard) {
        const uintptr_t b = g.begin.load(std::memory_order_acquire);
        if (b == 0 || at < b || at >= g.end.load(std::memory_order_acquire)) continue;
        // A page of the file that is gone: a page of zeros in its place (mmap is a plain
        // system call, safe here), and the read that faulted runs again on it.
        const uintptr_t page = at & ~(uintptr_t(::sysconf(_SC_PAGESIZE)) - 1);
        if (mmap(reinterpret_cast<void*>(page), size_t(::sysconf(_SC_PAGESIZE)), PROT_READ,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
            break;
        g.faulted.store(true, std::memory_order_release);
        return;
    }
    // Not a guarded mapping (or it could not be mended): the default action, at once.
    signal(sig, SIG_DFL);
    raise(sig);
}

int guard(uintptr_t begin, uintptr_t end) {
    static const bool installed = [] {
        struct sigaction sa {};
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        return sigaction(SIGBUS, &sa, nullptr) == 0;
    }();
    if (!installed) return -1;
    for (int i = 0; i < kGuardSlots; ++i) {
        uintptr_t free = 0;
        if (g_guard[i].begin.load(std::memory_order_relaxed) != 0) continue;
        g_guard[i].end.store(0, std::memory_order_relaxed);
        g_guard[i].faulted.store(false, std::memory_order_relaxed);
        if (!g_guard[i].begin.compare_exchange_strong(free, begin)) continue;
        g_guard[i].end.store(end, std::memory_order_release);
        return i;
    }
    return -1;
}

void unguard(int slot) {
    if (slot < 0) return;
    g_guard[slot].end.store(0, std::memory_order_release);
    g_guard[slot].begin.store(0, std::memory_order_release);
}
}  // namespace

HugePages::HugePages(size_t bytes) {
    const size_t raw_bytes = bytes + kHuge;
    void* raw =
        mmap(nullptr, raw_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    raw_ = raw;
    raw_bytes_ = raw_bytes;
    const uintptr_t p = (reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~uintptr_t(kHuge - 1);
    data_ = reinterpret_cast<void*>(p);
    madvise(data_, bytes, MADV_HUGEPAGE);  // a hint; may be ignored
}

HugePages HugePages::map_file(int fd, size_t bytes) {
    HugePages h;
    if (bytes == 0) return h;
    // Reserve an aligned range, then map the file over its aligned part.
    const size_t raw_bytes = bytes + kHuge;
    void* raw = mmap(nullptr, raw_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    h.raw_ = raw;
    h.raw_bytes_ = raw_bytes;
    const uintptr_t p = (reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~uintptr_t(kHuge - 1);
    void* at = mmap(reinterpret_cast<void*>(p), bytes, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
    if (at == MAP_FAILED)
        throw std::runtime_error(std::string("cannot map the file: ") + std::strerror(errno));
    h.data_ = at;
    h.guard_ = guard(p, p + bytes);
    madvise(at, bytes, MADV_HUGEPAGE);  // hints; the kernel may ignore either
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
    madvise(at, bytes, MADV_POPULATE_READ);
    return h;
}

HugePages::~HugePages() {
    unguard(guard_);
    if (raw_) munmap(raw_, raw_bytes_);
}

bool HugePages::faulted() const {
    return guard_ >= 0 && g_guard[guard_].faulted.load(std::memory_order_acquire);
}

void HugePages::swap(HugePages& o) noexcept {
    std::swap(raw_, o.raw_);
    std::swap(raw_bytes_, o.raw_bytes_);
    std::swap(data_, o.data_);
    std::swap(guard_, o.guard_);
}

}  // namespace kalah
