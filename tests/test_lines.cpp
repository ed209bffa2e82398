// Line layers (db/lines.h): every entry against the one-byte values, through get(), the
// slow unpack() and the database (Layout::Lines), with escapes, odd sizes and chunkings
// (the layers of m = 4 and 5 databases: test_packed.cpp's round trip).
#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/notation.h"
#include "db/builder.h"
#include "db/database.h"
#include "db/index.h"
#include "db/lines.h"
#include "db/open.h"
#include "db/packed.h"
#include "layer_fixtures.h"
#include "temp_dir.h"

namespace {

using kalah::Board;
using kalah::Rule;
namespace db = kalah::db;
namespace fs = std::filesystem;
using layer_fixtures::build_options;
using layer_fixtures::hand_made;
using test_files::TempDir;

// Every entry of `values` through get() and unpack() (the slow twin), the layer built
// whole and in chunks of `chunk`. Returns the escapes of the whole build.
uint64_t check_lines(const std::vector<int8_t>& values, int s, uint64_t chunk = 0) {
    const db::LineLayer l =
        chunk ? db::LineLayer::build_chunks(values.size(), s, chunk,
                                            [&](uint64_t first, uint64_t count, int8_t* out) {
                                                std::copy(values.begin() + first,
                                                          values.begin() + first + count, out);
                                            })
              : db::LineLayer::build(values.data(), values.size(), s);
    REQUIRE(l.size() == values.size());
    REQUIRE(l.seeds() == s);
    std::vector<int8_t> out(values.size(), 99);
    l.unpack(out.data());
    for (uint64_t r = 0; r < values.size(); ++r) {
        if (l.get(r) != values[r] || out[r] != values[r]) {
            CAPTURE(s);
            CAPTURE(r);
            CAPTURE(chunk);
            REQUIRE(l.get(r) == int(values[r]));
            REQUIRE(int(out[r]) == int(values[r]));
        }
    }
    return l.escapes();
}

}  // namespace

TEST_SUITE("db") {
    TEST_CASE("lines: hand-made layers with every width, escapes, odd sizes and chunks") {
        std::mt19937 rng(11);
        uint64_t escapes = 0;
        for (int s : {0, 1, 2, 7, 30, 127}) {
            for (uint64_t n : {uint64_t(1), uint64_t(31), uint64_t(95), uint64_t(96), uint64_t(97),
                               uint64_t(191), uint64_t(193), uint64_t(5000)}) {
                const std::vector<int8_t> v = hand_made(n, s, rng, db::LineLayer::kLine);
                CAPTURE(n);
                const uint64_t whole = check_lines(v, s);
                escapes += whole;
                // Chunks that split lines anywhere build the same layer.
                for (uint64_t chunk : {uint64_t(1), uint64_t(7), uint64_t(95), uint64_t(96),
                                       uint64_t(97), uint64_t(1000)})
                    CHECK(check_lines(v, s, chunk) == whole);
            }
        }
        // The wide blocks (s = 30 and 127: spreads up to 8 bits) need escapes.
        CHECK(escapes > 0);
    }

    TEST_CASE("lines: a line whose widths add up to exactly 15 fits, 16 escapes") {
        const int s = 127;
        // Widths 5, 5, 5: u - lo up to 31 in each block.
        std::vector<int8_t> v(96);
        for (int r = 0; r < 96; ++r) v[r] = static_cast<int8_t>(2 * (r % 32) - s);
        CHECK(check_lines(v, s) == 0);
        v[64 + 5] = static_cast<int8_t>(2 * 32 - s);  // block 2 now needs 6 bits
        CHECK(check_lines(v, s) == 1);
    }

    TEST_CASE("lines: values out of range or of the wrong parity are rejected") {
        std::vector<int8_t> v(300, 2);
        CHECK_NOTHROW(db::LineLayer::build(v.data(), v.size(), 4));
        v[250] = 3;  // parity of 4 is even
        CHECK_THROWS_AS(db::LineLayer::build(v.data(), v.size(), 4), std::invalid_argument);
        v[250] = 6;  // above s
        CHECK_THROWS_AS(db::LineLayer::build(v.data(), v.size(), 4), std::invalid_argument);
        v[250] = -6;
        CHECK_THROWS_AS(db::LineLayer::build(v.data(), v.size(), 4), std::invalid_argument);
        CHECK_THROWS_AS(db::LineLayer::build(v.data(), v.size(), 128), std::invalid_argument);
    }

    TEST_CASE("lines: a database in lines probes every entry as the one-byte database") {
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            const int m = 4, k = 16;
            TempDir dir("lines" + kalah::rule_name(rule));
            const std::string d = dir.path.string();
            db::build_database(build_options(d, m, rule, k));
            std::string why;
            auto raw = db::Database::open(d, m, rule, size_t(1) << 30, &why, nullptr,
                                          db::Database::Layout::Raw);
            auto packed = db::Database::open(d, m, rule, size_t(1) << 30, &why, nullptr,
                                             db::Database::Layout::Packed);
            // From the twins; then the top layer one byte an entry.
            auto lines = db::Database::open(d, m, rule, size_t(1) << 30, &why, nullptr,
                                            db::Database::Layout::Lines);
            auto mixed = db::Database::open(d, m, rule, size_t(1) << 30, &why, nullptr,
                                            db::Database::Layout::Lines, db::layer_size(2 * m, k));
            // A twin damaged and another gone: those layers are built from their .kdb.
            {
                const fs::path twin = dir.path / db::PackedLayer::file_name(m, rule, k - 1);
                std::string bytes = test_files::slurp(twin.string());
                bytes[bytes.size() - 100] ^= 0x55;
                test_files::spit(twin.string(), bytes);
                fs::remove(dir.path / db::PackedLayer::file_name(m, rule, k));
            }
            auto from_kdb = db::Database::open(d, m, rule, size_t(1) << 30, &why, nullptr,
                                               db::Database::Layout::Lines);
            REQUIRE(raw);
            REQUIRE(packed);
            REQUIRE(lines);
            REQUIRE(mixed);
            REQUIRE(from_kdb);
            for (int s = 0; s <= k; ++s) {
                CHECK(raw->held_as(s) == 'r');
                CHECK(packed->held_as(s) == 'p');
                CHECK(lines->held_as(s) == 'l');
                CHECK(mixed->held_as(s) == (s == k ? 'r' : 'l'));
                CHECK(from_kdb->held_as(s) == 'l');
            }
            CHECK(lines->resident_layers() == k + 1);
            CHECK(lines->packed_layers() == 0);
            CHECK(lines->memory_bytes() < raw->memory_bytes());
            CHECK(lines->memory_bytes() > packed->memory_bytes());
            const std::string said = db::describe(*mixed, d);
            CHECK(said.find("layers 0.." + std::to_string(k - 1) + " in lines") !=
                  std::string::npos);
            const db::Database* const held[] = {lines.get(), mixed.get(), from_kdb.get()};
            for (int s = 0; s <= k; ++s) {
                uint8_t c[12];
                db::unrank(0, s, 2 * m, c);
                std::vector<Board> boards;
                for (uint64_t r = 0; r < db::layer_size(2 * m, s); ++r) {
                    boards.push_back(db::board_from_configuration(c, m));
                    db::next_configuration(c, 2 * m);
                }
                // probe and probe_many (the search's batched form) alike.
                for (size_t i = 0; i < boards.size(); i += 6) {
                    const int count = static_cast<int>(std::min<size_t>(6, boards.size() - i));
                    const Board* bs[6];
                    for (int j = 0; j < count; ++j) bs[j] = &boards[i + j];
                    for (const db::Database* h : held) {
                        int got[6];
                        h->probe_many(bs, count, got);
                        for (int j = 0; j < count; ++j) {
                            const int want = raw->probe(boards[i + j]);
                            if (got[j] != want || h->probe(boards[i + j]) != want) {
                                CAPTURE(int(rule));
                                CAPTURE(s);
                                CAPTURE(i + j);
                                REQUIRE(got[j] == want);
                                REQUIRE(h->probe(boards[i + j]) == want);
                            }
                        }
                    }
                }
            }
        }
    }
}
