// Layer-by-layer retrograde build with a parallel memoised depth-first pass per layer.
#include "db/builder.h"

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <ostream>
#include <stdexcept>

#include "core/notation.h"
#include "core/regular_file.h"
#include "core/sow.h"
#include "core/step.h"
#include "db/format.h"
#include "db/index.h"

namespace kalah::db {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double cpu_now() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::string fmt_duration(double sec) {
    char buf[32];
    if (sec < 60)
        std::snprintf(buf, sizeof buf, "%.1fs", sec);
    else if (sec < 3600)
        std::snprintf(buf, sizeof buf, "%dm%02ds", int(sec) / 60, int(sec) % 60);
    else
        std::snprintf(buf, sizeof buf, "%dh%02dm", int(sec) / 3600, int(sec) / 60 % 60);
    return buf;
}

// One layer under construction: the memo is `cur`, the lower layers are complete. M and
// the rule are template parameters, and positions are raw cells (core/sow.h), so that the
// move, the child's rank and the probe are inlined into one loop with no Board in memory.
template <int M, Rule R>
class LayerBuilder {
  public:
    LayerBuilder(int s, int8_t* cur, const LayerSet& lower) : s_(s), cur_(cur), lower_(lower) {}

    // The cells of configuration c (db/index.h; c has 16 readable bytes): the mover's
    // pits at bytes 0..M-1, the opponent's at M+1..2M, empty stores.
    static Cells cells_of(const uint8_t* c) {
        uint64_t own, opp;
        std::memcpy(&own, c, 8);
        std::memcpy(&opp, c + M, 8);
        return Cells(own & kRow) | (Cells(opp & kRow) << (8 * (M + 1)));
    }

    // Value of the pits (zero stores), whose rank in this layer is r.
    int value(Cells pits, uint64_t r) {
        std::atomic_ref<int8_t> slot(cur_[r]);
        const int8_t known = slot.load(std::memory_order_relaxed);
        if (known != kUnknown) return known;
        const uint64_t own = static_cast<uint64_t>(pits) & kRow;
        const uint64_t opp = static_cast<uint64_t>(pits >> (8 * (M + 1))) & kRow;
        int best;
        if (own == 0 || opp == 0) {
            best = sow::byte_sum(own) - sow::byte_sum(opp);
        } else {
            // Two passes: play every move and prefetch the children's entries (random
            // reads in layers of up to a GB), then combine. Per move: the gain, whether
            // the mover moves again, and where the child's value is (s2 = -1: the move
            // ended the game, the gain is the final margin).
            struct Child {
                Cells pits;
                uint64_t r2;
                MoveStep step;  // gain and extra (over is s2 = -1)
                int s2;
            };
            Child kids[M];
            int count = 0;
            for (unsigned mask = sow::nonempty_mask(own); mask; mask &= mask - 1) {
                Cells c = pits;
                Side side = Side::South;
                const uint32_t bits = sow::play_fixed<M>(c, side, __builtin_ctz(mask), R);
                Child& k = kids[count++];
                const int own_store = static_cast<int>(static_cast<uint64_t>(c >> (8 * M)) & 0xff);
                const int opp_store =
                    static_cast<int>(static_cast<uint64_t>(c >> (8 * (2 * M + 1))) & 0xff);
                const bool over = bits & 0x100;  // the rows were swept into the stores
                k.step.extra = bits & 1;
                k.step.gain = gain_from_stores(own_store, opp_store, k.step.extra, over);
                if (over) {
                    k.s2 = -1;
                    continue;
                }
                k.s2 = s_ - own_store - opp_store;
                k.pits = c & kPits;
                k.r2 = rank_cells<M>(k.pits);
                if (k.s2 != s_)
                    lower_.prefetch(k.s2, k.r2);
                else
                    __builtin_prefetch(&cur_[k.r2]);
            }
            best = -1000;
            for (int i = 0; i < count; ++i) {
                const Child& k = kids[i];
                int v = k.step.gain;  // the final margin if the move ends the game
                if (k.s2 >= 0) {
                    const int child = k.s2 == s_ ? value(k.pits, k.r2) : lower_.get(k.s2, k.r2);
                    v = k.step.value(child);
                }
                if (v > best) best = v;
            }
        }
        slot.store(static_cast<int8_t>(best), std::memory_order_relaxed);
        return best;
    }

  private:
    static constexpr uint64_t kRow = (uint64_t(1) << (8 * M)) - 1;
    static constexpr Cells kPits = Cells(kRow) | (Cells(kRow) << (8 * (M + 1)));

    int s_;
    int8_t* cur_;
    const LayerSet& lower_;
};

}  // namespace

void LayerSet::pack(int s) {
    Layer& l = layers_[s];
    if (l.is_packed) return;
    hold(s, PackedLayer::pack(l.raw.data(), l.raw.size(), s));
}

void LayerSet::hold(int s, PackedLayer p) {
    Layer& l = layers_[s];
    l.packed = std::move(p);
    l.is_packed = true;
    std::vector<int8_t>().swap(l.raw);
}

int LayerSet::faulted_layer() const {
    for (int s = 0; s < size(); ++s)
        if (layers_[s].is_packed && layers_[s].packed.faulted()) return s;
    return -1;
}

namespace {

template <int M, Rule R>
void solve_layer(int s, int8_t* cur, uint64_t n, const LayerSet& lower,
                 const std::function<void(uint64_t, uint64_t)>& on_progress) {
    LayerBuilder<M, R> builder(s, cur, lower);
    constexpr uint64_t kChunk = 1 << 14;
    const int64_t chunks = static_cast<int64_t>((n + kChunk - 1) / kChunk);
    std::atomic<int64_t> done{0};
    auto last_report = Clock::now();
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t ch = 0; ch < chunks; ++ch) {
        const uint64_t begin = static_cast<uint64_t>(ch) * kChunk;
        const uint64_t end = std::min(n, begin + kChunk);
        uint8_t c[16] = {};  // 2M counts, then zeros that cells_of may read
        unrank(begin, s, 2 * M, c);
        for (uint64_t r = begin; r < end; ++r) {
            if (std::atomic_ref<int8_t>(cur[r]).load(std::memory_order_relaxed) == kUnknown)
                builder.value(builder.cells_of(c), r);
            next_configuration(c, 2 * M);
        }
        const int64_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
        if (on_progress && omp_get_thread_num() == 0 && since(last_report) >= 1.0) {
            last_report = Clock::now();
            on_progress(std::min(n, static_cast<uint64_t>(d) * kChunk), n);
        }
    }
}

template <int M>
void solve_layer(Rule rule, int s, int8_t* cur, uint64_t n, const LayerSet& lower,
                 const std::function<void(uint64_t, uint64_t)>& on_progress) {
    if (rule == Rule::EmptyCapture)
        solve_layer<M, Rule::EmptyCapture>(s, cur, n, lower, on_progress);
    else
        solve_layer<M, Rule::Standard>(s, cur, n, lower, on_progress);
}

}  // namespace

std::vector<int8_t> build_layer(int m, Rule rule, int s, const LayerSet& lower,
                                const std::function<void(uint64_t, uint64_t)>& on_progress) {
    const uint64_t n = layer_size(2 * m, s);
    std::vector<int8_t> cur(n, kUnknown);
    switch (m) {
        case 1:
            solve_layer<1>(rule, s, cur.data(), n, lower, on_progress);
            break;
        case 2:
            solve_layer<2>(rule, s, cur.data(), n, lower, on_progress);
            break;
        case 3:
            solve_layer<3>(rule, s, cur.data(), n, lower, on_progress);
            break;
        case 4:
            solve_layer<4>(rule, s, cur.data(), n, lower, on_progress);
            break;
        case 5:
            solve_layer<5>(rule, s, cur.data(), n, lower, on_progress);
            break;
        default:
            solve_layer<6>(rule, s, cur.data(), n, lower, on_progress);
            break;
    }
    return cur;
}

uint64_t build_memory_bytes(int m, int max_seeds, BuildOptions::Lower lower) {
    using Lower = BuildOptions::Lower;
    // All layers 0..K resident (one byte per entry, = the layer size of K over 2m+1 pits),
    // plus the compressed copy of the top layer while it is written (assume <= 1/2), plus
    // its packed twin while that is packed and written (about half a byte an entry, counted
    // as one: with the smaller figure the bound fell below the peak memory of a deep build;
    // results/db.md).
    const uint64_t top = layer_size(2 * m, max_seeds);
    if (lower == Lower::Raw || lower == Lower::Auto)
        return layer_size(2 * m + 1, max_seeds) + top / 2 + top;
    // The top layer one byte an entry, the layers below it packed (at most 0.5625 bytes an
    // entry up to 30 seeds: results/db.md, "Packed layers in memory"), plus the write buffer
    // and the twin as above.
    const uint64_t below = max_seeds > 0 ? layer_size(2 * m + 1, max_seeds - 1) : 0;
    const uint64_t below_packed = below / 2 + below / 16;
    if (lower == Lower::Packed) return top + below_packed + top / 2 + top;
    // Mapped: the lower layers are read while the top layer is solved, the write buffer and
    // the twin are held only after, when the kernel may drop the lower layers' pages (the
    // page cache's, not the process's): the larger of the two phases.
    return top + std::max(below_packed, top / 2 + top);
}

BuildOptions::Lower lower_layers_of(const BuildOptions& opts) {
    using Lower = BuildOptions::Lower;
    if (opts.lower == Lower::Mapped && !opts.twins)
        throw std::invalid_argument(
            "--lower-layers mapped reads the packed twins: it cannot go with --no-packed-twins");
    // The choices in the order of the memory they need, most first (each holds less than
    // the one before at every K: the packed lower layers take at most 0.5625 bytes an entry,
    // and the top layer's write is counted in each).
    std::vector<Lower> choices;
    if (opts.lower != Lower::Auto)
        choices = {opts.lower};
    else if (opts.twins)
        choices = {Lower::Raw, Lower::Packed, Lower::Mapped};
    else
        choices = {Lower::Raw, Lower::Packed};
    const double have = opts.memory_gb * double(1ull << 30);  // GiB, as --db-memory-gb
    auto fits = [&](int k, Lower l) {
        return static_cast<double>(build_memory_bytes(opts.m, k, l)) <= have;
    };
    for (Lower l : choices)
        if (fits(opts.max_seeds, l)) return l;
    const Lower least = choices.back();
    int fit = opts.max_seeds;
    while (fit > 0 && !fits(fit, least)) --fit;
    char buf[160];
    std::snprintf(
        buf, sizeof buf,
        "layers 0..%d need %.2f GiB, above --memory-gb %.2f (at most --max-seeds %d fits)",
        opts.max_seeds, build_memory_bytes(opts.m, opts.max_seeds, least) / double(1ull << 30),
        opts.memory_gb, fit);
    throw std::invalid_argument(buf);
}

namespace {

// Throws std::invalid_argument, with the flag's name, for an option out of range or a
// build whose layers would not fit in --memory-gb.
void check_build_options(const BuildOptions& opts) {
    if (opts.m < 1 || opts.m > kMaxPits) throw std::invalid_argument("--pits must be 1..6");
    if (opts.max_seeds < 0 || opts.max_seeds > kMaxSeeds)
        throw std::invalid_argument("--max-seeds must be 0.." + std::to_string(kMaxSeeds));
    if (opts.threads < 0) throw std::invalid_argument("--threads must be >= 0");
    if (!(opts.memory_gb > 0) || !std::isfinite(opts.memory_gb))
        throw std::invalid_argument("--memory-gb must be a positive number");
    if (opts.block_size < kMinBlockSize || opts.block_size > kMaxBlockSize)
        throw std::invalid_argument("--block-entries must be " + std::to_string(kMinBlockSize) +
                                    ".." + std::to_string(kMaxBlockSize));
    if (opts.level < 1 || opts.level > kMaxZstdLevel)
        throw std::invalid_argument("--zstd-level must be 1.." + std::to_string(kMaxZstdLevel));
    lower_layers_of(opts);
}

// Whether the directory holds an entry of that name (lstat: a dangling symbolic link too).
bool entry_present(const std::string& path) {
    std::error_code ec;
    return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
}

// A layer file or twin the build would replace must be a regular file: what else stands
// under its name (a directory, a FIFO, a symbolic link loop) was put there by someone,
// and is reported as the search commands report it (FormatError, exit 1), not replaced.
void refuse_unless_regular(const std::string& path) {
    std::string why;
    const int fd = open_regular_file(path, O_RDONLY, &why);
    if (fd < 0) throw FormatError(std::filesystem::path(path).filename().string() + ": " + why);
    ::close(fd);
}

// The log line of a finished (built or reused) layer, with the build's elapsed time and
// ETA; on a terminal it overwrites the progress line.
void log_layer(std::ostream& log, bool tty, int max_seeds, const LayerStats& st, double elapsed,
               const std::string& eta) {
    const uint64_t n = st.entries;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%slayer %d/%d: %llu entries, %s (%.2f M/s, cpu %.1fs), %.1f MB -> %.1f MB "
                  "(%.2fx), values %016llx; elapsed %s, ETA %s\n",
                  tty ? "\r" : "", st.s, max_seeds, (unsigned long long)n,
                  st.reused ? "reused" : fmt_duration(st.seconds).c_str(),
                  st.reused ? 0.0 : n / std::max(st.seconds, 1e-9) / 1e6, st.cpu_seconds, n / 1e6,
                  st.compressed_bytes / 1e6, double(n) / std::max<uint64_t>(st.compressed_bytes, 1),
                  (unsigned long long)st.value_hash, fmt_duration(elapsed).c_str(), eta.c_str());
    log << buf << std::flush;
}

}  // namespace

std::vector<LayerStats> build_database(const BuildOptions& opts) {
    check_build_options(opts);
    if (opts.threads > 0) omp_set_num_threads(opts.threads);
    std::error_code ec;
    std::filesystem::create_directories(opts.dir, ec);
    if (ec)
        throw std::invalid_argument("cannot create directory " + opts.dir + ": " + ec.message());

    std::ostream* log = opts.log;
    const bool tty = log != nullptr && ::isatty(2);
    // A killed build leaves its temporary file behind: remove it (the layer is rebuilt).
    for (const std::string& name : remove_stale_temporaries(opts.dir, opts.m, opts.rule))
        if (log) *log << "removed " << name << " (left by an interrupted build)\n";
    using Lower = BuildOptions::Lower;
    const Lower lower = lower_layers_of(opts);
    if (log && lower != Lower::Raw) {
        *log << (lower == Lower::Packed ? "lower layers held packed"
                                        : "lower layers mapped from their packed twins");
        if (opts.lower == Lower::Auto)
            *log << " (" << (lower == Lower::Packed ? "one byte an entry" : "held packed")
                 << " they would need "
                 << build_memory_bytes(opts.m, opts.max_seeds,
                                       lower == Lower::Packed ? Lower::Raw : Lower::Packed) /
                        double(1ull << 30)
                 << " GiB, above --memory-gb)";
        *log << "\n";
    }
    LayerSet layers;
    std::vector<LayerStats> stats;
    uint64_t total_left = layer_size(2 * opts.m + 1, opts.max_seeds);
    double rate = 0;  // entries per second of the last built layer
    const auto t_all = Clock::now();
    for (int s = 0; s <= opts.max_seeds; ++s) {
        const std::string path =
            (std::filesystem::path(opts.dir) / layer_file_name(opts.m, opts.rule, s)).string();
        const uint64_t n = layer_size(2 * opts.m, s);
        LayerStats st;
        st.s = s;
        st.entries = n;
        uint64_t source = 0;  // the layer file's checksum, which its packed twin names
        if (entry_present(path)) {
            refuse_unless_regular(path);
            try {
                auto f = LayerFile::open(path, opts.m, opts.rule, s);
                layers.add(f->read_all());
                st.reused = true;
                st.compressed_bytes = f->compressed_bytes();
                source = f->header().file_checksum;
            } catch (const FormatError& e) {
                if (log) *log << "rebuilding " << e.what() << "\n";
            }
        }
        if (!st.reused) {
            const auto t0 = Clock::now();
            const double cpu0 = cpu_now();
            auto progress = [&](uint64_t done, uint64_t total) {
                if (!tty) return;
                const double el = since(t0);
                const double r = done / std::max(el, 1e-9);
                char buf[160];
                std::snprintf(buf, sizeof buf, "\rlayer %d: %5.1f%%  %.2f M/s  ETA %s    ", s,
                              100.0 * done / total, r / 1e6,
                              fmt_duration((total - done) / std::max(r, 1.0)).c_str());
                *log << buf << std::flush;
            };
            std::vector<int8_t> values = build_layer(opts.m, opts.rule, s, layers, progress);
            // A mapped lower layer whose file was cut meanwhile was read as zeros: nothing
            // built from it may be written.
            if (const int cut = layers.faulted_layer(); cut >= 0)
                throw FormatError(PackedLayer::file_name(opts.m, opts.rule, cut) +
                                  ": truncated while mapped");
            layers.add(std::move(values));
            write_layer(path, opts.m, opts.rule, s, layers.raw(s).data(), n, opts.block_size,
                        opts.level);
            st.seconds = since(t0);
            st.cpu_seconds = cpu_now() - cpu0;
            st.compressed_bytes = std::filesystem::file_size(path);
            source = LayerFile::open(path, opts.m, opts.rule, s)->header().file_checksum;
            rate = n / std::max(st.seconds, 1e-9);
        }
        st.value_hash = kh64(layers.raw(s).data(), n);
        // How this layer is held while the higher ones are built (the top one is not).
        const Lower held = s < opts.max_seeds ? lower : Lower::Raw;
        const std::string twin =
            (std::filesystem::path(opts.dir) / PackedLayer::file_name(opts.m, opts.rule, s))
                .string();
        const auto twin_load =
            held == Lower::Mapped ? PackedLayer::Load::Mapped : PackedLayer::Load::Copy;
        // A present twin is kept if it passes every check of read_file (a damaged or
        // stale one is rewritten); mapped, it is the layer's form from here on.
        std::optional<PackedLayer> read_twin;
        if (opts.twins && entry_present(twin)) refuse_unless_regular(twin);
        if (opts.twins && PackedLayer::twin_matches(twin, opts.m, opts.rule, s, source)) {
            try {
                read_twin = PackedLayer::read_file(twin, opts.m, opts.rule, s, source, twin_load);
            } catch (const FormatError& e) {
                if (log) *log << "rewriting " << e.what() << "\n";
            }
        }
        if (held == Lower::Packed) layers.pack(s);
        if (opts.twins && !read_twin) {
            if (held == Lower::Packed)
                layers.packed_layer(s).write_file(twin, opts.m, opts.rule, source);
            else
                PackedLayer::pack(layers.raw(s).data(), n, s)
                    .write_file(twin, opts.m, opts.rule, source);
            if (held == Lower::Mapped)
                read_twin = PackedLayer::read_file(twin, opts.m, opts.rule, s, source, twin_load);
        }
        if (held == Lower::Mapped) layers.hold(s, std::move(*read_twin));
        total_left -= n;
        if (log)
            log_layer(*log, tty, opts.max_seeds, st, since(t_all),
                      rate > 0 ? fmt_duration(total_left / rate) : "?");
        stats.push_back(st);
        if (opts.on_layer) opts.on_layer(st);
    }
    return stats;
}

}  // namespace kalah::db
