// verify_db: an independent verifier of the endgame databases' layer files (.kdb).
//
// Written from docs/rules.md (the rules) and the layer file format of docs/formats.md
// (field by field in db/format.h and db/index.h): it shares no code with the project
// (nothing from core/, solver/ or db/ is included, linked or copied; only libzstd and
// pthreads). It reads the layer files with its own reader and its own index, and checks
// every entry, or a seeded random sample, against the rules (checker/README.md):
//
//   - an entry whose position has an empty row holds the sweep's value: the mover's row
//     minus the opponent's row;
//   - any other entry holds the best, over the mover's moves, of the move's worth: with g
//     the seeds the move puts in the mover's store, g + (mover's row - opponent's row) when
//     the move ends the game, g + v(child) after an extra move (the mover moves again),
//     g - v(child) otherwise (the child seen by the opponent).
//
// An entry's value v is the pits-only value from the mover's view: the mover's final store
// minus the opponent's, counting only the seeds now in the pits, under perfect play; a
// layer s entry is in [-s, s] and of the parity of s. Children are in the same layer (no
// seed reached the store) or in lower ones.
//
//   verify_db --db DIR --pits M [--rule standard|empty-capture] --layers A..B
//             [--sample N --seed S] [--threads T] [--cache-mb N] [--progress FILE]
//
// Exit status: 0 every entry checked agrees; 1 a disagreement (the position named on
// stderr); 2 bad input or a damaged or wrong file (one line on stderr).
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

enum { MAX_PITS = 6, MAX_SEEDS = 127, MAX_N = 2 * MAX_PITS, MAX_BINOM = MAX_SEEDS + MAX_N + 1 };
enum { HEADER_BYTES = 64, RECORD_BYTES = 24 };
enum { KIND_SELF = 0, KIND_PLUS = 1, KIND_MINUS = 2 };

// ---------------------------------------------------------------------------------------
// Errors: one line on stderr, exit 2. Safe from any thread (the first caller wins).

static pthread_mutex_t die_mu = PTHREAD_MUTEX_INITIALIZER;

static _Noreturn void die(const char* fmt, ...) {
    pthread_mutex_lock(&die_mu);
    fflush(stdout);
    va_list ap;
    va_start(ap, fmt);
    fputs("verify_db: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    _exit(2);
}

static void* xmalloc(size_t n) {
    void* p = malloc(n ? n : 1);
    if (!p) die("out of memory (%zu bytes)", n);
    return p;
}

static void* xcalloc(size_t n, size_t size) {
    void* p = calloc(n ? n : 1, size ? size : 1);
    if (!p) die("out of memory (%zu bytes)", n * size);
    return p;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// ---------------------------------------------------------------------------------------
// kh64, the format's checksum (db/format.h; constants in docs/formats.md), fed in pieces.

static const uint64_t P1 = 0x9E3779B185EBCA87ull;
static const uint64_t P2 = 0xC2B2AE3D27D4EB4Full;
static const uint64_t P3 = 0x165667B19E3779F9ull;
static const uint64_t P4 = 0x85EBCA77C2B2AE63ull;
static const uint64_t P5 = 0x27D4EB2F165667C5ull;

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

typedef struct {
    uint64_t h, len, seen;
    uint8_t held[8];
    int nheld;
} Kh64;

// A hash of exactly `len` bytes, given to kh_update in pieces of any sizes.
static void kh_init(Kh64* k, uint64_t len, uint64_t seed) {
    k->h = seed ^ (len * P1);
    k->len = len;
    k->seen = 0;
    k->nheld = 0;
}

static void kh_word(Kh64* k, const uint8_t* p) {
    uint64_t w = 0;
    for (int i = 7; i >= 0; --i) w = (w << 8) | p[i];  // little-endian
    k->h ^= rotl(w * P2, 31) * P1;
    k->h = rotl(k->h, 27) * P1 + P4;
}

static void kh_update(Kh64* k, const void* data, size_t n) {
    const uint8_t* p = data;
    k->seen += n;
    while (n > 0 && k->nheld > 0) {
        k->held[k->nheld++] = *p++;
        --n;
        if (k->nheld == 8) {
            kh_word(k, k->held);
            k->nheld = 0;
        }
    }
    // Whole words, then fewer than 8 bytes held for the next piece; the last len mod 8
    // bytes of all are still held at kh_final, which hashes them as bytes.
    while (n >= 8) {
        kh_word(k, p);
        p += 8;
        n -= 8;
    }
    while (n > 0 && k->nheld < 8) {
        k->held[k->nheld++] = *p++;
        --n;
    }
}

static uint64_t kh_final(Kh64* k) {
    if (k->seen != k->len)
        die("internal error: kh64 fed %" PRIu64 " of %" PRIu64 " bytes", k->seen, k->len);
    uint64_t h = k->h;
    for (int i = 0; i < k->nheld; ++i) {
        h ^= (uint64_t)k->held[i] * P5;
        h = rotl(h, 11) * P1;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

static uint64_t kh64(const void* data, size_t n, uint64_t seed) {
    Kh64 k;
    kh_init(&k, n, seed);
    kh_update(&k, data, n);
    return kh_final(&k);
}

static uint64_t le64(const uint8_t* p) {
    uint64_t w = 0;
    for (int i = 7; i >= 0; --i) w = (w << 8) | p[i];
    return w;
}

static uint32_t le32(const uint8_t* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// ---------------------------------------------------------------------------------------
// Options and the board.

static int M;     // pits a side
static int N;     // pits in all, 2M
static int RULE;  // 0 standard, 1 empty-capture
static const char* RULE_NAME;
static const char* DIR;
static int THREADS = 2;
static uint64_t CACHE_BYTES = 1024ull << 20;
static uint64_t RANK_OFFSET = 0;  // --test-rank-offset: a deliberately wrong index (tests)

// ---------------------------------------------------------------------------------------
// The index (db/index.h, written anew): a configuration c[0..N-1] lists the pits in the
// mover's view, c[0..M-1] the mover's pits from the one farthest from the mover's store
// (A1 when South moves), c[M..N-1] the opponent's from the one farthest from theirs (B1).
// Read backwards, d[i] = c[N-1-i]; bar j (j = 0..N-2) of the stars and bars sits at
// pos_j = d[0] + .. + d[j] + j, and rank = sum_j C(pos_j, j + 1).

static uint64_t BINOM[MAX_BINOM + 1][MAX_N + 1];  // C(n, k); UINT64_MAX when it overflows

static void init_binomials(void) {
    for (int n = 0; n <= MAX_BINOM; ++n) {
        BINOM[n][0] = 1;
        for (int k = 1; k <= MAX_N; ++k) {
            if (n == 0) {
                BINOM[n][k] = 0;
                continue;
            }
            uint64_t a = BINOM[n - 1][k - 1], b = BINOM[n - 1][k];
            BINOM[n][k] =
                (a == UINT64_MAX || b == UINT64_MAX || a > UINT64_MAX - b) ? UINT64_MAX : a + b;
        }
    }
}

static uint64_t layer_size(int s) { return BINOM[s + N - 1][N - 1]; }

static uint64_t rank_of(const uint8_t* c, int s) {
    uint64_t r = 0;
    int sum = 0;
    for (int j = 0; j + 1 < N; ++j) {
        sum += c[N - 1 - j];
        r += BINOM[sum + j][j + 1];
    }
    if (RANK_OFFSET) r = (r + RANK_OFFSET) % layer_size(s);
    return r;
}

static void unrank(uint64_t r, int s, uint8_t* c) {
    if (RANK_OFFSET) {
        uint64_t size = layer_size(s);
        r = (r + size - RANK_OFFSET % size) % size;
    }
    int pos[MAX_N] = {0};
    int hi = s + N - 2;
    for (int j = N - 2; j >= 0; --j) {
        int p = hi;
        while (BINOM[p][j + 1] > r) --p;  // C(j, j + 1) = 0 stops it at p = j
        pos[j] = p;
        r -= BINOM[p][j + 1];
        hi = p - 1;
    }
    int d[MAX_N];
    d[0] = pos[0];
    for (int j = 1; j + 1 < N; ++j) d[j] = pos[j] - pos[j - 1] - 1;
    d[N - 1] = s + N - 2 - pos[N - 2];
    for (int i = 0; i < N; ++i) c[N - 1 - i] = (uint8_t)d[i];
}

// Every rank of the small layers round-trips, and each configuration holds s seeds.
static void check_index(void) {
    for (int s = 0; s <= 4; ++s) {
        uint64_t size = layer_size(s);
        for (uint64_t r = 0; r < size; ++r) {
            uint8_t c[MAX_N];
            unrank(r, s, c);
            int sum = 0;
            for (int i = 0; i < N; ++i) sum += c[i];
            if (sum != s || rank_of(c, s) != r)
                die("internal error: the index does not round-trip at s %d rank %" PRIu64, s, r);
        }
    }
}

static void format_position(const uint8_t* c, char* out, size_t cap) {
    size_t k = 0;
    for (int i = 0; i < N; ++i) {
        k += (size_t)snprintf(out + k, cap - k, "%d%s", c[i],
                              i == N - 1 ? "" : (i == M - 1 ? "/" : ","));
    }
    snprintf(out + k, cap - k, "/0,0/A");
}

// ---------------------------------------------------------------------------------------
// The rules (rules.md, "A move" and "End of the game"), pits only, in the mover's view.

typedef struct {
    int gain;              // seeds the move put in the mover's store (sown and captured)
    int kind;              // 0 game over (worth = gain + sweep), KIND_PLUS, KIND_MINUS
    int sweep;             // game over: mover's row minus opponent's row, swept
    int child_s;           // seeds left in the pits
    uint8_t child[MAX_N];  // the child configuration in its mover's view
} Move;

// Plays the mover's pit `pit` (0-based, non-empty) of configuration c.
static void play(const uint8_t* c, int pit, Move* mv) {
    // The mover's circuit: slots 0..M-1 own pits, slot M own store, slots M+1..2M the
    // opponent's pits in their order; the opponent's store is not on it.
    if (M < 1 || M > MAX_PITS) die("internal error: %d pits", M);
    const int circuit = 2 * M + 1;
    int b[2 * MAX_PITS + 1];
    for (int i = 0; i < M; ++i) b[i] = c[i];
    b[M] = 0;
    for (int i = 0; i < M; ++i) b[M + 1 + i] = c[M + i];
    int seeds = b[pit];
    b[pit] = 0;
    int at = pit;
    while (seeds-- > 0) {
        if (++at == circuit) at = 0;
        b[at]++;
    }
    int extra = at == M;
    if (at < M && b[at] == 1) {  // the last seed fell in an own pit that was empty
        int opp = 2 * M - at;    // own pit i faces the opponent's pit M-1-i: slot 2M-i
        if (b[opp] > 0) {
            b[M] += b[opp] + 1;
            b[opp] = 0;
            b[at] = 0;
        } else if (RULE == 1) {
            b[M] += 1;
            b[at] = 0;
        }
    }
    int own = 0, opp = 0;
    for (int i = 0; i < M; ++i) {
        own += b[i];
        opp += b[M + 1 + i];
    }
    mv->gain = b[M];
    mv->child_s = own + opp;
    mv->sweep = own - opp;
    if (own == 0 || opp == 0) {
        mv->kind = 0;
    } else if (extra) {
        mv->kind = KIND_PLUS;
        for (int i = 0; i < M; ++i) {
            mv->child[i] = (uint8_t)b[i];
            mv->child[M + i] = (uint8_t)b[M + 1 + i];
        }
    } else {
        mv->kind = KIND_MINUS;
        for (int i = 0; i < M; ++i) {
            mv->child[i] = (uint8_t)b[M + 1 + i];
            mv->child[M + i] = (uint8_t)b[i];
        }
    }
}

// ---------------------------------------------------------------------------------------
// Layer files (db/format.h, read anew): the header and block index are checked at open,
// each block's checksum, size and values when it is decoded.

typedef struct {
    int8_t* data;  // decoded entries, or NULL
    int refs;      // users holding it
    uint64_t stamp;
} Slot;

typedef struct {
    int s;
    char name[96];
    int fd;
    uint64_t file_size, entries;
    uint32_t block_size, blocks;
    uint64_t seed;  // kh64 of header bytes 0..39
    uint64_t file_checksum;
    uint64_t *offset, *size, *sum;
    Slot* slot;
} Layer;

static Layer* LAYERS[MAX_SEEDS + 1];

static void read_exact(const Layer* L, void* buf, size_t n, uint64_t at, const char* what) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(L->fd, (uint8_t*)buf + got, n - got, (off_t)(at + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) die("%s: read error in %s: %s", L->name, what, strerror(errno));
        if (r == 0) die("%s: truncated (%s)", L->name, what);
        got += (size_t)r;
    }
}

static Layer* open_layer(int s) {
    Layer* L = xcalloc(1, sizeof *L);
    L->s = s;
    snprintf(L->name, sizeof L->name, "kalah-m%d-%s-s%d.kdb", M, RULE_NAME, s);
    size_t plen = strlen(DIR) + strlen(L->name) + 2;
    char* path = xmalloc(plen);
    snprintf(path, plen, "%s/%s", DIR, L->name);
    L->fd = open(path, O_RDONLY);
    if (L->fd < 0) die("%s: cannot open %s: %s", L->name, path, strerror(errno));
    free(path);
    struct stat st;
    if (fstat(L->fd, &st) != 0) die("%s: cannot stat: %s", L->name, strerror(errno));
    if (!S_ISREG(st.st_mode)) die("%s: not a regular file", L->name);
    L->file_size = (uint64_t)st.st_size;
    if (L->file_size < HEADER_BYTES)
        die("%s: truncated header (%" PRIu64 " bytes)", L->name, L->file_size);
    uint8_t h[HEADER_BYTES];
    read_exact(L, h, HEADER_BYTES, 0, "header");
    if (memcmp(h, "KALAHKDB", 8) != 0) die("%s: wrong magic (not a layer file)", L->name);
    if (le32(h + 8) != 1) die("%s: format version %u, expected 1", L->name, le32(h + 8));
    if (h[12] != M) die("%s: header says %d pits, expected %d", L->name, h[12], M);
    if (h[13] != RULE) die("%s: header says rule %d, expected %d", L->name, h[13], RULE);
    if (h[14] != s) die("%s: header says %d seeds, expected %d", L->name, h[14], s);
    if (h[15] != 0) die("%s: unknown entry encoding %d", L->name, h[15]);
    L->entries = le64(h + 16);
    if (L->entries != layer_size(s))
        die("%s: header says %" PRIu64 " entries, expected %" PRIu64, L->name, L->entries,
            layer_size(s));
    L->block_size = le32(h + 24);
    L->blocks = le32(h + 28);
    if (L->block_size == 0 || L->block_size > (1u << 24))
        die("%s: block size %u out of range 1..2^24", L->name, L->block_size);
    uint64_t want_blocks = (L->entries + L->block_size - 1) / L->block_size;
    if (L->blocks != want_blocks)
        die("%s: header says %u blocks, expected %" PRIu64, L->name, L->blocks, want_blocks);
    if (le32(h + 36) != 0 || le64(h + 56) != 0) die("%s: reserved header field not 0", L->name);
    uint64_t index_bytes = (uint64_t)L->blocks * RECORD_BYTES;
    if (index_bytes > L->file_size - HEADER_BYTES) die("%s: truncated block index", L->name);
    uint8_t* idx = xmalloc((size_t)index_bytes);
    read_exact(L, idx, (size_t)index_bytes, HEADER_BYTES, "block index");
    L->seed = kh64(h, 40, 0);
    if (kh64(idx, (size_t)index_bytes, L->seed) != le64(h + 40))
        die("%s: header checksum mismatch (damaged header or block index)", L->name);
    L->file_checksum = le64(h + 48);
    L->offset = xcalloc(L->blocks, sizeof(uint64_t));
    L->size = xcalloc(L->blocks, sizeof(uint64_t));
    L->sum = xcalloc(L->blocks, sizeof(uint64_t));
    L->slot = xcalloc(L->blocks, sizeof(Slot));
    uint64_t at = HEADER_BYTES + index_bytes;
    for (uint32_t b = 0; b < L->blocks; ++b) {
        const uint8_t* r = idx + (size_t)b * RECORD_BYTES;
        L->offset[b] = le64(r);
        L->size[b] = le64(r + 8);
        L->sum[b] = le64(r + 16);
        if (L->offset[b] != at)
            die("%s: block %u at offset %" PRIu64 ", expected %" PRIu64 " (blocks back to back)",
                L->name, b, L->offset[b], at);
        if (L->size[b] == 0 || L->size[b] > ZSTD_compressBound(L->block_size))
            die("%s: block %u size %" PRIu64 " out of range", L->name, b, L->size[b]);
        if (L->size[b] > L->file_size - at)
            die("%s: block %u runs past the end of the file (truncated)", L->name, b);
        at += L->size[b];
    }
    if (at != L->file_size)
        die("%s: file is %" PRIu64 " bytes, its blocks end at %" PRIu64, L->name, L->file_size, at);
    free(idx);
    return L;
}

static uint32_t block_entries(const Layer* L, uint32_t b) {
    uint64_t first = (uint64_t)b * L->block_size;
    uint64_t n = L->entries - first;
    return n < L->block_size ? (uint32_t)n : L->block_size;
}

// The file checksum: kh64 of bytes 56..end seeded with kh64 of bytes 0..39.
static void check_file_checksum(const Layer* L) {
    const size_t chunk = 1u << 20;
    uint8_t* buf = xmalloc(chunk);
    Kh64 k;
    kh_init(&k, L->file_size - 56, L->seed);
    for (uint64_t at = 56; at < L->file_size;) {
        size_t n = (size_t)(L->file_size - at < chunk ? L->file_size - at : chunk);
        read_exact(L, buf, n, at, "file checksum");
        kh_update(&k, buf, n);
        at += n;
    }
    free(buf);
    if (kh_final(&k) != L->file_checksum) die("%s: file checksum mismatch (damaged)", L->name);
}

// Decodes block b of L into a new buffer: its checksum, its size and every value checked.
static int8_t* decode_block(const Layer* L, uint32_t b, ZSTD_DCtx* dctx) {
    size_t csize = (size_t)L->size[b];
    uint8_t* comp = xmalloc(csize);
    read_exact(L, comp, csize, L->offset[b], "block");
    if (kh64(comp, csize, 0) != L->sum[b])
        die("%s: block %u checksum mismatch (damaged)", L->name, b);
    uint32_t n = block_entries(L, b);
    unsigned long long content = ZSTD_getFrameContentSize(comp, csize);
    if (content == ZSTD_CONTENTSIZE_ERROR) die("%s: block %u is not a zstd frame", L->name, b);
    if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != n)
        die("%s: block %u holds %llu entries, expected %u", L->name, b, content, n);
    int8_t* out = xmalloc(n);
    size_t got = ZSTD_decompressDCtx(dctx, out, n, comp, csize);
    if (ZSTD_isError(got))
        die("%s: block %u does not decode: %s", L->name, b, ZSTD_getErrorName(got));
    if (got != n) die("%s: block %u decodes to %zu entries, expected %u", L->name, b, got, n);
    free(comp);
    const int s = L->s;
    for (uint32_t i = 0; i < n; ++i) {
        int v = out[i];
        if (v < -s || v > s || ((v + s) & 1))
            die("%s: block %u entry %u (rank %" PRIu64 ") holds %d, not a value of layer %d",
                L->name, b, i, (uint64_t)b * L->block_size + i, v, s);
    }
    return out;
}

// ---------------------------------------------------------------------------------------
// The block cache: decoded blocks of every layer, at most CACHE_BYTES of unpinned ones
// (least recently used go first). A user pins a block while it reads it.

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t cache_bytes, cache_stamp;
static atomic_uint_fast64_t decodes;

static void evict_locked(void) {
    while (cache_bytes > CACHE_BYTES) {
        Slot* victim = NULL;
        const Layer* vl = NULL;
        uint32_t vb = 0;
        for (int s = 0; s <= MAX_SEEDS; ++s) {
            const Layer* L = LAYERS[s];
            if (!L) continue;
            for (uint32_t b = 0; b < L->blocks; ++b) {
                Slot* sl = &L->slot[b];
                if (sl->data && sl->refs == 0 && (!victim || sl->stamp < victim->stamp)) {
                    victim = sl;
                    vl = L;
                    vb = b;
                }
            }
        }
        if (!victim) return;  // everything pinned: over budget until released
        free(victim->data);
        victim->data = NULL;
        cache_bytes -= block_entries(vl, vb);
    }
}

static const int8_t* pin_block(Layer* L, uint32_t b, ZSTD_DCtx* dctx) {
    Slot* sl = &L->slot[b];
    pthread_mutex_lock(&cache_mu);
    if (sl->data) {
        sl->refs++;
        sl->stamp = ++cache_stamp;
        pthread_mutex_unlock(&cache_mu);
        return sl->data;
    }
    pthread_mutex_unlock(&cache_mu);
    int8_t* data = decode_block(L, b, dctx);  // outside the lock; another may race us
    atomic_fetch_add(&decodes, 1);
    pthread_mutex_lock(&cache_mu);
    if (sl->data) {
        free(data);
    } else {
        sl->data = data;
        cache_bytes += block_entries(L, b);
    }
    sl->refs++;  // pinned before anything is evicted
    sl->stamp = ++cache_stamp;
    evict_locked();
    const int8_t* out = sl->data;
    pthread_mutex_unlock(&cache_mu);
    return out;
}

static void unpin_block(Layer* L, uint32_t b) {
    pthread_mutex_lock(&cache_mu);
    L->slot[b].refs--;
    evict_locked();
    pthread_mutex_unlock(&cache_mu);
}

static int value_at(int s, uint64_t r, ZSTD_DCtx* dctx) {
    Layer* L = LAYERS[s];
    uint32_t b = (uint32_t)(r / L->block_size);
    int v = pin_block(L, b, dctx)[r - (uint64_t)b * L->block_size];
    unpin_block(L, b);
    return v;
}

// ---------------------------------------------------------------------------------------
// Checking a layer: its entries are cut into units; a thread takes a unit, lists every
// entry's own value and its children's values as requests, groups the requests by block
// (a counting sort), reads each block once, then compares.

typedef struct {
    uint64_t rank;
    uint32_t owner;  // index of the entry in the unit
    uint8_t layer;
    int8_t gain;
    uint8_t kind;
    uint8_t pad;
} Request;

typedef struct {
    int s;
    uint64_t size;         // entries in the layer
    const uint64_t* list;  // sampled ranks (sorted, distinct), or NULL: every rank
    uint64_t count;        // entries to check
    uint64_t unit;         // entries a unit
    uint64_t units;
    uint64_t* block_base;  // first bucket of each layer 0..s
    uint64_t buckets;
    atomic_uint_fast64_t next;  // next unit to hand out
    atomic_uchar* done;         // per unit
    atomic_int stop;
    pthread_mutex_t bad_mu;
    int bad;  // a disagreement found: the lowest rank of those found
    uint64_t bad_rank;
    int bad_stored, bad_best;
} Job;

static Job JOB;

static void record_bad(uint64_t rank, int stored, int best) {
    pthread_mutex_lock(&JOB.bad_mu);
    if (!JOB.bad || rank < JOB.bad_rank) {
        JOB.bad = 1;
        JOB.bad_rank = rank;
        JOB.bad_stored = stored;
        JOB.bad_best = best;
    }
    pthread_mutex_unlock(&JOB.bad_mu);
    atomic_store(&JOB.stop, 1);
}

typedef struct {
    ZSTD_DCtx* dctx;
    Request *req, *sorted;
    uint64_t* count;  // per bucket
    int8_t* stored;
    int16_t* best;
} Worker;

static void check_unit(Worker* w, uint64_t u) {
    const int s = JOB.s;
    const uint64_t first = u * JOB.unit;
    const uint64_t n = (JOB.count - first < JOB.unit) ? JOB.count - first : JOB.unit;
    size_t nreq = 0;
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t r = JOB.list ? JOB.list[first + i] : first + i;
        uint8_t c[MAX_N];
        unrank(r, s, c);
        w->req[nreq++] = (Request){r, (uint32_t)i, (uint8_t)s, 0, KIND_SELF, 0};
        int own = 0, opp = 0;
        for (int k = 0; k < M; ++k) {
            own += c[k];
            opp += c[M + k];
        }
        if (own == 0 || opp == 0) {  // the game is over: the sweep
            w->best[i] = (int16_t)(own - opp);
            continue;
        }
        w->best[i] = INT16_MIN;
        for (int pit = 0; pit < M; ++pit) {
            if (c[pit] == 0) continue;
            Move mv;
            play(c, pit, &mv);
            if (mv.kind == 0) {
                int worth = mv.gain + mv.sweep;
                if (worth > w->best[i]) w->best[i] = (int16_t)worth;
            } else {
                w->req[nreq++] = (Request){rank_of(mv.child, mv.child_s),
                                           (uint32_t)i,
                                           (uint8_t)mv.child_s,
                                           (int8_t)mv.gain,
                                           (uint8_t)mv.kind,
                                           0};
            }
        }
    }
    // Group by (layer, block).
    memset(w->count, 0, JOB.buckets * sizeof(uint64_t));
    for (size_t k = 0; k < nreq; ++k) {
        const Request* q = &w->req[k];
        w->count[JOB.block_base[q->layer] + q->rank / LAYERS[q->layer]->block_size]++;
    }
    uint64_t sum = 0;
    for (uint64_t b = 0; b < JOB.buckets; ++b) {
        uint64_t c = w->count[b];
        w->count[b] = sum;
        sum += c;
    }
    for (size_t k = 0; k < nreq; ++k) {
        const Request* q = &w->req[k];
        w->sorted[w->count[JOB.block_base[q->layer] + q->rank / LAYERS[q->layer]->block_size]++] =
            *q;
    }
    // Each block once.
    for (size_t k = 0; k < nreq;) {
        Layer* L = LAYERS[w->sorted[k].layer];
        uint32_t b = (uint32_t)(w->sorted[k].rank / L->block_size);
        uint64_t base = (uint64_t)b * L->block_size;
        const int8_t* data = pin_block(L, b, w->dctx);
        for (; k < nreq && w->sorted[k].layer == L->s && w->sorted[k].rank / L->block_size == b;
             ++k) {
            const Request* q = &w->sorted[k];
            int v = data[q->rank - base];
            if (q->kind == KIND_SELF) {
                w->stored[q->owner] = (int8_t)v;
            } else {
                int worth = q->kind == KIND_PLUS ? q->gain + v : q->gain - v;
                if (worth > w->best[q->owner]) w->best[q->owner] = (int16_t)worth;
            }
        }
        unpin_block(L, b);
    }
    for (uint64_t i = 0; i < n; ++i) {
        if (w->stored[i] != w->best[i]) {
            record_bad(JOB.list ? JOB.list[first + i] : first + i, w->stored[i], w->best[i]);
            return;
        }
    }
}

static void* worker_main(void* arg) {
    Worker* w = arg;
    for (;;) {
        if (atomic_load(&JOB.stop)) break;
        uint64_t u = atomic_fetch_add(&JOB.next, 1);
        if (u >= JOB.units) break;
        check_unit(w, u);
        atomic_store(&JOB.done[u], 1);
    }
    return NULL;
}

// ---------------------------------------------------------------------------------------
// The progress file: text, written to FILE.tmp and renamed. Its first line names the run's
// options; then one line a layer, "done S entries E seconds T" or
// "partial S units K entries E seconds T" (the first K units checked).

typedef struct {
    int state;  // 0 none, 1 partial, 2 done
    uint64_t units, entries;
    double seconds;
} LayerProgress;

static const char* PROGRESS;
static char PROGRESS_KEY[256];
static LayerProgress PROG[MAX_SEEDS + 1];

static void write_progress(void) {
    if (!PROGRESS) return;
    size_t len = strlen(PROGRESS) + 8;
    char* tmp = xmalloc(len);
    snprintf(tmp, len, "%s.tmp", PROGRESS);
    FILE* f = fopen(tmp, "w");
    if (!f) die("%s: cannot write: %s", tmp, strerror(errno));
    fprintf(f, "%s\n", PROGRESS_KEY);
    for (int s = 0; s <= MAX_SEEDS; ++s) {
        const LayerProgress* p = &PROG[s];
        if (p->state == 2)
            fprintf(f, "done %d entries %" PRIu64 " seconds %.1f\n", s, p->entries, p->seconds);
        else if (p->state == 1)
            fprintf(f, "partial %d units %" PRIu64 " entries %" PRIu64 " seconds %.1f\n", s,
                    p->units, p->entries, p->seconds);
    }
    if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0)
        die("%s: cannot write: %s", tmp, strerror(errno));
    if (rename(tmp, PROGRESS) != 0) die("%s: cannot rename: %s", PROGRESS, strerror(errno));
    free(tmp);
}

static void read_progress(void) {
    if (!PROGRESS) return;
    FILE* f = fopen(PROGRESS, "r");
    if (!f) {
        if (errno == ENOENT) return;
        die("%s: cannot read: %s", PROGRESS, strerror(errno));
    }
    char line[512];
    if (!fgets(line, sizeof line, f)) die("%s: empty progress file", PROGRESS);
    line[strcspn(line, "\n")] = 0;
    if (strcmp(line, PROGRESS_KEY) != 0)
        die("%s: progress of another run (\"%s\"; this run is \"%s\")", PROGRESS, line,
            PROGRESS_KEY);
    int lineno = 1;
    while (fgets(line, sizeof line, f)) {
        ++lineno;
        int s;
        uint64_t units, entries;
        double seconds;
        char tail;
        if (sscanf(line, "done %d entries %" SCNu64 " seconds %lf %c", &s, &entries, &seconds,
                   &tail) == 3 &&
            s >= 0 && s <= MAX_SEEDS) {
            PROG[s] = (LayerProgress){2, 0, entries, seconds};
        } else if (sscanf(line, "partial %d units %" SCNu64 " entries %" SCNu64 " seconds %lf %c",
                          &s, &units, &entries, &seconds, &tail) == 4 &&
                   s >= 0 && s <= MAX_SEEDS) {
            PROG[s] = (LayerProgress){1, units, entries, seconds};
        } else {
            die("%s: line %d not understood", PROGRESS, lineno);
        }
    }
    fclose(f);
}

// ---------------------------------------------------------------------------------------
// A layer's check.

static uint64_t splitmix(uint64_t* x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int cmp_u64(const void* a, const void* b) {
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

// Prints the entry's moves and their worths (a disagreement's details).
static void explain(int s, uint64_t r, ZSTD_DCtx* dctx) {
    uint8_t c[MAX_N];
    unrank(r, s, c);
    fprintf(stderr, "verify_db:   moves:");
    int own = 0, opp = 0;
    for (int k = 0; k < M; ++k) {
        own += c[k];
        opp += c[M + k];
    }
    if (own == 0 || opp == 0) {
        fprintf(stderr, " none, the game is over (sweep %d)\n", own - opp);
        return;
    }
    for (int pit = 0; pit < M; ++pit) {
        if (c[pit] == 0) continue;
        Move mv;
        play(c, pit, &mv);
        if (mv.kind == 0) {
            fprintf(stderr, " A%d ends the game: %d+%d=%d;", pit + 1, mv.gain, mv.sweep,
                    mv.gain + mv.sweep);
        } else {
            char pos[128];
            format_position(mv.child, pos, sizeof pos);
            int v = value_at(mv.child_s, rank_of(mv.child, mv.child_s), dctx);
            fprintf(stderr, " A%d%s child %s (s%d) holds %d: %d;", pit + 1,
                    mv.kind == KIND_PLUS ? "+" : "", pos, mv.child_s, v,
                    mv.kind == KIND_PLUS ? mv.gain + v : mv.gain - v);
        }
    }
    fputc('\n', stderr);
}

static int check_layer(int s, uint64_t sample, uint64_t seed) {
    const uint64_t size = layer_size(s);
    uint64_t* list = NULL;
    uint64_t count = size;
    if (sample && sample < size) {
        if (sample > (1ull << 27)) die("--sample %" PRIu64 " too large (at most 2^27)", sample);
        list = xmalloc(sample * sizeof(uint64_t));
        uint64_t x = seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(s + 1));
        for (uint64_t i = 0; i < sample; ++i)
            list[i] = (uint64_t)(((unsigned __int128)splitmix(&x) * size) >> 64);
        qsort(list, sample, sizeof(uint64_t), cmp_u64);
        count = 0;
        for (uint64_t i = 0; i < sample; ++i)
            if (count == 0 || list[i] != list[count - 1]) list[count++] = list[i];
    }
    for (int t = 0; t <= s; ++t)
        if (!LAYERS[t]) LAYERS[t] = open_layer(t);
    uint64_t working = 0;  // layers 0..s decoded, one byte an entry
    for (int t = 0; t <= s; ++t) working += LAYERS[t]->entries;
    if (!list && working > CACHE_BYTES && layer_size(s) > (1u << 20))
        printf(
            "layer %d: warning: layers 0..%d decode to %.0f MiB, more than the cache (%.0f "
            "MiB): a full check decodes blocks again and again (--cache-mb, or --sample)\n",
            s, s, (double)working / (1 << 20), (double)CACHE_BYTES / (1 << 20));
    fflush(stdout);
    double t0 = now_seconds();
    const uint64_t decodes0 = (uint64_t)atomic_load(&decodes);
    check_file_checksum(LAYERS[s]);

    JOB.s = s;
    JOB.size = size;
    JOB.list = list;
    JOB.count = count;
    JOB.unit = list ? 1u << 19 : 1u << 17;
    JOB.units = (count + JOB.unit - 1) / JOB.unit;
    JOB.block_base = xcalloc((size_t)s + 1, sizeof(uint64_t));
    JOB.buckets = 0;
    for (int t = 0; t <= s; ++t) {
        JOB.block_base[t] = JOB.buckets;
        JOB.buckets += LAYERS[t]->blocks;
    }
    JOB.done = xcalloc(JOB.units ? JOB.units : 1, sizeof(atomic_uchar));
    uint64_t start = PROG[s].state == 1 ? PROG[s].units : 0;
    if (start > JOB.units)
        die("%s: layer %d resumes at unit %" PRIu64 " of %" PRIu64, PROGRESS, s, start, JOB.units);
    for (uint64_t u = 0; u < start; ++u) atomic_store(&JOB.done[u], 1);
    atomic_store(&JOB.next, start);
    atomic_store(&JOB.stop, 0);
    JOB.bad = 0;
    double earlier = PROG[s].state == 1 ? PROG[s].seconds : 0;
    if (start > 0)
        printf("layer %d: resuming at unit %" PRIu64 " of %" PRIu64 " (%.1f s before)\n", s, start,
               JOB.units, earlier);

    Worker* ws = xcalloc((size_t)THREADS, sizeof(Worker));
    pthread_t* th = xcalloc((size_t)THREADS, sizeof(pthread_t));
    for (int t = 0; t < THREADS; ++t) {
        Worker* w = &ws[t];
        w->dctx = ZSTD_createDCtx();
        if (!w->dctx) die("out of memory (zstd context)");
        size_t cap = (size_t)JOB.unit * (size_t)(M + 1);
        w->req = xmalloc(cap * sizeof(Request));
        w->sorted = xmalloc(cap * sizeof(Request));
        w->count = xmalloc((size_t)JOB.buckets * sizeof(uint64_t));
        w->stored = xmalloc((size_t)JOB.unit);
        w->best = xmalloc((size_t)JOB.unit * sizeof(int16_t));
        if (pthread_create(&th[t], NULL, worker_main, w) != 0) die("cannot start a thread");
    }
    // Watch: the first units all done, written to the progress file every 10 s.
    double last_write = now_seconds(), last_print = last_write;
    uint64_t low = start;
    for (;;) {
        struct timespec nap = {0, 10 * 1000 * 1000};
        nanosleep(&nap, NULL);
        while (low < JOB.units && atomic_load(&JOB.done[low])) ++low;
        if (low >= JOB.units || atomic_load(&JOB.stop)) break;
        double now = now_seconds();
        if (now - last_write >= 10) {
            PROG[s] = (LayerProgress){1, low, low * JOB.unit, earlier + now - t0};
            write_progress();
            last_write = now;
        }
        if (now - last_print >= 60) {
            printf("layer %d: %" PRIu64 " of %" PRIu64 " units, %.0f s\n", s, low, JOB.units,
                   earlier + now - t0);
            fflush(stdout);
            last_print = now;
        }
    }
    for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
    double seconds = earlier + now_seconds() - t0;
    int result = 0;
    if (JOB.bad) {
        uint8_t c[MAX_N];
        unrank(JOB.bad_rank, s, c);
        char pos[128];
        format_position(c, pos, sizeof pos);
        printf("layer %d: DISAGREEMENT after %.1f s\n", s, seconds);
        fflush(stdout);
        fprintf(stderr,
                "verify_db: disagreement: %s (layer %d, rank %" PRIu64
                ") holds %d, the rules give %d\n",
                pos, s, JOB.bad_rank, JOB.bad_stored, JOB.bad_best);
        explain(s, JOB.bad_rank, ws[0].dctx);
        result = 1;
    } else {
        PROG[s] = (LayerProgress){2, 0, count, seconds};
        write_progress();
        printf("layer %d: %" PRIu64 " entries checked (%s of %" PRIu64 "), %.1f s, %" PRIu64
               " blocks decoded, no disagreement\n",
               s, count, list ? "sample" : "all", size, seconds,
               (uint64_t)atomic_load(&decodes) - decodes0);
        fflush(stdout);
    }
    for (int t = 0; t < THREADS; ++t) {
        ZSTD_freeDCtx(ws[t].dctx);
        free(ws[t].req);
        free(ws[t].sorted);
        free(ws[t].count);
        free(ws[t].stored);
        free(ws[t].best);
    }
    free(ws);
    free(th);
    free(JOB.block_base);
    free((void*)JOB.done);
    free(list);
    return result;
}

// ---------------------------------------------------------------------------------------

static _Noreturn void usage(void) {
    fprintf(stderr,
            "usage: verify_db --db DIR --pits M [--rule standard|empty-capture] --layers A..B\n"
            "                 [--sample N --seed S] [--threads T] [--cache-mb N]\n"
            "                 [--progress FILE]\n");
    exit(2);
}

static uint64_t parse_u64(const char* opt, const char* v, uint64_t lo, uint64_t hi) {
    char* end;
    errno = 0;
    if (!*v || *v == '-') die("%s: '%s' is not a number", opt, v);
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        die("%s: '%s' is not a number in %" PRIu64 "..%" PRIu64, opt, v, lo, hi);
    return x;
}

int main(int argc, char** argv) {
    const char* layers = NULL;
    uint64_t sample = 0, seed = 1;
    int have_seed = 0;
    pthread_mutex_init(&JOB.bad_mu, NULL);
    M = 0;
    RULE = 0;
    RULE_NAME = "standard";
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) usage();
        if (i + 1 >= argc) die("%s: needs a value, or unknown option (--help)", a);
        const char* v = argv[++i];
        if (strcmp(a, "--db") == 0) {
            DIR = v;
        } else if (strcmp(a, "--pits") == 0) {
            M = (int)parse_u64(a, v, 1, MAX_PITS);
        } else if (strcmp(a, "--rule") == 0) {
            if (strcmp(v, "standard") == 0) {
                RULE = 0;
            } else if (strcmp(v, "empty-capture") == 0) {
                RULE = 1;
            } else {
                die("--rule: '%s' is not standard or empty-capture", v);
            }
            RULE_NAME = RULE ? "empty-capture" : "standard";
        } else if (strcmp(a, "--layers") == 0) {
            layers = v;
        } else if (strcmp(a, "--sample") == 0) {
            sample = parse_u64(a, v, 1, 1ull << 27);
        } else if (strcmp(a, "--seed") == 0) {
            seed = parse_u64(a, v, 0, UINT64_MAX);
            have_seed = 1;
        } else if (strcmp(a, "--threads") == 0) {
            THREADS = (int)parse_u64(a, v, 1, 64);
        } else if (strcmp(a, "--cache-mb") == 0) {
            CACHE_BYTES = parse_u64(a, v, 0, 1u << 20) << 20;  // 0: only blocks in use
        } else if (strcmp(a, "--progress") == 0) {
            PROGRESS = v;
        } else if (strcmp(a, "--test-rank-offset") == 0) {
            RANK_OFFSET = parse_u64(a, v, 0, UINT64_MAX);  // tests only: a wrong index
        } else {
            die("unknown option '%s' (--help)", a);
        }
    }
    if (!DIR) die("--db DIR is required");
    if (!M) die("--pits M is required");
    if (!layers) die("--layers A..B is required");
    if (have_seed && !sample) die("--seed without --sample");
    N = 2 * M;
    int lo, hi, used = 0;
    if (sscanf(layers, "%d..%d%n", &lo, &hi, &used) == 2 && layers[used] == 0) {
    } else if (sscanf(layers, "%d%n", &lo, &used) == 1 && layers[used] == 0) {
        hi = lo;
    } else {
        die("--layers: '%s' is not A..B or A", layers);
    }
    if (lo < 0 || hi < lo || hi > MAX_SEEDS - 0) die("--layers: '%s' out of range", layers);
    init_binomials();
    if (layer_size(hi) == UINT64_MAX) die("--layers: layer %d too large", hi);
    check_index();
    if (RANK_OFFSET) printf("TEST MODE: every rank shifted by %" PRIu64 "\n", RANK_OFFSET);
    snprintf(PROGRESS_KEY, sizeof PROGRESS_KEY,
             "verify_db-progress 1 pits %d rule %s sample %" PRIu64 " seed %" PRIu64
             " rank-offset %" PRIu64,
             M, RULE_NAME, sample, sample ? seed : 0, RANK_OFFSET);
    read_progress();
    double t0 = now_seconds();
    uint64_t total = 0;
    for (int s = lo; s <= hi; ++s) {
        if (PROG[s].state == 2) {
            printf("layer %d: %" PRIu64 " entries checked earlier (%.1f s; progress file)\n", s,
                   PROG[s].entries, PROG[s].seconds);
            total += PROG[s].entries;
            continue;
        }
        if (check_layer(s, sample, seed) != 0) return 1;
        total += PROG[s].entries;
    }
    printf("layers %d..%d of %s, m %d, %s: %" PRIu64 " entries checked, %.1f s, no disagreement\n",
           lo, hi, DIR, M, RULE_NAME, total, now_seconds() - t0);
    return 0;
}
