// Facts about the machine that the parallel search's speed depends on (results/parallel.md,
// session 5): how long a cache line takes to go from one core to another and back. On this
// VM it flips between ~55 ns and ~330 ns from minute to minute (the host moves the virtual
// CPUs), and two-thread search times follow it; record it beside any parallel timing.
#include <benchmark/benchmark.h>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <thread>

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

}  // namespace
