// plain_solver: a plain alpha-beta Kalah(m,n) solver that re-proves a certificate's leaves.
//
// Written from docs/rules.md, docs/certificate.md and the layer file format of
// docs/formats.md (db/format.h, db/index.h): it shares no code with the project's solver
// (nothing from core/, solver/, db/ or campaign/ is included or linked; only libzstd).
// It is meant to be read and believed, not to be fast (checker/README.md).
//
//   plain_solver --cert FILE [--db DIR] [--db-max K] [--seconds S] [--cache-mb N]
//                [--table-mb N] [--no-table] [--leaves ID,ID,... | --sample] [--part I/N]
//   plain_solver --position 'a1,..,am/b1,..,bm' --rule R [--db DIR] [--db-max K]
//                [--seconds S] [--cache-mb N] [--table-mb N] [--no-table]
//
// Positions are pits only, from the mover's view (docs/certificate.md): b[0..m-1] the
// mover's pits 1..m, b[m..2m-1] the opponent's pits 1..m (their numbering). The mover's
// pit i (0-based) faces the opponent's pit m-1-i, i.e. b[i] faces b[2m-1-i].
//
// The value v(p) is the mover's final store minus the opponent's, counting only the seeds
// now in the pits, under perfect play. search() returns a fail-soft bound:
//   r <= alpha  =>  v <= r;   r >= beta  =>  v >= r;   alpha < r < beta  =>  v == r.
//
// --sample re-proves a random sample of the certificate's leaves that nobody chooses: its
// seed is the certificate's own crc32 (its last line), its size a tenth of the leaves
// rounded up and at least 10 (all when fewer); the IDs are printed first. --part I/N keeps
// the I-th of every N leaves tried (1-based), to split a run over processes.
//
// Exit status: 0 no leaf refuted (some may have timed out; the summary says how many),
// 1 a leaf refuted (named on stderr), 2 bad input, a damaged database file or an internal
// inconsistency (one line on stderr), 3 --position ran out of time.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

enum { MAX_PITS = 6, MAX_SEEDS = 127, MAX_SLOTS = 2 * MAX_PITS };
enum Rule { STANDARD = 0, EMPTY_CAPTURE = 1 };
enum Kind { PASS, EXTRA, END };

static _Noreturn void die(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("plain_solver: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void* xcalloc(size_t n, size_t size) {
    void* p = calloc(n, size);
    if (!p) die("out of memory (%zu bytes)", n * size);
    return p;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// CPU seconds of this process: on a shared machine the wall-clock budget buys less.
static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// ---------------------------------------------------------------------------------------
// The rules (docs/rules.md, "A move" and "End of the game").

// Plays the mover's pit `pit` (0-based, non-empty) of b in place. Returns the seeds it puts
// in the mover's store (sown plus captured) and sets *kind: END when a row of b is empty
// afterwards (the caller sweeps: each row goes to its owner), EXTRA when the last seed fell
// in the mover's store, else PASS (the turn passes, a capture included).
static int play(uint8_t* b, int m, int rule, int pit, int* kind) {
    // The mover's circuit: slots 0..m-1 own pits, slot m own store, slots m+1..2m the
    // opponent's pits 0..m-1 (b[m..2m-1]); the opponent's store is not on it.
    const int circuit = 2 * m + 1;
    int seeds = b[pit];
    int slot = pit;
    int gain = 0;
    b[pit] = 0;
    while (seeds > 0) {
        slot = (slot + 1) % circuit;
        if (slot == m)
            gain++;
        else
            b[slot < m ? slot : slot - 1]++;
        seeds--;
    }
    *kind = PASS;
    if (slot == m) {
        *kind = EXTRA;
    } else if (slot < m && b[slot] == 1) {
        // The last seed fell in an own pit that was empty before it (b[slot] is 1 now).
        const int opposite = 2 * m - 1 - slot;
        if (b[opposite] > 0 || rule == EMPTY_CAPTURE) {
            gain += b[opposite] + 1;
            b[opposite] = 0;
            b[slot] = 0;
        }
    }
    int own = 0, their = 0;
    for (int i = 0; i < m; i++) own += b[i];
    for (int i = m; i < 2 * m; i++) their += b[i];
    if (own == 0 || their == 0) *kind = END;  // even after a last seed in the store
    return gain;
}

static int row_sum(const uint8_t* b, int from, int m) {
    int s = 0;
    for (int i = from; i < from + m; i++) s += b[i];
    return s;
}

// ---------------------------------------------------------------------------------------
// kh64, the layer files' checksum (db/format.h), and CRC-32 (the certificate's last line).

static const uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full,
                      P3 = 0x165667B19E3779F9ull, P4 = 0x85EBCA77C2B2AE63ull,
                      P5 = 0x27D4EB2F165667C5ull;

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t le64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint32_t le32(const uint8_t* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t kh64(const uint8_t* p, size_t len, uint64_t seed) {
    uint64_t h = seed ^ ((uint64_t)len * P1);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        h ^= rotl64(le64(p + i) * P2, 31) * P1;
        h = rotl64(h, 27) * P1 + P4;
    }
    for (; i < len; i++) {
        h ^= p[i] * P5;
        h = rotl64(h, 11) * P1;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

static uint32_t crc32_ieee(const char* p, size_t len) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        c ^= (uint8_t)p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

// ---------------------------------------------------------------------------------------
// The endgame database: layer files kalah-m<m>-<rule>-s<s>.kdb (db/format.h), values in
// the rank order of db/index.h, blocks decoded on demand into a bounded LRU cache.

static uint64_t binom[MAX_SEEDS + MAX_SLOTS + 1][MAX_SLOTS + 1];

static void init_binomials(void) {
    for (int n = 0; n <= MAX_SEEDS + MAX_SLOTS; n++)
        for (int k = 0; k <= MAX_SLOTS; k++)
            binom[n][k] = k == 0 ? 1 : n == 0 ? 0 : binom[n - 1][k - 1] + binom[n - 1][k];
}

// Rank of b (n = 2m pits) among the configurations with its seed count (db/index.h): with
// d[i] = b[n-1-i], bar j sits at pos_j = d[0] + .. + d[j] + j, rank = sum_j C(pos_j, j+1).
static uint64_t rank_of(const uint8_t* b, int n) {
    uint64_t r = 0;
    int prefix = 0;
    for (int j = 0; j <= n - 2; j++) {
        prefix += b[n - 1 - j];
        r += binom[prefix + j][j + 1];
    }
    return r;
}

typedef struct CacheNode {
    struct CacheNode *prev, *next;  // LRU list, most recent first
    int layer;
    uint32_t block;
    size_t bytes;
    int8_t* values;
} CacheNode;

typedef struct {
    int fd;
    char path[4096];
    uint64_t entries;
    uint32_t block_size, block_count;
    uint8_t* index;      // 24 bytes a block: offset, compressed size, kh64 of the bytes
    CacheNode** cached;  // block -> its node in the cache, or NULL
} Layer;

typedef struct {
    int m, rule, max_seeds;  // layers 1..max_seeds are open; 0 = no database
    Layer layers[MAX_SEEDS + 1];
    size_t cache_limit, cache_bytes;
    CacheNode *head, *tail;
    uint64_t decodes;
    uint8_t* frame;  // a compressed block's bytes
    size_t frame_capacity;
} Database;

static int pread_all(int fd, void* buf, size_t len, uint64_t offset) {
    uint8_t* p = buf;
    while (len > 0) {
        ssize_t got = pread(fd, p, len, (off_t)offset);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;
        p += got;
        len -= (size_t)got;
        offset += (uint64_t)got;
    }
    return 1;
}

static const char* rule_name(int rule) { return rule == STANDARD ? "standard" : "empty-capture"; }

// Opens and checks layer s: header fields, block index, header checksum, file size.
static void open_layer(Database* db, const char* dir, int s) {
    Layer* L = &db->layers[s];
    snprintf(L->path, sizeof L->path, "%s/kalah-m%d-%s-s%d.kdb", dir, db->m, rule_name(db->rule),
             s);
    L->fd = open(L->path, O_RDONLY);
    if (L->fd < 0) die("%s: cannot open: %s", L->path, strerror(errno));
    uint8_t h[64];
    if (!pread_all(L->fd, h, 64, 0)) die("%s: cut short in its header", L->path);
    if (memcmp(h, "KALAHKDB", 8) != 0) die("%s: not a layer file (bad magic)", L->path);
    if (le32(h + 8) != 1) die("%s: unknown format version %u", L->path, le32(h + 8));
    if (h[12] != db->m || h[13] != db->rule || h[14] != s)
        die("%s: header names m=%d rule=%d s=%d, expected m=%d rule=%d s=%d", L->path, h[12], h[13],
            h[14], db->m, db->rule, s);
    if (h[15] != 0) die("%s: unknown entry encoding %d", L->path, h[15]);
    L->entries = le64(h + 16);
    L->block_size = le32(h + 24);
    L->block_count = le32(h + 28);
    if (L->entries != binom[s + 2 * db->m - 1][2 * db->m - 1])
        die("%s: wrong entry count", L->path);
    if (L->block_size == 0 || L->block_count != (L->entries + L->block_size - 1) / L->block_size)
        die("%s: bad block size or block count", L->path);
    if (le64(h + 56) != 0) die("%s: reserved header field not zero", L->path);
    const size_t index_bytes = (size_t)24 * L->block_count;
    L->index = xcalloc(index_bytes + 1, 1);
    if (!pread_all(L->fd, L->index, index_bytes, 64)) die("%s: cut short in its index", L->path);
    if (kh64(L->index, index_bytes, kh64(h, 40, 0)) != le64(h + 40))
        die("%s: header checksum mismatch (damaged)", L->path);
    // Blocks lie back to back after the index, up to the end of the file.
    uint64_t offset = 64 + index_bytes;
    for (uint32_t b = 0; b < L->block_count; b++) {
        const uint8_t* rec = L->index + (size_t)24 * b;
        if (le64(rec) != offset || le64(rec + 8) == 0)
            die("%s: block %u misplaced in the index", L->path, b);
        offset += le64(rec + 8);
    }
    const off_t size = lseek(L->fd, 0, SEEK_END);
    if (size < 0 || (uint64_t)size != offset)
        die("%s: file size %lld, its index says %llu", L->path, (long long)size,
            (unsigned long long)offset);
    L->cached = xcalloc(L->block_count, sizeof *L->cached);
}

// Opens layers 1..K of dir for (m, rule), K the largest with every layer 1..K present
// (at most cap when cap >= 0). No file at all: no database (K = 0).
static void open_database(Database* db, const char* dir, int m, int rule, int cap,
                          size_t cache_limit) {
    memset(db, 0, sizeof *db);
    db->m = m;
    db->rule = rule;
    db->cache_limit = cache_limit;
    if (!dir) return;
    int k = 0;
    while (k < MAX_SEEDS && (cap < 0 || k < cap)) {
        char path[4096];
        snprintf(path, sizeof path, "%s/kalah-m%d-%s-s%d.kdb", dir, m, rule_name(rule), k + 1);
        if (access(path, F_OK) != 0) break;
        k++;
    }
    for (int s = 1; s <= k; s++) open_layer(db, dir, s);
    db->max_seeds = k;
}

static void cache_unlink(Database* db, CacheNode* n) {
    if (n->prev)
        n->prev->next = n->next;
    else
        db->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        db->tail = n->prev;
    n->prev = n->next = NULL;
}

static void cache_push_front(Database* db, CacheNode* n) {
    n->next = db->head;
    n->prev = NULL;
    if (db->head) db->head->prev = n;
    db->head = n;
    if (!db->tail) db->tail = n;
}

// Decodes block `block` of layer s, checking its checksum, its size and that every value
// v has |v| <= s and the parity of s; any failure ends the program (exit 2).
static CacheNode* decode_block(Database* db, int s, uint32_t block) {
    Layer* L = &db->layers[s];
    const uint8_t* rec = L->index + (size_t)24 * block;
    const uint64_t offset = le64(rec), size = le64(rec + 8), sum = le64(rec + 16);
    const uint64_t first = (uint64_t)block * L->block_size;
    const size_t count =
        (size_t)(L->entries - first < L->block_size ? L->entries - first : L->block_size);
    if (size > ZSTD_compressBound(count)) die("%s: block %u too large (damaged)", L->path, block);
    if (db->frame_capacity < size) {
        free(db->frame);
        db->frame = xcalloc(size, 1);
        db->frame_capacity = size;
    }
    if (!pread_all(L->fd, db->frame, size, offset)) die("%s: cannot read block %u", L->path, block);
    if (kh64(db->frame, size, 0) != sum)
        die("%s: block %u checksum mismatch (damaged)", L->path, block);
    // Make room first: the least recently used blocks go until the new one fits.
    while (db->tail && db->cache_bytes + count > db->cache_limit) {
        CacheNode* old = db->tail;
        cache_unlink(db, old);
        db->layers[old->layer].cached[old->block] = NULL;
        db->cache_bytes -= old->bytes;
        free(old->values);
        free(old);
    }
    CacheNode* n = xcalloc(1, sizeof *n);
    n->values = xcalloc(count, 1);
    const size_t got = ZSTD_decompress(n->values, count, db->frame, size);
    if (ZSTD_isError(got) || got != count)
        die("%s: block %u does not decode to %zu entries (damaged)", L->path, block, count);
    for (size_t i = 0; i < count; i++) {
        const int v = n->values[i];
        if (v < -s || v > s || ((v + s) & 1))
            die("%s: block %u entry %zu holds %d, impossible for %d seeds", L->path, block, i, v,
                s);
    }
    n->layer = s;
    n->block = block;
    n->bytes = count;
    db->cache_bytes += count;
    L->cached[block] = n;
    cache_push_front(db, n);
    db->decodes++;
    return n;
}

// The value of b (s seeds in its pits, 1 <= s <= max_seeds, both rows non-empty).
static int probe(Database* db, const uint8_t* b, int s) {
    const Layer* L = &db->layers[s];
    const uint64_t r = rank_of(b, 2 * db->m);
    if (r >= L->entries) die("internal error: rank %llu out of layer %d", (unsigned long long)r, s);
    const uint32_t block = (uint32_t)(r / L->block_size);
    CacheNode* n = L->cached[block];
    if (n) {
        cache_unlink(db, n);
        cache_push_front(db, n);
    } else {
        n = decode_block(db, s, block);
    }
    return n->values[r % L->block_size];
}

// ---------------------------------------------------------------------------------------
// The optional table: proven bounds lo <= v <= hi of complete positions (all 2m pits
// compared), so an entry can only ever say something true about exactly that position.
// Replacing an entry forgets a proven bound, which costs time and changes no result.

typedef struct {
    uint64_t key_lo;  // pits 0..7, a byte each (every count is < 128), unused pits 0
    uint32_t key_hi;  // pits 8..11
    uint8_t move;     // 0: an empty entry; else 1 + the pit of the best move found (order only)
    int8_t lo, hi;    // v >= lo and v <= hi; -128 / 127 when nothing is known that way
    uint8_t work;     // log2 of the nodes that proved the bounds: the replacement priority
} Entry;

enum { WAYS = 4 };

typedef struct {
    Entry* entries;
    size_t buckets;  // a power of two; bucket i is entries[WAYS*i .. WAYS*i + WAYS-1]
} Table;

static void pack_key(const uint8_t* b, int n, uint64_t* lo, uint32_t* hi) {
    uint8_t k[12] = {0};
    memcpy(k, b, (size_t)n);
    *lo = le64(k);
    *hi = le32(k + 8);
}

static size_t bucket_of(const Table* t, uint64_t lo, uint32_t hi) {
    uint64_t x = lo ^ ((uint64_t)hi << 32 | hi) * P3;
    x ^= x >> 31;
    x *= P2;
    x ^= x >> 29;
    return (size_t)(x & (t->buckets - 1));
}

static Entry* table_find(Table* t, uint64_t lo, uint32_t hi) {
    Entry* e = t->entries + WAYS * bucket_of(t, lo, hi);
    for (int w = 0; w < WAYS; w++)
        if (e[w].move && e[w].key_lo == lo && e[w].key_hi == hi) return &e[w];
    return NULL;
}

// Records v >= lo and v <= hi for the position (lo = -128 or hi = 127: no such bound), and
// the pit of the best move found, a hint for the order of moves only.
static void table_store(Table* t, uint64_t key_lo, uint32_t key_hi, int lo, int hi, int work,
                        int pit) {
    Entry* e = table_find(t, key_lo, key_hi);
    if (e) {
        e->move = (uint8_t)(pit + 1);
        if (lo > e->lo) e->lo = (int8_t)lo;
        if (hi < e->hi) e->hi = (int8_t)hi;
        if (e->lo > e->hi) die("internal error: table bounds cross (%d > %d)", e->lo, e->hi);
        if (work > e->work) e->work = (uint8_t)work;
        return;
    }
    Entry* bucket = t->entries + WAYS * bucket_of(t, key_lo, key_hi);
    e = &bucket[0];
    for (int w = 0; w < WAYS; w++) {
        if (!bucket[w].move) {
            e = &bucket[w];
            break;
        }
        if (bucket[w].work < e->work) e = &bucket[w];
    }
    e->move = (uint8_t)(pit + 1);
    e->key_lo = key_lo;
    e->key_hi = key_hi;
    e->lo = (int8_t)lo;
    e->hi = (int8_t)hi;
    e->work = (uint8_t)work;
}

// ---------------------------------------------------------------------------------------
// The search.

typedef struct {
    int m, rule;
    Database* db;
    Table* table;  // NULL: --no-table
    uint64_t nodes;
    double deadline;  // 0: none
    int aborted;
} Search;

// A legal move of the node: q the position after it as the next mover sees it (the same
// mover after an extra move, else the rows swapped), and what is proved about its worth.
typedef struct {
    uint8_t q[MAX_SLOTS];
    int pit, gain, kind, order;
    int lo, hi;  // lo <= worth <= hi, proved (exact when equal)
} Child;

static int log2_of(uint64_t x) {
    int r = 0;
    while (x > 1) {
        x >>= 1;
        r++;
    }
    return r;
}

// Fail-soft alpha-beta on b (mover's view, both rows non-empty); the contract is at the top
// of the file. After S->aborted is set the result means nothing and nothing is stored.
static int search(Search* S, const uint8_t* b, int alpha, int beta) {
    const int m = S->m, n = 2 * m;
    // Step 1. Count the node; check the clock now and then (a node that decodes a block of
    // the database can take milliseconds).
    S->nodes++;
    if (S->deadline > 0 && (S->nodes & 63) == 0 && now_seconds() > S->deadline) S->aborted = 1;
    if (S->aborted) return 0;

    // Step 2. Bounds every position has: -s <= v <= s with s seeds in the pits.
    const int s = row_sum(b, 0, n);
    if (s <= alpha) return s;
    if (-s >= beta) return -s;

    // Step 3. The database answers exactly.
    if (s <= S->db->max_seeds) return probe(S->db, b, s);

    // Step 4. The table: a proven bound that already decides the window.
    uint64_t key_lo = 0;
    uint32_t key_hi = 0;
    int hint = -1;  // the best move found here before, searched first
    if (S->table) {
        pack_key(b, n, &key_lo, &key_hi);
        const Entry* e = table_find(S->table, key_lo, key_hi);
        if (e) {
            if (e->lo >= beta) return e->lo;
            if (e->hi <= alpha) return e->hi;
            if (e->lo == e->hi) return e->lo;
            hint = e->move - 1;
        }
    }

    // Step 5. Every legal move, played once, with the bounds on its worth already proved
    // (docs/certificate.md, "worth"): g + (own row - their row) when it ends the game;
    // g + v(q) after an extra move (the same side moves again: added, not negated); else
    // g - v(q), q seen by the opponent. v(q) is exact from the database, bounded by the
    // table's entry for q, and in [-s', s'] for s' seeds in any case.
    Child kids[MAX_PITS];
    int count = 0;
    for (int pit = 0; pit < m; pit++) {
        if (b[pit] == 0) continue;
        Child* c = &kids[count++];
        uint8_t after[MAX_SLOTS];
        memcpy(after, b, (size_t)n);
        c->pit = pit;
        c->gain = play(after, m, S->rule, pit, &c->kind);
        const int g = c->gain;
        if (c->kind == END) {
            c->lo = c->hi = g + row_sum(after, 0, m) - row_sum(after, m, m);
        } else {
            if (c->kind == EXTRA) {
                memcpy(c->q, after, (size_t)n);
            } else {
                memcpy(c->q, after + m, (size_t)m);
                memcpy(c->q + m, after, (size_t)m);
            }
            const int sq = row_sum(c->q, 0, n);
            int vlo = -sq, vhi = sq;
            if (sq <= S->db->max_seeds) {
                S->nodes++;
                vlo = vhi = probe(S->db, c->q, sq);
            } else if (S->table) {
                uint64_t qlo;
                uint32_t qhi;
                pack_key(c->q, n, &qlo, &qhi);
                const Entry* e = table_find(S->table, qlo, qhi);
                if (e && e->lo > vlo) vlo = e->lo;
                if (e && e->hi < vhi) vhi = e->hi;
            }
            c->lo = c->kind == EXTRA ? g + vlo : g - vhi;
            c->hi = c->kind == EXTRA ? g + vhi : g - vlo;
        }
        // A move proved good enough first, then the hint, then moves of known worth, then
        // extra moves, then the larger gain.
        c->order = (c->lo >= beta ? 1 << 22 : 0) + (pit == hint ? 1 << 21 : 0) +
                   (c->lo == c->hi ? (1 << 20) + 8 * (c->lo + 128) : 0) +
                   (c->kind == EXTRA ? 1 << 19 : 0) + 8 * g + pit;
    }
    for (int i = 1; i < count; i++)  // insertion sort, highest order first
        for (int j = i; j > 0 && kids[j].order > kids[j - 1].order; j--) {
            Child t = kids[j];
            kids[j] = kids[j - 1];
            kids[j - 1] = t;
        }

    // Step 6. Negamax over the moves. A move whose proved bounds already decide it against
    // the window is not searched: its upper bound when that is <= alpha (as a search failing
    // low would say), its lower bound when that is >= beta, its worth when exact.
    const uint64_t nodes_before = S->nodes;
    const int alpha0 = alpha;
    int best = -MAX_SEEDS - 1, best_pit = kids[0].pit;
    for (int i = 0; i < count && alpha < beta; i++) {
        const Child* c = &kids[i];
        const int g = c->gain;
        int worth;
        if (c->hi <= alpha) {
            worth = c->hi;
        } else if (c->lo >= beta || c->lo == c->hi) {
            worth = c->lo;
        } else if (c->kind == EXTRA) {
            worth = g + search(S, c->q, alpha - g, beta - g);
        } else {
            worth = g - search(S, c->q, g - beta, g - alpha);
        }
        if (S->aborted) return 0;
        if (worth > best) {
            best = worth;
            best_pit = c->pit;
        }
        if (best > alpha) alpha = best;
    }

    // Step 7. Record what was proved: best >= beta is a lower bound, best <= alpha0 an upper
    // one, anything between the exact value.
    if (S->table) {
        const int lo = best > alpha0 ? best : -128;
        const int hi = best < beta ? best : 127;
        table_store(S->table, key_lo, key_hi, lo, hi, log2_of(S->nodes - nodes_before + 1),
                    best_pit);
    }
    return best;
}

// ---------------------------------------------------------------------------------------
// Input: positions, certificates, the command line.

// Parses "a1,..,am/b1,..,bm" into b; returns m, or 0 when malformed.
static int parse_position(const char* text, uint8_t* b) {
    int count = 0, slash = -1;
    const char* p = text;
    for (;;) {
        if (*p < '0' || *p > '9') return 0;
        long v = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p - '0');
            if (v > MAX_SEEDS) return 0;
            p++;
        }
        if (count >= MAX_SLOTS) return 0;
        b[count++] = (uint8_t)v;
        if (*p == ',') {
            p++;
        } else if (*p == '/' && slash < 0) {
            slash = count;
            p++;
        } else if (*p == '\0') {
            break;
        } else {
            return 0;
        }
    }
    if (slash < 1 || slash > MAX_PITS || count != 2 * slash) return 0;
    int total = 0;
    for (int i = 0; i < count; i++) total += b[i];
    if (total > MAX_SEEDS) return 0;
    return slash;
}

static int parse_int(const char* text, long lo, long hi, long* out) {
    char* end;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

typedef struct {
    long id;
    int ge;  // 1: claim v >= bound; 0: v <= bound
    int bound;
    uint8_t b[MAX_SLOTS];
    char position[64], claim[16];
} Leaf;

// Reads the whole certificate, checks its magic, crc32 and node lines, and returns its
// leaves (justification job or db). Sets *m, *rule and *crc (the crc32 line's value).
static Leaf* read_certificate(const char* path, int* m, int* rule, int* leaf_count,
                              uint32_t* crc_out) {
    FILE* f = fopen(path, "rb");
    if (!f) die("%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char* text = xcalloc(cap + 1, 1);
    size_t got;
    while ((got = fread(text + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char* bigger = realloc(text, 2 * cap + 1);
            if (!bigger) die("out of memory reading %s", path);
            text = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    text[len] = '\0';
    if (strlen(text) != len) die("%s: not a text file (NUL byte)", path);
    if (len == 0 || text[len - 1] != '\n') die("%s: empty, or its last line is cut", path);

    // The last line: crc32 of every byte before it.
    size_t last = len - 1;
    while (last > 0 && text[last - 1] != '\n') last--;
    unsigned crc;
    char extra;
    if (sscanf(text + last, "crc32 %8x%c", &crc, &extra) != 2 || extra != '\n' || len - last != 15)
        die("%s: the last line is not 'crc32 XXXXXXXX'", path);
    if (crc32_ieee(text, last) != crc) die("%s: crc32 mismatch (damaged)", path);
    *crc_out = (uint32_t)crc;

    Leaf* leaves = NULL;
    int leaf_cap = 0, count = 0, line_no = 0;
    long nodes = -1, leaves_declared = -1, next_id = 0, M = 0, N = 0;
    *rule = -1;
    char* save = NULL;
    text[last] = '\0';
    for (char* line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        line_no++;
        char w[6][256];
        int fields = 0;
        {
            const char* p = line;
            while (*p && fields < 6) {
                size_t k = 0;
                while (*p && *p != ' ' && k < 255) w[fields][k++] = *p++;
                w[fields][k] = '\0';
                fields++;
                if (*p == ' ') p++;
            }
        }
        if (line_no == 1) {
            if (strcmp(line, "kalah-certificate 1") != 0)
                die("%s: line 1: not 'kalah-certificate 1'", path);
        } else if (fields == 3 && strcmp(w[0], "board") == 0) {
            if (!parse_int(w[1], 1, MAX_PITS, &M) || !parse_int(w[2], 1, MAX_SEEDS, &N) ||
                2 * M * N > MAX_SEEDS)
                die("%s: line %d: bad board", path, line_no);
        } else if (fields == 2 && strcmp(w[0], "rule") == 0) {
            if (strcmp(w[1], "standard") == 0)
                *rule = STANDARD;
            else if (strcmp(w[1], "empty-capture") == 0)
                *rule = EMPTY_CAPTURE;
            else
                die("%s: line %d: unknown rule '%s'", path, line_no, w[1]);
        } else if (fields == 2 && strcmp(w[0], "nodes") == 0) {
            if (!parse_int(w[1], 0, 100000000, &nodes))
                die("%s: line %d: bad nodes", path, line_no);
        } else if (fields == 2 && strcmp(w[0], "leaves") == 0) {
            if (!parse_int(w[1], 0, 100000000, &leaves_declared))
                die("%s: line %d: bad leaves", path, line_no);
        } else if (line_no == 4 && fields >= 2 && strcmp(w[0], "line") == 0) {
            // The moves to the root: the root claims rest on the node lines and the leaves
            // carry their positions, so only their form is checked here.
            for (const char* p = line + 5; *p; p++)
                if (!(*p == ' ' || (*p >= '1' && *p <= '6') || *p == 'A' || *p == 'B'))
                    die("%s: line %d: bad line '%s'", path, line_no, line + 5);
        } else if (fields == 3 && strcmp(w[0], "root") == 0) {
            // The roots rest on the node lines; only the leaves are searched here.
        } else if (fields >= 5 && strcmp(w[0], "node") == 0) {
            long id, bound = 0;
            if (!parse_int(w[1], 0, 100000000, &id) || id != next_id)
                die("%s: line %d: node IDs out of order", path, line_no);
            next_id++;
            const int is_leaf = strcmp(w[4], "job") == 0 || strcmp(w[4], "db") == 0;
            if (!is_leaf) continue;
            if (M == 0 || *rule < 0)
                die("%s: line %d: a node before board and rule", path, line_no);
            if (count == leaf_cap) {
                leaf_cap = leaf_cap ? 2 * leaf_cap : 64;
                leaves = realloc(leaves, (size_t)leaf_cap * sizeof *leaves);
                if (!leaves) die("out of memory");
            }
            Leaf* L = &leaves[count];
            memset(L, 0, sizeof *L);
            L->id = id;
            if ((strncmp(w[2], ">=", 2) != 0 && strncmp(w[2], "<=", 2) != 0) ||
                !parse_int(w[2] + 2, -MAX_SEEDS - 1, MAX_SEEDS + 1, &bound))
                die("%s: line %d: bad claim '%s'", path, line_no, w[2]);
            L->ge = w[2][0] == '>';
            L->bound = (int)bound;
            if (parse_position(w[3], L->b) != M || row_sum(L->b, 0, (int)M) == 0 ||
                row_sum(L->b, (int)M, (int)M) == 0)
                die("%s: line %d: bad position '%s'", path, line_no, w[3]);
            snprintf(L->position, sizeof L->position, "%.63s", w[3]);
            snprintf(L->claim, sizeof L->claim, "%.15s", w[2]);
            count++;
        } else {
            die("%s: line %d: unexpected line", path, line_no);
        }
    }
    if (M == 0 || *rule < 0) die("%s: no board or rule line", path);
    if (nodes != next_id) die("%s: 'nodes %ld' but %ld node lines", path, nodes, next_id);
    if (leaves_declared != count)
        die("%s: 'leaves %ld' but %d leaf lines", path, leaves_declared, count);
    free(text);
    *m = (int)M;
    *leaf_count = count;
    return leaves;
}

// splitmix64: the sample's random numbers (a fixed, well-known generator, so a sample is
// the same on every machine).
static uint64_t splitmix64(uint64_t* state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Marks chosen[i] for the sample of --sample: max(10, ceil(count / 10)) of count leaves
// (all when count <= 10), by a partial Fisher-Yates shuffle seeded with seed. Returns
// how many.
static int choose_sample(int count, uint32_t seed, unsigned char* chosen) {
    int k = count <= 10 ? count : (count + 9) / 10;
    if (k < 10 && count > 10) k = 10;
    int* order = xcalloc((size_t)count + 1, sizeof *order);
    for (int i = 0; i < count; i++) order[i] = i;
    uint64_t state = seed;
    for (int i = 0; i < k; i++) {
        const int j = i + (int)(splitmix64(&state) % (uint64_t)(count - i));
        const int t = order[i];
        order[i] = order[j];
        order[j] = t;
        chosen[order[i]] = 1;
    }
    free(order);
    return k;
}

static _Noreturn void usage(void) {
    fputs(
        "usage: plain_solver --cert FILE [--db DIR] [--db-max K] [--seconds S] [--cache-mb N]\n"
        "                    [--table-mb N] [--no-table] [--leaves ID,ID,... | --sample]\n"
        "                    [--part I/N]\n"
        "       plain_solver --position 'a1,..,am/b1,..,bm' --rule R [--db DIR] [--db-max K]\n"
        "                    [--seconds S] [--cache-mb N] [--table-mb N] [--no-table]\n",
        stderr);
    exit(2);
}

// Frees what main allocated (an error exit leaves it to the system).
static void release(Database* db, Table* table, Leaf* leaves) {
    while (db->head) {
        CacheNode* n = db->head;
        cache_unlink(db, n);
        free(n->values);
        free(n);
    }
    for (int s = 1; s <= db->max_seeds; s++) {
        close(db->layers[s].fd);
        free(db->layers[s].index);
        free(db->layers[s].cached);
    }
    free(db->frame);
    free(table->entries);
    free(leaves);
}

// Fresh state for one search: the table emptied, the counters zeroed (the database cache
// holds decoded file contents only, which depend on nothing searched).
static void reset(Search* S, double seconds) {
    if (S->table)
        memset(S->table->entries, 0, S->table->buckets * WAYS * sizeof *S->table->entries);
    S->nodes = 0;
    S->aborted = 0;
    S->deadline = seconds > 0 ? now_seconds() + seconds : 0;
}

int main(int argc, char** argv) {
    const char *cert = NULL, *position = NULL, *dir = NULL, *rule_text = NULL, *ids = NULL;
    double seconds = 0;
    long cache_mb = 2048, table_mb = 256, db_max = -1, part = 1, parts = 1;
    int use_table = 1, sample = 0;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        long x;
        if (strcmp(a, "--no-table") == 0) {
            use_table = 0;
            continue;
        }
        if (strcmp(a, "--sample") == 0) {
            sample = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) usage();
        static const char* const valued[] = {"--cert",   "--position", "--db",       "--rule",
                                             "--leaves", "--seconds",  "--cache-mb", "--table-mb",
                                             "--db-max", "--part"};
        int known = 0;
        for (size_t k = 0; k < sizeof valued / sizeof *valued; k++) known |= !strcmp(a, valued[k]);
        if (!known) die("unknown option '%s' (--help)", a);
        if (!v) die("%s needs a value (--help)", a);
        i++;
        if (strcmp(a, "--cert") == 0)
            cert = v;
        else if (strcmp(a, "--position") == 0)
            position = v;
        else if (strcmp(a, "--db") == 0)
            dir = v;
        else if (strcmp(a, "--rule") == 0)
            rule_text = v;
        else if (strcmp(a, "--leaves") == 0)
            ids = v;
        else if (strcmp(a, "--seconds") == 0) {
            char* end;
            seconds = strtod(v, &end);
            if (*end != '\0' || end == v || !(seconds >= 0)) die("bad --seconds '%s'", v);
        } else if (strcmp(a, "--cache-mb") == 0) {
            if (!parse_int(v, 1, 1 << 24, &x)) die("bad --cache-mb '%s'", v);
            cache_mb = x;
        } else if (strcmp(a, "--table-mb") == 0) {
            if (!parse_int(v, 1, 1 << 20, &x)) die("bad --table-mb '%s'", v);
            table_mb = x;
        } else if (strcmp(a, "--db-max") == 0) {
            if (!parse_int(v, 0, MAX_SEEDS, &x)) die("bad --db-max '%s'", v);
            db_max = x;
        } else if (strcmp(a, "--part") == 0) {
            char *slash = strchr(v, '/'), head[16];
            if (!slash || slash == v || (size_t)(slash - v) >= sizeof head)
                die("bad --part '%s' (I/N)", v);
            memcpy(head, v, (size_t)(slash - v));
            head[slash - v] = '\0';
            if (!parse_int(slash + 1, 1, 1000000, &parts) || !parse_int(head, 1, parts, &part))
                die("bad --part '%s' (I/N, 1 <= I <= N)", v);
        } else {
            die("unknown option '%s' (--help)", a);
        }
    }
    if ((cert != NULL) == (position != NULL)) die("give exactly one of --cert and --position");
    if (!cert && (sample || ids || parts > 1)) die("--leaves, --sample and --part need --cert");
    if (sample && ids) die("give at most one of --leaves and --sample");
    init_binomials();

    int m = 0, rule = -1, leaf_count = 0;
    uint32_t crc = 0;
    Leaf* leaves = NULL;
    Leaf single;
    if (cert) {
        if (rule_text) die("--rule comes from the certificate");
        leaves = read_certificate(cert, &m, &rule, &leaf_count, &crc);
    } else {
        if (!rule_text) die("--position needs --rule standard|empty-capture");
        if (strcmp(rule_text, "standard") == 0)
            rule = STANDARD;
        else if (strcmp(rule_text, "empty-capture") == 0)
            rule = EMPTY_CAPTURE;
        else
            die("unknown rule '%s'", rule_text);
        memset(&single, 0, sizeof single);
        m = parse_position(position, single.b);
        if (m == 0) die("bad position '%s' (a1,..,am/b1,..,bm)", position);
        if (row_sum(single.b, 0, m) == 0 || row_sum(single.b, m, m) == 0)
            die("position '%s' has an empty row: the game is over", position);
    }

    Database db;
    open_database(&db, dir, m, rule, (int)db_max, (size_t)cache_mb << 20);
    Table table = {NULL, 0};
    if (use_table) {
        size_t buckets = 1;
        while (buckets * 2 * WAYS * sizeof(Entry) <= ((size_t)table_mb << 20)) buckets *= 2;
        table.buckets = buckets;
        table.entries = xcalloc(buckets * WAYS, sizeof(Entry));
    }
    Search S = {m, rule, &db, use_table ? &table : NULL, 0, 0, 0};

    if (position) {
        reset(&S, seconds);
        const double start = now_seconds();
        const int s = row_sum(single.b, 0, 2 * m);
        const int v = search(&S, single.b, -s - 1, s + 1);
        int status = 0;
        if (S.aborted) {
            fprintf(stderr, "plain_solver: out of time after %.3f s\n", now_seconds() - start);
            status = 3;
        } else {
            printf("value %d nodes %llu seconds %.3f\n", v, (unsigned long long)S.nodes,
                   now_seconds() - start);
        }
        release(&db, &table, leaves);
        return status;
    }

    char layers[32] = "none";
    if (db.max_seeds > 0) snprintf(layers, sizeof layers, "layers 1..%d", db.max_seeds);
    printf("# plain_solver: %s, Kalah(%d,*) %s, %d leaves, database %s, table %s, %.0f s a leaf\n",
           cert, m, rule_name(rule), leaf_count, layers, use_table ? "on" : "off", seconds);
    unsigned char* chosen = NULL;
    if (sample) {
        chosen = xcalloc((size_t)leaf_count + 1, 1);
        const int k = choose_sample(leaf_count, crc, chosen);
        printf("# sample: seed %08x (the certificate's crc32), %d of %d leaves:", (unsigned)crc, k,
               leaf_count);
        for (int i = 0, n = 0; i < leaf_count; i++)
            if (chosen[i]) printf("%s%ld", n++ ? "," : " ", leaves[i].id);
        printf("\n");
    }
    int proved = 0, refuted = 0, timeouts = 0, tried = 0, listed = 0;
    long first_refuted = -1;
    const double all_start = now_seconds();
    for (int i = 0; i < leaf_count; i++) {
        Leaf* L = &leaves[i];
        if (ids) {  // only the listed IDs
            char want[32];
            snprintf(want, sizeof want, ",%ld,", L->id);
            char list[4096];
            snprintf(list, sizeof list, ",%s,", ids);
            if (!strstr(list, want)) continue;
        }
        if (chosen && !chosen[i]) continue;
        if (listed++ % parts != part - 1) continue;  // another part's
        tried++;
        reset(&S, seconds);
        const double start = now_seconds(), cpu_start = cpu_seconds();
        // A null window at the claim: v >= B is the test of (B-1, B), v <= B of (B, B+1).
        const int alpha = L->ge ? L->bound - 1 : L->bound;
        const int r = search(&S, L->b, alpha, alpha + 1);
        const char* outcome;
        char result[32] = "-";
        if (S.aborted) {
            outcome = "timeout";
            timeouts++;
        } else {
            snprintf(result, sizeof result, "%s%d", r > alpha ? "v>=" : "v<=", r);
            const int holds = L->ge ? r >= L->bound : r <= L->bound;
            outcome = holds ? "proved" : "REFUTED";
            if (holds) {
                proved++;
            } else {
                refuted++;
                if (first_refuted < 0) first_refuted = L->id;
            }
        }
        printf("leaf %ld %s %s %s %s nodes %llu seconds %.3f cpu %.3f\n", L->id, L->position,
               L->claim, outcome, result, (unsigned long long)S.nodes, now_seconds() - start,
               cpu_seconds() - cpu_start);
        fflush(stdout);
    }
    free(chosen);
    if (ids && listed == 0) die("--leaves '%s' names no leaf of %s", ids, cert);
    printf("summary: %d leaves, %d proved, %d REFUTED, %d timeout, %.1f s, %llu blocks decoded\n",
           tried, proved, refuted, timeouts, now_seconds() - all_start,
           (unsigned long long)db.decodes);
    release(&db, &table, leaves);
    if (first_refuted >= 0) {
        fprintf(stderr, "plain_solver: leaf %ld REFUTED\n", first_refuted);
        return 1;
    }
    return 0;
}
