// HugePages: 2 MiB-aligned anonymous mmap with MADV_HUGEPAGE.
#include "core/huge_pages.h"

#include <cstdint>
#include <new>
#include <utility>

#include <sys/mman.h>

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

HugePages::~HugePages() {
    if (raw_) munmap(raw_, raw_bytes_);
}

void HugePages::swap(HugePages& o) noexcept {
    std::swap(raw_, o.raw_);
    std::swap(raw_bytes_, o.raw_bytes_);
    std::swap(data_, o.data_);
}

}  // namespace kalah
