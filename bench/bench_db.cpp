// Google Benchmark: endgame database probe latency, resident layers and the block cache.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <vector>

#include "db/builder.h"
#include "db/database.h"
#include "db/format.h"
#include "db/index.h"

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

BENCHMARK(BM_ProbeResident);
BENCHMARK(BM_ProbeCachedMiss);
BENCHMARK(BM_ProbeCachedHit);

}  // namespace
