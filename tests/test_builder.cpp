// Building and probing databases (db/builder.*, db/database.*): every entry against brute
// force and the solver, probes through the block cache, databases built in memory.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli_runner.h"
#include "db/builder.h"
#include "db/database.h"
#include "db/index.h"
#include "db_fixtures.h"
#include "reference_engine.h"
#include "solver/solver.h"
#include "temp_dir.h"

namespace {

using kalah::Board;
using kalah::Rule;
namespace db = kalah::db;
using test_db::build;
using test_db::probe_mismatches;
using test_files::TempDir;

// Brute force on the reference engine: the mover's final store minus the opponent's under
// perfect play, memoised on the whole position (stores included, no pits-only shortcut).
class Brute {
  public:
    Brute(Rule rule) : rule_(rule) {}
    int final_margin(const ref::Pos& p) {
        if (ref::over(p)) {
            int a = p.store_a, b = p.store_b;
            for (int i = 0; i < p.m; ++i) {
                a += p.a[i];
                b += p.b[i];
            }
            return p.south_to_move ? a - b : b - a;
        }
        const auto key = pack(p);
        if (auto it = memo_.find(key); it != memo_.end()) return it->second;
        int best = -1000;
        for (int pit : ref::legal(p)) {
            ref::Pos q = p;
            ref::play(q, pit, rule_);
            int v;
            if (ref::over(q)) {
                const int a = q.store_a, b = q.store_b;  // swept by play
                v = p.south_to_move ? a - b : b - a;
            } else {
                v = final_margin(q);
                if (q.south_to_move != p.south_to_move) v = -v;
            }
            best = std::max(best, v);
        }
        memo_.emplace(key, best);
        return best;
    }
    // Pits value of b from the mover's view: final margin with both stores empty.
    int pits_value(const Board& b) {
        ref::Pos p = ref::from_board(b.without_stores());
        return final_margin(p);
    }

  private:
    struct Hash {
        size_t operator()(unsigned __int128 k) const {
            return std::hash<uint64_t>()(static_cast<uint64_t>(k) * 0x9E3779B97F4A7C15ull ^
                                         static_cast<uint64_t>(k >> 64));
        }
    };
    static unsigned __int128 pack(const ref::Pos& p) {
        unsigned __int128 k = p.south_to_move;
        for (int i = 0; i < p.m; ++i) k = (k << 7 | p.a[i]) << 7 | p.b[i];
        return (k << 7 | p.store_a) << 7 | p.store_b;
    }
    Rule rule_;
    std::unordered_map<unsigned __int128, int, Hash> memo_;
};

}  // namespace

TEST_SUITE("db") {
    TEST_CASE("builder: every entry of m = 1..5 layers equals the brute force, both rules") {
        // Each pit count has its own instance of the builder's kernel (db/builder.cpp).
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 1; m <= 5; ++m) {
                const int k = m == 5 ? 8 : m == 4 ? 10 : 12;
                Brute brute(rule);
                db::LayerSet layers;
                for (int s = 0; s <= k; ++s) {
                    layers.add(db::build_layer(m, rule, s, layers));
                    const std::vector<int8_t>& layer = layers.raw(s);
                    uint8_t c[12];
                    db::unrank(0, s, 2 * m, c);
                    for (uint64_t r = 0; r < layer.size(); ++r) {
                        const Board b = db::board_from_configuration(c, m);
                        const int want = brute.pits_value(b);
                        if (layer[r] != want) {
                            CAPTURE(m);
                            CAPTURE(s);
                            CAPTURE(r);
                            REQUIRE(int(layer[r]) == want);
                        }
                        db::next_configuration(c, 2 * m);
                    }
                }
            }
        }
    }

    TEST_CASE("database: m = 4 to 12 seeds and m = 6 to 9 seeds, random entries vs brute force") {
        std::mt19937_64 rng(11);
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (auto [m, k] : {std::pair{4, 12}, std::pair{6, 9}}) {
                TempDir dir("probe");
                build(dir.path.string(), m, rule, k);
                std::string why;
                auto d = db::Database::open(dir.path.string(), m, rule, 1 << 30, &why);
                REQUIRE_MESSAGE(d, why);
                CHECK(d->max_seeds() == k);
                CHECK(d->pits() == m);
                CHECK(d->rule() == rule);
                Brute brute(rule);
                for (int s = 0; s <= k; ++s) {
                    for (int i = 0; i < 150; ++i) {
                        uint8_t c[12];
                        db::unrank(rng() % db::layer_size(2 * m, s), s, 2 * m, c);
                        Board b = db::board_from_configuration(c, m);
                        CAPTURE(s);
                        REQUIRE(d->probe(b) == brute.pits_value(b));
                    }
                }
            }
        }
    }

    TEST_CASE("database: m = 6 entries equal the solver without a database, and with one") {
        std::mt19937_64 rng(23);
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            TempDir dir("solver");
            const int k = 13;
            build(dir.path.string(), 6, rule, k);
            std::string why;
            auto d = db::Database::open(dir.path.string(), 6, rule, 1 << 30, &why);
            REQUIRE_MESSAGE(d, why);
            kalah::SolverOptions plain_opts;
            plain_opts.tt_mb = 16;
            kalah::Solver plain(6, rule, plain_opts);
            kalah::SolverOptions db_opts = plain_opts;
            db_opts.db = d.get();
            kalah::Solver with_db(6, rule, db_opts);
            for (int s = 2; s <= k + 4; ++s) {
                for (int i = 0; i < 12; ++i) {
                    uint8_t c[12];
                    Board b;
                    do {  // both rows non-empty: a position the search can meet
                        db::unrank(rng() % db::layer_size(12, s), s, 12, c);
                        b = db::board_from_configuration(c, 6);
                    } while (b.over());
                    CAPTURE(s);
                    const int want = plain.pits_value(b);
                    if (s <= k) REQUIRE(d->probe(b) == want);
                    REQUIRE(with_db.pits_value(b) == want);
                }
            }
        }
    }

    TEST_CASE("probe: the block cache returns the resident values") {
        TempDir dir("cache");
        build(dir.path.string(), 4, Rule::Standard, 12);
        std::string why;
        why = "stale";
        auto full = db::Database::open(dir.path.string(), 4, Rule::Standard, 1 << 30, &why);
        CHECK(why.empty());  // success without a warning clears *why
        // 40 KB: layers up to ~8 resident, the rest through a tiny cache that must evict.
        auto small = db::Database::open(dir.path.string(), 4, Rule::Standard, 40000, &why);
        REQUIRE(full);
        REQUIRE(small);
        CHECK(full->resident_layers() == 13);
        CHECK(small->resident_layers() < 13);
        CHECK(small->max_seeds() == 12);
        CHECK(probe_mismatches(*full, *small, 200000, 5) == 0);
        // probe_many (the search's batched probe, with prefetch) against one probe at a
        // time, on both databases, for batches of 1..6 mixed layers.
        std::mt19937_64 rng(11);
        // cached: probes of the small database in layers it reads through its cache.
        int batch_mismatches = 0, cached = 0;
        for (int i = 0; i < 20000; ++i) {
            const int n = 1 + static_cast<int>(rng() % 6);
            Board boards[6];
            const Board* ptrs[6];
            for (int j = 0; j < n; ++j) {
                const int s = static_cast<int>(rng() % 13);
                uint8_t c[12];
                db::unrank(rng() % db::layer_size(8, s), s, 8, c);
                boards[j] = db::board_from_configuration(c, 4);
                ptrs[j] = &boards[j];
            }
            for (const auto* d : {full.get(), small.get()}) {
                int out[6];
                for (int j = 0; j < n; ++j) d->prefetch(boards[j]);
                d->probe_many(ptrs, n, out);
                for (int j = 0; j < n; ++j) {
                    batch_mismatches += out[j] != full->probe(boards[j]);
                    cached += d == small.get() && boards[j].seeds_in_pits() >= d->resident_layers();
                }
            }
        }
        // Roughly a third of the small database's ~70000 probes are above its resident layers.
        CHECK(cached > 10000);
        CHECK(batch_mismatches == 0);
        const Board too_many = Board::start(4, 4);  // 32 seeds > 12
        CHECK_THROWS_AS(full->probe(too_many), std::out_of_range);
        CHECK_THROWS_AS(full->probe(Board::start(3, 1)), std::out_of_range);
        CHECK(!db::Database::open(dir.path.string(), 5, Rule::Standard, 1 << 30, &why));
        CHECK(why.find("no layer files") != std::string::npos);
    }

    TEST_CASE("in memory: layers built in memory equal the files, entry for entry") {
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            TempDir dir("inmem");
            build(dir.path.string(), 4, rule, 12);
            std::string why;
            auto files = db::Database::open(dir.path.string(), 4, rule, 1 << 30, &why);
            REQUIRE(files);
            std::vector<int> seen;
            auto mem =
                db::Database::build_in_memory(4, rule, 12, [&](int s) { seen.push_back(s); });
            REQUIRE(mem);
            CHECK(seen.size() == 13);
            CHECK(mem->max_seeds() == 12);
            CHECK(mem->resident_layers() == 13);
            CHECK(mem->pits() == 4);
            CHECK(mem->rule() == rule);
            // Every entry of every layer, by unranking each rank.
            uint64_t mismatches = 0, entries = 0;
            for (int s = 0; s <= 12; ++s) {
                for (uint64_t r = 0; r < db::layer_size(8, s); ++r) {
                    uint8_t c[12];
                    db::unrank(r, s, 8, c);
                    const Board b = db::board_from_configuration(c, 4);
                    mismatches += mem->probe(b) != files->probe(b);
                    ++entries;
                }
            }
            CHECK(entries == db::layer_size(9, 12));
            CHECK(mismatches == 0);
            CHECK_THROWS_AS(mem->probe(Board::start(4, 4)), std::out_of_range);
        }
        CHECK(db::Database::in_memory_seeds(6, db::layer_size(13, 18)) == 18);
        CHECK(db::Database::in_memory_seeds(6, db::layer_size(13, 18) - 1) == 17);
        CHECK(db::Database::in_memory_seeds(6, 0) == -1);
    }

    TEST_CASE("in memory: --memory-db builds the layers when no database covers the board") {
        const std::string base =
            "solve --pits 4 --seeds 5 --threads 2 --tt-mb 64 --json --db /nonexistent";
        const auto off = run_kalah(base + " --memory-db off");
        const auto on = run_kalah(base + " --memory-db 14");
        REQUIRE(off.status == 0);
        REQUIRE(on.status == 0);
        CHECK(off.err.find("in memory") == std::string::npos);
        CAPTURE(on.err);
        CHECK(on.err.find("kalah solve: built layers 0..14 in memory (") != std::string::npos);
        const auto j_on = nlohmann::json::parse(on.out);
        const auto j_off = nlohmann::json::parse(off.out);
        CHECK(j_on.at("value") == j_off.at("value"));
        CHECK(j_on.at("nodes").get<uint64_t>() < j_off.at("nodes").get<uint64_t>());
        // query too, on a position of the game.
        const auto q_off =
            run_kalah("query --pits 4 --seeds 5 --moves A1 --json --db /x --memory-db off");
        const auto q_on =
            run_kalah("query --pits 4 --seeds 5 --moves A1 --json --db /x --memory-db 12");
        REQUIRE(q_on.status == 0);
        // Every field but the search's own figures is the same.
        REQUIRE(q_off.status == 0);
        auto q_on_j = nlohmann::json::parse(q_on.out);
        auto q_off_j = nlohmann::json::parse(q_off.out);
        for (auto* j : {&q_on_j, &q_off_j}) {
            REQUIRE(j->contains("value"));
            j->erase("nodes");
            j->erase("seconds");
        }
        CHECK(q_on_j == q_off_j);
        // auto leaves small searches alone; a database on disk is used, not rebuilt.
        CHECK(run_kalah("solve --pits 4 --seeds 3 --db /x").err.find("in memory") ==
              std::string::npos);
        for (const char* bad : {"--memory-db -1", "--memory-db 12x", "--memory-db 200",
                                "--memory-db 40 --db-memory-gb 0.001", "--memory-db sometimes"}) {
            CAPTURE(bad);
            const auto r = run_kalah("solve --pits 4 --seeds 3 " + std::string(bad));
            CHECK(r.status == 2);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
            CHECK(r.err.find("--memory-db") != std::string::npos);
        }
    }
}
