// Google Benchmark: transposition table probe/store, database index rank/unrank, a small search.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <vector>

#include "db/index.h"
#include "solver/solver.h"
#include "solver/tt.h"

namespace {
using kalah::Board;
using kalah::Rule;

// Random 6-pit positions with 10..40 seeds in the pits (keys spread over a large table).
std::vector<Board> random_boards(size_t count, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<Board> out;
    while (out.size() < count) {
        int a[6] = {}, b[6] = {};
        const int seeds = 10 + int(rng() % 31);
        for (int i = 0; i < seeds; ++i) (rng() % 2 ? a : b)[rng() % 6]++;
        out.push_back(Board::from_rows(6, a, b, 0, 0, kalah::Side::South));
    }
    return out;
}

// Probe then store on a 256 MiB table filled as it goes: mostly cache-missing buckets, as
// in a large search.
void BM_TTProbeStore(benchmark::State& state) {
    const auto boards = random_boards(1 << 16, 3);
    std::vector<kalah::TTKey> keys;
    for (const Board& b : boards) keys.push_back(kalah::TTKey::of(b));
    kalah::TranspositionTable tt(size_t(256) << 20);
    tt.reserve(uint64_t(1) << 24);
    size_t i = 0;
    int sink = 0;
    for (auto _ : state) {
        const kalah::TTKey& k = keys[i];
        kalah::TTProbe p = tt.probe(k);
        sink += p.lower;
        tt.store(k, -4, 8, int(i % 6), 1000);
        i = (i + 1) & (keys.size() - 1);
    }
    benchmark::DoNotOptimize(sink);
    state.counters["ops/s"] =
        benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TTProbeStore);

// One fourfold growth of a full 64 MiB table to 256 MiB on state.range(0) threads: the
// fresh pages touched and every entry rehashed (TranspositionTable::resize).
// (The previous iteration's table is freed while the timer is paused: only the growth,
// which frees the old 64 MiB, is timed.)
void BM_TTGrow(benchmark::State& state) {
    const int threads = int(state.range(0));
    std::unique_ptr<kalah::TranspositionTable> tt;
    for (auto _ : state) {
        state.PauseTiming();
        tt = std::make_unique<kalah::TranspositionTable>(size_t(256) << 20);
        tt->reserve(1);
        while (tt->bytes() < size_t(64) << 20) tt->resize(tt->bytes() * 4);
        std::mt19937_64 rng(5);
        for (uint64_t i = 0; i < (uint64_t(1) << 22); ++i)
            tt->store(kalah::TTKey::from_parts(rng(), uint32_t(rng())), -4, 8, 1, 1 + i % 4096);
        state.ResumeTiming();
        tt->resize(tt->bytes() * 4, threads);
        benchmark::DoNotOptimize(tt->bytes());
    }
}  // the last table is freed after the loop, untimed
BENCHMARK(BM_TTGrow)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_IndexRank(benchmark::State& state) {
    const auto boards = random_boards(4096, 5);
    size_t i = 0;
    uint64_t sink = 0;
    for (auto _ : state) {
        sink += kalah::db::rank_board(boards[i]);
        i = (i + 1) & 4095;
    }
    benchmark::DoNotOptimize(sink);
    state.counters["ranks/s"] =
        benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_IndexRank);

void BM_IndexUnrank(benchmark::State& state) {
    const int s = 24, pits = 12;
    const uint64_t size = kalah::db::layer_size(pits, s);
    std::mt19937_64 rng(9);
    std::vector<uint64_t> ranks(4096);
    for (auto& r : ranks) r = rng() % size;
    uint8_t c[12];
    size_t i = 0;
    unsigned sink = 0;
    for (auto _ : state) {
        kalah::db::unrank(ranks[i], s, pits, c);
        sink += c[0];
        i = (i + 1) & 4095;
    }
    benchmark::DoNotOptimize(sink);
    state.counters["unranks/s"] =
        benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_IndexUnrank);

// A whole small solve, Kalah(4,4) standard, from an empty table, one thread.
void BM_SmallSearch(benchmark::State& state) {
    uint64_t nodes = 0;
    for (auto _ : state) {
        kalah::SolverOptions o;
        o.tt_mb = 64;
        o.threads = 1;
        kalah::Solver solver(4, Rule::Standard, o);
        benchmark::DoNotOptimize(solver.value(Board::start(4, 4)));
        nodes += solver.stats().nodes;
    }
    state.counters["nodes/s"] = benchmark::Counter(double(nodes), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SmallSearch)->Unit(benchmark::kMillisecond);

}  // namespace
