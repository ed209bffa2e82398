// Packed layers (db/packed.h): every entry against the one-byte values, in the database,
// in the builder (byte-identical files), and in hand-made layers with every block width;
// the layers of real databases in lines (db/lines.h) as well.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/notation.h"
#include "db/builder.h"
#include "db/database.h"
#include "db/format.h"
#include "db/index.h"
#include "db/lines.h"
#include "db/packed.h"
#include "db/verify.h"
#include "layer_fixtures.h"
#include "temp_dir.h"

namespace {

using kalah::Board;
using kalah::Rule;
namespace db = kalah::db;
namespace fs = std::filesystem;

using layer_fixtures::build_options;
using test_files::TempDir;

std::string read_bytes(const fs::path& p) { return test_files::slurp(p.string()); }

// Every entry of `values` through get() and through unpack() (the slow twin), packed and
// in lines (db/lines.h).
void check_round_trip(const std::vector<int8_t>& values, int s) {
    const db::LineLayer l = db::LineLayer::build(values.data(), values.size(), s);
    std::vector<int8_t> from_lines(values.size(), 99);
    l.unpack(from_lines.data());
    for (uint64_t r = 0; r < values.size(); ++r)
        if (l.get(r) != values[r] || from_lines[r] != values[r]) {
            CAPTURE(s);
            CAPTURE(r);
            REQUIRE(l.get(r) == int(values[r]));
            REQUIRE(int(from_lines[r]) == int(values[r]));
        }
    const db::PackedLayer p = db::PackedLayer::pack(values.data(), values.size(), s);
    REQUIRE(p.size() == values.size());
    std::vector<int8_t> out(values.size(), 99);
    p.unpack(out.data());
    std::vector<int8_t> range(values.size(), 99);
    p.unpack_range(0, values.size(), range.data());
    for (uint64_t r = 0; r < values.size(); ++r) {
        if (p.get(r) != values[r] || out[r] != values[r] || range[r] != values[r]) {
            CAPTURE(s);
            CAPTURE(r);
            REQUIRE(p.get(r) == int(values[r]));
            REQUIRE(int(out[r]) == int(values[r]));
            REQUIRE(int(range[r]) == int(values[r]));
        }
    }
    // Ranges that start and end inside blocks.
    std::mt19937_64 rng(values.size() * 131 + static_cast<uint64_t>(s));
    for (int t = 0; t < 20; ++t) {
        const uint64_t first = rng() % values.size();
        const uint64_t count = 1 + rng() % std::min<uint64_t>(values.size() - first, 300);
        std::vector<int8_t> part(count + 1, 99);
        p.unpack_range(first, count, part.data());
        CHECK(part[count] == 99);  // nothing written past the range
        for (uint64_t i = 0; i < count; ++i)
            if (part[i] != values[first + i]) {
                CAPTURE(first);
                CAPTURE(i);
                REQUIRE(int(part[i]) == int(values[first + i]));
            }
    }
}

}  // namespace

TEST_SUITE("db") {
    TEST_CASE("packed: hand-made layers with every block width, odd sizes and extreme values") {
        std::mt19937 rng(5);
        for (int s : {0, 1, 2, 7, 30, 127}) {
            for (uint64_t n : {uint64_t(1), uint64_t(31), uint64_t(32), uint64_t(33),
                               uint64_t(1023), uint64_t(1024), uint64_t(1025), uint64_t(5000)}) {
                const std::vector<int8_t> v = layer_fixtures::hand_made(n, s, rng);
                CAPTURE(n);
                check_round_trip(v, s);
            }
        }
    }

    TEST_CASE("packed: values out of range or of the wrong parity are rejected") {
        std::vector<int8_t> v(100, 2);
        CHECK_NOTHROW(db::PackedLayer::pack(v.data(), v.size(), 4));
        v[70] = 3;  // parity of 4 is even
        CHECK_THROWS_AS(db::PackedLayer::pack(v.data(), v.size(), 4), std::invalid_argument);
        v[70] = 6;  // above s
        CHECK_THROWS_AS(db::PackedLayer::pack(v.data(), v.size(), 4), std::invalid_argument);
        v[70] = -6;
        CHECK_THROWS_AS(db::PackedLayer::pack(v.data(), v.size(), 4), std::invalid_argument);
        CHECK_THROWS_AS(db::PackedLayer::pack(v.data(), v.size(), 128), std::invalid_argument);
    }

    TEST_CASE(
        "packed and lines: every entry of m = 4 layers 0..20 and m = 5 layers 0..16 equals the "
        "byte") {
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m : {4, 5}) {
                const int k = m == 4 ? 20 : 16;
                db::LayerSet layers;
                for (int s = 0; s <= k; ++s) {
                    layers.add(db::build_layer(m, rule, s, layers));
                    CAPTURE(m);
                    check_round_trip(layers.raw(s), s);
                }
            }
        }
    }

    TEST_CASE("packed: mapped twins are counted at their files' size against the bound") {
        // The bound for a layer without a twin (0.5625 bytes an entry) is above what the
        // twins take (3-4 bits an entry): a --db-memory-gb between the two must hold every
        // layer mapped, not leave the top ones to the block cache.
        const int m = 5, k = 14;
        TempDir dir("twin-bytes");
        db::build_database(build_options(dir.path.string(), m, Rule::EmptyCapture, k));
        uint64_t files = 0, bound = 0;
        for (int s = 0; s <= k; ++s) {
            files += fs::file_size(dir.path / db::PackedLayer::file_name(m, Rule::EmptyCapture, s));
            const uint64_t n = db::layer_size(2 * m, s);
            bound += n / 2 + n / 16 + 4096;
        }
        REQUIRE(files < bound * 9 / 10);
        std::string why;
        auto held =
            db::Database::open(dir.path.string(), m, Rule::EmptyCapture, (files + bound) / 2, &why,
                               nullptr, db::Database::Layout::Mapped);
        REQUIRE(held);
        CHECK(held->resident_layers() == k + 1);
        CHECK(held->packed_layers() == k + 1);
        // Below the twins' size the top layer is left to the block cache.
        auto short_of = db::Database::open(dir.path.string(), m, Rule::EmptyCapture, files / 2,
                                           &why, nullptr, db::Database::Layout::Mapped);
        REQUIRE(short_of);
        CHECK(short_of->resident_layers() < k + 1);
    }

    TEST_CASE("packed: a packed database probes every entry as the one-byte database") {
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m : {4, 5}) {
                const int k = m == 4 ? 18 : 14;
                TempDir dir("db" + std::to_string(m) + kalah::rule_name(rule));
                db::build_database(build_options(dir.path.string(), m, rule, k));
                std::string why;
                auto raw = db::Database::open(dir.path.string(), m, rule, size_t(1) << 30, &why,
                                              nullptr, db::Database::Layout::Raw);
                auto packed = db::Database::open(dir.path.string(), m, rule, size_t(1) << 30, &why,
                                                 nullptr, db::Database::Layout::Packed);
                // The top two layers one byte an entry, the others mapped from their twins.
                const uint64_t top_two = db::layer_size(2 * m, k) + db::layer_size(2 * m, k - 1);
                auto mixed = db::Database::open(dir.path.string(), m, rule, size_t(1) << 30, &why,
                                                nullptr, db::Database::Layout::Mapped, top_two);
                REQUIRE(raw);
                REQUIRE(packed);
                REQUIRE(mixed);
                CHECK(raw->packed_layers() == 0);
                CHECK(packed->packed_layers() == k + 1);
                CHECK(mixed->packed_layers() == k - 1);
                CHECK(mixed->resident_layers() == k + 1);
                CHECK(packed->memory_bytes() < raw->memory_bytes());
                CHECK(packed->memory_bytes() < mixed->memory_bytes());
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
                        int got[6];
                        for (int j = 0; j < count; ++j) bs[j] = &boards[i + j];
                        packed->probe_many(bs, count, got);
                        int got_mixed[6];
                        mixed->probe_many(bs, count, got_mixed);
                        for (int j = 0; j < count; ++j) {
                            const int want = raw->probe(boards[i + j]);
                            if (got[j] != want || packed->probe(boards[i + j]) != want ||
                                got_mixed[j] != want || mixed->probe(boards[i + j]) != want) {
                                CAPTURE(m);
                                CAPTURE(s);
                                CAPTURE(i + j);
                                REQUIRE(got[j] == want);
                                REQUIRE(packed->probe(boards[i + j]) == want);
                                REQUIRE(got_mixed[j] == want);
                                REQUIRE(mixed->probe(boards[i + j]) == want);
                            }
                        }
                    }
                }
                // Too little memory for all: the lower layers packed, the rest cached.
                auto small = db::Database::open(dir.path.string(), m, rule, 200000, &why);
                REQUIRE(small);
                CHECK(small->packed_layers() > 0);
                CHECK(small->resident_layers() <= k);
                std::mt19937_64 rng(9);
                for (int t = 0; t < 20000; ++t) {
                    const int s = static_cast<int>(rng() % (k + 1));
                    uint8_t c[12];
                    db::unrank(rng() % db::layer_size(2 * m, s), s, 2 * m, c);
                    const Board b = db::board_from_configuration(c, m);
                    REQUIRE(small->probe(b) == raw->probe(b));
                }
            }
        }
    }

    TEST_CASE("packed: a build with its lower layers packed or mapped writes the same bytes") {
        TempDir raw_dir("raw"), packed_dir("packed"), mapped_dir("mapped"), resumed_dir("resumed");
        auto o = build_options(raw_dir.path.string(), 5, Rule::Standard, 13);
        o.lower = db::BuildOptions::Lower::Raw;
        const auto raw_stats = db::build_database(o);
        o.dir = packed_dir.path.string();
        o.lower = db::BuildOptions::Lower::Packed;
        const auto packed_stats = db::build_database(o);
        o.dir = mapped_dir.path.string();
        o.lower = db::BuildOptions::Lower::Mapped;
        const auto mapped_stats = db::build_database(o);
        // Mapped, resumed: layers 0..9 first, then 10..13 over the twins of 0..9.
        o.dir = resumed_dir.path.string();
        o.max_seeds = 9;
        db::build_database(o);
        o.max_seeds = 13;
        int reused = 0;
        o.on_layer = [&](const db::LayerStats& st) { reused += st.reused; };
        const auto resumed_stats = db::build_database(o);
        CHECK(reused == 10);
        REQUIRE(raw_stats.size() == 14);
        REQUIRE(packed_stats.size() == 14);
        REQUIRE(mapped_stats.size() == 14);
        REQUIRE(resumed_stats.size() == 14);
        for (size_t s = 0; s < raw_stats.size(); ++s) {
            CAPTURE(s);
            CHECK(raw_stats[s].value_hash == packed_stats[s].value_hash);
            CHECK(raw_stats[s].value_hash == mapped_stats[s].value_hash);
            CHECK(raw_stats[s].value_hash == resumed_stats[s].value_hash);
            for (const std::string& name :
                 {db::layer_file_name(5, Rule::Standard, static_cast<int>(s)),
                  db::PackedLayer::file_name(5, Rule::Standard, static_cast<int>(s))}) {
                CAPTURE(name);
                const std::string want = read_bytes(raw_dir.path / name);
                CHECK(read_bytes(packed_dir.path / name) == want);
                CHECK(read_bytes(mapped_dir.path / name) == want);
                CHECK(read_bytes(resumed_dir.path / name) == want);
            }
        }
        // Packed lower layers need less memory, mapped ones less again: a bound between two
        // is accepted (and Auto takes the one that fits), one below all is refused before
        // anything is built.
        using Lower = db::BuildOptions::Lower;
        const uint64_t raw_need = db::build_memory_bytes(6, 24);
        const uint64_t packed_need = db::build_memory_bytes(6, 24, Lower::Packed);
        const uint64_t mapped_need = db::build_memory_bytes(6, 24, Lower::Mapped);
        CHECK(packed_need < raw_need);
        CHECK(mapped_need < packed_need);
        TempDir refused("refused");
        auto big = build_options(refused.path.string(), 6, Rule::Standard, 24);
        // The top layer whole: these bounds are about the lower layers (in groups, a top
        // layer needs less again: tests/test_groups.cpp).
        big.top = db::BuildOptions::Top::Whole;
        auto gib = [](uint64_t bytes) { return double(bytes) / double(1ull << 30); };
        big.memory_gb = gib((packed_need + raw_need) / 2);
        CHECK(db::lower_layers_of(big) == Lower::Packed);
        big.memory_gb = gib((mapped_need + packed_need) / 2);
        CHECK(db::lower_layers_of(big) == Lower::Mapped);
        // Without twins there is nothing to map: the same bound is refused, as is Mapped.
        big.twins = false;
        CHECK_THROWS_AS(db::build_database(big), std::invalid_argument);
        big.lower = Lower::Mapped;
        big.memory_gb = 64;
        CHECK_THROWS_AS(db::build_database(big), std::invalid_argument);
        CHECK(fs::is_empty(refused.path));
        big.twins = true;
        big.lower = Lower::Auto;
        big.memory_gb = gib(mapped_need / 2);
        CHECK_THROWS_AS(db::build_database(big), std::invalid_argument);
        CHECK(fs::is_empty(refused.path));
        // Lower layers forced one byte an entry, or packed, are checked against their own need.
        big.lower = Lower::Raw;
        big.memory_gb = gib((packed_need + raw_need) / 2);
        CHECK_THROWS_AS(db::build_database(big), std::invalid_argument);
        big.lower = Lower::Packed;
        big.memory_gb = gib((mapped_need + packed_need) / 2);
        CHECK_THROWS_AS(db::build_database(big), std::invalid_argument);
        CHECK(fs::is_empty(refused.path));
    }
}

namespace {

uint64_t kdb_checksum(const std::string& dir, int m, Rule rule, int s) {
    return db::LayerFile::open(dir + "/" + db::layer_file_name(m, rule, s), m, rule, s)
        ->header()
        .file_checksum;
}

void write_bytes(const fs::path& p, const std::string& data) { test_files::spit(p.string(), data); }

// Recomputes a packed twin's checksums after a crafted change (piece table, then header),
// as db/packed.h describes them: a file whose damage no checksum can reveal.
void forge_checksums(std::string& f) {
    auto u64 = [&](size_t at) {
        uint64_t v;
        std::memcpy(&v, f.data() + at, 8);
        return v;
    };
    const uint64_t header_bytes = u64(24), data_bytes = u64(32), pieces = u64(56);
    const uint64_t start = (64 + 8 * pieces + 4095) / 4096 * 4096;
    std::vector<uint64_t> table;
    auto region = [&](uint64_t at, uint64_t bytes) {
        for (uint64_t p = 0; p < bytes; p += db::PackedLayer::kPiece)
            table.push_back(
                db::kh64w(f.data() + at + p, std::min(db::PackedLayer::kPiece, bytes - p)));
    };
    region(start, header_bytes);
    region(start + header_bytes, data_bytes);
    std::memcpy(f.data() + 64, table.data(), 8 * table.size());
    std::string head = f.substr(0, 64);
    std::memset(head.data() + 48, 0, 8);
    const uint64_t c = db::kh64(table.data(), 8 * table.size(), db::kh64(head.data(), 64));
    std::memcpy(f.data() + 48, &c, 8);
}

}  // namespace

TEST_SUITE("db") {
    TEST_CASE("packed twins: written by build-db, read by open, damage and staleness caught") {
        const int m = 4, k = 14;
        const Rule rule = Rule::Standard;
        TempDir dir("twins");
        const std::string d = dir.path.string();
        db::build_database(build_options(d, m, rule, k));
        for (int s = 0; s <= k; ++s)
            REQUIRE(fs::exists(dir.path / db::PackedLayer::file_name(m, rule, s)));
        std::string why;
        auto raw = db::Database::open(d, m, rule, size_t(1) << 30, &why, nullptr,
                                      db::Database::Layout::Raw);
        // Every twin present: the default layout reads them, and they hold the same values.
        auto twins = db::Database::open(d, m, rule, size_t(1) << 30, &why);
        REQUIRE(raw);
        REQUIRE(twins);
        CHECK(twins->packed_layers() == k + 1);
        auto same_values = [&](const db::Database& a) {
            for (int s = 0; s <= k; ++s) {
                uint8_t c[12];
                db::unrank(0, s, 2 * m, c);
                for (uint64_t r = 0; r < db::layer_size(2 * m, s); ++r) {
                    const Board b = db::board_from_configuration(c, m);
                    if (a.probe(b) != raw->probe(b)) {
                        CAPTURE(s);
                        CAPTURE(r);
                        REQUIRE(a.probe(b) == raw->probe(b));
                    }
                    db::next_configuration(c, 2 * m);
                }
            }
        };
        same_values(*twins);
        // Probed in place in the mapped twins: the same values, and every layer's twin read
        // both ways holds the same entries.
        auto mapped = db::Database::open(d, m, rule, size_t(1) << 30, &why, nullptr,
                                         db::Database::Layout::Mapped);
        REQUIRE(mapped);
        CHECK(mapped->packed_layers() == k + 1);
        same_values(*mapped);
        for (int s = 0; s <= k; ++s) {
            const std::string path = (dir.path / db::PackedLayer::file_name(m, rule, s)).string();
            const uint64_t src = kdb_checksum(d, m, rule, s);
            const auto copy = db::PackedLayer::read_file(path, m, rule, s, src);
            const auto map =
                db::PackedLayer::read_file(path, m, rule, s, src, db::PackedLayer::Load::Mapped);
            REQUIRE(map.size() == copy.size());
            for (uint64_t r = 0; r < copy.size(); ++r)
                if (map.get(r) != copy.get(r)) REQUIRE(map.get(r) == copy.get(r));
        }
        db::VerifyOptions vo;
        vo.dir = d;
        vo.sample = 50;
        CHECK(db::verify_database(vo).ok());
        CHECK(db::verify_database(vo).twins == k + 1);

        const int s = k;
        const fs::path twin = dir.path / db::PackedLayer::file_name(m, rule, s);
        const std::string good = read_bytes(twin);
        const uint64_t source = kdb_checksum(d, m, rule, s);
        CHECK_NOTHROW(db::PackedLayer::read_file(twin.string(), m, rule, s, source));
        // Stale: packed from another build of the layer file.
        CHECK_THROWS_AS(db::PackedLayer::read_file(twin.string(), m, rule, s, source ^ 1),
                        db::FormatError);
        CHECK(!db::PackedLayer::twin_matches(twin.string(), m, rule, s, source ^ 1));
        // Wrong layer, truncated, a flipped data bit.
        CHECK_THROWS_AS(db::PackedLayer::read_file(twin.string(), m, rule, s - 1, source),
                        db::FormatError);
        write_bytes(twin, good.substr(0, good.size() - 3));
        CHECK_THROWS_AS(db::PackedLayer::read_file(twin.string(), m, rule, s, source),
                        db::FormatError);
        std::string flipped = good;
        flipped[flipped.size() - 20] ^= 4;
        write_bytes(twin, flipped);
        CHECK_THROWS_AS(db::PackedLayer::read_file(twin.string(), m, rule, s, source),
                        db::FormatError);
        CHECK_THROWS_AS(db::PackedLayer::read_file(twin.string(), m, rule, s, source,
                                                   db::PackedLayer::Load::Mapped),
                        db::FormatError);
        // verify-db names a damaged twin.
        const db::VerifyResult bad_twin = db::verify_database(vo);
        CHECK(!bad_twin.ok());
        CHECK(bad_twin.twins == k);
        REQUIRE(bad_twin.problems.size() == 1);
        CHECK(bad_twin.problems[0].find(db::PackedLayer::file_name(m, rule, s)) == 0);
        // A damaged twin is only a cache: open falls back to the layer file, same values.
        auto fallback = db::Database::open(d, m, rule, size_t(1) << 30, &why);
        REQUIRE(fallback);
        same_values(*fallback);

        // Crafted twins with forged checksums: a group's data offset past the data, and a
        // block's lo above s, are refused; crafted data bits never give a value out of range.
        const uint64_t pieces = [&] {
            uint64_t v;
            std::memcpy(&v, good.data() + 56, 8);
            return v;
        }();
        const size_t headers_at = (64 + 8 * pieces + 4095) / 4096 * 4096;
        std::string crafted = good;
        const uint64_t far = uint64_t(1) << 40;
        std::memcpy(crafted.data() + headers_at + 64, &far, 8);  // group 1's offset
        forge_checksums(crafted);
        write_bytes(twin, crafted);
        CHECK_THROWS_WITH_AS(db::PackedLayer::read_file(twin.string(), m, rule, s, source),
                             doctest::Contains("out of range"), db::FormatError);
        CHECK_THROWS_WITH_AS(db::PackedLayer::read_file(twin.string(), m, rule, s, source,
                                                        db::PackedLayer::Load::Mapped),
                             doctest::Contains("out of range"), db::FormatError);
        // A block's lo above s: read, and every value of the block clamped to [-s, s] (block
        // 0's lo is 127 and block 1's too: lo bits 0..13 set).
        crafted = good;
        crafted[headers_at + 20] = static_cast<char>(0xff);
        crafted[headers_at + 21] = static_cast<char>(crafted[headers_at + 21] | 0x3f);
        forge_checksums(crafted);
        write_bytes(twin, crafted);
        for (const auto load : {db::PackedLayer::Load::Copy, db::PackedLayer::Load::Mapped}) {
            const db::PackedLayer p =
                db::PackedLayer::read_file(twin.string(), m, rule, s, source, load);
            for (uint64_t r = 0; r < 2 * db::PackedLayer::kBlock; ++r) CHECK(p.get(r) == s);
            for (uint64_t r = 2 * db::PackedLayer::kBlock; r < p.size(); ++r) {
                const int v = p.get(r);
                if (v < -s || v > s) REQUIRE(v >= -s);
                if (v > s) REQUIRE(v <= s);
            }
        }
        crafted = good;
        const uint64_t header_bytes = [&] {
            uint64_t v;
            std::memcpy(&v, good.data() + 24, 8);
            return v;
        }();
        for (size_t i = headers_at + header_bytes; i + 8 < crafted.size(); ++i)
            crafted[i] = char(0xff);
        forge_checksums(crafted);
        write_bytes(twin, crafted);
        const db::PackedLayer p = db::PackedLayer::read_file(twin.string(), m, rule, s, source);
        for (uint64_t r = 0; r < p.size(); ++r) {
            const int v = p.get(r);
            if (v < -s || v > s) REQUIRE(v >= -s);
            if (v > s) REQUIRE(v <= s);
        }

        // A rebuild (resume) rewrites the damaged twin, byte for byte as before.
        write_bytes(twin, flipped);
        db::build_database(build_options(d, m, rule, k));
        CHECK(read_bytes(twin) == good);

        // --no-packed-twins: none written.
        TempDir bare("bare");
        auto o = build_options(bare.path.string(), m, rule, 6);
        o.twins = false;
        db::build_database(o);
        for (const auto& e : fs::directory_iterator(bare.path))
            CHECK(e.path().extension() != ".kpk");
    }
}
