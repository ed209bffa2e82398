// A top layer solved group by group: the group files that hold it while it is built, and the
// streams that read a layer back in rank order without holding it (db/builder.h, Top::Groups).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/board.h"
#include "db/format.h"

namespace kalah::db {

// Group a of layer s (m pits a side): the configurations whose mover's row holds a seeds
// (the opponent's row s - a). A move that keeps every seed in the pits sows within the
// mover's row and hands the turn over, so it leads from group a to group s - a: the groups
// {a, s - a} are closed under the layer's own moves and solve alone, given the lower layers.
// Within a group, layer order (db/index.h) is the order of (mover's row rank, opponent's row
// rank), each row ranked among the m-pit rows of its total: the group's index is
// rank(own) * layer_size(m, s - a) + rank(opp).
uint64_t group_size(int m, int s, int a);
// The most entries a pair {a, s - a} holds (one group when a = s - a).
uint64_t largest_pair(int m, int s);

// Group file: the values of one group in group order, written to a temp name and renamed,
// removed once the layer file is complete. Named kalah-m<m>-<rule>-s<s>-g<a>.kgr; layout
// (little-endian): magic "KALAHKGR", u32 version 2, u8 m, u8 rule (0 standard, 1
// empty-capture), u8 s, u8 a, u64 entries, u64 kh64 of the values, u64 the bytes after the
// header, u64 kh64 of bytes 0..39; then the values in chunks of 2^22 (the last shorter),
// each a u32 length and one zstd frame of that length (level kGroupZstdLevel). Version 1
// held the values raw, a byte each: 2.5x the disk at layer 26 (results/db.md).
constexpr int kGroupZstdLevel = 1;
std::string group_file_name(int m, Rule rule, int s, int a);
void write_group_file(const std::string& path, int m, Rule rule, int s, int a,
                      const int8_t* values);
// Whether path holds group a of layer s of (m, rule), every byte checked (the payload
// read and hashed). Absent or damaged: false.
bool group_file_ok(const std::string& path, int m, Rule rule, int s, int a);

// The values of a layer in rank order, read a piece at a time.
class LayerStream {
  public:
    virtual ~LayerStream() = default;
    // The next count values into out. Throws FormatError on bad data.
    virtual void read(int8_t* out, uint64_t count) = 0;
    // After every value is read: checks what could only be checked at the end (the group
    // files' payload hashes). Throws FormatError.
    virtual void finish() {}
};

// Layer s read from its group files in dir (each opened and its header checked here):
// in rank order the configurations come in runs, one per (mover's row R, opponent's total
// t), the (m + 1)-pit configurations (R, t) in their own rank order, each run the
// layer_size(m, t) opponent rows in order: so every group file is read front to back once.
std::unique_ptr<LayerStream> merge_groups(const std::string& dir, int m, Rule rule, int s);
// Layer file f's values, block after block.
std::unique_ptr<LayerStream> layer_file_stream(const LayerFile& f);

}  // namespace kalah::db
