// Shared by the database tests (test_builder.cpp, test_db_files.cpp): the small databases
// they build, and random probes of two databases compared.
#pragma once

#include <omp.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "db/builder.h"
#include "db/database.h"
#include "db/index.h"

namespace test_db {

using kalah::Board;
using kalah::Rule;
namespace db = kalah::db;

// Small blocks (the default, 1 Mi entries, would make every test layer a single block):
// block indexes, per-block checks and the block cache then have several blocks to handle.
// No packed twins: these tests are about the layer files, which a search reads when there
// are none (tests/test_packed.cpp tests the twins).
inline std::vector<db::LayerStats> build(const std::string& dir, int m, Rule rule, int k,
                                         uint32_t block_size = 4096) {
    db::BuildOptions o;
    o.twins = false;
    o.dir = dir;
    o.m = m;
    o.rule = rule;
    o.max_seeds = k;
    o.memory_gb = 1;
    o.block_size = block_size;
    return db::build_database(o);
}

// Probes `count` random positions of m = 4 layers 0..12 in both databases (in parallel, one
// generator per thread from `seed`); returns how many values differ.
inline int probe_mismatches(const db::Database& a, const db::Database& b, int count,
                            uint64_t seed) {
    int mismatches = 0;
#pragma omp parallel reduction(+ : mismatches)
    {
        std::mt19937_64 local(seed + omp_get_thread_num());  // no shared generator
#pragma omp for
        for (int i = 0; i < count; ++i) {
            const int s = static_cast<int>(local() % 13);
            uint8_t c[12];
            db::unrank(local() % db::layer_size(8, s), s, 8, c);
            const Board pos = db::board_from_configuration(c, 4);
            mismatches += a.probe(pos) != b.probe(pos);
        }
    }
    return mismatches;
}

}  // namespace test_db
