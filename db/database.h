// Endgame database probe interface: exact pit values for every position with <= K seeds.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "core/board.h"

namespace kalah::db {

// A set of layer files for one m and one capture rule (see db/format.h for the files).
// Thread-safe for concurrent probes.
class Database {
  public:
    // How layers held in memory are stored: one byte an entry, or packed (db/packed.h,
    // ~0.45 bytes an entry; a probe reads a group header and a data word), copied from
    // the packed twins (.kpk) to anonymous huge pages or (Mapped) probed in place in the
    // memory-mapped twins (opening is then a checksum, no copy; a layer without a twin is
    // packed from its .kdb). Auto: mapped when every layer has its twin, else one byte an
    // entry when every layer fits so in the memory bound, else packed. Whatever the layout,
    // the top layers are held one byte an entry while their entries add up to at most
    // raw_top_bytes (open's argument; decoded from their .kdb): a search's probes fall mostly
    // in the layers just below its nodes, and a raw probe is one miss where a packed one is
    // two (results/solver.md). They count in memory_bytes like any resident layer.
    // Lines (db/lines.h, 0.67 bytes an entry): every layer held in 64-byte lines of 96
    // entries, built from the packed twins (or the layer files) when the database opens, for
    // a probe of one miss in 1.34x the packed twins' memory: for long searches (a campaign).
    enum class Layout { Auto, Raw, Packed, Mapped, Lines };
    virtual ~Database() = default;
    // Opens the layers 0..K found in dir for (m, rule), K the largest complete run.
    // memory_bytes bounds what is held in memory (resident layers plus block cache).
    // Returns nullptr and sets *why when there is no usable database. On success *why is
    // cleared, or set to a warning when the run stops below a layer file that exists but is
    // damaged (e.g. "kalah-m3-standard-s5.kdb: block 0 checksum mismatch (damaged); using
    // layers 0..4"), or at a missing layer with higher ones present ("...-s5.kdb: missing,
    // but ...-s6.kdb exists; using layers 0..4"): callers print *why whenever it is
    // non-empty, even on success. *damage (if given) is set to the problem of the damaged
    // file that ended the run (a file that fails its checks: "<file>: <problem>"), or
    // cleared when no file is damaged (layers missing, or none at all).
    static std::unique_ptr<Database> open(const std::string& dir, int m, Rule rule,
                                          size_t memory_bytes, std::string* why,
                                          std::string* damage = nullptr,
                                          Layout layout = Layout::Auto, uint64_t raw_top_bytes = 0);

    // Builds layers 0..max_seeds for (m, rule) in memory (db/builder.h, OpenMP threads)
    // and holds them all resident; nothing is written to disk. on_layer(s), if given, is
    // called after each layer. For a search whose board no database on disk covers.
    static std::unique_ptr<Database> build_in_memory(int m, Rule rule, int max_seeds,
                                                     const std::function<void(int)>& on_layer = {});
    // The largest K for which build_in_memory(m, rule, K) holds at most max_entries
    // positions (-1 if not even layer 0 fits).
    static int in_memory_seeds(int m, uint64_t max_entries);

    virtual int pits() const = 0;
    virtual Rule rule() const = 0;
    virtual int max_seeds() const = 0;  // K: every position with seeds_in_pits() <= K is held
    // Exact value of the pits of b from the mover's view (mover's final store minus the
    // opponent's, counting only seeds now in pits; stores ignored). Requires
    // b.seeds_in_pits() <= max_seeds() and b.pits() == pits(). Positions where a row is
    // empty are valid too (value = own row - opp row after the sweep).
    virtual int probe(const Board& b) const = 0;
    // out[i] = probe(*bs[i]) for i < n, with the same requirements. Faster than n calls:
    // the memory accesses of all n overlap (the search resolves all of a node's children
    // that are in the database with one call).
    virtual void probe_many(const Board* const* bs, int n, int* out) const {
        for (int i = 0; i < n; ++i) out[i] = probe(*bs[i]);
    }
    // A hint that b will be probed soon (starts loading its entry if resident).
    virtual void prefetch(const Board& b) const { (void)b; }
    // Layers 0..resident_layers()-1 are held decoded in memory; the others are read through
    // a cache of decoded blocks. A damaged block met by probe() throws db::FormatError; a
    // board with more than max_seeds() seeds or another m throws std::out_of_range.
    virtual int resident_layers() const { return max_seeds() + 1; }
    // Of those, how many are packed (0 when all are one byte an entry).
    virtual int packed_layers() const { return 0; }
    // How layer s (s <= max_seeds()) is held: 'r' one byte an entry, 'p' packed, 'l' in
    // lines, 'c' read through the block cache.
    virtual char held_as(int s) const { return s < resident_layers() ? 'r' : 'c'; }
    // Memory held by the resident layers and the block cache, bytes.
    virtual uint64_t memory_bytes() const { return 0; }
};

}  // namespace kalah::db
