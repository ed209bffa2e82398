/* Test of libkalah's C API, written against include/kalah/probe.h alone (compiled as C99).
 *
 * usage: kalah_probe_test KALAH_BIN WORK_DIR
 *
 * Builds small databases with `kalah build-db` (4 pits, layers 0..14, both rules) in
 * WORK_DIR, plays a 16-move game of Kalah(4,3) and checks at every position the value, every
 * move's value and the best moves against `kalah query --json` run without a database
 * (an independent search). Then the error paths and a budget that runs out, and copies of
 * the database with layer 12 damaged or missing: kalah_db_info's report and the probes'
 * errors.
 *
 * usage: kalah_probe_test --game64 WORK_DIR
 *
 * Kalah(6,4) in both rules: the start and the position after each move of a 10-move game,
 * as api/tests/game64_reference.py wrote them with `kalah query --json` (WORK_DIR/game64-<rule>
 * .txt, over the layers in WORK_DIR/db): value, every move's value, the best moves, and that
 * each position follows from the one before by one of its moves. */
#define _POSIX_C_SOURCE 200809L

#include <kalah/probe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, \
                    #cond, kalah_error_message());                                            \
            ++failures;                                                                       \
        }                                                                                     \
    } while (0)

static const char* kalah_bin;
static const char* work_dir;

static int run(const char* cmd) {
    int rc = system(cmd);
    if (rc != 0) fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
    return rc;
}

/* What `kalah query --json` says of a position: the value, each move's text and value in
 * pit order, and which moves are best. */
typedef struct {
    int value;
    int count;
    char text[KALAH_MAX_PITS][KALAH_MOVE_TEXT_SIZE];
    int move_value[KALAH_MAX_PITS];
    int best[KALAH_MAX_PITS];
} query_result;

static int read_int_after(const char** s, const char* key, int* out) {
    const char* p = strstr(*s, key);
    if (!p) return 0;
    p += strlen(key);
    *out = (int)strtol(p, (char**)&p, 10);
    *s = p;
    return 1;
}

static int query(const char* position, const char* rule, query_result* q) {
    char cmd[1024], out[8192];
    size_t n;
    FILE* f;
    const char* s;
    snprintf(cmd, sizeof cmd, "%s query --position '%s' --rule %s --db %s/none --json 2>/dev/null",
             kalah_bin, position, rule, work_dir);
    f = popen(cmd, "r");
    if (!f) return 0;
    n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    if (pclose(f) != 0) {
        fprintf(stderr, "query failed: %s\n%s\n", cmd, out);
        return 0;
    }
    s = out;
    if (!read_int_after(&s, "\"value\": ", &q->value)) return 0;
    q->count = 0;
    while ((s = strstr(s, "{\"move\": \"")) != NULL && q->count < KALAH_MAX_PITS) {
        const char* end;
        s += strlen("{\"move\": \"");
        end = strchr(s, '"');
        if (!end || end - s >= KALAH_MOVE_TEXT_SIZE) return 0;
        memcpy(q->text[q->count], s, (size_t)(end - s));
        q->text[q->count][end - s] = '\0';
        if (!read_int_after(&s, "\"value\": ", &q->move_value[q->count])) return 0;
        q->best[q->count] = strncmp(s, ", \"best\": true", 14) == 0;
        ++q->count;
    }
    return 1;
}

/* Checks p's value, move values (sorted best first for the mover) and best moves through
 * the API against q, what `kalah query --json` said of p. */
static void check_against(kalah_db* db, const kalah_position* p, kalah_rule rule,
                          const query_result* qr, int* searched, int* from_db) {
    const query_result q = *qr;
    kalah_value v;
    kalah_move_value mv[KALAH_MAX_PITS];
    int count = 0, i, j, best[KALAH_MAX_PITS], nbest = 0, qbest = 0;
    kalah_source source;

    CHECK(kalah_value_of(db, p, rule, NULL, &v) == KALAH_OK);
    CHECK(v.source != KALAH_SOURCE_UNKNOWN);
    CHECK(v.value == q.value);
    if (v.source == KALAH_SOURCE_SEARCH) ++*searched;
    if (v.source == KALAH_SOURCE_DATABASE) ++*from_db;

    CHECK(kalah_move_values(db, p, rule, NULL, mv, &count) == KALAH_OK);
    CHECK(count == q.count);
    for (i = 0; i < count; ++i) {
        int found = 0;
        for (j = 0; j < q.count; ++j) {
            if (strcmp(mv[i].text, q.text[j]) == 0) {
                found = 1;
                CHECK(mv[i].value.value == q.move_value[j]);
            }
        }
        CHECK(found);
        CHECK(mv[i].value.source != KALAH_SOURCE_UNKNOWN);
        /* Best first for the side to move. */
        if (i > 0) {
            if (p->to_move == 0)
                CHECK(mv[i - 1].value.value >= mv[i].value.value);
            else
                CHECK(mv[i - 1].value.value <= mv[i].value.value);
        }
    }
    if (count > 0) CHECK(mv[0].value.value == v.value);

    CHECK(kalah_best_moves(db, p, rule, NULL, best, &nbest, &source) == KALAH_OK);
    CHECK(source != KALAH_SOURCE_UNKNOWN);
    for (j = 0; j < q.count; ++j) qbest += q.best[j];
    CHECK(nbest == qbest);
    for (i = 0; i < nbest; ++i) {
        /* The query names moves "A3+": the pit number is the character after the side. */
        int found = 0;
        for (j = 0; j < q.count; ++j)
            if (q.best[j] && q.text[j][1] - '1' == best[i]) found = 1;
        CHECK(found);
    }
}

/* check_against p with what `kalah query --json` run without a database says of it. */
static void check_position(kalah_db* db, const kalah_position* p, kalah_rule rule,
                           const char* rule_name, int* searched, int* from_db) {
    char text[KALAH_POSITION_TEXT_SIZE];
    query_result q;
    CHECK(kalah_position_to_text(p, text, sizeof text) == KALAH_OK);
    if (!query(text, rule_name, &q)) {
        CHECK(!"kalah query --json answered");
        return;
    }
    check_against(db, p, rule, &q, searched, from_db);
}

static void game(kalah_db* db, kalah_rule rule, const char* rule_name, int known_start_value) {
    kalah_position p;
    kalah_value v;
    int ply, searched = 0, from_db = 0;
    CHECK(kalah_start_position(4, 3, &p) == KALAH_OK);
    CHECK(kalah_value_of(db, &p, rule, NULL, &v) == KALAH_OK);
    CHECK(v.value == known_start_value);    /* rules.md example 7 */
    CHECK(v.source == KALAH_SOURCE_SEARCH); /* 24 seeds: above the layers */
    CHECK(v.nodes > 0);
    for (ply = 0; ply < 16; ++ply) {
        kalah_move_value mv[KALAH_MAX_PITS];
        int count = 0;
        char text[KALAH_MOVE_TEXT_SIZE];
        check_position(db, &p, rule, rule_name, &searched, &from_db);
        CHECK(kalah_move_values(db, &p, rule, NULL, mv, &count) == KALAH_OK);
        if (count == 0) break;
        /* Not always the best move: the second best every third ply, to leave the main line. */
        CHECK(kalah_play(&p, mv[(ply % 3 == 2 && count > 1) ? 1 : 0].pit, rule, &p, text) ==
              KALAH_OK);
    }
    /* Both ways of valuing were exercised. */
    CHECK(searched > 0);
    CHECK(from_db > 0);
}

static void errors(void) {
    /* The library is the version of the header it was built with. */
    CHECK(strcmp(kalah_version(), KALAH_VERSION_STRING) == 0);
    CHECK(KALAH_VERSION_MAJOR >= 0 && KALAH_VERSION_MINOR >= 0 && KALAH_VERSION_PATCH >= 0);
    kalah_db* db = (kalah_db*)1;
    kalah_position p;
    kalah_value v;
    char path[1024];

    snprintf(path, sizeof path, "%s/missing", work_dir);
    CHECK(kalah_open(path, NULL, &db) == KALAH_ERR_NOT_FOUND);
    CHECK(db == NULL);
    CHECK(strstr(kalah_error_message(), "missing") != NULL);
    snprintf(path, sizeof path, "%s/none", work_dir);
    CHECK(kalah_open(path, NULL, &db) == KALAH_ERR_NOT_FOUND);
    CHECK(strstr(kalah_error_message(), "no layer files") != NULL);
    CHECK(kalah_open(NULL, NULL, NULL) == KALAH_ERR_ARGUMENT);
    snprintf(path, sizeof path, "%s/db/kalah-m4-standard-s0.kdb", work_dir);
    CHECK(kalah_open(path, NULL, &db) == KALAH_ERR_NOT_FOUND);
    CHECK(strstr(kalah_error_message(), "not a directory") != NULL);

    CHECK(kalah_position_from_text("4,4,4/4,4,4/0,0/C", &p) == KALAH_ERR_POSITION);
    CHECK(strlen(kalah_error_message()) > 0);
    CHECK(kalah_position_from_text("garbage", &p) == KALAH_ERR_POSITION);
    CHECK(kalah_position_from_text("1,0,2/0,3,1/4,5/B", &p) == KALAH_OK);
    CHECK(p.pits == 3 && p.south[2] == 2 && p.north[1] == 3 && p.store_north == 5 &&
          p.to_move == 1);
    CHECK(strlen(kalah_error_message()) == 0); /* cleared by the success */

    CHECK(kalah_open(NULL, NULL, &db) == KALAH_OK);
    p.south[0] = -1;
    CHECK(kalah_value_of(db, &p, KALAH_RULE_STANDARD, NULL, &v) == KALAH_ERR_POSITION);
    CHECK(strstr(kalah_error_message(), "negative") != NULL);
    p.south[0] = 1;
    p.pits = 7;
    CHECK(kalah_value_of(db, &p, KALAH_RULE_STANDARD, NULL, &v) == KALAH_ERR_POSITION);
    p.pits = 3;
    CHECK(kalah_value_of(db, &p, (kalah_rule)7, NULL, &v) == KALAH_ERR_ARGUMENT);
    CHECK(kalah_play(&p, 0, KALAH_RULE_STANDARD, &p, NULL) == KALAH_ERR_POSITION); /* B1 empty */
    CHECK(kalah_start_position(6, 11, &p) == KALAH_ERR_POSITION);                  /* 132 seeds */

    /* A budget that runs out: Kalah(6,5) (no built-in book holds it) without a database in
     * 2000 nodes. */
    {
        kalah_budget budget = {2000, 0};
        CHECK(kalah_start_position(6, 5, &p) == KALAH_OK);
        CHECK(kalah_value_of(db, &p, KALAH_RULE_STANDARD, &budget, &v) == KALAH_OK);
        CHECK(v.source == KALAH_SOURCE_UNKNOWN);
        budget.time_limit_seconds = -1;
        CHECK(kalah_value_of(db, &p, KALAH_RULE_STANDARD, &budget, &v) == KALAH_ERR_ARGUMENT);
    }
    kalah_close(db);
    kalah_close(NULL);
}

/* Kalah(6,4)'s first plies from the opening books built into the library, with a 1-node
 * budget and a database of other pit counts: the published start values (reference-values.md)
 * and every first move's, KALAH_SOURCE_BOOK, no node searched; each move's value is the value
 * of the position it leads to, and the best is the start's. */
static void books(kalah_db* db) {
    static const kalah_rule rules[2] = {KALAH_RULE_STANDARD, KALAH_RULE_EMPTY_CAPTURE};
    static const int published[2] = {8, 10};
    kalah_budget budget = {1, 0};
    kalah_position start, after;
    kalah_value v, w;
    kalah_move_value mv[KALAH_MAX_PITS];
    kalah_source source;
    int r, i, count = 0, best[KALAH_MAX_PITS], nbest = 0;
    CHECK(kalah_start_position(6, 4, &start) == KALAH_OK);
    for (r = 0; r < 2; ++r) {
        CHECK(kalah_value_of(db, &start, rules[r], &budget, &v) == KALAH_OK);
        CHECK(v.source == KALAH_SOURCE_BOOK);
        CHECK(v.value == published[r]);
        CHECK(v.nodes == 0);
        CHECK(kalah_move_values(db, &start, rules[r], &budget, mv, &count) == KALAH_OK);
        CHECK(count == 6);
        for (i = 0; i < count; ++i) {
            CHECK(mv[i].value.source == KALAH_SOURCE_BOOK);
            CHECK(kalah_play(&start, mv[i].pit, rules[r], &after, NULL) == KALAH_OK);
            CHECK(kalah_value_of(db, &after, rules[r], &budget, &w) == KALAH_OK);
            CHECK(w.source == KALAH_SOURCE_BOOK && w.value == mv[i].value.value);
        }
        CHECK(mv[0].value.value == published[r]);
        CHECK(kalah_best_moves(db, &start, rules[r], &budget, best, &nbest, &source) == KALAH_OK);
        CHECK(source == KALAH_SOURCE_BOOK);
        CHECK(nbest >= 1);
    }
}

/* A copy of the database in dir with layer 12 of 4 pits, standard, changed as `how` says
 * ("flipped": 16 bytes inverted mid-file; "truncated": cut to half; "empty"; "missing"),
 * and no packed twins (.kpk), so that the .kdb is what is read; "flipped-beside-twin": 64
 * bytes inverted mid-file, the packed twins kept (they could answer in its place). Returns
 * the copy's path in out. */
static int damaged_copy(const char* dir, const char* how, char* out, size_t size) {
    char cmd[4096], file[1200];
    FILE* f;
    long n, i;
    unsigned char* data;
    snprintf(out, size, "%s/damaged-%s", work_dir, how);
    const int twins = strcmp(how, "flipped-beside-twin") == 0;
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && %s '%s'/*.kpk", out, dir, out,
             twins ? "ls >/dev/null" : "rm -f", out);
    if (run(cmd) != 0) return 0;
    snprintf(file, sizeof file, "%s/kalah-m4-standard-s12.kdb", out);
    if (strcmp(how, "missing") == 0) return remove(file) == 0;
    f = fopen(file, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 64) return 0;
    data = (unsigned char*)malloc((size_t)n);
    rewind(f);
    if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) return 0;
    fclose(f);
    if (strcmp(how, "flipped") == 0 || twins)
        for (i = n / 2; i < n / 2 + (twins ? 64 : 16); ++i) data[i] ^= 0xFF;
    else if (strcmp(how, "truncated") == 0)
        n /= 2;
    else
        n = 0;
    f = fopen(file, "wb");
    if (!f || fwrite(data, 1, (size_t)n, f) != (size_t)n) return 0;
    fclose(f);
    free(data);
    return 1;
}

/* The entry of kalah_db_info's out for (pits, rule), or NULL. */
static const kalah_layers* find_layers(const kalah_layers* out, int count, int pits,
                                       kalah_rule rule) {
    int i;
    for (i = 0; i < count; ++i)
        if (out[i].pits == pits && out[i].rule == rule) return &out[i];
    return NULL;
}

/* kalah_db_info of the whole database (4 pits, 0..14, both rules), and of copies with layer
 * 12 damaged (an error naming the file, from the first probe at 12 seeds and from
 * kalah_db_info) or missing (layers 0..11 used, the 12-seed position searched). */
static void coverage(const char* dir) {
    static const char* const damages[] = {"flipped", "truncated", "empty", "flipped-beside-twin"};
    const char* name = "kalah-m4-standard-s12.kdb";
    kalah_layers out[KALAH_DB_INFO_MAX];
    const kalah_layers* l;
    kalah_db* db = NULL;
    kalah_position p, small;
    kalah_value v;
    char path[1200];
    int count = -1, i, expected = 0;

    CHECK(kalah_position_from_text("3,3,0,0/3,3,0,0/0,0/A", &p) == KALAH_OK);     /* layer 12 */
    CHECK(kalah_position_from_text("1,1,0,0/1,1,0,0/0,0/A", &small) == KALAH_OK); /* layer 4 */

    /* The whole database: before any probe nothing is open; then both rules, 0..14. */
    CHECK(kalah_open(dir, NULL, &db) == KALAH_OK);
    if (!db) return;
    CHECK(kalah_db_info(db, 0, out, KALAH_DB_INFO_MAX, &count) == KALAH_OK);
    CHECK(count == 2);
    for (i = 0; i < count && i < 2; ++i) {
        CHECK(out[i].pits == 4);
        CHECK(out[i].stop == KALAH_STOP_NOT_OPENED);
        CHECK(out[i].max_seeds == -1);
        CHECK(strstr(out[i].reason, "not opened") != NULL);
        CHECK(out[i].stop_layer == -1 && out[i].file[0] == '\0');
    }
    CHECK(out[0].rule == KALAH_RULE_STANDARD && out[1].rule == KALAH_RULE_EMPTY_CAPTURE);
    /* A probe opens its pit count and rule only. */
    CHECK(kalah_value_of(db, &p, KALAH_RULE_STANDARD, NULL, &v) == KALAH_OK);
    CHECK(v.source == KALAH_SOURCE_DATABASE);
    expected = v.value;
    CHECK(kalah_db_info(db, 0, out, KALAH_DB_INFO_MAX, &count) == KALAH_OK);
    CHECK(count == 2 && out[0].max_seeds == 14 && out[1].stop == KALAH_STOP_NOT_OPENED);
    CHECK(kalah_db_info(db, 1, out, KALAH_DB_INFO_MAX, &count) == KALAH_OK);
    CHECK(count == 2);
    for (i = 0; i < count && i < 2; ++i) {
        CHECK(out[i].max_seeds == 14);
        CHECK(out[i].stop == KALAH_STOP_END);
        CHECK(out[i].stop_layer == 15);
        CHECK(strstr(out[i].reason, "0..14") != NULL);
    }
    CHECK(strcmp(out[0].file, "kalah-m4-standard-s15.kdb") == 0);
    CHECK(strcmp(out[1].file, "kalah-m4-empty-capture-s15.kdb") == 0);
    /* capacity 1: one written, the count still says 2; capacity 0 counts only. */
    out[1].pits = -7;
    CHECK(kalah_db_info(db, 1, out, 1, &count) == KALAH_OK);
    CHECK(count == 2 && out[0].rule == KALAH_RULE_STANDARD && out[1].pits == -7);
    CHECK(kalah_db_info(db, 1, NULL, 0, &count) == KALAH_OK && count == 2);
    CHECK(kalah_db_info(db, 1, NULL, 1, &count) == KALAH_ERR_ARGUMENT);
    CHECK(kalah_db_info(db, 1, out, -1, &count) == KALAH_ERR_ARGUMENT);
    CHECK(kalah_db_info(NULL, 1, out, 1, &count) == KALAH_ERR_ARGUMENT);
    kalah_close(db);
    /* Without a directory: nothing. */
    CHECK(kalah_open(NULL, NULL, &db) == KALAH_OK);
    count = -1;
    CHECK(kalah_db_info(db, 1, out, KALAH_DB_INFO_MAX, &count) == KALAH_OK && count == 0);
    kalah_close(db);

    /* Layer 12 damaged: kalah_open succeeds (layers open on their first probe), the probe
     * at 12 seeds is KALAH_ERR_DATABASE naming the file, and so is every probe of that pit
     * count and rule, even below 12: nothing is searched past a damaged layer. */
    for (i = 0; i < (int)(sizeof damages / sizeof damages[0]); ++i) {
        if (!damaged_copy(dir, damages[i], path, sizeof path)) {
            CHECK(!"made a damaged copy");
            continue;
        }
        db = NULL;
        CHECK(kalah_open(path, NULL, &db) == KALAH_OK);
        if (!db) continue;
        CHECK(kalah_value_of(db, &p, KALAH_RULE_STANDARD, NULL, &v) == KALAH_ERR_DATABASE);
        CHECK(strstr(kalah_error_message(), name) != NULL);
        CHECK(kalah_value_of(db, &small, KALAH_RULE_STANDARD, NULL, &v) == KALAH_ERR_DATABASE);
        CHECK(strstr(kalah_error_message(), name) != NULL);
        /* The other rule's files are whole. */
        CHECK(kalah_value_of(db, &p, KALAH_RULE_EMPTY_CAPTURE, NULL, &v) == KALAH_OK);
        CHECK(v.source == KALAH_SOURCE_DATABASE);
        /* Refused, so not open: without open, kalah_db_info says only that. */
        CHECK(kalah_db_info(db, 0, out, KALAH_DB_INFO_MAX, &count) == KALAH_OK);
        l = find_layers(out, count, 4, KALAH_RULE_STANDARD);
        CHECK(l != NULL && l->stop == KALAH_STOP_NOT_OPENED);
        CHECK(kalah_db_info(db, 1, out, KALAH_DB_INFO_MAX, &count) == KALAH_OK);
        CHECK(count == 2);
        l = find_layers(out, count, 4, KALAH_RULE_STANDARD);
        CHECK(l != NULL);
        if (l) {
            CHECK(l->stop == KALAH_STOP_DAMAGED);
            CHECK(l->max_seeds == -1);
            CHECK(l->stop_layer == 12);
            CHECK(strcmp(l->file, name) == 0);
            CHECK(strstr(l->reason, name) != NULL);
        }
        l = find_layers(out, count, 4, KALAH_RULE_EMPTY_CAPTURE);
        CHECK(l != NULL && l->stop == KALAH_STOP_END && l->max_seeds == 14);
        kalah_close(db);
        /* Found by kalah_db_info alone, before any probe. */
        db = NULL;
        CHECK(kalah_open(path, NULL, &db) == KALAH_OK);
        CHECK(kalah_db_info(db, 1, out, KALAH_DB_INFO_MAX, &count) == KALAH_OK);
        l = find_layers(out, count, 4, KALAH_RULE_STANDARD);
        CHECK(l != NULL && l->stop == KALAH_STOP_DAMAGED && strcmp(l->file, name) == 0);
        kalah_close(db);
    }

    /* Layer 12 missing below 13 and 14: layers 0..11 are used, and the position at 12 seeds
     * is searched (over them), as every kalah command does with a warning. */
    if (damaged_copy(dir, "missing", path, sizeof path)) {
        db = NULL;
        CHECK(kalah_open(path, NULL, &db) == KALAH_OK);
        CHECK(kalah_value_of(db, &p, KALAH_RULE_STANDARD, NULL, &v) == KALAH_OK);
        CHECK(v.source == KALAH_SOURCE_SEARCH);
        CHECK(v.value == expected);
        CHECK(kalah_db_info(db, 0, out, KALAH_DB_INFO_MAX, &count) == KALAH_OK);
        l = find_layers(out, count, 4, KALAH_RULE_STANDARD);
        CHECK(l != NULL);
        if (l) {
            CHECK(l->stop == KALAH_STOP_MISSING);
            CHECK(l->max_seeds == 11);
            CHECK(l->stop_layer == 12);
            CHECK(strcmp(l->file, name) == 0);
            CHECK(strstr(l->reason, name) != NULL);
        }
        kalah_close(db);
    } else {
        CHECK(!"made a copy without layer 12");
    }
}

/* Several threads probe one handle at once: each must see the values of a single thread
 * (positions of Kalah(4,3) along a best line, searched and from the database). */
#define PROBE_THREADS 4
#define LINE 12
typedef struct {
    kalah_db* db;
    const kalah_position* line;
    int values[LINE];
    int ok;
} probe_job;

static void* probe_line(void* arg) {
    probe_job* job = (probe_job*)arg;
    int i, round;
    job->ok = 1;
    for (round = 0; round < 3; ++round)
        for (i = 0; i < LINE; ++i) {
            kalah_value v;
            if (kalah_value_of(job->db, &job->line[i], KALAH_RULE_STANDARD, NULL, &v) != KALAH_OK ||
                v.source == KALAH_SOURCE_UNKNOWN)
                job->ok = 0;
            job->values[i] = v.value;
        }
    return NULL;
}

static void threads(const char* dir) {
    kalah_db* db = NULL;
    kalah_position line[LINE];
    int expected[LINE], i, t, best[KALAH_MAX_PITS], nbest;
    kalah_source source;
    pthread_t tid[PROBE_THREADS];
    probe_job jobs[PROBE_THREADS];
    kalah_value v;
    CHECK(kalah_open(dir, NULL, &db) == KALAH_OK);
    if (!db) return;
    CHECK(kalah_start_position(4, 3, &line[0]) == KALAH_OK);
    for (i = 1; i < LINE; ++i) {
        CHECK(kalah_best_moves(db, &line[i - 1], KALAH_RULE_STANDARD, NULL, best, &nbest,
                               &source) == KALAH_OK);
        if (nbest == 0) { /* the game ended: repeat the last position */
            line[i] = line[i - 1];
            continue;
        }
        CHECK(kalah_play(&line[i - 1], best[0], KALAH_RULE_STANDARD, &line[i], NULL) == KALAH_OK);
    }
    kalah_close(db);
    /* Expected values from a fresh handle, one thread; then a fresh handle for the threads. */
    CHECK(kalah_open(dir, NULL, &db) == KALAH_OK);
    for (i = 0; i < LINE; ++i) {
        CHECK(kalah_value_of(db, &line[i], KALAH_RULE_STANDARD, NULL, &v) == KALAH_OK);
        expected[i] = v.value;
    }
    kalah_close(db);
    CHECK(kalah_open(dir, NULL, &db) == KALAH_OK);
    for (t = 0; t < PROBE_THREADS; ++t) {
        jobs[t].db = db;
        jobs[t].line = line;
        CHECK(pthread_create(&tid[t], NULL, probe_line, &jobs[t]) == 0);
    }
    for (t = 0; t < PROBE_THREADS; ++t) {
        CHECK(pthread_join(tid[t], NULL) == 0);
        CHECK(jobs[t].ok);
        for (i = 0; i < LINE; ++i) CHECK(jobs[t].values[i] == expected[i]);
    }
    kalah_close(db);
}

/* One line of a game64 reference file: "<position> <value> <move>=<value>[*] ...". */
static int parse_reference(char* line, query_result* q, char* position, size_t size) {
    char* save = NULL;
    char* tok = strtok_r(line, " \n", &save);
    if (!tok || strlen(tok) >= size) return 0;
    strcpy(position, tok);
    tok = strtok_r(NULL, " \n", &save);
    if (!tok) return 0;
    q->value = (int)strtol(tok, NULL, 10);
    q->count = 0;
    while ((tok = strtok_r(NULL, " \n", &save)) != NULL) {
        char* eq = strchr(tok, '=');
        char* end;
        if (!eq || q->count >= KALAH_MAX_PITS || eq - tok >= KALAH_MOVE_TEXT_SIZE) return 0;
        memcpy(q->text[q->count], tok, (size_t)(eq - tok));
        q->text[q->count][eq - tok] = '\0';
        q->move_value[q->count] = (int)strtol(eq + 1, &end, 10);
        q->best[q->count] = *end == '*';
        ++q->count;
    }
    return 1;
}

/* Checks one game64 reference file through the API; returns the positions checked. */
static int game64(const char* dir, const char* rule_name, kalah_rule rule, int known_start_value) {
    char path[1200], line[1024], position[KALAH_POSITION_TEXT_SIZE], db_dir[1100];
    char previous[KALAH_POSITION_TEXT_SIZE] = "";
    kalah_position before, p;
    kalah_db* db = NULL;
    kalah_options opts = {0, 0, 0};
    int checked = 0, searched = 0, from_db = 0;
    FILE* f;
    snprintf(path, sizeof path, "%s/game64-%s.txt", dir, rule_name);
    snprintf(db_dir, sizeof db_dir, "%s/db", dir);
    f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot read %s\n", path);
        ++failures;
        return 0;
    }
    /* A table of 1 GiB, not the default 64 MiB: the start's searches visit 10^8 nodes. */
    opts.tt_mib = 1024;
    CHECK(kalah_open(db_dir, &opts, &db) == KALAH_OK);
    while (db && fgets(line, sizeof line, f)) {
        query_result q;
        int i;
        kalah_value v;
        if (!parse_reference(line, &q, position, sizeof position)) {
            fprintf(stderr, "%s: bad line %d\n", path, checked + 1);
            ++failures;
            break;
        }
        CHECK(kalah_position_from_text(position, &p) == KALAH_OK);
        if (checked == 0) {
            kalah_position start;
            char text[KALAH_POSITION_TEXT_SIZE];
            CHECK(kalah_start_position(6, 4, &start) == KALAH_OK);
            CHECK(kalah_position_to_text(&start, text, sizeof text) == KALAH_OK);
            CHECK(strcmp(text, position) == 0);
        } else {
            /* The position follows from the one before by one of its moves. */
            int follows = 0;
            for (i = 0; i < before.pits; ++i) {
                kalah_position next;
                char text[KALAH_POSITION_TEXT_SIZE];
                if (kalah_play(&before, i, rule, &next, NULL) != KALAH_OK) continue;
                CHECK(kalah_position_to_text(&next, text, sizeof text) == KALAH_OK);
                if (strcmp(text, position) == 0) follows = 1;
            }
            if (!follows) fprintf(stderr, "%s does not follow from %s\n", position, previous);
            CHECK(follows);
        }
        CHECK(kalah_value_of(db, &p, rule, NULL, &v) == KALAH_OK);
        if (checked == 0) CHECK(v.value == known_start_value); /* reference-values.md */
        check_against(db, &p, rule, &q, &searched, &from_db);
        before = p;
        strcpy(previous, position);
        ++checked;
    }
    fclose(f);
    kalah_close(db);
    CHECK(checked == 11); /* the start and 10 moves */
    CHECK(searched > 0);  /* 48 seeds at the start: above the layers */
    printf(
        "%s: %d positions of Kalah(6,4) agree with kalah query (%d searched, %d from the "
        "database)\n",
        rule_name, checked, searched, from_db);
    return checked;
}

int main(int argc, char** argv) {
    char cmd[8192], dir[1024];
    kalah_db* db = NULL;
    if (argc != 3) {
        fprintf(stderr, "usage: %s KALAH_BIN WORK_DIR | --game64 WORK_DIR\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "--game64") == 0) {
        game64(argv[2], "standard", KALAH_RULE_STANDARD, 8);
        game64(argv[2], "empty-capture", KALAH_RULE_EMPTY_CAPTURE, 10);
        if (failures) {
            fprintf(stderr, "%d checks failed\n", failures);
            return 1;
        }
        printf("all checks passed\n");
        return 0;
    }
    kalah_bin = argv[1];
    work_dir = argv[2];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/none'", work_dir, work_dir);
    if (run(cmd) != 0) return 1;
    snprintf(dir, sizeof dir, "%s/db", work_dir);
    snprintf(cmd, sizeof cmd,
             "%s build-db --pits 4 --max-seeds 14 --db '%s' >/dev/null && "
             "%s build-db --pits 4 --max-seeds 14 --rule empty-capture --db '%s' >/dev/null",
             kalah_bin, dir, kalah_bin, dir);
    if (run(cmd) != 0) return 1;

    errors();
    CHECK(kalah_open(dir, NULL, &db) == KALAH_OK);
    if (db) {
        game(db, KALAH_RULE_STANDARD, "standard", 6);
        game(db, KALAH_RULE_EMPTY_CAPTURE, "empty-capture", 8);
        books(db);
        kalah_close(db);
    }
    threads(dir);
    coverage(dir);
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
