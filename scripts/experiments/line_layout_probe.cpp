// A measurement for results/solver.md ("One miss a probe: a line layout"), not part of the
// build: per-batch probe latency of one database layer held three ways, on anonymous memory
// asked for huge pages, in alternated rounds:
//   - raw: one byte an entry;
//   - packed: the .kpk twin as db/packed.h lays it out (a group header, then a data word
//     whose address the header gives: two dependent misses);
//   - line: a candidate one-miss layout, 64-byte lines of 3 blocks of 32 entries, each
//     block's lo (7 bits) and width (3 bits) in the line's first 30 bits, the blocks' data
//     from bit 32 (5.33 bits an entry; a line whose widths add up to more than 15 would
//     need an escape, which the layers measured never do: the program stops if one does).
// Batches of 4 probes (a node's children in the database): prefetch all, then read; each
// batch's ranks depend on the last batch's values, as a search's next node depends on this
// one's, so the figure is a latency, not a throughput. The three agree on every entry of a
// million random ones before timing.
//
//   g++ -O3 -o /tmp/line_layout_probe scripts/experiments/line_layout_probe.cpp
//   /tmp/line_layout_probe DB/kalah-m6-standard-s29.kpk 29
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>
static void* huge(size_t n) {
    void* p =
        mmap(nullptr, n + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uintptr_t a = ((uintptr_t)p + (2 << 20) - 1) & ~uintptr_t((2 << 20) - 1);
    madvise((void*)a, n, MADV_HUGEPAGE);
    return (void*)a;
}
struct alignas(64) Header {
    uint64_t offset;
    uint32_t plane[3];
    uint8_t lo[28];
    uint8_t zero[16];
};
struct Packed {
    const Header* h;
    const uint8_t* d;
    int s;
    static unsigned lo_of(const Header& h, unsigned j) {
        unsigned bit = 7 * j, byte = bit / 8;
        unsigned two = unsigned(h.lo[byte]) | (byte + 1 < 28 ? unsigned(h.lo[byte + 1]) << 8 : 0);
        return (two >> (bit % 8)) & 127;
    }
    const uint8_t* locate(uint64_t r, unsigned* shift, unsigned* w, unsigned* lo) const {
        const Header& g = h[r / 1024];
        unsigned j = (r / 32) % 32, i = r % 32;
        uint32_t below = (1u << j) - 1;
        unsigned before = __builtin_popcount(g.plane[0] & below) +
                          2 * __builtin_popcount(g.plane[1] & below) +
                          4 * __builtin_popcount(g.plane[2] & below);
        *w = ((g.plane[0] >> j) & 1) | (((g.plane[1] >> j) & 1) << 1) |
             (((g.plane[2] >> j) & 1) << 2);
        *lo = lo_of(g, j);
        uint64_t bit = 32 * uint64_t(before) + uint64_t(i) * *w;
        *shift = bit % 8;
        return d + g.offset + bit / 8;
    }
    int get(uint64_t r) const {
        unsigned shift, w, lo;
        const uint8_t* p = locate(r, &shift, &w, &lo);
        unsigned word = unsigned(p[0]) | (unsigned(p[1]) << 8);
        unsigned u = lo + ((word >> shift) & ((1u << w) - 1));
        return 2 * int(u) - s;
    }
};
struct Line {
    const uint8_t* l;
    int s;
    int get(uint64_t r) const {
        const uint8_t* line = l + 64 * (r / 96);
        unsigned k = (r % 96) / 32, i = r % 32;
        uint32_t hd;
        memcpy(&hd, line, 4);
        unsigned w0 = (hd >> 7) & 7, w1 = (hd >> 17) & 7;
        unsigned lo = (hd >> (10 * k)) & 127, w = (hd >> (10 * k + 7)) & 7;
        unsigned start = 32 + 32 * ((k > 0 ? w0 : 0) + (k > 1 ? w1 : 0));
        unsigned bit = start + i * w, byte = bit / 8, shift = bit % 8;
        if (byte > 62) byte = 62, shift += 8;
        unsigned word = unsigned(line[byte]) | (unsigned(line[byte + 1]) << 8);
        return 2 * int(lo + ((word >> shift) & ((1u << w) - 1))) - s;
    }
};
int main(int argc, char** argv) {
    std::ifstream f(argv[1], std::ios::binary);
    int s = atoi(argv[2]);
    uint8_t fh[64];
    f.read((char*)fh, 64);
    uint64_t n, H, D, P;
    memcpy(&n, fh + 16, 8);
    memcpy(&H, fh + 24, 8);
    memcpy(&D, fh + 32, 8);
    memcpy(&P, fh + 56, 8);
    f.seekg((64 + 8 * P + 4095) / 4096 * 4096);
    Header* hp = (Header*)huge(H);
    f.read((char*)hp, H);
    uint8_t* dp = (uint8_t*)huge(D + 64);
    f.read((char*)dp, D);
    Packed pk{hp, dp, s};
    int8_t* raw = (int8_t*)huge(n);
    for (uint64_t r = 0; r < n; ++r) raw[r] = pk.get(r);
    uint64_t lines = (n + 95) / 96;
    uint8_t* ln = (uint8_t*)huge(64 * lines + 64);
    memset(ln, 0, 64 * lines);
    for (uint64_t L = 0; L < lines; ++L) {
        uint8_t* line = ln + 64 * L;
        uint32_t hd = 0;
        unsigned bit = 32, sumw = 0;
        for (unsigned k = 0; k < 3; ++k) {
            unsigned mn = 127, mx = 0;
            for (unsigned i = 0; i < 32; ++i) {
                uint64_t r = 96 * L + 32 * k + i;
                if (r >= n) break;
                unsigned u = (raw[r] + s) / 2;
                mn = std::min(mn, u);
                mx = std::max(mx, u);
            }
            if (mn > mx) mn = mx = 0;
            unsigned w = 0;
            while ((1u << w) <= mx - mn) ++w;
            hd |= (mn | (w << 7)) << (10 * k);
            sumw += w;
            for (unsigned i = 0; i < 32; ++i) {
                uint64_t r = 96 * L + 32 * k + i;
                if (r >= n) break;
                unsigned u = (raw[r] + s) / 2 - mn;
                for (unsigned b = 0; b < w; ++b)
                    if (u >> b & 1) line[(bit + b) / 8] |= 1 << ((bit + b) % 8);
                bit += w;
            }
        }
        if (sumw > 15) {
            fprintf(stderr, "line %llu needs an escape (sum %u)\n", (unsigned long long)L, sumw);
            return 1;
        }
        memcpy(line, &hd, 4);
    }
    Line li{ln, s};
    std::mt19937_64 rng(1);
    const int kProbes = 1 << 23;
    std::vector<uint64_t> rs(kProbes);
    for (auto& r : rs) r = rng() % n;
    for (uint64_t t = 0; t < 1000000; ++t) {
        uint64_t r = rng() % n;
        if (li.get(r) != raw[r] || pk.get(r) != raw[r]) {
            fprintf(stderr, "mismatch at %llu\n", (unsigned long long)r);
            return 1;
        }
    }
    printf(
        "layer %d: %llu entries; raw %.2f GB, packed %.2f GB (%.3f b/e), line %.2f GB (%.3f b/e)\n",
        s, (unsigned long long)n, n / 1e9, (H + D) / 1e9, 8.0 * (H + D) / n, 64.0 * lines / 1e9,
        512.0 * lines / n);
    using C = std::chrono::steady_clock;
    volatile uint64_t zero_v = 0;
    const uint64_t zero = zero_v;
    for (int round = 0; round < 3; ++round) {
        for (int fmt = 0; fmt < 4; ++fmt) {
            auto t0 = C::now();
            long sum = 0;
            for (int b = 0; b < kProbes;
                 b += 4) {  // batches of 4, as a node's children in the database
                // Each batch's addresses depend on the last batch's values (as a search's next
                // node depends on this one's): per-batch latency, not throughput.
                uint64_t q[4];
                for (int i = 0; i < 4; ++i) q[i] = rs[b + i] ^ (uint64_t(sum) & zero);
                if (fmt == 0) {
                    for (int i = 0; i < 4; ++i) __builtin_prefetch(&raw[q[i]]);
                    for (int i = 0; i < 4; ++i) sum += raw[q[i]];
                } else if (fmt == 1) {
                    for (int i = 0; i < 4; ++i) __builtin_prefetch(&hp[q[i] / 1024]);
                    for (int i = 0; i < 4; ++i) {
                        unsigned a, b2, c;
                        __builtin_prefetch(pk.locate(q[i], &a, &b2, &c));
                    }
                    for (int i = 0; i < 4; ++i) sum += pk.get(q[i]);
                } else if (fmt == 2) {
                    for (int i = 0; i < 4; ++i) __builtin_prefetch(ln + 64 * (q[i] / 96));
                    for (int i = 0; i < 4; ++i) sum += li.get(q[i]);
                } else {
                    for (int i = 0; i < 4; ++i) __builtin_prefetch(ln + 64 * (q[i] / 96));
                    for (int i = 0; i < 4; ++i) sum += ln[64 * (q[i] / 96) + (q[i] & 63)];
                }
            }
            double ns = std::chrono::duration<double, std::nano>(C::now() - t0).count() / kProbes;
            printf("round %d %s %.1f ns/probe (sum %ld)\n", round,
                   fmt == 0   ? "raw   "
                   : fmt == 1 ? "packed"
                   : fmt == 2 ? "line  "
                              : "line-load-only",
                   ns, sum);
        }
    }
}
