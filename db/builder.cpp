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
#include "db/groups.h"
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

// Where a position of the layer under construction has its memo entry. Whole: the memo is
// the layer, the slot the position's rank.
template <int M>
struct WholeMemo {
    uint64_t slot(Cells pits) const { return rank_cells<M>(pits); }
};

// The memo holds the pair of groups {a, s - a} (db/groups.h): group a first, then group
// s - a (none when they are one), each in group order.
template <int M>
struct PairMemo {
    PairMemo(int layer, int group) : s(layer), a(group), first(group_size(M, layer, group)) {
        for (int t = 0; t <= layer; ++t) rows[t] = layer_size(M, t);
    }
    uint64_t slot(Cells pits) const {
        constexpr uint64_t kRow = (uint64_t(1) << (8 * M)) - 1;
        const uint64_t own = static_cast<uint64_t>(pits) & kRow;
        const uint64_t opp = static_cast<uint64_t>(pits >> (8 * (M + 1))) & kRow;
        const int t = sow::byte_sum(own);
        return (t == a ? 0 : first) + rank_row<M>(own) * rows[s - t] + rank_row<M>(opp);
    }
    int s, a;
    uint64_t first;                     // entries of group a
    uint64_t rows[kMaxSeeds + 1] = {};  // rows[t] = M-pit rows of total t
};

// One layer under construction: the memo is `cur` (the layer, or the pair of groups being
// solved), the lower layers are complete. M and the rule are template parameters, and
// positions are raw cells (core/sow.h), so that the move, the child's rank and the probe
// are inlined into one loop with no Board in memory.
template <int M, Rule R, class Memo = WholeMemo<M>>
class LayerBuilder {
  public:
    LayerBuilder(int s, int8_t* cur, const LayerSet& lower, Memo memo = {})
        : s_(s), cur_(cur), lower_(lower), memo_(memo) {}

    // Value of the pits (zero stores), whose memo slot is r.
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
                if (k.s2 != s_) {
                    k.r2 = rank_cells<M>(k.pits);
                    lower_.prefetch(k.s2, k.r2);
                } else {
                    k.r2 = memo_.slot(k.pits);
                    __builtin_prefetch(&cur_[k.r2]);
                }
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
    Memo memo_;
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

// Opponent rows a tile of solve_by_opponent_rows (results/db.md: 4 to 1024 measured,
// 64 and 256 best).
constexpr int kTileRows = 64;

// Solves the positions of layer s whose mover's row holds a total in own_totals, into the
// builder's memo, in opponent-row order: for each tile of consecutive opponent rows (of one
// total), every mover's row, the tile's rows innermost. Why this order: a move that ends
// the turn gives a child whose mover's row is the opponent's row, plus the seeds sown
// there, and the layers' index keeps the positions of one mover's row in one run of
// entries (db/index.h). So the children of a tile's positions fall in a few short runs of
// each lower layer, which stay in the cache, where the index order sends them to random
// places of gigabytes. The memo's own entries, a tile's run for each mover's row, are the
// random reads instead: one a row, prefetched a few rows ahead. Memo slots are affine in
// the opponent row's rank for a fixed mover's row (WholeMemo and PairMemo alike), so a
// tile's slots are one slot and the next ones.
template <int M, Rule R, class Memo>
void solve_by_opponent_rows(int s, const std::vector<int>& own_totals, int8_t* memo_bytes,
                            const LayerSet& lower, const Memo& memo, uint64_t before,
                            uint64_t total,
                            const std::function<void(uint64_t, uint64_t)>& on_progress) {
    LayerBuilder<M, R, Memo> builder(s, memo_bytes, lower, memo);
    constexpr int kAhead = 4;  // mover's rows between a memo prefetch and its use
    constexpr uint64_t kRow = (uint64_t(1) << (8 * M)) - 1;
    // Work items: (mover's total, first opponent row of the tile), in order.
    struct Item {
        int a;
        uint64_t first;
    };
    std::vector<Item> items;
    for (int a : own_totals) {
        const uint64_t opp_rows = layer_size(M, s - a);
        for (uint64_t j = 0; j < opp_rows; j += kTileRows) items.push_back({a, j});
    }
    std::atomic<uint64_t> done{0};
    auto last_report = Clock::now();
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t it = 0; it < static_cast<int64_t>(items.size()); ++it) {
        const int a = items[it].a, t = s - a;
        const uint64_t opp_rows = layer_size(M, t);
        const int rows =
            static_cast<int>(std::min<uint64_t>(kTileRows, opp_rows - items[it].first));
        // The tile's opponent rows, in rank order.
        Cells opp[kTileRows];
        {
            uint8_t o[8] = {};
            unrank(items[it].first, t, M, o);
            for (int k = 0; k < rows; ++k) {
                uint64_t row;
                std::memcpy(&row, o, 8);
                opp[k] = Cells(row & kRow) << (8 * (M + 1));
                next_configuration(o, M);
            }
        }
        const Cells opp0 = opp[0];
        uint8_t own[8] = {}, ahead[8] = {};
        unrank(0, a, M, own);
        unrank(0, a, M, ahead);
        bool more_ahead = true;
        for (int k = 0; k < kAhead && more_ahead; ++k) more_ahead = next_configuration(ahead, M);
        const uint64_t own_rows = layer_size(M, a);
        for (uint64_t i = 0; i < own_rows; ++i) {
            uint64_t row;
            if (more_ahead) {
                std::memcpy(&row, ahead, 8);
                __builtin_prefetch(&memo_bytes[memo.slot(Cells(row & kRow) | opp0)]);
                more_ahead = next_configuration(ahead, M);
            }
            std::memcpy(&row, own, 8);
            const Cells mover = Cells(row & kRow);
            const uint64_t base = memo.slot(mover | opp0);
            for (int k = 0; k < rows; ++k) {
                if (std::atomic_ref<int8_t>(memo_bytes[base + k]).load(std::memory_order_relaxed) ==
                    kUnknown)
                    builder.value(mover | opp[k], base + k);
            }
            next_configuration(own, M);
        }
        const uint64_t d = done.fetch_add(uint64_t(rows) * own_rows, std::memory_order_relaxed) +
                           uint64_t(rows) * own_rows;
        if (on_progress && omp_get_thread_num() == 0 && since(last_report) >= 1.0) {
            last_report = Clock::now();
            on_progress(before + d, total);
        }
    }
}

template <int M, Rule R>
void solve_layer(int s, int8_t* cur, uint64_t n, const LayerSet& lower,
                 const std::function<void(uint64_t, uint64_t)>& on_progress) {
    std::vector<int> own_totals;
    for (int a = 0; a <= s; ++a) own_totals.push_back(a);
    solve_by_opponent_rows<M, R>(s, own_totals, cur, lower, WholeMemo<M>{}, 0, n, on_progress);
}

// Calls f.template operator()<M, R>() for the kernel of (m, rule).
template <class F>
void dispatch(int m, Rule rule, F&& f) {
    auto with_rule = [&]<int M>() {
        if (rule == Rule::EmptyCapture)
            f.template operator()<M, Rule::EmptyCapture>();
        else
            f.template operator()<M, Rule::Standard>();
    };
    switch (m) {
        case 1:
            with_rule.template operator()<1>();
            break;
        case 2:
            with_rule.template operator()<2>();
            break;
        case 3:
            with_rule.template operator()<3>();
            break;
        case 4:
            with_rule.template operator()<4>();
            break;
        case 5:
            with_rule.template operator()<5>();
            break;
        default:
            with_rule.template operator()<6>();
            break;
    }
}

// Solves the pair of groups {a, s - a} of layer s into memo (group a, then group s - a:
// PairMemo's layout). Progress is reported as `before` + the entries of this pair done.
template <int M, Rule R>
void solve_pair(int s, int a, int8_t* memo, const LayerSet& lower, uint64_t before, uint64_t total,
                const std::function<void(uint64_t, uint64_t)>& on_progress) {
    const PairMemo<M> pm(s, a);
    const int b = s - a;
    const uint64_t na = pm.first, nb = a == b ? 0 : group_size(M, s, b);
    std::fill(memo, memo + na + nb, kUnknown);
    std::vector<int> own_totals{a};
    if (b != a) own_totals.push_back(b);
    solve_by_opponent_rows<M, R>(s, own_totals, memo, lower, pm, before, total, on_progress);
}

// Solves layer s group pair by group pair into its group files in dir (db/groups.h); a
// pair whose files are already there, every byte checked, is kept (a resumed build).
// After each pair: on_pair(a, kept, entries done, entries of the layer).
void solve_groups(int m, Rule rule, int s, const LayerSet& lower, const std::string& dir,
                  const std::function<void(uint64_t, uint64_t)>& on_progress,
                  const std::function<void(int, bool, uint64_t, uint64_t)>& on_pair) {
    const uint64_t total = layer_size(2 * m, s);
    std::vector<int8_t> memo;
    uint64_t done = 0;
    for (int a = 0; 2 * a <= s; ++a) {
        const int b = s - a;
        const uint64_t na = group_size(m, s, a), nb = a == b ? 0 : group_size(m, s, b);
        auto path = [&](int g) {
            return (std::filesystem::path(dir) / group_file_name(m, rule, s, g)).string();
        };
        if (group_file_ok(path(a), m, rule, s, a) && group_file_ok(path(b), m, rule, s, b)) {
            done += na + nb;
            on_pair(a, true, done, total);
            continue;
        }
        if (memo.empty()) memo.resize(largest_pair(m, s));
        dispatch(m, rule, [&]<int M, Rule R>() {
            solve_pair<M, R>(s, a, memo.data(), lower, done, total, on_progress);
        });
        if (const int cut = lower.faulted_layer(); cut >= 0)
            throw FormatError(PackedLayer::file_name(m, rule, cut) + ": truncated while mapped");
        write_group_file(path(a), m, rule, s, a, memo.data());
        if (b != a) write_group_file(path(b), m, rule, s, b, memo.data() + na);
        done += na + nb;
        on_pair(a, false, done, total);
    }
}

}  // namespace

std::vector<int8_t> build_layer(int m, Rule rule, int s, const LayerSet& lower,
                                const std::function<void(uint64_t, uint64_t)>& on_progress) {
    const uint64_t n = layer_size(2 * m, s);
    std::vector<int8_t> cur(n, kUnknown);
    dispatch(m, rule,
             [&]<int M, Rule R>() { solve_layer<M, R>(s, cur.data(), n, lower, on_progress); });
    return cur;
}

uint64_t build_memory_bytes(int m, int max_seeds, BuildOptions::Lower lower,
                            BuildOptions::Top top) {
    using Lower = BuildOptions::Lower;
    const uint64_t top_n = layer_size(2 * m, max_seeds);
    const uint64_t below = max_seeds > 0 ? layer_size(2 * m + 1, max_seeds - 1) : 0;
    // The packed lower layers take at most 0.5625 bytes an entry up to 30 seeds
    // (results/db.md, "Packed layers in memory").
    const uint64_t below_packed = below / 2 + below / 16;
    if (top == BuildOptions::Top::Groups) {
        // While the pairs are solved: the lower layers as held, the largest pair's memo.
        // While they merge (the lower layers released): the top layer's twin packed in
        // memory, the writer's batch of blocks and frames and a buffer a group file.
        const uint64_t held = lower == Lower::Raw || lower == Lower::Auto ? below : below_packed;
        const uint64_t solve = held + largest_pair(m, max_seeds);
        const uint64_t merge = top_n / 2 + top_n / 16 + (uint64_t(256) << 20) +
                               uint64_t(max_seeds + 1) * (uint64_t(4) << 20);
        // Before them, the layer under the top is solved whole, the layers below it held
        // alike (at 34 seeds with packed lower layers that is the build's peak: 31 GB).
        const uint64_t under =
            max_seeds > 0 ? build_memory_bytes(m, max_seeds - 1, lower, BuildOptions::Top::Whole)
                          : 0;
        return std::max({solve, merge, under});
    }
    // All layers 0..K resident (one byte per entry, = the layer size of K over 2m+1 pits),
    // plus the compressed copy of the top layer while it is written (assume <= 1/2), plus
    // its packed twin while that is packed and written (about half a byte an entry, counted
    // as one: with the smaller figure the bound fell below the peak memory of a deep build;
    // results/db.md).
    if (lower == Lower::Raw || lower == Lower::Auto) return below + top_n + top_n / 2 + top_n;
    // The top layer one byte an entry, the layers below it packed, plus the write buffer
    // and the twin as above.
    if (lower == Lower::Packed) return top_n + below_packed + top_n / 2 + top_n;
    // Mapped: the lower layers are read while the top layer is solved, the write buffer and
    // the twin are held only after, when the kernel may drop the lower layers' pages (the
    // page cache's, not the process's): the larger of the two phases.
    return top_n + std::max(below_packed, top_n / 2 + top_n);
}

BuildPlan build_plan_of(const BuildOptions& opts) {
    using Lower = BuildOptions::Lower;
    using Top = BuildOptions::Top;
    if (opts.lower == Lower::Mapped && !opts.twins)
        throw std::invalid_argument(
            "--lower-layers mapped reads the packed twins: it cannot go with --no-packed-twins");
    // The choices in the order of the memory they need, most first (each holds less than
    // the one before at every K: the packed lower layers take at most 0.5625 bytes an entry,
    // and the top layer's write is counted in each); the top layer whole before in groups.
    std::vector<Lower> lowers;
    if (opts.lower != Lower::Auto)
        lowers = {opts.lower};
    else if (opts.twins)
        lowers = {Lower::Raw, Lower::Packed, Lower::Mapped};
    else
        lowers = {Lower::Raw, Lower::Packed};
    std::vector<Top> tops;
    if (opts.top != Top::Auto)
        tops = {opts.top};
    else
        tops = {Top::Whole, Top::Groups};
    const double have = opts.memory_gb * double(1ull << 30);  // GiB, as --db-memory-gb
    auto fits = [&](int k, Lower l, Top t) {
        return static_cast<double>(build_memory_bytes(opts.m, k, l, t)) <= have;
    };
    for (Top t : tops)
        for (Lower l : lowers)
            if (fits(opts.max_seeds, l, t)) return {l, t};
    const Lower least = lowers.back();
    const Top least_top = tops.back();
    int fit = opts.max_seeds;
    while (fit > 0 && !fits(fit, least, least_top)) --fit;
    char buf[160];
    std::snprintf(
        buf, sizeof buf,
        "layers 0..%d need %.2f GiB, above --memory-gb %.2f (at most --max-seeds %d fits)",
        opts.max_seeds,
        build_memory_bytes(opts.m, opts.max_seeds, least, least_top) / double(1ull << 30),
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
    build_plan_of(opts);
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

// Calls pull(first, count, buf) for the n values of a layer in chunks, in order.
template <class Pull>
void pull_all(uint64_t n, uint64_t chunk, Pull&& pull) {
    std::vector<int8_t> buf(std::min(n, chunk));
    for (uint64_t first = 0; first < n; first += chunk)
        pull(first, std::min(chunk, n - first), buf.data());
}

// The progress line of layer s (a terminal's: it is overwritten).
void log_progress(std::ostream& log, int s, Clock::time_point t0, uint64_t done, uint64_t total) {
    const double el = since(t0);
    const double r = done / std::max(el, 1e-9);
    char buf[160];
    std::snprintf(buf, sizeof buf, "\rlayer %d: %5.1f%%  %.2f M/s  ETA %s    ", s,
                  100.0 * done / total, r / 1e6,
                  fmt_duration((total - done) / std::max(r, 1.0)).c_str());
    log << buf << std::flush;
}

// Throws std::logic_error naming the layer file if values[0..n) holds an entry that is not
// a value of layer s (in [-s, s], of s's parity): kUnknown is an entry the builder never
// solved. Checked before a layer file is written, so that no such file is ever written.
void check_solved(const int8_t* values, uint64_t n, int s, uint64_t first,
                  const std::string& path) {
    if (const uint64_t i = first_non_value(values, n, s); i < n)
        throw std::logic_error("not written: " + path + ": entry " + std::to_string(first + i) +
                               " is " + std::to_string(int(values[i])) +
                               ", not a value of the layer (a builder's error)");
}

// The top layer s = opts.max_seeds solved in groups (BuildOptions::Top::Groups), or its
// file reused, without its values ever held whole: they stream, in rank order, from the
// group files (or the layer file) into the layer file's writer, the value hash and the
// packed twin. `layers` (the lower layers) is released before the merge.
LayerStats top_in_groups(const BuildOptions& opts, LayerSet& layers, std::ostream* log, bool tty) {
    const int s = opts.max_seeds;
    const uint64_t n = layer_size(2 * opts.m, s);
    const std::filesystem::path dir(opts.dir);
    const std::string path = (dir / layer_file_name(opts.m, opts.rule, s)).string();
    const std::string twin = (dir / PackedLayer::file_name(opts.m, opts.rule, s)).string();
    LayerStats st;
    st.s = s;
    st.entries = n;
    std::unique_ptr<LayerFile> f;
    if (entry_present(path)) {
        refuse_unless_regular(path);
        try {
            f = LayerFile::open(path, opts.m, opts.rule, s);
        } catch (const FormatError& e) {
            if (log) *log << "rebuilding " << e.what() << "\n";
        }
    }
    if (opts.twins && entry_present(twin)) refuse_unless_regular(twin);
    constexpr uint64_t kChunk = uint64_t(1) << 24;  // entries a pull (a multiple of kGroup)
    if (f) {
        // Reused: its values streamed once for the value hash (each block's checksum checked
        // as it is decoded), and for the twin if that is missing or does not check out. A
        // damaged block makes it rebuilt, as in a whole build.
        try {
            Kh64Stream values(n);
            const uint64_t source = f->header().file_checksum;
            bool twin_ok = false;  // a present twin is kept if every check of read_file passes
            if (opts.twins && PackedLayer::twin_matches(twin, opts.m, opts.rule, s, source)) {
                try {
                    PackedLayer::read_file(twin, opts.m, opts.rule, s, source,
                                           PackedLayer::Load::Mapped);
                    twin_ok = true;
                } catch (const FormatError& e) {
                    if (log) *log << "rewriting " << e.what() << "\n";
                }
            }
            auto in = layer_file_stream(*f);
            auto pull = [&](uint64_t, uint64_t count, int8_t* out) {
                in->read(out, count);
                values.update(out, count);
            };
            if (opts.twins && !twin_ok)
                PackedLayer::pack_chunks(n, s, kChunk, pull)
                    .write_file(twin, opts.m, opts.rule, source);
            else
                pull_all(n, kChunk, pull);
            st.reused = true;
            st.compressed_bytes = f->compressed_bytes();
            st.value_hash = values.finish();
            return st;
        } catch (const FormatError& e) {
            if (log) *log << "rebuilding " << e.what() << "\n";
        }
    }
    Kh64Stream values(n);
    const auto t0 = Clock::now();
    const double cpu0 = cpu_now();
    int kept = 0;
    solve_groups(
        opts.m, opts.rule, s, layers, opts.dir,
        [&](uint64_t done, uint64_t total) {
            if (tty) log_progress(*log, s, t0, done, total);
        },
        [&](int a, bool was_kept, uint64_t done, uint64_t total) {
            kept += was_kept;
            // A line a pair where no progress line is drawn (a log file).
            if (!log || tty) return;
            char buf[160];
            std::snprintf(buf, sizeof buf,
                          "layer %d: groups %d and %d %s, %.1f%% done, elapsed %s\n", s, a, s - a,
                          was_kept ? "kept" : "solved", 100.0 * done / total,
                          fmt_duration(since(t0)).c_str());
            *log << buf << std::flush;
        });
    if (log && kept > 0)
        *log << (tty ? "\r" : "") << "layer " << s << ": " << kept << " of " << s / 2 + 1
             << " group pairs kept from an interrupted build\n";
    layers = LayerSet();  // not read again: their memory goes to the merge
    std::error_code ec;   // a group file that cannot be removed is left: it is only disk
    std::vector<std::string> groups;
    for (int a = 0; a <= s; ++a)
        groups.push_back((dir / group_file_name(opts.m, opts.rule, s, a)).string());
    uint64_t source;
    try {
        auto in = merge_groups(opts.dir, opts.m, opts.rule, s);
        LayerWriter writer(path, opts.m, opts.rule, s, n, opts.block_size, opts.level);
        auto pull = [&](uint64_t first, uint64_t count, int8_t* out) {
            in->read(out, count);
            check_solved(out, count, s, first, path);
            writer.append(out, count);
            values.update(out, count);
        };
        std::optional<PackedLayer> packed;
        if (opts.twins)
            packed = PackedLayer::pack_chunks(n, s, kChunk, pull);
        else
            pull_all(n, kChunk, pull);
        in->finish();  // every group file's payload checksum, before the layer file lands
        source = writer.finish();
        if (packed) packed->write_file(twin, opts.m, opts.rule, source);
    } catch (const FormatError&) {
        // A damaged group file: removed, so that the next run solves its pair again.
        for (int a = 0; a <= s; ++a)
            if (!group_file_ok(groups[a], opts.m, opts.rule, s, a))
                std::filesystem::remove(groups[a], ec);
        throw;
    } catch (const std::logic_error&) {
        // An entry no pair solved (check_solved): every group file goes, none is trusted.
        for (const std::string& g : groups) std::filesystem::remove(g, ec);
        throw;
    }
    for (const std::string& g : groups) std::filesystem::remove(g, ec);
    st.value_hash = values.finish();
    st.seconds = since(t0);
    st.cpu_seconds = cpu_now() - cpu0;
    st.compressed_bytes = std::filesystem::file_size(path);
    return st;
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
    using Top = BuildOptions::Top;
    const BuildPlan plan = build_plan_of(opts);
    const Lower lower = plan.lower;
    if (log && plan.top == Top::Groups)
        *log << "top layer solved in groups of row totals (largest pair "
             << largest_pair(opts.m, opts.max_seeds) << " entries)\n";
    if (log && lower != Lower::Raw) {
        *log << (lower == Lower::Packed ? "lower layers held packed"
                                        : "lower layers mapped from their packed twins");
        if (opts.lower == Lower::Auto)
            *log << " (" << (lower == Lower::Packed ? "one byte an entry" : "held packed")
                 << " they would need "
                 << build_memory_bytes(opts.m, opts.max_seeds,
                                       lower == Lower::Packed ? Lower::Raw : Lower::Packed,
                                       plan.top) /
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
        if (s == opts.max_seeds && plan.top == Top::Groups) {
            const LayerStats st = top_in_groups(opts, layers, log, tty);
            if (log) log_layer(*log, tty, opts.max_seeds, st, since(t_all), fmt_duration(0));
            stats.push_back(st);
            if (opts.on_layer) opts.on_layer(st);
            break;
        }
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
                if (tty) log_progress(*log, s, t0, done, total);
            };
            std::vector<int8_t> values = build_layer(opts.m, opts.rule, s, layers, progress);
            // A mapped lower layer whose file was cut meanwhile was read as zeros: nothing
            // built from it may be written.
            if (const int cut = layers.faulted_layer(); cut >= 0)
                throw FormatError(PackedLayer::file_name(opts.m, opts.rule, cut) +
                                  ": truncated while mapped");
            check_solved(values.data(), n, s, 0, path);
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
