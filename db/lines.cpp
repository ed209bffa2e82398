// LineLayer: a layer's values in one-miss 64-byte lines (db/lines.h).
#include "db/lines.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kalah::db {
namespace {

// Bits needed for 0..x.
unsigned width_of(unsigned x) { return x ? 32 - __builtin_clz(x) : 0; }

constexpr uint32_t kEscape = 1u << 30;

// Writes line L (entries 96 L.. of the layer, values[0..count) of them, count <= 96, the
// rest padding) into out[0..64). Returns false, writing only the header's escape bit,
// when its widths add up to more than kMaxWidths. bad is set to an entry that is not a
// value of layer s.
bool write_line(const int8_t* values, unsigned count, int s, uint8_t* out, bool* bad) {
    std::memset(out, 0, 64);
    unsigned lo[3] = {0, 0, 0}, w[3] = {0, 0, 0}, widths = 0;
    for (unsigned k = 0; k < 3; ++k) {
        const unsigned b0 = k * LineLayer::kBlock;
        const unsigned b1 = std::min<unsigned>(b0 + LineLayer::kBlock, count);
        int mn = 127, mx = -128, odd = 0;
        for (unsigned i = b0; i < b1; ++i) {
            mn = std::min<int>(mn, values[i]);
            mx = std::max<int>(mx, values[i]);
            odd |= (values[i] + s) & 1;
        }
        if (b0 >= b1) mn = mx = -s;  // a block wholly past the end: lo 0, width 0
        if (mn < -s || mx > s || odd) {
            *bad = true;
            return true;
        }
        lo[k] = static_cast<unsigned>(mn + s) / 2;
        w[k] = width_of(static_cast<unsigned>(mx - mn) / 2);
        widths += w[k];
    }
    if (widths > LineLayer::kMaxWidths) {
        std::memcpy(out, &kEscape, 4);
        return false;
    }
    uint32_t head = 0;
    for (unsigned k = 0; k < 3; ++k) head |= (lo[k] | (w[k] << 7)) << (10 * k);
    std::memcpy(out, &head, 4);
    // The data through a 64-bit accumulator, a byte at a time: a block is 32 w bits, whole
    // bytes, so each ends on a byte.
    uint8_t* data = out + 4;
    for (unsigned k = 0; k < 3; ++k) {
        uint64_t acc = 0;
        unsigned held = 0;
        for (unsigned i = 0; i < LineLayer::kBlock && w[k] > 0; ++i) {
            const unsigned at = k * LineLayer::kBlock + i;
            const uint64_t x = at < count ? static_cast<unsigned>(values[at] + s) / 2 - lo[k] : 0;
            acc |= x << held;
            held += w[k];
            while (held >= 8) {
                *data++ = static_cast<uint8_t>(acc);
                acc >>= 8;
                held -= 8;
            }
        }
    }
    return true;
}

}  // namespace

LineLayer LineLayer::build(const int8_t* values, uint64_t n, int s) {
    // Through a buffer of at most 64 Mi entries, as PackedLayer::pack.
    return build_chunks(n, s, uint64_t(1) << 26,
                        [values](uint64_t first, uint64_t count, int8_t* out) {
                            std::memcpy(out, values + first, count);
                        });
}

LineLayer LineLayer::build_chunks(
    uint64_t n, int s, uint64_t chunk,
    const std::function<void(uint64_t first, uint64_t count, int8_t* out)>& read) {
    if (s < 0 || s > 127) throw std::invalid_argument("LineLayer: seeds must be 0..127");
    chunk = std::max<uint64_t>(chunk, 1);
    LineLayer l;
    l.n_ = n;
    l.s_ = s;
    const uint64_t lines = std::max<uint64_t>((n + kLine - 1) / kLine, 1);
    l.line_bytes_ = 64 * lines;
    l.mem_ = HugePages(l.line_bytes_);
    uint8_t* out = static_cast<uint8_t*>(l.mem_.data());
    l.lines_ = out;
    // The buffer holds the entries of the last chunk that did not fill a line (fewer than
    // 96), then the next chunk.
    std::vector<int8_t> buf(std::min(chunk, std::max<uint64_t>(n, 1)) + kLine);
    uint64_t held = 0, base = 0;  // entries in buf, the rank of buf[0]
    for (uint64_t first = 0; first < n; first += chunk) {
        const uint64_t count = std::min(chunk, n - first);
        read(first, count, buf.data() + held);
        held += count;
        // Whole lines, or every entry left at the layer's end.
        const uint64_t whole = first + count == n ? (held + kLine - 1) / kLine : held / kLine;
        const uint64_t line0 = base / kLine;
        int64_t bad = -1;  // the first line holding an entry that is not a value of layer s
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < static_cast<int64_t>(whole); ++i) {
            const uint64_t at = uint64_t(i) * kLine;
            bool wrong = false;
            write_line(buf.data() + at, static_cast<unsigned>(std::min<uint64_t>(kLine, held - at)),
                       s, out + 64 * (line0 + uint64_t(i)), &wrong);
            if (wrong) {
#pragma omp critical
                if (bad < 0 || i < bad) bad = i;
            }
        }
        if (bad >= 0) {
            const uint64_t r = base + uint64_t(bad) * kLine;
            throw std::invalid_argument("LineLayer: a value of layer " + std::to_string(s) +
                                        " in entries " + std::to_string(r) + ".." +
                                        std::to_string(r + kLine - 1) +
                                        " is not in [-s, s] with the parity of s");
        }
        // The escapes, in line order: their values to the side array, its offset to the line.
        for (uint64_t i = 0; i < whole; ++i) {
            uint8_t* line = out + 64 * (line0 + i);
            uint32_t head;
            std::memcpy(&head, line, 4);
            if (!(head & kEscape)) continue;
            const uint64_t offset = l.escapes_.size();
            const uint64_t at = i * kLine;
            const uint64_t count_here = std::min<uint64_t>(kLine, held - at);
            l.escapes_.insert(l.escapes_.end(), buf.data() + at, buf.data() + at + count_here);
            l.escapes_.resize(offset + kLine, static_cast<int8_t>(-s));  // padding past the end
            std::memcpy(line + 8, &offset, 8);
        }
        const uint64_t used = std::min<uint64_t>(whole * kLine, held);
        std::memmove(buf.data(), buf.data() + used, held - used);
        held -= used;
        base += used;
    }
    l.escapes_.shrink_to_fit();
    return l;
}

int LineLayer::escaped(const uint8_t* line, unsigned j) const {
    uint64_t offset;
    std::memcpy(&offset, line + 8, 8);
    const int v = escapes_[offset + j];
    return std::clamp(v, -s_, s_);
}

void LineLayer::unpack(int8_t* out) const {
    for (uint64_t r0 = 0; r0 < n_; r0 += kLine) {
        const uint8_t* line = lines_ + 64 * (r0 / kLine);
        const unsigned count = static_cast<unsigned>(std::min<uint64_t>(kLine, n_ - r0));
        uint32_t head = 0;
        for (unsigned b = 0; b < 32; ++b) head |= uint32_t((line[b / 8] >> (b % 8)) & 1) << b;
        if (head & kEscape) {
            uint64_t offset = 0;
            for (unsigned b = 0; b < 8; ++b) offset |= uint64_t(line[8 + b]) << (8 * b);
            for (unsigned j = 0; j < count; ++j) out[r0 + j] = escapes_.at(offset + j);
            continue;
        }
        unsigned bit = 32;
        for (unsigned k = 0; k < 3; ++k) {
            const unsigned lo = (head >> (10 * k)) & 127, w = (head >> (10 * k + 7)) & 7;
            for (unsigned i = 0; i < kBlock; ++i) {
                unsigned x = 0;
                for (unsigned b = 0; b < w; ++b, ++bit)
                    x |= ((line[bit / 8] >> (bit % 8)) & 1u) << b;
                const unsigned j = k * kBlock + i;
                if (j < count) out[r0 + j] = static_cast<int8_t>(2 * static_cast<int>(lo + x) - s_);
            }
        }
    }
}

}  // namespace kalah::db
