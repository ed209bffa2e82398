// HugePages: 2 MiB-aligned anonymous mmap with MADV_HUGEPAGE.
#include "core/huge_pages.h"

#include <sys/mman.h>

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
}

HugePages::HugePages(size_t bytes) {
    const size_t raw_bytes = bytes + kHuge;
    void* raw = mmap(nullptr, raw_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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
    madvise(at, bytes, MADV_HUGEPAGE);  // hints; the kernel may ignore either
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
    madvise(at, bytes, MADV_POPULATE_READ);
    return h;
}

HugePages::~HugePages() {
    if (raw_) munmap(raw_, raw_bytes_);
}

void HugePages::swap(HugePages& o) noexcept {
    std::swap(raw_, o.raw_);
    std::swap(raw_bytes_, o.raw_bytes_);
    std::swap(data_, o.data_);
}

}  // namespace kalah
