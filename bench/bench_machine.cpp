// Facts about the machine that the search's speed depends on (results/parallel.md, "The
// second thread's cost is the core-to-core round trip"; results/solver.md, "Memory on this
// VM: dependent reads and first touch"): how long a cache line takes to go from one core to
// another and back (on this VM ~55 ns or ~330 ns, flipping from minute to minute as the
// host moves the virtual CPUs; two-thread search times follow it), how long a dependent
// random read takes in a table of a given size (the TT's access pattern), and what the
// first touch of fresh memory costs (a growing TT pays it).
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "core/huge_pages.h"

namespace {

// Pins the calling thread to the k-th CPU it may run on (nothing if there is none).
void pin_to(int k) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &allowed) && k-- == 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            pthread_setaffinity_np(pthread_self(), sizeof one, &one);
            return;
        }
}

// One iteration: this thread writes a line, a second thread sees it and writes back, this
// thread sees the answer, the two threads pinned to the first two CPUs. Needs two cores.
void BM_CoreToCoreRoundTrip(benchmark::State& state) {
    cpu_set_t before;
    const bool restore = sched_getaffinity(0, sizeof before, &before) == 0;
    // Odd: this thread's serve; even: the return. Alone on its cache line.
    struct alignas(64) Line {
        std::atomic<long> ball{0};
        char pad[64 - sizeof(std::atomic<long>)];
    };
    static Line line;
    std::atomic<long>& ball = line.ball;
    ball.store(0);
    std::thread partner([&ball] {
        pin_to(1);
        for (long want = 1;; want += 2) {
            long v;
            while ((v = ball.load(std::memory_order_acquire)) != want)
                if (v < 0) return;  // end of the benchmark
            ball.store(want + 1, std::memory_order_release);
        }
    });
    pin_to(0);
    long v = 0;
    for (auto _ : state) {
        ball.store(v + 1, std::memory_order_release);
        while (ball.load(std::memory_order_acquire) != v + 2) {
        }
        v += 2;
    }
    ball.store(-1, std::memory_order_release);
    partner.join();
    if (restore) pthread_setaffinity_np(pthread_self(), sizeof before, &before);
}
BENCHMARK(BM_CoreToCoreRoundTrip);

// One iteration: one read whose address is the previous read's value, in a random cycle
// over the cache lines of a state.range(0) MiB buffer on huge pages (kalah::HugePages, as
// the TT's).
void BM_DependentRead(benchmark::State& state) {
    const size_t bytes = size_t(state.range(0)) << 20, lines = bytes / 64;
    kalah::HugePages mem(bytes);
    auto* p = static_cast<uint64_t*>(mem.data());
    std::vector<uint32_t> order(lines);
    for (size_t i = 0; i < lines; ++i) order[i] = uint32_t(i);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
    for (size_t i = 0; i < lines; ++i) p[order[i] * 8] = uint64_t(order[(i + 1) % lines]) * 8;
    uint64_t at = 0;
    for (auto _ : state) at = p[at];
    benchmark::DoNotOptimize(at);
}
BENCHMARK(BM_DependentRead)->Arg(4)->Arg(64)->Arg(256)->Arg(512)->Arg(1024);

// One iteration: map 256 MiB (kalah::HugePages) and write one byte every 4 KiB. On this VM
// it depends on what ran just before: memory the host has taken back (virtio_balloon)
// costs ~25x more than memory freed a moment ago.
void BM_FirstTouch(benchmark::State& state) {
    const size_t bytes = size_t(256) << 20;
    for (auto _ : state) {
        kalah::HugePages mem(bytes);
        auto* p = static_cast<volatile char*>(mem.data());
        for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}
BENCHMARK(BM_FirstTouch)->Unit(benchmark::kMillisecond)->Iterations(4);

}  // namespace
