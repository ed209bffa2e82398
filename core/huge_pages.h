// Large anonymous memory on transparent huge pages (TT and resident database layers).
#pragma once

#include <cstddef>

namespace kalah {

// `bytes` of zeroed memory from an anonymous mmap, aligned to 2 MiB and asked for
// transparent huge pages (a hint the kernel may ignore). Pages are not touched here: a
// part never used is never paid for. For random single accesses over hundreds of MB this
// matters: with 4 KiB pages nearly every access is also a TLB miss (results/solver.md,
// results/db.md). Throws std::bad_alloc when the mapping fails. Move-only; unmaps on
// destruction. A default-constructed one holds nothing (data() == nullptr).
class HugePages {
  public:
    HugePages() = default;
    explicit HugePages(size_t bytes);
    ~HugePages();
    HugePages(HugePages&& o) noexcept { swap(o); }
    HugePages& operator=(HugePages&& o) noexcept {
        HugePages gone(static_cast<HugePages&&>(o));
        swap(gone);
        return *this;
    }
    HugePages(const HugePages&) = delete;
    HugePages& operator=(const HugePages&) = delete;

    void* data() const { return data_; }

    // The first `bytes` bytes of the open file fd mapped read-only (MAP_PRIVATE) at a 2 MiB
    // boundary, asked for huge pages and read in at once (MADV_POPULATE_READ, where the
    // kernel has it): no copy and no zeroing, the page cache's pages are shared. The file
    // should not shrink while mapped (the layer files are written to a temporary and
    // renamed, never rewritten in place), but someone may truncate it: a read of a page
    // the file no longer holds raises SIGBUS, which a handler installed here turns into
    // a page of zeros (the read goes on) and faulted() true. Readers check faulted()
    // after a read and throw then (a SIGBUS outside every mapped file keeps its default
    // action). Throws std::runtime_error naming errno when the mapping fails.
    static HugePages map_file(int fd, size_t bytes);
    // Whether a read of this file mapping met a page the file no longer holds (its values
    // since then are zeros, not the file's).
    bool faulted() const;

  private:
    void swap(HugePages& o) noexcept;
    void* raw_ = nullptr;  // what mmap returned
    size_t raw_bytes_ = 0;
    void* data_ = nullptr;  // raw_ rounded up to 2 MiB
    int guard_ = -1;        // this file mapping's slot in the SIGBUS guard, or -1
};

}  // namespace kalah
