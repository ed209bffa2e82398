// Database::open and probe: resident layers within the memory bound, decoded-block cache beyond.
#include "db/database.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "core/huge_pages.h"
#include "core/notation.h"
#include "db/builder.h"
#include "db/format.h"
#include "db/index.h"
#include "db/lines.h"
#include "db/packed.h"

namespace kalah::db {
namespace {

// Direct-mapped cache of decoded blocks of the non-resident layers. Each slot has its own
// mutex, held while a probe reads the slot (and while a miss decodes into it), so readers
// never see a half-written block. Slot of (layer, block): block + a per-layer offset, so
// consecutive blocks of one layer never evict each other.
class BlockCache {
  public:
    BlockCache(size_t slots, uint32_t block_size) : slots_(std::max<size_t>(slots, 1)) {
        for (auto& s : slots_) s.data.resize(block_size);
    }
    uint64_t bytes() const {
        return uint64_t(slots_.size()) * (slots_[0].data.size() + sizeof(Slot));
    }
    int get(const LayerFile& f, int layer, uint32_t block, uint32_t offset) const {
        const uint64_t key = (static_cast<uint64_t>(layer) << 32) | block;
        const uint64_t spread = static_cast<uint64_t>(layer) * 0x9E3779B1ull + block;
        Slot& slot = slots_[spread % slots_.size()];
        std::lock_guard<std::mutex> lock(slot.mutex);
        if (slot.key != key) {
            slot.key = ~0ull;  // stays invalid if decoding throws
            f.read_block(block, slot.data.data());
            slot.key = key;
        }
        return slot.data[offset];
    }

  private:
    struct Slot {
        std::mutex mutex;
        uint64_t key = ~0ull;
        std::vector<int8_t> data;
    };
    mutable std::vector<Slot> slots_;
};

class FileDatabase final : public Database {
  public:
    FileDatabase(int m, Rule rule) : m_(m), rule_(rule) {}

    int pits() const override { return m_; }
    Rule rule() const override { return rule_; }
    int max_seeds() const override { return static_cast<int>(layers_.size()) - 1; }
    int resident_layers() const override { return resident_; }
    int packed_layers() const override { return packed_; }
    char held_as(int s) const override {
        if (s < 0 || s >= static_cast<int>(layers_.size())) return 'c';
        const Layer& l = layers_[s];
        return l.resident() ? 'r' : l.is_packed ? 'p' : l.is_lines ? 'l' : 'c';
    }
    uint64_t memory_bytes() const override { return held_; }

    int probe(const Board& b) const override {
        const int8_t* resident;
        const int v = locate(b, &resident);
        return resident ? *resident : v;
    }

    // A mapped twin that changed under the search: the value just read may be a page of
    // zeros, not the file's (HugePages::map_file).
    void check_mapped(int s) const {
        const Layer& layer = layers_[s];
        if (layer.packed.faulted())
            throw FormatError(layer.twin_name +
                              ": truncated while mapped (changed in place during the search)");
    }

    void prefetch(const Board& b) const override {
        const int s = b.seeds_in_pits();
        if (s >= static_cast<int>(layers_.size()) || b.pits() != m_) return;
        const Layer& layer = layers_[s];
        if (layer.resident())
            __builtin_prefetch(&layer.resident()[rank_board(b)]);
        else if (layer.is_lines)
            layer.lines.prefetch(rank_board(b));
        else if (layer.is_packed)
            layer.packed.prefetch(rank_board(b));
    }

    void probe_many(const Board* const* bs, int n, int* out) const override {
        // First every address (each a likely cache miss, so start loading it), then the
        // values: the misses overlap instead of following each other. A packed layer's
        // first miss is the group header; a line layer's is its only one.
        const int8_t* resident[kMaxPits];
        const PackedLayer* packed[kMaxPits];
        const LineLayer* lines[kMaxPits];
        uint64_t ranks[kMaxPits];
        for (int i = 0; i < n && i < kMaxPits; ++i) {
            packed[i] = nullptr;
            lines[i] = nullptr;
            resident[i] = nullptr;
            const int s = bs[i]->seeds_in_pits();
            if (s < static_cast<int>(layers_.size()) && bs[i]->pits() == m_) {
                const Layer& layer = layers_[s];
                if (layer.is_lines) {
                    lines[i] = &layer.lines;
                    ranks[i] = rank_board(*bs[i]);
                    lines[i]->prefetch(ranks[i]);
                    continue;
                }
                if (layer.is_packed) {
                    packed[i] = &layer.packed;
                    ranks[i] = rank_board(*bs[i]);
                    packed[i]->prefetch(ranks[i]);
                    continue;
                }
            }
            out[i] = locate(*bs[i], &resident[i]);
            if (resident[i]) __builtin_prefetch(resident[i]);
        }
        // Then a packed entry's data, whose address its header gives: the second misses
        // overlap too (results/solver.md, "Where a node's time goes at Kalah(6,6)'s top").
        for (int i = 0; i < n && i < kMaxPits; ++i)
            if (packed[i]) packed[i]->prefetch_data(ranks[i]);
        for (int i = 0; i < n && i < kMaxPits; ++i) {
            if (lines[i]) {
                out[i] = lines[i]->get(ranks[i]);
            } else if (packed[i]) {
                out[i] = packed[i]->get(ranks[i]);
                if (packed[i]->faulted()) check_mapped(bs[i]->seeds_in_pits());
            } else if (resident[i]) {
                out[i] = *resident[i];
            }
        }
        for (int i = kMaxPits; i < n; ++i) out[i] = probe(*bs[i]);
    }

    // b's entry: *resident points at it in a resident layer (value not read yet), else
    // *resident is null and the value (read through the block cache) is returned.
    int locate(const Board& b, const int8_t** resident) const {
        const int s = b.seeds_in_pits();
        // A probe outside the database is a caller bug; never read out of bounds for it.
        if (s >= static_cast<int>(layers_.size()) || b.pits() != m_)
            throw std::out_of_range("database probe outside the database (m or seeds)");
        const uint64_t r = rank_board(b);
        const Layer& layer = layers_[s];
        if (layer.resident()) {
            *resident = &layer.resident()[r];
            return 0;
        }
        *resident = nullptr;
        if (layer.is_lines) return layer.lines.get(r);
        if (layer.is_packed) {
            const int v = layer.packed.get(r);
            if (layer.packed.faulted()) check_mapped(s);
            return v;
        }
        const uint32_t bs = layer.file->header().block_size;
        return cache_->get(*layer.file, s, static_cast<uint32_t>(r / bs),
                           static_cast<uint32_t>(r % bs));
    }

    struct Layer {
        // Resident layer, one byte an entry (huge pages: probes are random single-byte
        // reads), or empty.
        HugePages values;
        const int8_t* resident() const { return static_cast<const int8_t*>(values.data()); }
        // Resident layer packed (db/packed.h, ~3.5 bits an entry), or empty.
        PackedLayer packed;
        bool is_packed = false;
        // Resident layer in lines (db/lines.h, 0.67 bytes an entry), or empty.
        LineLayer lines;
        bool is_lines = false;
        std::string twin_name;            // the packed twin's file name, when read from it
        std::unique_ptr<LayerFile> file;  // kept open when not resident
    };
    std::vector<Layer> layers_;
    std::unique_ptr<BlockCache> cache_;
    int resident_ = 0;
    int packed_ = 0;
    uint64_t held_ = 0;

  private:
    int m_;
    Rule rule_;
};

// A layer file read in chunks of whole blocks, a few per thread, but at most 64 MiB of
// decoded values at once (the buffer is outside the database's memory bound): the chunk's
// entries.
uint64_t file_chunk(const LayerFile& f) {
    const LayerHeader& h = f.header();
    const uint64_t threads = static_cast<uint64_t>(std::max(omp_get_max_threads(), 1));
    const uint64_t per_chunk =
        std::max<uint64_t>(1, std::min<uint64_t>(4 * threads, (uint64_t(64) << 20) / h.block_size));
    return per_chunk * h.block_size;
}

// Entries first..first+count-1 of a layer file (first a multiple of its block size) into
// out: its blocks decoded in parallel, each checked against its checksum (the header and
// index were checked by LayerFile::open). Throws FormatError for the first damaged one.
void read_file_chunk(const LayerFile& f, uint64_t first, uint64_t count, int8_t* out) {
    const LayerHeader& h = f.header();
    const int64_t b0 = static_cast<int64_t>(first / h.block_size);
    const int64_t b1 = static_cast<int64_t>((first + count - 1) / h.block_size);
    std::string failure;
    int64_t first_bad = -1;
    bool out_of_memory = false;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = b0; b <= b1; ++b) {
        try {
            f.read_block(static_cast<uint32_t>(b),
                         out + (static_cast<uint64_t>(b) * h.block_size - first));
        } catch (const FormatError& e) {
#pragma omp critical
            if (first_bad < 0 || b < first_bad) {
                first_bad = b;
                failure = e.what();
            }
        } catch (const std::bad_alloc&) {
            // No exception may leave the parallel loop.
#pragma omp critical
            out_of_memory = true;
        }
    }
    if (out_of_memory) throw std::bad_alloc();
    if (!failure.empty()) throw FormatError(failure);
}

// Packs a layer file, read in chunks.
PackedLayer pack_layer(const LayerFile& f) {
    const LayerHeader& h = f.header();
    if (h.block_size % PackedLayer::kGroup != 0) {
        const std::vector<int8_t> all = f.read_all();
        return PackedLayer::pack(all.data(), all.size(), h.s);
    }
    return PackedLayer::pack_chunks(h.entries, h.s, file_chunk(f),
                                    [&](uint64_t first, uint64_t count, int8_t* out) {
                                        read_file_chunk(f, first, count, out);
                                    });
}

// A layer file in lines, read in chunks.
LineLayer line_layer(const LayerFile& f) {
    const LayerHeader& h = f.header();
    return LineLayer::build_chunks(h.entries, h.s, file_chunk(f),
                                   [&](uint64_t first, uint64_t count, int8_t* out) {
                                       read_file_chunk(f, first, count, out);
                                   });
}

// A packed layer (a mapped twin) in lines: its entries read in parallel chunks. Throws
// FormatError when the twin was truncated while read.
LineLayer line_layer(const PackedLayer& p, const std::string& twin_name) {
    LineLayer l = LineLayer::build_chunks(
        p.size(), p.seeds(), uint64_t(1) << 24, [&](uint64_t first, uint64_t count, int8_t* out) {
            // In pieces of whole groups (the chunks start on one), a piece a thread at a time.
            const int64_t pieces =
                static_cast<int64_t>((count + PackedLayer::kGroup - 1) / PackedLayer::kGroup);
#pragma omp parallel for schedule(static)
            for (int64_t i = 0; i < pieces; ++i) {
                const uint64_t at = uint64_t(i) * PackedLayer::kGroup;
                p.unpack_range(first + at, std::min<uint64_t>(PackedLayer::kGroup, count - at),
                               out + at);
            }
        });
    if (p.faulted()) throw FormatError(twin_name + ": truncated while mapped");
    return l;
}

// Where the run of usable layers ends below kMaxSeeds, when that needs saying: why, and
// the damaged file's problem when a damaged file ended it (empty for a missing layer).
struct RunEnd {
    std::string why;
    std::string damage;
    void damaged(const std::string& problem) { why = damage = problem; }
};

// A present layer file is any directory entry of that name, as lstat sees it: a symbolic
// link that leads nowhere (or round in a loop) is an unreadable layer, which
// LayerFile::open names, not a missing one.
bool present(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::exists(std::filesystem::symlink_status(p, ec));
}

// Step 1: the paths of layers 0, 1, .. up to the first one missing; a missing layer with
// layers above it ends the run with a note (the database is smaller than the files
// suggest).
std::vector<std::string> find_layer_files(const std::string& dir, int m, Rule rule, RunEnd& end) {
    std::vector<std::string> paths;
    for (int s = 0; s <= kMaxSeeds; ++s) {
        const auto path = std::filesystem::path(dir) / layer_file_name(m, rule, s);
        if (present(path)) {
            paths.push_back(path.string());
            continue;
        }
        for (int above = s + 1; above <= kMaxSeeds; ++above)
            if (present(std::filesystem::path(dir) / layer_file_name(m, rule, above))) {
                end.why = layer_file_name(m, rule, s) + ": missing, but " +
                          layer_file_name(m, rule, above) + " exists";
                break;
            }
        break;
    }
    return paths;
}

// Step 2: each layer file opened, its header and index checked (LayerFile::open); the
// first damaged one ends the run.
std::vector<std::unique_ptr<LayerFile>> check_layer_files(const std::vector<std::string>& paths,
                                                          int m, Rule rule, RunEnd& end) {
    std::vector<std::unique_ptr<LayerFile>> files;
    for (int s = 0; s < static_cast<int>(paths.size()); ++s) {
        try {
            files.push_back(LayerFile::open(paths[s], m, rule, s));
        } catch (const FormatError& e) {
            end.damaged(e.what());
            break;
        }
    }
    return files;
}

// A packed twin (.kpk, db/packed.h) of layer s present and current for its layer file f:
// reading it is a mapping and a checksum, where one byte an entry means decoding every
// zstd block.
std::string twin_path(const std::string& dir, int m, Rule rule, int s) {
    return (std::filesystem::path(dir) / PackedLayer::file_name(m, rule, s)).string();
}
bool twin_current(const std::string& dir, int m, Rule rule, int s, const LayerFile& f) {
    return PackedLayer::twin_matches(twin_path(dir, m, rule, s), m, rule, s,
                                     f.header().file_checksum);
}

// Step 3: how the layers are held in memory.
struct Holding {
    char form;                 // 'r' one byte an entry, 'p' packed, 'l' lines (held_as)
    PackedLayer::Load load;    // packed twins copied or mapped
    uint64_t resident_budget;  // bytes for resident layers
    int raw_from = 1 << 30;    // layers s >= raw_from one byte an entry, whatever `form` says
    std::vector<uint64_t> twin_bytes;  // size of layer s's current twin file, 0 if none
    char form_of(int s) const { return s < raw_from ? form : 'r'; }
    // What layer s of n entries is expected to take before it is read: a packed layer its
    // current twin's size, or without one a bound (a packed layer's size is known only once
    // packed: results/db.md, "Packed layers in memory"); a line layer's escapes, 96 bytes
    // each, are rare in deep layers.
    uint64_t estimate(int s, uint64_t n) const {
        switch (form_of(s)) {
            case 'p':
                if (static_cast<size_t>(s) < twin_bytes.size() && twin_bytes[s] > 0)
                    return twin_bytes[s];
                return n / 2 + n / 16 + 4096;
            case 'l':
                return (n + LineLayer::kLine - 1) / LineLayer::kLine * 64 + n / 64 + 4096;
            default:
                return n;
        }
    }
};

// Resident layers from s = 0 up while they fit; a quarter of the bound is kept for the
// block cache when not everything fits. One byte an entry when every layer fits so;
// otherwise packed, which holds about twice the layers in the same memory for a probe that
// reads a header and a data word. Auto maps the packed twins when every layer has a
// current one: opening is then a checksum of the page cache's pages, no copy (results/
// db.md, "Opening a database: mapped twins").
Holding choose_holding(const std::vector<std::unique_ptr<LayerFile>>& files,
                       const std::vector<uint64_t>& twin_bytes, size_t memory_bytes,
                       Database::Layout layout, uint64_t raw_top_bytes) {
    using Layout = Database::Layout;
    uint64_t total = 0;
    for (const auto& f : files) total += f->header().entries;
    const bool twins =
        std::find(twin_bytes.begin(), twin_bytes.end(), uint64_t(0)) == twin_bytes.end();
    Holding h;
    h.twin_bytes = twin_bytes;
    h.form = layout == Layout::Lines ? 'l'
             : layout == Layout::Packed || layout == Layout::Mapped ||
                     (layout == Layout::Auto && (total > memory_bytes || twins))
                 ? 'p'
                 : 'r';
    // Lines are built from the twins mapped (read once, then unmapped).
    h.load =
        layout == Layout::Mapped || layout == Layout::Lines || (layout == Layout::Auto && twins)
            ? PackedLayer::Load::Mapped
            : PackedLayer::Load::Copy;
    // The top layers one byte an entry while they fit in raw_top_bytes: the search's probes
    // fall mostly in the layers just below its nodes, the largest ones.
    uint64_t raw_top = 0;
    for (int s = static_cast<int>(files.size()) - 1; s >= 0; --s) {
        raw_top += files[s]->header().entries;
        if (raw_top > raw_top_bytes) break;
        h.raw_from = s;
    }
    uint64_t total_held = 0;
    for (size_t s = 0; s < files.size(); ++s)
        total_held += h.estimate(static_cast<int>(s), files[s]->header().entries);
    h.resident_budget = total_held > memory_bytes ? memory_bytes - memory_bytes / 4 : memory_bytes;
    return h;
}

// Step 4: reads or maps each layer that fits into db as resident, from s = 0 up; the
// others stay open for the block cache. A layer that fails its checks while read ends
// the run (end says so). Returns the bytes held by the resident layers.
uint64_t hold_layers(FileDatabase& db, std::vector<std::unique_ptr<LayerFile>>& files,
                     const Holding& h, const std::string& dir, int m, Rule rule, RunEnd& end) {
    uint64_t used = 0;
    bool resident = true;
    for (auto& f : files) {
        FileDatabase::Layer layer;
        const uint64_t n = f->header().entries;
        const int s = static_cast<int>(db.layers_.size());
        if (resident && used + h.estimate(s, n) <= h.resident_budget) {
            try {
                const char form = h.form_of(s);
                if (form == 'p' || form == 'l') {
                    bool read = false;
                    PackedLayer twin;
                    const std::string twin_name = PackedLayer::file_name(m, rule, s);
                    if (twin_current(dir, m, rule, s, *f)) {
                        // A twin that fails its checks is only a cache: the layer file
                        // (checked block by block) gives the same values.
                        try {
                            twin = PackedLayer::read_file(twin_path(dir, m, rule, s), m, rule, s,
                                                          f->header().file_checksum, h.load);
                            read = true;
                            if (form == 'l') layer.lines = line_layer(twin, twin_name);
                        } catch (const FormatError&) {
                            read = false;
                        }
                    }
                    // The layer file itself is what the user built and verify-db checks:
                    // damaged, it is an error even though its twin answers in its place
                    // (docs/api.md, "Damage and coverage"). Read once, at memory speed.
                    if (read) f->check_file_checksum();
                    if (form == 'l') {
                        if (!read) layer.lines = line_layer(*f);
                        layer.is_lines = true;
                        used += layer.lines.bytes();
                    } else {
                        if (read) {
                            layer.packed = std::move(twin);
                            layer.twin_name = twin_name;
                        } else {
                            layer.packed = pack_layer(*f);
                        }
                        layer.is_packed = true;
                        used += layer.packed.bytes();
                        db.packed_++;
                    }
                } else {
                    layer.values = HugePages(n);
                    f->read_all_into(static_cast<int8_t*>(layer.values.data()));
                    used += n;
                }
            } catch (const FormatError& e) {
                end.damaged(e.what());
                break;  // the run of usable layers ends below this one
            }
            db.resident_++;
        } else {
            resident = false;
            layer.file = std::move(f);
        }
        db.layers_.push_back(std::move(layer));
    }
    return used;
}

// Step 5: a block cache for the layers left in their files, in what the resident layers
// left of the bound. A slot holds the largest decoded block of a cached layer (a layer
// smaller than its file's block size is one short block).
void add_block_cache(FileDatabase& db, uint64_t used, size_t memory_bytes) {
    if (db.resident_ == static_cast<int>(db.layers_.size())) return;
    uint64_t slot = 1;
    for (const auto& l : db.layers_)
        if (l.file)
            slot = std::max<uint64_t>(
                slot, std::min<uint64_t>(l.file->header().block_size, l.file->header().entries));
    const uint64_t cache_bytes = memory_bytes > used ? memory_bytes - used : 0;
    db.cache_ = std::make_unique<BlockCache>(std::max<uint64_t>(cache_bytes / slot, 64),
                                             static_cast<uint32_t>(slot));
}

}  // namespace

int Database::in_memory_seeds(int m, uint64_t max_entries) {
    if (m < 1 || m > kMaxPits) return -1;
    // Layers 0..K hold layer_size(2m + 1, K) positions (the configurations of at most K
    // seeds in 2m pits); the sizes grow with K.
    int k = -1;
    while (k < kMaxSeeds && layer_size(2 * m + 1, k + 1) <= max_entries) ++k;
    return k;
}

std::unique_ptr<Database> Database::build_in_memory(int m, Rule rule, int max_seeds,
                                                    const std::function<void(int)>& on_layer) {
    if (m < 1 || m > kMaxPits || max_seeds < 0 || max_seeds > kMaxSeeds)
        throw std::invalid_argument("build_in_memory: m must be 1..6 and seeds 0..127");
    LayerSet layers;
    for (int s = 0; s <= max_seeds; ++s) {
        layers.add(build_layer(m, rule, s, layers));
        if (on_layer) on_layer(s);
    }
    // Moved to huge pages as the layers read from files are (probes are random reads: with
    // 4 KiB pages most of them also miss the TLB).
    auto db = std::make_unique<FileDatabase>(m, rule);
    for (int s = 0; s <= max_seeds; ++s) {
        const std::vector<int8_t>& values = layers.raw(s);
        FileDatabase::Layer layer;
        layer.values = HugePages(values.size());
        std::memcpy(layer.values.data(), values.data(), values.size());
        db->layers_.push_back(std::move(layer));
    }
    db->resident_ = static_cast<int>(db->layers_.size());
    db->held_ = layer_size(2 * m + 1, max_seeds);
    return db;
}

std::unique_ptr<Database> Database::open(const std::string& dir, int m, Rule rule,
                                         size_t memory_bytes, std::string* why, std::string* damage,
                                         Layout layout, uint64_t raw_top_bytes) {
    RunEnd end;
    // Step 6 (on every return): what the caller is told.
    auto report = [&](const std::string& w) {
        if (why) *why = w;
        if (damage) *damage = end.damage;
    };
    // A run that ends below a layer file that exists (damaged, or missing below others)
    // is reported even on success: the database is then smaller than the files suggest.
    auto using_layers = [&](size_t usable) {
        return end.why + "; using layers 0.." + std::to_string(usable - 1);
    };
    if (m < 1 || m > kMaxPits) {
        report("pits per side must be 1..6");
        return nullptr;
    }
    std::vector<std::unique_ptr<LayerFile>> files =
        check_layer_files(find_layer_files(dir, m, rule, end), m, rule, end);
    if (files.empty()) {
        report(end.why.empty() ? "no layer files for m=" + std::to_string(m) + " " +
                                     rule_name(rule) + " in " + dir
                               : end.why);
        return nullptr;
    }
    std::vector<uint64_t> twin_bytes(files.size(), 0);  // each current twin's size
    for (size_t s = 0; s < files.size(); ++s) {
        std::error_code ec;
        if (twin_current(dir, m, rule, static_cast<int>(s), *files[s])) {
            const auto size = std::filesystem::file_size(twin_path(dir, m, rule, int(s)), ec);
            twin_bytes[s] = ec ? 0 : static_cast<uint64_t>(size);
        }
    }
    const Holding holding = choose_holding(files, twin_bytes, memory_bytes, layout, raw_top_bytes);
    auto db = std::make_unique<FileDatabase>(m, rule);
    const uint64_t used = hold_layers(*db, files, holding, dir, m, rule, end);
    if (db->layers_.empty()) {  // layer 0 failed its checks
        report(end.why);
        return nullptr;
    }
    add_block_cache(*db, used, memory_bytes);
    db->held_ = used + (db->cache_ ? db->cache_->bytes() : 0);
    report(end.why.empty() ? "" : using_layers(db->layers_.size()));
    return db;
}

}  // namespace kalah::db
