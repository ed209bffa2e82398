// Google Benchmark: apply-move and move-generation throughput of the bitboard engine.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "core/board.h"

namespace {
using kalah::Board;
using kalah::Rule;

// Random reachable 6-pit positions: random playouts from the start of Kalah(6,n).
std::vector<Board> sample_positions(int m, int n, size_t count, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<Board> out;
    while (out.size() < count) {
        Board b = Board::start(m, n);
        int plies = static_cast<int>(rng() % 40);
        for (int i = 0; i < plies && !b.over(); ++i) {
            auto moves = b.legal_moves();
            b.play(moves.pit[rng() % moves.size], Rule::Standard);
        }
        if (!b.over()) out.push_back(b);
    }
    return out;
}

// Positions cycled through by the apply-move loop. Large on purpose: with a few thousand
// positions the branch predictor learns the whole repeating sequence of extra-move and
// capture outcomes, which flatters branchy code far beyond what a search sees (measured:
// a branchy play() ran 87M moves/s on 4096 positions and 56M/s on 2^20). 2^16 positions
// (2 MiB, read sequentially) are beyond what the predictor can memorise.
constexpr size_t kPoolSize = size_t(1) << 16;

void BM_ApplyMove(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    auto positions = sample_positions(6, n, kPoolSize, 7);
    // Pre-pick one legal move per position so the loop times play() alone.
    std::vector<uint8_t> pit(positions.size());
    std::mt19937_64 rng(11);
    for (size_t i = 0; i < positions.size(); ++i) {
        auto mv = positions[i].legal_moves();
        pit[i] = mv.pit[rng() % mv.size];
    }
    size_t i = 0;
    uint64_t sink = 0;
    for (auto _ : state) {
        Board b = positions[i];
        auto r = b.play(pit[i], Rule::Standard);
        sink += static_cast<uint64_t>(b.cells()) + r.captured;
        i = (i + 1) & (kPoolSize - 1);
    }
    benchmark::DoNotOptimize(sink);
    state.counters["moves/s"] =
        benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ApplyMove)->Arg(4)->Arg(6);

void BM_LegalMoves(benchmark::State& state) {
    auto positions = sample_positions(6, 4, 4096, 13);
    size_t i = 0;
    unsigned sink = 0;
    for (auto _ : state) {
        sink += positions[i].legal_mask();
        i = (i + 1) & 4095;
    }
    benchmark::DoNotOptimize(sink);
    state.counters["positions/s"] =
        benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LegalMoves);

}  // namespace

BENCHMARK_MAIN();
