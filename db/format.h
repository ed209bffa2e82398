// Layer files of the endgame databases: on-disk format, checksums, writer and reader.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/board.h"

namespace kalah::db {

// One file per (m, rule, s) holds the value of every configuration of exactly s seeds over the
// 2m pits (db/index.h gives the order), named  kalah-m<m>-<rule>-s<s>.kdb, e.g.
// kalah-m6-standard-s24.kdb (rule: "standard" | "empty-capture").
//
// File layout (all integers little-endian):
//
//   offset  size  field
//   0       8     magic "KALAHKDB"
//   8       4     format version (kFormatVersion)
//   12      1     m, pits per side (1..6)
//   13      1     rule: 0 = standard, 1 = empty-capture
//   14      1     s, seeds in the pits of every entry
//   15      1     encoding of an entry: 0 = one int8, the value v in [-s, s] (mover's view,
//                 pits only; see Database::probe)
//   16      8     entry count = C(s + 2m - 1, 2m - 1)
//   24      4     block size B: entries per block (the last block may hold fewer)
//   28      4     block count = ceil(entry count / B)
//   32      4     zstd compression level used (recorded so a rebuild is byte-identical)
//   36      4     reserved, 0
//   40      8     header checksum = kh64(block index, seed kh64(bytes 0..39, seed 0)),
//                 i.e. the index hashed with the first 40 header bytes' hash as its seed
//   48      8     file checksum = kh64(bytes 56..end of file, seed kh64(bytes 0..39, seed 0)),
//                 i.e. everything except the two checksum fields
//   56      8     reserved, 0
//   64      24*k  block index, one record per block:
//                   u64 offset of the block from the start of the file
//                   u64 compressed size in bytes
//                   u64 kh64 of the compressed bytes (seed 0)
//   ...           blocks: each an independent zstd frame (ZSTD_compress, no dictionary)
//                 that decodes to the block's entries; stored back to back in order.
//
// kh64 (our own 64-bit hash, not a standard one): h = seed ^ (len * P1); for every full
// little-endian 8-byte word w: h ^= rotl(w * P2, 31) * P1, h = rotl(h, 27) * P1 + P4; for
// each remaining byte b: h ^= b * P5, h = rotl(h, 11) * P1; then the finaliser h ^= h >> 33,
// h *= P2, h ^= h >> 29, h *= P3, h ^= h >> 32. P1..P5 are the odd constants in format.cpp.
//
// Version history:
//   1 first format. Files written with other block sizes or zstd levels than the
//     builder's defaults read back alike.

constexpr char kMagic[8] = {'K', 'A', 'L', 'A', 'H', 'K', 'D', 'B'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 64;
constexpr size_t kIndexRecordBytes = 24;
// Defaults of the builder (the header records what a file used, so any block size and
// level read back). Large blocks at a high level compress better for a little more build
// CPU; the price is a cached probe's miss, which decodes a whole block. Resident layers (the
// search's usual case) are unaffected (results/db.md, "1 Mi-entry blocks at zstd level 9
// by default").
constexpr uint32_t kDefaultBlockSize = 1u << 20;
constexpr int kDefaultZstdLevel = 9;
constexpr uint32_t kMinBlockSize = 1u << 10;
constexpr uint32_t kMaxBlockSize = 1u << 24;
constexpr int kMaxZstdLevel = 19;  // zstd's highest level without its "ultra" memory mode

uint64_t kh64(const void* data, size_t len, uint64_t seed = 0);

// A wide checksum for large regions, at memory speed (kh64's one chain of dependent
// multiplies runs at about a byte a cycle): eight lanes v_k = seed + k * P3; for every
// 64-byte stride and k < 8, with w its k-th little-endian 8-byte word,
// v_k = rotl((v_k ^ w) * P1, 31); then h = kh64(the eight lanes as 64 bytes, seed
// kh64(nothing, seed ^ len)), and the bytes after the last whole stride are hashed with
// kh64 seeded with h.
uint64_t kh64w(const void* data, size_t len, uint64_t seed = 0);

// Index of the first of values[0..n) that is not a value of layer s (rules.md: in [-s, s],
// of s's parity), or n if every one is: a branch-free pass over all of them, a second only
// when one is wrong. How a layer file's blocks are checked when read, and a
// build's values before a layer file is written.
uint64_t first_non_value(const int8_t* values, uint64_t n, int s);

// kh64 of a byte sequence of known length fed in pieces of any sizes: after update() has
// been given exactly `len` bytes in all, finish() equals kh64 of their concatenation.
class Kh64Stream {
  public:
    explicit Kh64Stream(uint64_t len, uint64_t seed = 0);
    void update(const void* data, size_t len);
    // Throws std::logic_error if the bytes given differ in number from the length declared.
    uint64_t finish();

  private:
    void word(uint64_t w);
    uint64_t h_;
    uint64_t len_;
    uint64_t seen_ = 0;
    uint8_t held_[8] = {};
    int held_count_ = 0;
};

// A file that is not a valid layer file, or not the expected one; what() names the file.
struct FormatError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string layer_file_name(int m, Rule rule, int s);

struct LayerHeader {
    uint32_t version = 0;
    int m = 0;
    Rule rule = Rule::Standard;
    int s = 0;
    int encoding = 0;
    uint64_t entries = 0;
    uint32_t block_size = 0;
    uint32_t block_count = 0;
    int level = 0;
    uint64_t header_checksum = 0;
    uint64_t file_checksum = 0;
};

struct BlockRef {
    uint64_t offset = 0;
    uint64_t size = 0;
    uint64_t checksum = 0;
};

// The temporary name write_layer writes `path` under in process `pid`: `path`.<pid>.tmp.
std::string temp_layer_path(const std::string& path, long pid);

// Writes the pieces, in order, as the file `path`: to temp_layer_path(path, getpid()),
// fsync, rename into place, fsync the directory. Throws std::runtime_error on a failed
// write (the temp file is removed, `path` untouched).
void write_file_durably(const std::string& path,
                        const std::vector<std::pair<const void*, size_t>>& pieces);

// A file written in pieces under a temp name (temp_layer_path(path, getpid())) and renamed
// into place by commit(), durably (fsync of the file, then of its directory): a reader never
// sees a part of it. Destroyed uncommitted, the temp file is removed. Throws
// std::runtime_error on a failed write.
class DurableWriter {
  public:
    explicit DurableWriter(const std::string& path);
    ~DurableWriter();
    DurableWriter(const DurableWriter&) = delete;
    DurableWriter& operator=(const DurableWriter&) = delete;
    void write(const void* data, size_t len);                  // appended
    void write_at(const void* data, size_t len, uint64_t at);  // over bytes written before
    void commit();

  private:
    [[noreturn]] void fail(const std::string& what, int err);
    std::string path_, tmp_;
    int fd_ = -1;
};

// Removes the temporary files of (m, rule) layers in dir (temp_layer_path names) whose
// writer is no longer running (a killed build), or is this process (which writes none
// while it calls this); another live writer's are kept. Returns the removed file names.
std::vector<std::string> remove_stale_temporaries(const std::string& dir, int m, Rule rule);

// Writes values[0..n) (n = the layer size) as the layer file `path`: to the temp name
// temp_layer_path(path, getpid()), fsync, rename into place, fsync the directory. Throws
// std::runtime_error on a failed write (the temp file is removed, `path` untouched).
// Blocks are compressed in parallel; the bytes depend only on the arguments.
void write_layer(const std::string& path, int m, Rule rule, int s, const int8_t* values, uint64_t n,
                 uint32_t block_size = kDefaultBlockSize, int level = kDefaultZstdLevel);

// The same file as write_layer's for the same values, written as the values arrive in
// order, in pieces of any size: the memory held is a batch of blocks and their frames, not
// the layer (for a top layer too large to hold whole beside its compressed copy). Blocks
// are compressed a batch at a time in parallel and written to the temp name at once; at
// finish() the header and block index are written in front of them and the file checksum
// is computed by reading the blocks back. An unfinished writer removes its temp file.
class LayerWriter {
  public:
    LayerWriter(const std::string& path, int m, Rule rule, int s, uint64_t n,
                uint32_t block_size = kDefaultBlockSize, int level = kDefaultZstdLevel);
    ~LayerWriter();
    LayerWriter(const LayerWriter&) = delete;
    LayerWriter& operator=(const LayerWriter&) = delete;
    // The next `count` values of the layer. Throws std::runtime_error on a failed write.
    void append(const int8_t* values, uint64_t count);
    // After exactly n values: completes the file and renames it into place (durably);
    // returns its file checksum. Throws std::runtime_error on a failure or a wrong count.
    uint64_t finish();

  private:
    void flush_batch();
    std::string path_, tmp_;
    int fd_ = -1;
    int m_, s_, level_;
    Rule rule_;
    uint64_t n_, given_ = 0;
    uint32_t block_size_, block_count_;
    uint32_t batch_blocks_;
    std::vector<int8_t> pending_;  // values of the blocks not yet compressed
    std::vector<BlockRef> index_;
    uint64_t offset_;  // where the next frame goes
};

// An open layer file. Thread-safe reads (pread).
class LayerFile {
  public:
    // Checks the header, the block index and the file size against (m, rule, s); the
    // payload is checked block by block as it is read. Throws FormatError.
    static std::unique_ptr<LayerFile> open(const std::string& path, int m, Rule rule, int s);
    ~LayerFile();
    LayerFile(const LayerFile&) = delete;
    LayerFile& operator=(const LayerFile&) = delete;

    const LayerHeader& header() const { return header_; }
    const std::string& path() const { return path_; }
    std::string name() const;  // file name without the directory
    uint64_t compressed_bytes() const { return file_size_; }
    uint64_t block_entries(uint32_t b) const;

    // Decodes block b into out (block_entries(b) values); checks its checksum and size.
    void read_block(uint32_t b, int8_t* out) const;
    // Reads the whole file, checks the file checksum and every block, returns all values.
    std::vector<int8_t> read_all() const;
    // The same into out[0 .. entries-1].
    void read_all_into(int8_t* out) const;
    // The file's checksum, computed reading the file a piece at a time (not the whole file
    // at once, as read_all does): throws FormatError when it does not match the header's.
    void check_file_checksum() const;

  private:
    LayerFile() = default;
    std::string path_;
    int fd_ = -1;
    uint64_t file_size_ = 0;
    LayerHeader header_;
    std::vector<BlockRef> blocks_;
};

}  // namespace kalah::db
