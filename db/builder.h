// Retrograde builder of the endgame databases: layers of s = 0..K seeds, OpenMP-parallel.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/board.h"
#include "db/format.h"
#include "db/packed.h"

namespace kalah::db {

// Entry value meaning "not computed yet" while a layer is built (|value| <= 127 otherwise).
constexpr int8_t kUnknown = -128;

// The complete layers 0..size()-1 a build reads: each one byte an entry or packed
// (db/packed.h; about 0.45 bytes an entry, for builds whose layers do not fit raw), the
// packed form in anonymous memory or mapped from the layer's twin.
class LayerSet {
  public:
    void add(std::vector<int8_t> values) {
        layers_.emplace_back();
        layers_.back().raw = std::move(values);
    }
    // Replaces layer s's bytes by their packed form.
    void pack(int s);
    // Replaces layer s's bytes by p, the same values packed (a twin read or mapped).
    void hold(int s, PackedLayer p);
    // The first layer whose mapped twin met a page its file no longer holds (the values
    // read from it since may be wrong: see PackedLayer::faulted), or -1.
    int faulted_layer() const;
    // Layer s packed (after pack(s)).
    const PackedLayer& packed_layer(int s) const { return layers_[s].packed; }
    int size() const { return static_cast<int>(layers_.size()); }
    // Layer s's bytes (before pack(s)).
    const std::vector<int8_t>& raw(int s) const { return layers_[s].raw; }
    int get(int s, uint64_t r) const {
        const Layer& l = layers_[s];
        return l.is_packed ? l.packed.get(r) : l.raw[r];
    }
    void prefetch(int s, uint64_t r) const {
        const Layer& l = layers_[s];
        if (l.is_packed)
            l.packed.prefetch(r);
        else
            __builtin_prefetch(&l.raw[r]);
    }

  private:
    struct Layer {
        std::vector<int8_t> raw;
        PackedLayer packed;
        bool is_packed = false;
    };
    std::vector<Layer> layers_;
};

// Values of every configuration of layer s (db/index.h order) for (m, rule), given the
// complete lower layers lower[0..s-1]. Each value is the negamax value of the pits for the
// side to move (stores zeroed): max over moves of gain + child value, where gain is the
// change of the mover's store minus that of the opponent's (end sweep included), and the
// child value counts positively after an extra move and negatively otherwise.
//
// Order within the layer: a move that drops no seed in a store and captures nothing (it
// stays in the mover's row, or is a standard-rule landing in an empty pit facing an empty
// pit) keeps all s seeds in the pits; every other move lowers the count. The same-layer
// moves strictly decrease D = sum over both rows of seeds * distance to their owner's
// store (the view flip keeps D), so the same-layer graph is acyclic and a depth-first
// evaluation with a memo (kUnknown = not yet known) terminates. Threads share the memo
// through relaxed atomic byte stores; two threads racing on an entry compute the same value.
// `on_progress(done, total)` is called by one thread about once a second, if given.
std::vector<int8_t> build_layer(int m, Rule rule, int s, const LayerSet& lower,
                                const std::function<void(uint64_t, uint64_t)>& on_progress = {});

struct LayerStats;

struct BuildOptions {
    std::string dir = "kalah-db";
    int m = 6;
    Rule rule = Rule::Standard;
    int max_seeds = 0;                        // K: layers 0..K
    int threads = 0;                          // 0: OpenMP default
    double memory_gb = 16;                    // bound on the memory of the build, GiB
    uint32_t block_size = kDefaultBlockSize;  // entries per compressed block (db/format.h)
    int level = kDefaultZstdLevel;            // zstd level of the blocks
    std::ostream* log = nullptr;              // progress lines (stderr in the CLI); nullptr: quiet
    // How the finished layers are held while the higher ones are built: one byte an entry;
    // packed in anonymous memory; or (Mapped) probed in place in their packed twins, mapped:
    // those pages are the page cache's, which the kernel may drop while the top layer is
    // written (the lower layers are no longer read then) and read again from the files.
    // Auto: the first of Raw, Packed, Mapped whose bound (build_memory_bytes) fits in
    // memory_gb (Mapped only with twins).
    enum class Lower { Auto, Raw, Packed, Mapped } lower = Lower::Auto;
    // How the top layer (K) is solved: Whole, in memory at a byte an entry (written from
    // memory); or Groups, one pair of row-total groups at a time (db/groups.h), each pair
    // written to group files, which merge into the layer file, its hash and its twin in one
    // streaming pass (the memory of the largest pair, not of the layer; the group files take
    // a byte an entry of disk until the layer file is written; an interrupted build resumes
    // at the first pair not on disk). The layers below the top are always solved whole.
    // Auto: Whole when some choice of `lower` fits memory_gb with it, else Groups.
    enum class Top { Auto, Whole, Groups } top = Top::Auto;
    // Write each layer's packed twin (db/packed.h, .kpk) too: a search then opens the
    // database without decoding it. A present twin that matches its layer is kept.
    bool twins = true;
    // Called after each layer (built or reused) is written and held for the layers above
    // it, if given.
    std::function<void(const LayerStats&)> on_layer;
};

struct LayerStats {
    int s = 0;
    uint64_t entries = 0;
    double seconds = 0;      // build (and write) time; 0 when the file was reused
    double cpu_seconds = 0;  // process CPU time of the same (all threads)
    uint64_t compressed_bytes = 0;
    bool reused = false;  // a valid file was already there (resume)
    // kh64 (db/format.h) of the layer's decoded values, one byte each in rank order: the
    // same for every correct build of the layer, whatever the block size or zstd level.
    uint64_t value_hash = 0;
};

// Bytes of memory a build of layers 0..K for m pits needs (resident layers plus headroom),
// with the lower layers held as `lower` says (Auto counts as Raw) and the top layer solved
// as `top` says (Auto counts as Whole).
uint64_t build_memory_bytes(int m, int max_seeds,
                            BuildOptions::Lower lower = BuildOptions::Lower::Raw,
                            BuildOptions::Top top = BuildOptions::Top::Whole);
// How a build with these options holds its lower layers and solves its top layer:
// opts.lower and opts.top, or Auto's choices (the top whole if it fits with any choice of
// the lower layers). Throws std::invalid_argument, with the flag's name, when no choice
// fits in memory_gb or Mapped is asked for without twins.
struct BuildPlan {
    BuildOptions::Lower lower;
    BuildOptions::Top top;
};
BuildPlan build_plan_of(const BuildOptions& opts);
inline BuildOptions::Lower lower_layers_of(const BuildOptions& opts) {
    return build_plan_of(opts).lower;
}

// Builds (or resumes) the layer files of opts.dir. Existing files that check out are
// loaded instead of rebuilt; a rebuild writes byte-identical files. Throws
// std::invalid_argument for bad options (including a memory bound that is too small).
std::vector<LayerStats> build_database(const BuildOptions& opts);

}  // namespace kalah::db
