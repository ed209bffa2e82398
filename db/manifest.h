// Manifests of value hashes: the published per-layer hashes a database directory is
// checked against (`kalah verify-db --manifest FILE`), like syzygy's checksum lists.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/board.h"

namespace kalah::db {

// A manifest is text, one layer a line:
//
//   kalah-m6-standard-s27.kdb 6248716eb79a599b
//
// the layer file's name (db/format.h) and its value hash: kh64 of the layer's decoded
// values, one byte each in rank order, as 16 hex digits (what `build-db` prints; the same
// for every correct build of the layer, whatever its block size or compression). Blank
// lines and lines starting with '#' are ignored.
struct ManifestEntry {
    int m = 0;
    Rule rule = Rule::Standard;
    int s = 0;
    uint64_t value_hash = 0;
    std::string name;  // the layer file's name
};

// Reads a manifest file. Throws InputError naming the file and line of a malformed line
// or a layer listed twice, and the file when it cannot be read.
std::vector<ManifestEntry> read_manifest(const std::string& path);

// The value hash of a layer file (reads and checks the whole file; throws FormatError).
uint64_t layer_value_hash(const std::string& path, int m, Rule rule, int s);

struct ManifestCheck {
    int checked = 0;                    // layers found in dir whose hash was compared
    int missing = 0;                    // manifest layers (of the selected m and rule) not in dir
    std::vector<std::string> problems;  // each names its layer file
};

// Compares every layer of the manifest (only pit count m if m > 0, only rule if given)
// that exists in dir with its hash. A file that differs or cannot be read is a problem;
// a layer absent from dir is counted as missing, not a problem.
ManifestCheck check_manifest(const std::string& dir, const std::vector<ManifestEntry>& manifest,
                             int m, std::optional<Rule> rule);

}  // namespace kalah::db
