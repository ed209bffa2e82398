// Independent check of database files: checksums, headers, and every entry re-derived.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/board.h"

namespace kalah::db {

struct VerifyOptions {
    std::string dir = "kalah-db";
    int m = 0;                 // 0: every m found in dir
    std::optional<Rule> rule;  // empty: every rule found
    int threads = 0;           // 0: OpenMP default
    // 0: re-derive every entry; N > 0: N entries a layer (all of a smaller layer), at ranks
    // drawn by a fixed generator (the same ranks on every run).
    uint64_t sample = 0;
    // Bound on the layers held one byte an entry, GiB: the layer being checked and the
    // lower layers without a good twin (those with one are probed in it, mapped).
    double memory_gb = 16;
    std::ostream* log = nullptr;  // one line per file checked
};

struct VerifyResult {
    uint64_t files = 0;                 // layer files that checked out
    uint64_t twins = 0;                 // packed twins (.kpk) equal to their layer files
    uint64_t entries = 0;               // entries re-derived (all, or the sampled ones)
    std::vector<std::string> problems;  // each names its file; empty when all is well
    bool ok() const { return problems.empty() && files > 0; }
};

// For every (m, rule) set of layer files in dir: each file's header must match its name,
// every block and the file checksum must hold, layers must run 0..K without gaps, and every
// entry must equal the value re-derived from its successors: for each legal move, play it
// with Board::play on a board built by unrank (not the builder's enumeration), take the
// store difference by absolute side and the successor's stored value. The first bad
// entry of a layer is reported with its rank and position. Layers above a damaged or
// missing file are not re-derived. A *.kdb file whose name is not exactly
// layer_file_name(m, rule, s) for some m, rule, s (e.g. "kalah-m03-standard-s1.kdb") is
// reported as a problem ("unrecognised file name") and skipped; the other files are still
// checked. A layer's packed twin (db/packed.h), if present, must pass every check of
// PackedLayer::read_file and hold the layer file's values entry for entry. Throws
// std::invalid_argument when dir does not exist.
VerifyResult verify_database(const VerifyOptions& opts);

}  // namespace kalah::db
