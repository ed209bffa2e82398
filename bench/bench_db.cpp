// Google Benchmark: endgame database probe latency, resident layers and the block cache.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <vector>

#include "db/builder.h"
#include "db/database.h"
#include "db/format.h"
#include "db/index.h"
#include "db/packed.h"

namespace {
namespace db = kalah::db;
using kalah::Board;
using kalah::Rule;

// The database probed: $KALAH_BENCH_DB (an m = 6 standard directory) if set, else layers
// 0..kK of m = 6 built once into a temp directory (a few seconds).
constexpr int kK = 16;

struct Fixture {
    std::string dir;
    bool temp = false;
    int k = kK;
    uint32_t top_block = db::kDefaultBlockSize;  // entries per block of the top layer's file
    Fixture() {
        if (const char* env = std::getenv("KALAH_BENCH_DB")) {
            dir = env;
        } else {
            dir = (std::filesystem::temp_directory_path() /
                   ("kalah_bench_db_" + std::to_string(::getpid())))
                      .string();
            temp = true;
            db::BuildOptions o;
            o.dir = dir;
            o.m = 6;
            o.max_seeds = kK;
            db::build_database(o);
        }
        std::string why;
        auto d = db::Database::open(dir, 6, Rule::Standard, size_t(1) << 34, &why);
        if (!d) throw std::runtime_error(why);
        k = d->max_seeds();
        top_block = db::LayerFile::open(dir + "/" + db::layer_file_name(6, Rule::Standard, k), 6,
                                        Rule::Standard, k)
                        ->header()
                        .block_size;
    }
    ~Fixture() {
        if (temp) std::filesystem::remove_all(dir);
    }
};

Fixture& fixture() {
    static Fixture f;
    return f;
}

// Random configurations of the top layer (the one the search meets first), with ranks
// below `limit` (0: the whole layer).
std::vector<Board> positions(int s, size_t count, uint64_t limit = 0) {
    std::mt19937_64 rng(3);
    std::vector<Board> out;
    for (size_t i = 0; i < count; ++i) {
        uint8_t c[12];
        db::unrank(rng() % (limit ? limit : db::layer_size(12, s)), s, 12, c);
        out.push_back(db::board_from_configuration(c, 6));
    }
    return out;
}

void run_probes(benchmark::State& state, size_t memory, uint64_t limit = 0) {
    auto& f = fixture();
    // Opened once per bound: Google Benchmark calls this several times, and a resident
    // open of a large database decodes GBs.
    static std::map<size_t, std::unique_ptr<db::Database>> opened;
    auto& d = opened[memory];
    std::string why;
    if (!d) d = db::Database::open(f.dir, 6, Rule::Standard, memory, &why);
    if (!d) {
        state.SkipWithError(why.c_str());
        return;
    }
    const auto pos = positions(f.k, 1 << 16, limit);
    size_t i = 0;
    int64_t sum = 0;
    for (auto _ : state) {
        sum += d->probe(pos[i++ & (pos.size() - 1)]);
    }
    benchmark::DoNotOptimize(sum);
    state.counters["resident_layers"] = d->resident_layers();
    state.counters["max_seeds"] = d->max_seeds();
}

// Every layer decoded in memory: rank + one byte load.
void BM_ProbeResident(benchmark::State& state) { run_probes(state, size_t(1) << 34); }
// Top layers through a cache too small for the random probes: nearly every probe
// reads, checks and decodes a block (1 Mi entries with the builder's defaults).
void BM_ProbeCachedMiss(benchmark::State& state) { run_probes(state, size_t(8) << 20); }

// Same bound, probes confined to the first 8 blocks of the top layer: they stay decoded in
// the cache, so this is the cost of a hit (hash, lock, copy-free read).
void BM_ProbeCachedHit(benchmark::State& state) {
    run_probes(state, size_t(8) << 20, 8 * uint64_t(fixture().top_block));
}

// Probe latency of the resident layers held one byte an entry or packed (db/packed.h):
// each probe's position depends on the value of the one before, so the misses do not
// overlap (the search's probes mostly wait like this). Uniformly random positions of the
// top layers (the top one and the two below it, sized as the layers are). Counters:
// p50_ns and p99_ns from 2^16 probes timed one by one (clock overhead included, ~20 ns),
// bytes_per_entry of the whole database in memory.
void probe_latency(benchmark::State& state, db::Database::Layout layout) {
    auto& f = fixture();
    static std::map<int, std::unique_ptr<db::Database>> opened;
    auto& d = opened[static_cast<int>(layout)];
    std::string why;
    if (!d)
        d = db::Database::open(f.dir, 6, Rule::Standard, size_t(1) << 36, &why, nullptr, layout);
    if (!d) {
        state.SkipWithError(why.c_str());
        return;
    }
    std::vector<Board> pos;
    for (int s = std::max(0, f.k - 2); s <= f.k; ++s) {
        const auto layer = positions(s, size_t(1) << 16);
        pos.insert(pos.end(), layer.begin(), layer.end());
    }
    std::shuffle(pos.begin(), pos.end(), std::mt19937_64(4));
    const size_t mask = (size_t(1) << 16) - 1;
    size_t i = 0;
    for (auto _ : state) {
        const int v = d->probe(pos[i & mask]);
        i += 1 + static_cast<size_t>(v & 1);  // the next position depends on this value
    }
    std::vector<double> ns(mask + 1);
    for (size_t k = 0; k <= mask; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        const int v = d->probe(pos[(k * 7919) % pos.size()]);
        benchmark::DoNotOptimize(v);
        ns[k] =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    }
    std::sort(ns.begin(), ns.end());
    state.counters["p50_ns"] = ns[ns.size() / 2];
    state.counters["p99_ns"] = ns[ns.size() * 99 / 100];
    state.counters["bytes_per_entry"] =
        double(d->memory_bytes()) / double(db::layer_size(13, d->max_seeds()));
    state.counters["max_seeds"] = d->max_seeds();
}
void BM_ProbeLatencyRaw(benchmark::State& state) {
    probe_latency(state, db::Database::Layout::Raw);
}
void BM_ProbeLatencyPacked(benchmark::State& state) {
    probe_latency(state, db::Database::Layout::Packed);
}
void BM_ProbeLatencyMapped(benchmark::State& state) {
    probe_latency(state, db::Database::Layout::Mapped);
}
void BM_ProbeLatencyLines(benchmark::State& state) {
    probe_latency(state, db::Database::Layout::Lines);
}

// Packing a layer (the cost of opening a packed database): entries a second.
void BM_PackLayer(benchmark::State& state) {
    auto& f = fixture();
    const auto file = db::LayerFile::open(f.dir + "/" + db::layer_file_name(6, Rule::Standard, f.k),
                                          6, Rule::Standard, f.k);
    const std::vector<int8_t> values = file->read_all();
    for (auto _ : state) {
        auto p = db::PackedLayer::pack(values.data(), values.size(), f.k);
        benchmark::DoNotOptimize(p.bytes());
        state.counters["bits_per_entry"] = 8.0 * double(p.bytes()) / double(values.size());
    }
    state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(values.size()));
}

BENCHMARK(BM_ProbeResident);
BENCHMARK(BM_ProbeLatencyRaw);
BENCHMARK(BM_ProbeLatencyPacked);
BENCHMARK(BM_ProbeLatencyMapped);
BENCHMARK(BM_ProbeLatencyLines);
BENCHMARK(BM_PackLayer)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProbeCachedMiss);
BENCHMARK(BM_ProbeCachedHit);

}  // namespace
