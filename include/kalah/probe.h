/* libkalah probe API: exact Kalah(m,n) values for other programs, in C.
 *
 * A handle opens one endgame database directory (made by `kalah build-db`; any pit counts,
 * any layers, both rules) and values positions:
 *   - exactly from an opening book built into the library when it holds the position (the
 *     first plies of Kalah(6,4): source KALAH_SOURCE_BOOK, whatever the directory holds),
 *   - exactly from the database when it holds the position (source KALAH_SOURCE_DATABASE),
 *   - otherwise by a proven search (MTD(f), exact) that probes the database, within a node
 *     and/or time budget: KALAH_SOURCE_SEARCH when it finished, KALAH_SOURCE_UNKNOWN when
 *     the budget ran out first (the value is then meaningless).
 *
 * Point of view: every value is South's final margin (South's final store minus North's,
 * stores included) under perfect play from the position, whoever is to move; rules.md.
 *
 * Errors: every function returns a kalah_status; on anything but KALAH_OK,
 * kalah_error_message() gives one line naming the problem (per thread). Nothing here
 * exits, aborts or lets a C++ exception out.
 *
 * Threads: kalah_value, kalah_move_values and kalah_best_moves may be called on one handle
 * from many threads at once; kalah_close must not run concurrently with them.
 *
 * Example:
 *   kalah_db* db;
 *   kalah_position p;
 *   kalah_value v;
 *   if (kalah_open("kalah-db", NULL, &db) != KALAH_OK) { puts(kalah_error_message()); ... }
 *   kalah_start_position(6, 4, &p);
 *   if (kalah_value_of(db, &p, KALAH_RULE_STANDARD, NULL, &v) == KALAH_OK) ...
 *   kalah_close(db);
 */
#ifndef KALAH_PROBE_H
#define KALAH_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "kalah/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden symbols; these are its exports. */
#if defined(__GNUC__)
#define KALAH_API __attribute__((visibility("default")))
#else
#define KALAH_API
#endif

#define KALAH_MAX_PITS 6
/* Longest move text with its terminating NUL, e.g. "B5x12#". */
#define KALAH_MOVE_TEXT_SIZE 8
/* Longest position text with its terminating NUL (6 pits, three-digit counts). */
#define KALAH_POSITION_TEXT_SIZE 64

typedef enum kalah_status {
    KALAH_OK = 0,
    KALAH_ERR_ARGUMENT = 1,  /* a NULL pointer, an unknown rule, a negative budget, ... */
    KALAH_ERR_POSITION = 2,  /* a malformed or impossible position, or an illegal move */
    KALAH_ERR_NOT_FOUND = 3, /* the database directory is missing or holds no layer file */
    KALAH_ERR_DATABASE = 4,  /* a layer file is damaged or cannot be read */
    KALAH_ERR_MEMORY = 5,    /* out of memory */
    KALAH_ERR_INTERNAL = 6   /* anything else (a bug: please report the message) */
} kalah_status;

typedef enum kalah_rule {
    KALAH_RULE_STANDARD = 0,     /* capture only when the opposite pit holds seeds */
    KALAH_RULE_EMPTY_CAPTURE = 1 /* the lone last seed is captured too */
} kalah_rule;

typedef enum kalah_source {
    KALAH_SOURCE_DATABASE = 0, /* exact: read from the database (or the game is over) */
    KALAH_SOURCE_SEARCH = 1,   /* exact: proven by a search within the budget */
    KALAH_SOURCE_UNKNOWN = 2,  /* the budget ran out: no value */
    KALAH_SOURCE_BOOK = 3      /* exact: from an opening book built into the library (the
                                * first plies of Kalah(6,4), data/book/), at once */
} kalah_source;

/* A position: rows as in rules.md (A1..Am from South's left, B1..Bm from North's left). */
typedef struct kalah_position {
    int pits;                  /* m, 1..6 */
    int south[KALAH_MAX_PITS]; /* A1..Am */
    int north[KALAH_MAX_PITS]; /* B1..Bm */
    int store_south;
    int store_north;
    int to_move; /* 0: South (A row), 1: North (B row) */
} kalah_position;

/* Options of kalah_open; NULL, or a zeroed field, means the default. */
typedef struct kalah_options {
    size_t db_memory_mib; /* memory for the database layers and block cache (4096) */
    size_t tt_mib;        /* transposition table of each search thread's solver (64) */
    int threads;          /* threads of one search (1) */
} kalah_options;

/* Budget of one call; NULL, or a zero field, means no limit on that count. It covers the
 * whole call: the database's first opening for a pit count and rule (which goes on in the
 * background when the budget runs out: a later call finds it open), the wait for a free
 * solver (at most one per hardware thread at once), and every move's search. */
typedef struct kalah_budget {
    uint64_t node_limit;
    double time_limit_seconds;
} kalah_budget;

typedef struct kalah_value {
    int value; /* South's final margin; meaningless when source is KALAH_SOURCE_UNKNOWN */
    kalah_source source;
    uint64_t nodes; /* nodes searched for it (0 from the database) */
} kalah_value;

typedef struct kalah_move_value {
    int pit;                         /* 0-based pit of the side to move: 0 is A1 or B1 */
    char text[KALAH_MOVE_TEXT_SIZE]; /* the move in notation, e.g. "A3+" */
    kalah_value value;               /* of the position after the move (South's margin) */
} kalah_move_value;

/* What a database directory holds for one pit count and rule, and what of it is used
 * (kalah_db_info): layers 0..max_seeds, and why they stop there. */
typedef enum kalah_stop {
    KALAH_STOP_END = 0,       /* layer stop_layer has no file, nor any layer above it: the
                               * database as built (stop_layer -1: every layer, 0..127) */
    KALAH_STOP_MISSING = 1,   /* layer stop_layer's file is missing while a higher layer has a
                               * file: the layers above are not used */
    KALAH_STOP_DAMAGED = 2,   /* layer stop_layer's file is damaged or unreadable: no layer of
                               * this pit count and rule is used, and probing it fails with
                               * KALAH_ERR_DATABASE (max_seeds is -1) */
    KALAH_STOP_NOT_OPENED = 3 /* not opened: not yet, or its opening failed (a damaged layer:
                               * kalah_db_info with open says which); max_seeds and
                               * stop_layer are -1 */
} kalah_stop;

/* Room for every entry: pit counts 1..KALAH_MAX_PITS times the two rules. */
#define KALAH_DB_INFO_MAX (2 * KALAH_MAX_PITS)
/* A layer file's name with its NUL, e.g. "kalah-m6-empty-capture-s127.kdb". */
#define KALAH_FILE_NAME_SIZE 48
/* The reason's room with its NUL; a longer reason is cut (at a UTF-8 character's start). */
#define KALAH_REASON_SIZE 512

typedef struct kalah_layers {
    int pits; /* m, 1..6 */
    kalah_rule rule;
    int max_seeds;   /* layers 0..max_seeds (seeds in pits) are used; -1: none */
    kalah_stop stop; /* why they stop there */
    int stop_layer;  /* the layer the run stops at: max_seeds + 1, or the damaged one */
    char file[KALAH_FILE_NAME_SIZE]; /* that layer's file name, no directory ("" if none) */
    char reason[KALAH_REASON_SIZE];  /* one line for a person; for KALAH_STOP_DAMAGED the
                                      * message of kalah_error_message() that probing it gives
                                      * ("<dir>/<file>: <problem> ...") */
} kalah_layers;

typedef struct kalah_db kalah_db;

/* Message of the calling thread's last failed call ("" if none). Valid until that thread's
 * next call into the library. */
KALAH_API const char* kalah_error_message(void);
/* "ok", "argument", "position", "not-found", "database", "memory", "internal". */
KALAH_API const char* kalah_status_name(kalah_status status);
/* The library's version, "MAJOR.MINOR.PATCH": KALAH_VERSION_STRING of the kalah/version.h
 * it was built with (a program compares it with the header's to catch a mismatch). */
KALAH_API const char* kalah_version(void);

/* Opens the database directory dir. dir NULL: no database, every value is searched.
 * A missing directory, or one without any layer file, is KALAH_ERR_NOT_FOUND. Layers are
 * opened on the first probe of their pit count and rule, under the open policy of every
 * kalah command: a damaged or unreadable layer file of that pit count and rule, at any
 * depth (also a .kdb whose intact packed twin could answer in its place), makes that probe
 * (and every later one of them) KALAH_ERR_DATABASE, its message naming the file; values are
 * never searched past a damaged layer. A probe an opening book answers (KALAH_SOURCE_BOOK)
 * does not wait for the opening: it fails so once the opening has found the damage. */
KALAH_API kalah_status kalah_open(const char* dir, const kalah_options* options, kalah_db** out);
/* What the handle's directory holds and uses: one kalah_layers per pit count and rule that
 * has a layer file there (.kdb, or its packed twin .kpk), by pit count then rule (standard
 * first), into out[0..capacity-1]; *count is set to how many there are (0 for a handle
 * opened without a directory), which may exceed capacity (then only capacity are written;
 * KALAH_DB_INFO_MAX always suffices). open non-zero: each pit count and rule not opened yet
 * is opened first, as its first probe would, with the same checks (every file's header and
 * index, and the contents of the layers held in memory; a damaged block of a layer read
 * through the block cache is met by the probe that reads it); a damaged layer is then
 * reported as KALAH_STOP_DAMAGED, not returned as an error. This can take the time and
 * memory of opening every database there (kalah_options' db_memory_mib each). open zero:
 * nothing is opened, those not opened yet are KALAH_STOP_NOT_OPENED. May run concurrently
 * with probes. */
KALAH_API kalah_status kalah_db_info(kalah_db* db, int open, kalah_layers* out, int capacity,
                                     int* count);
/* Frees the handle (NULL is allowed). */
KALAH_API void kalah_close(kalah_db* db);

/* Position text of rules.md / README, "A1,..,Am/B1,..,Bm/storeA,storeB/side". */
KALAH_API kalah_status kalah_position_from_text(const char* text, kalah_position* out);
/* Writes the text (at most KALAH_POSITION_TEXT_SIZE bytes with the NUL) into buf. */
KALAH_API kalah_status kalah_position_to_text(const kalah_position* p, char* buf, size_t size);
/* Start of Kalah(pits, seeds), South to move. */
KALAH_API kalah_status kalah_start_position(int pits, int seeds, kalah_position* out);
/* Plays the mover's pit (0-based) of p into *out (may be p); text (may be NULL) receives
 * the move's notation. */
KALAH_API kalah_status kalah_play(const kalah_position* p, int pit, kalah_rule rule,
                                  kalah_position* out, char text[KALAH_MOVE_TEXT_SIZE]);

/* Value of p (budget: NULL for none). */
KALAH_API kalah_status kalah_value_of(kalah_db* db, const kalah_position* p, kalah_rule rule,
                                      const kalah_budget* budget, kalah_value* out);
/* Every legal move of p with the value after it, sorted best first for the side to move
 * (South: highest margin first; North: lowest first), ties in pit order; moves whose value
 * is unknown come last. out has room for KALAH_MAX_PITS; *count is set (0 when the game is
 * over). One budget for the whole call: once spent, the moves left are unknown (those the
 * database holds excepted). */
KALAH_API kalah_status kalah_move_values(kalah_db* db, const kalah_position* p, kalah_rule rule,
                                         const kalah_budget* budget, kalah_move_value* out,
                                         int* count);
/* The best moves of p for the side to move (0-based pits, ascending), *count of them.
 * *source is KALAH_SOURCE_UNKNOWN (and *count 0) when some move's value is unknown. */
KALAH_API kalah_status kalah_best_moves(kalah_db* db, const kalah_position* p, kalah_rule rule,
                                        const kalah_budget* budget, int* pits, int* count,
                                        kalah_source* source);

#ifdef __cplusplus
}
#endif

#endif /* KALAH_PROBE_H */
