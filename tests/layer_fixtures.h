// Shared by the database layout tests (test_packed.cpp, test_lines.cpp): hand-made layer
// values and the options of the small databases they build.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "db/builder.h"

namespace layer_fixtures {

// n values of layer s in runs of 32-entry blocks, each with its own spread (0..8 bits of
// range, in steps of 2: constant, narrow, the full range); the spread also steps every
// `period` entries when period > 0 (e.g. a line of 96). The extremes at both ends.
inline std::vector<int8_t> hand_made(uint64_t n, int s, std::mt19937& rng, uint64_t period = 0) {
    std::vector<int8_t> v(n);
    for (uint64_t r = 0; r < n; ++r) {
        const int spread = static_cast<int>((r / 32 + (period ? r / period : 0)) % 9);
        const int range = std::min(s, (1 << spread) - 1);
        const int base = static_cast<int>(rng() % (s - range + 1));
        const int u = base + (range ? static_cast<int>(rng() % (range + 1)) : 0);
        v[r] = static_cast<int8_t>(2 * u - s);
    }
    if (n > 2) {
        v[0] = static_cast<int8_t>(-s);
        v[n - 1] = static_cast<int8_t>(s);
    }
    return v;
}

// A small build into dir: 1 GiB bound, 2^14-entry blocks (many blocks a layer).
inline kalah::db::BuildOptions build_options(const std::string& dir, int m, kalah::Rule rule,
                                             int k) {
    kalah::db::BuildOptions o;
    o.dir = dir;
    o.m = m;
    o.rule = rule;
    o.max_seeds = k;
    o.memory_gb = 1;
    o.block_size = 1 << 14;
    return o;
}

}  // namespace layer_fixtures
