// The one policy for opening the endgame database of (m, rule) in a directory, shared by
// every command and the web service (`kalah serve`), so that a layer file means the same
// thing everywhere:
//   - no layer file for (m, rule): no database (the caller searches without one);
//   - a missing layer below higher ones: the layers under it are used, with a warning;
//   - a damaged layer file, or one that is not a readable regular file (a directory, a
//     FIFO, a symbolic link loop): an error, FormatError "<dir>/<file>: <problem>", with
//     the hint that `kalah build-db` rebuilds the layer when it is a regular file (build-db
//     replaces nothing else). Nothing searches around a damaged file: the user asked for
//     this database.
// A damaged or unreadable packed twin (.kpk) is not an error: Database::open then uses
// its .kdb. A damaged .kdb is one even when its intact twin holds the layer: a layer held
// from its twin has its file's checksum checked too.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/board.h"
#include "db/database.h"

namespace kalah::db {

struct OpenRequest {
    std::string dir;
    int m = 0;
    Rule rule = Rule::Standard;
    size_t memory_bytes = 0;  // resident layers plus block cache (Database::open)
    Database::Layout layout = Database::Layout::Auto;
    uint64_t raw_top_bytes = 0;  // the top layers one byte an entry within this (Database::open)
};

struct Opened {
    std::unique_ptr<Database> db;  // nullptr: there is no database for (m, rule)
    std::string why_none;          // when db is nullptr: why, e.g. "no layer file ..."
    std::string warning;           // when db is set: what the caller prints as a warning
};

// Opens r.dir for (r.m, r.rule) under the policy above. Throws FormatError.
Opened open_checked(const OpenRequest& r);

// One line (without a newline) saying what an open database holds: "endgame database DIR,
// layers 0..K seeds (m=M, RULE; layers I..J packed, X.XX GiB in memory)": each run of
// layers held packed, in lines or through the block cache is named.
std::string describe(const Database& d, const std::string& dir);

}  // namespace kalah::db
