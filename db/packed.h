// A layer's values packed for random access in memory: ~3.5 bits an entry, probed in place.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/board.h"
#include "core/huge_pages.h"

namespace kalah::db {

// Layer s holds values v in [-s, s] with v == s (mod 2) (db/database.h), stored as
// u = (v + s) / 2 in [0, s]: 7 bits at most. Entries are cut into blocks of 32 (kBlock) in
// rank order and blocks into groups of 32 (kGroup entries = 1024). Each block stores its
// smallest u (lo) and every entry as u - lo in w bits, w = the bits of the block's largest
// u - lo (0..7; a block of equal values takes no data bits). Neighbouring ranks differ in
// the opponent's pits nearest their store, and their values are close: most blocks take
// 3 or 4 bits (results/db.md, "Packed layers in memory").
//
// A group is one 64-byte header, aligned to a cache line, plus its data bits:
//
//   bytes   field
//   0..7    u64 offset of the group's data in the data array, in bytes
//   8..11   u32 width plane 0: bit j = bit 0 of block j's width w_j
//   12..15  u32 width plane 1: bit j = bit 1 of w_j
//   16..19  u32 width plane 2: bit j = bit 2 of w_j
//   20..47  lo of blocks 0..31, 7 bits each, little-endian bit order (block j at bit 7j)
//   48..63  0
//
// The data of block j starts 32 * (w_0 + .. + w_{j-1}) bits into the group's data: three
// popcounts of the planes below bit j. Entry i of the block is w_j bits at bit 32 * that +
// i * w_j, little-endian bit order. A probe reads the header's cache line and one 16-bit
// word of data (two cache misses at most), independent of the layer's size.
//
// The packed twin of a layer file (kalah-m<m>-<rule>-s<s>.kpk beside the .kdb; build-db
// writes it, Database::open reads it instead of decoding and packing the .kdb) holds the
// same bytes (all integers little-endian):
//
//   offset  size  field
//   0       8     magic "KALAHKPK"
//   8       4     version (kPackedVersion)
//   12      1     m
//   13      1     rule: 0 = standard, 1 = empty-capture
//   14      1     s
//   15      1     0
//   16      8     entries = C(s + 2m - 1, 2m - 1)
//   24      8     header bytes H = 64 * ceil(entries / kGroup) (at least 64)
//   32      8     data bytes D (the packed data and 8 bytes of padding)
//   40      8     source: the file checksum (db/format.h) of the .kdb packed; a twin whose
//                 source is not its .kdb's checksum is stale and never read
//   48      8     header checksum = kh64(the 64 header bytes with this field 0, then the
//                 piece table)
//   56      8     piece count P = ceil(H / kPiece) + ceil(D / kPiece)
//   64      8*P   piece table: kh64w of each kPiece-byte piece (the last of a region may
//                 be shorter) of the group headers, then of the data
//   ...           zero padding to a multiple of 4096
//   ...     H     the group headers, then D bytes of data (the data offsets of the headers
//                 count from the data's first byte)
//
// Reading checks every field, every piece's checksum, and that every block's data lies
// inside D; a block's lo is not checked against s, because every value read is clamped to
// [-s, s]: even a file with forged checksums cannot make a probe read outside the layer or
// return a value outside [-s, s].
//
// Versions: 1 piece checksums were kh64; 2 kh64w, cheaper to check (results/db.md). A
// twin of another version is stale: build-db rewrites it, and a search packs that layer
// from its .kdb meanwhile.
constexpr uint32_t kPackedVersion = 2;

class PackedLayer {
  public:
    static constexpr int kBlock = 32;
    static constexpr int kGroup = 1024;
    static constexpr uint64_t kPiece = uint64_t(16) << 20;  // bytes a piece checksum covers

    PackedLayer() = default;
    // Packs values[0..n) of layer s (each in [-s, s], of s's parity; throws
    // std::invalid_argument otherwise). Headers and data go to huge pages.
    static PackedLayer pack(const int8_t* values, uint64_t n, int s);
    // The same for a layer read in chunks: read(first, count, out) fills out[0..count) with
    // entries first..first+count-1; it is called in order with count = chunk (a multiple
    // of kGroup) but for the last call. The groups of a chunk are packed in parallel.
    static PackedLayer pack_chunks(
        uint64_t n, int s, uint64_t chunk,
        const std::function<void(uint64_t first, uint64_t count, int8_t* out)>& read);

    // Value of entry r (r < size()).
    int get(uint64_t r) const {
        unsigned shift, w, lo;
        const uint8_t* p = locate(r, &shift, &w, &lo);
        const unsigned word = unsigned(p[0]) | (unsigned(p[1]) << 8);
        const unsigned u = std::min(lo + ((word >> shift) & ((1u << w) - 1)), unsigned(s_));
        return 2 * static_cast<int>(u) - s_;
    }
    // Starts loading the header of entry r (the data address needs the header).
    void prefetch(uint64_t r) const { __builtin_prefetch(&headers()[r / kGroup]); }
    // Starts loading the data of entry r. It reads r's header for the address, so it is
    // the second step of a batch: prefetch(r) of every entry first, then prefetch_data(r)
    // of every entry, then get(r): the batch's data misses then overlap, where get()
    // alone waits for each in turn.
    void prefetch_data(uint64_t r) const {
        unsigned shift, w, lo;
        __builtin_prefetch(locate(r, &shift, &w, &lo));
    }

    // Writes this layer as the packed twin `path` of the layer file of (m, rule) whose file
    // checksum is `source` (temp name, fsync, rename; throws std::runtime_error).
    void write_file(const std::string& path, int m, Rule rule, uint64_t source) const;
    // Reads a packed twin of layer s of (m, rule) packed from the .kdb with file checksum
    // `source`. Throws FormatError (db/format.h), naming the file, if it is not one.
    // Mapped: the file is memory-mapped and probed in place (no copy; the pages are the
    // page cache's, shared by every process that maps the file); otherwise it is copied
    // to anonymous huge pages (fewer TLB misses for a long search). Both check everything
    // before returning.
    enum class Load { Copy, Mapped };
    static PackedLayer read_file(const std::string& path, int m, Rule rule, int s, uint64_t source,
                                 Load load = Load::Copy);
    // Whether `path` looks like the packed twin of that .kdb: its header only (a cheap test
    // for "present and not stale"; read_file checks everything).
    static bool twin_matches(const std::string& path, int m, Rule rule, int s, uint64_t source);
    // The packed twin's name of layer s: the layer file's name with .kpk.
    static std::string file_name(int m, Rule rule, int s);

    // Mapped: whether a read met a page its file no longer holds (truncated while mapped;
    // see HugePages::map_file). The values read since may be wrong: callers that see it
    // throw. Always false for a copy.
    bool faulted() const { return header_mem_.faulted(); }

    uint64_t size() const { return n_; }
    int seeds() const { return s_; }
    // Memory held: headers plus data (and the data's padding).
    uint64_t bytes() const { return header_bytes_ + data_bytes_; }
    // Unpacks every entry into out[0..size()), the slow twin of get() for the tests.
    void unpack(int8_t* out) const;
    // Entries first..first+count-1 into out[0..count) (first + count <= size()), a block at
    // a time through a 64-bit window: how a whole layer is read (~1 ns an entry where get()
    // takes several). Values are clamped to [-s, s] as get()'s are.
    void unpack_range(uint64_t first, uint64_t count, int8_t* out) const;

  private:
    struct alignas(64) Header {
        uint64_t offset;
        uint32_t plane[3];
        uint8_t lo[28];
        uint8_t zero[16];
    };
    static_assert(sizeof(Header) == 64);
    // Entry r's first data byte, its bit within it, the block's width and lo.
    const uint8_t* locate(uint64_t r, unsigned* shift, unsigned* w, unsigned* lo) const {
        const Header& h = headers()[r / kGroup];
        const unsigned j = static_cast<unsigned>(r / kBlock) % 32;
        const unsigned i = static_cast<unsigned>(r % kBlock);
        const uint32_t below = (1u << j) - 1;
        const unsigned before = __builtin_popcount(h.plane[0] & below) +
                                2 * __builtin_popcount(h.plane[1] & below) +
                                4 * __builtin_popcount(h.plane[2] & below);
        *w = ((h.plane[0] >> j) & 1) | (((h.plane[1] >> j) & 1) << 1) |
             (((h.plane[2] >> j) & 1) << 2);
        *lo = lo_of(h, j);
        const uint64_t bit = 32 * uint64_t(before) + uint64_t(i) * *w;
        *shift = static_cast<unsigned>(bit % 8);
        return data() + h.offset + bit / 8;
    }
    static unsigned lo_of(const Header& h, unsigned j) {
        const unsigned bit = 7 * j;
        const unsigned byte = bit / 8;
        // Two bytes always cover 7 bits; byte + 1 stays inside lo[] for j < 32.
        const unsigned two =
            unsigned(h.lo[byte]) | (byte + 1 < 28 ? unsigned(h.lo[byte + 1]) << 8 : 0);
        return (two >> (bit % 8)) & 127;
    }
    const Header* headers() const { return headers_; }
    const uint8_t* data() const { return data_; }

    // The memory held: headers and data in two anonymous mappings, or one file mapping
    // (header_mem_) holding both. headers_ and data_ point into them.
    HugePages header_mem_;
    HugePages data_mem_;
    const Header* headers_ = nullptr;
    const uint8_t* data_ = nullptr;
    uint64_t header_bytes_ = 0;
    uint64_t data_bytes_ = 0;
    uint64_t n_ = 0;
    int s_ = 0;
};

}  // namespace kalah::db
