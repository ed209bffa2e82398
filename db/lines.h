// A layer's values in 64-byte lines of 96 entries: a probe reads one cache line.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/huge_pages.h"

namespace kalah::db {

// The packed layout (db/packed.h) takes two dependent cache misses a probe: the group
// header, then the data word whose address the header gives. One byte an entry takes one
// miss but twice the memory. Lines take one miss at 5.33 bits an entry: entry r lies in
// line r / 96, whose first 32 bits say where in the line it is (results/solver.md, "One
// miss a probe: a line layout").
//
// As in a packed layer, entries are stored as u = (v + s) / 2 in [0, s], in blocks of 32
// (kBlock) in rank order, each block as its smallest u (lo) and every entry as u - lo in w
// bits (w = the bits of the block's largest u - lo, 0..7). A line holds three blocks:
//
//   bits      field
//   0..29     block k's lo at bit 10k (7 bits), its width w_k at bit 10k + 7 (3 bits)
//   30        escape: the line's widths add up to more than 15
//   31        0
//   32..511   block k's entries from bit 32 + 32 * (w_0 + .. + w_{k-1}), entry i at
//             i * w_k bits on, little-endian bit order
//
// Widths adding up to at most 15 fill at most 480 bits. A line whose widths add up to
// more (rare in deep layers: most blocks take 3 or 4 bits) is an escape: its bytes 8..15
// hold the offset of its 96 values, one byte each, in a side array, and a probe of it
// reads there too. Past the layer's end a line is padded with its blocks' lo.
//
// Lines live only in memory: Database::open builds them from the packed twins (or the
// layer files) when asked for (Database::Layout::Lines). Their input is checked values,
// and every value read is clamped to [-s, s] all the same.
class LineLayer {
  public:
    static constexpr int kBlock = 32;
    static constexpr int kLine = 96;            // entries a line
    static constexpr unsigned kMaxWidths = 15;  // the widths a line's 480 data bits hold

    LineLayer() = default;
    // Values[0..n) of layer s (each in [-s, s], of s's parity; throws
    // std::invalid_argument otherwise), held in lines on huge pages.
    static LineLayer build(const int8_t* values, uint64_t n, int s);
    // The same for a layer read in chunks: read(first, count, out) fills out[0..count)
    // with entries first..first+count-1, called in order with count = chunk but for the
    // last call. Any chunk size > 0 works; the lines of a chunk are built in parallel.
    static LineLayer build_chunks(
        uint64_t n, int s, uint64_t chunk,
        const std::function<void(uint64_t first, uint64_t count, int8_t* out)>& read);

    // Value of entry r (r < size()).
    int get(uint64_t r) const {
        const uint8_t* line = line_of(r);
        uint32_t head;
        __builtin_memcpy(&head, line, 4);
        const unsigned j = static_cast<unsigned>(r % kLine);
        if (__builtin_expect(head >> 30, 0)) return escaped(line, j);
        const unsigned k = j / kBlock, i = j % kBlock;
        const unsigned w0 = (head >> 7) & 7, w1 = (head >> 17) & 7;
        const unsigned lo = (head >> (10 * k)) & 127, w = (head >> (10 * k + 7)) & 7;
        const unsigned start = 32 + 32 * ((k > 0 ? w0 : 0) + (k > 1 ? w1 : 0));
        const unsigned bit = start + i * w;
        unsigned byte = bit / 8, shift = bit % 8;
        // The last entry may end in byte 63: read bytes 62..63 then (shift + w <= 16).
        if (byte > 62) byte = 62, shift += 8;
        const unsigned word = unsigned(line[byte]) | (unsigned(line[byte + 1]) << 8);
        const unsigned u = std::min(lo + ((word >> shift) & ((1u << w) - 1)), unsigned(s_));
        return 2 * static_cast<int>(u) - s_;
    }
    // Starts loading the line of entry r: all get(r) reads but for an escape's values.
    void prefetch(uint64_t r) const { __builtin_prefetch(line_of(r)); }

    uint64_t size() const { return n_; }
    int seeds() const { return s_; }
    // Lines whose widths did not fit (their values are in the side array).
    uint64_t escapes() const { return escapes_.size() / kLine; }
    // Memory held: the lines and the side array.
    uint64_t bytes() const { return line_bytes_ + escapes_.capacity(); }
    // Every entry into out[0..size()), the slow twin of get() for the tests: bit by bit
    // with a running position, not the offsets get() computes.
    void unpack(int8_t* out) const;

  private:
    const uint8_t* line_of(uint64_t r) const { return lines_ + 64 * (r / kLine); }
    int escaped(const uint8_t* line, unsigned j) const;

    HugePages mem_;
    const uint8_t* lines_ = nullptr;
    uint64_t line_bytes_ = 0;
    std::vector<int8_t> escapes_;  // 96 values a line that did not fit
    uint64_t n_ = 0;
    int s_ = 0;
};

}  // namespace kalah::db
