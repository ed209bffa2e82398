// kdb_edit: a test helper of tests/verify_db_test.sh that rewrites a small layer file (.kdb,
// db/format.h) with some entries changed and every checksum made right again, so that a
// verifier must find the change by the values, not by a checksum. Test-only, for files of
// a few MB: it decodes the whole layer, edits it and writes every block anew.
//
//   kdb_edit FILE get RANK          prints the entry at RANK
//   kdb_edit FILE set RANK VALUE    sets it
//   kdb_edit FILE swap RANK         swaps the entries at RANK and RANK+1
//   kdb_edit FILE config RANK M     prints the pits of the entry at RANK (db/index.h order:
//                                   the mover's M pits then the opponent's), comma-separated
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static void fail(const char* what) {
    fprintf(stderr, "kdb_edit: %s\n", what);
    exit(2);
}

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t rd64(const uint8_t* p) {
    uint64_t w = 0;
    for (int i = 7; i >= 0; --i) w = (w << 8) | p[i];
    return w;
}

static void wr64(uint8_t* p, uint64_t w) {
    for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(w >> (8 * i));
}

static uint32_t rd32(const uint8_t* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// kh64 of db/format.h, with the constants of docs/formats.md.
static uint64_t kh64(const uint8_t* p, size_t n, uint64_t seed) {
    const uint64_t p1 = 0x9E3779B185EBCA87ull, p2 = 0xC2B2AE3D27D4EB4Full;
    const uint64_t p3 = 0x165667B19E3779F9ull, p4 = 0x85EBCA77C2B2AE63ull;
    const uint64_t p5 = 0x27D4EB2F165667C5ull;
    uint64_t h = seed ^ ((uint64_t)n * p1);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        h ^= rotl(rd64(p + i) * p2, 31) * p1;
        h = rotl(h, 27) * p1 + p4;
    }
    for (; i < n; ++i) {
        h ^= p[i] * p5;
        h = rotl(h, 11) * p1;
    }
    h ^= h >> 33;
    h *= p2;
    h ^= h >> 29;
    h *= p3;
    h ^= h >> 32;
    return h;
}

static uint64_t binom(int n, int k) {
    if (k < 0 || k > n) return 0;
    uint64_t r = 1;
    for (int i = 1; i <= k; ++i) r = r * (uint64_t)(n - k + i) / (uint64_t)i;
    return r;
}

int main(int argc, char** argv) {
    if (argc < 4) fail("usage: kdb_edit FILE get|set|swap|config RANK [VALUE|M]");
    const char* path = argv[1];
    const char* op = argv[2];
    uint64_t rank = strtoull(argv[3], NULL, 10);
    FILE* f = fopen(path, "rb");
    if (!f) fail("cannot open the file");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t* file = malloc((size_t)size);
    if (!file || fread(file, 1, (size_t)size, f) != (size_t)size) fail("cannot read the file");
    fclose(f);
    const int s = file[14];
    const uint64_t entries = rd64(file + 16);
    const uint32_t bsize = rd32(file + 24), blocks = rd32(file + 28);
    const int level = (int)rd32(file + 32);
    if (rank >= entries) fail("rank out of range");
    int8_t* values = malloc(entries);
    for (uint32_t b = 0; b < blocks; ++b) {
        const uint8_t* r = file + 64 + 24 * (size_t)b;
        size_t n = ZSTD_decompress(values + (uint64_t)b * bsize, entries - (uint64_t)b * bsize,
                                   file + rd64(r), rd64(r + 8));
        if (ZSTD_isError(n)) fail("a block does not decode");
    }
    if (strcmp(op, "get") == 0) {
        printf("%d\n", values[rank]);
        return 0;
    }
    if (strcmp(op, "config") == 0) {
        if (argc != 5) fail("config needs M");
        int n = 2 * atoi(argv[4]);
        uint64_t r = rank;  // the colex unranking of db/index.h, bars from the last down
        int pos[12] = {0}, hi = s + n - 2;
        for (int j = n - 2; j >= 0; --j) {
            int p = hi;
            while (binom(p, j + 1) > r) --p;
            pos[j] = p;
            r -= binom(p, j + 1);
            hi = p - 1;
        }
        int d[12];
        d[0] = pos[0];
        for (int j = 1; j + 1 < n; ++j) d[j] = pos[j] - pos[j - 1] - 1;
        d[n - 1] = s + n - 2 - pos[n - 2];
        for (int i = 0; i < n; ++i) printf("%d%s", d[n - 1 - i], i + 1 < n ? "," : "\n");
        return 0;
    }
    if (strcmp(op, "set") == 0) {
        if (argc != 5) fail("set needs a value");
        values[rank] = (int8_t)atoi(argv[4]);
    } else if (strcmp(op, "swap") == 0) {
        if (rank + 1 >= entries) fail("swap needs RANK+1 in the layer");
        int8_t t = values[rank];
        values[rank] = values[rank + 1];
        values[rank + 1] = t;
    } else {
        fail("unknown operation");
    }
    // Every block anew, back to back after the header and the index.
    size_t cap = 64 + 24 * (size_t)blocks + ZSTD_compressBound(entries) + (size_t)blocks * 64;
    uint8_t* out = calloc(1, cap);
    memcpy(out, file, 40);
    size_t at = 64 + 24 * (size_t)blocks;
    for (uint32_t b = 0; b < blocks; ++b) {
        uint64_t first = (uint64_t)b * bsize;
        size_t n = entries - first < bsize ? entries - first : bsize;
        size_t c = ZSTD_compress(out + at, cap - at, values + first, n, level);
        if (ZSTD_isError(c)) fail("cannot compress");
        uint8_t* r = out + 64 + 24 * (size_t)b;
        wr64(r, at);
        wr64(r + 8, c);
        wr64(r + 16, kh64(out + at, c, 0));
        at += c;
    }
    uint64_t seed = kh64(out, 40, 0);
    wr64(out + 40, kh64(out + 64, 24 * (size_t)blocks, seed));
    wr64(out + 48, kh64(out + 56, at - 56, seed));
    f = fopen(path, "wb");
    if (!f || fwrite(out, 1, at, f) != at || fclose(f) != 0) fail("cannot write the file");
    return 0;
}
