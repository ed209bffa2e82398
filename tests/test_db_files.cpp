// The layer files (db/format.*, db/verify.*): the checksum, file round trips, resume and
// byte-identical rebuilds, damaged and hostile files, kill -9 and a full disk, verify --sample.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.h"
#include "db/builder.h"
#include "db/database.h"
#include "db/format.h"
#include "db/open.h"
#include "db/packed.h"
#include "db/verify.h"
#include "db_fixtures.h"
#if KALAH_HAS_SERVE
#include "serve/api.h"
#endif
#include "temp_dir.h"

namespace {

using kalah::Rule;
namespace db = kalah::db;
namespace fs = std::filesystem;
using test_db::build;
using test_db::probe_mismatches;
using test_files::files_in;
using test_files::slurp;
using test_files::spit;
using test_files::TempDir;

// The pid of a process that has exited (a child forked and reaped here).
long dead_pid() {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
}

db::VerifyResult verify(const std::string& dir, int m = 0) {
    db::VerifyOptions o;
    o.dir = dir;
    o.m = m;
    return db::verify_database(o);
}

bool any_problem_has(const db::VerifyResult& r, const std::string& needle) {
    for (const auto& p : r.problems)
        if (p.find(needle) != std::string::npos) return true;
    return false;
}

uint64_t get_u64_le(const std::string& s, size_t at) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(static_cast<uint8_t>(s[at + i])) << (8 * i);
    return v;
}
void put_u64_le(std::string& s, size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}
// Recomputes the header checksum of a layer file's bytes (format.h), as a crafted file
// would: the damage then gets past the checksum and must be caught by the bounds checks.
void reseal_header(std::string& file) {
    const uint32_t blocks = static_cast<uint8_t>(file[28]) | static_cast<uint8_t>(file[29]) << 8 |
                            static_cast<uint8_t>(file[30]) << 16 |
                            static_cast<uint32_t>(static_cast<uint8_t>(file[31])) << 24;
    const size_t index_bytes =
        std::min<size_t>(size_t(db::kIndexRecordBytes) * blocks, file.size() - db::kHeaderBytes);
    put_u64_le(file, 40,
               db::kh64(file.data() + db::kHeaderBytes, index_bytes, db::kh64(file.data(), 40)));
}

bool any_temporary(const std::string& dir) {
    for (const std::string& n : files_in(dir))
        if (n.size() > 4 && n.compare(n.size() - 4, 4, ".tmp") == 0) return true;
    return false;
}

}  // namespace

TEST_SUITE("db") {
    TEST_CASE("format: first_non_value equals a plain scan, on random blocks of every layer") {
        std::mt19937_64 rng(49);
        for (int s = 0; s <= 60; ++s)
            for (int trial = 0; trial < 40; ++trial) {
                std::vector<int8_t> v(rng() % 300);
                for (auto& x : v) x = static_cast<int8_t>(2 * int(rng() % (s + 1)) - s);
                // Most blocks hold only values; the others one to three entries that are not
                // (out of range, of the wrong parity, or kUnknown).
                if (!v.empty() && trial % 2)
                    for (int k = 1 + int(rng() % 3); k > 0; --k) {
                        const int bad[] = {s + 1, s + 2, -s - 2, db::kUnknown, s > 0 ? s - 1 : 1};
                        v[rng() % v.size()] = static_cast<int8_t>(bad[rng() % 5]);
                    }
                uint64_t want = 0;
                while (want < v.size() && v[want] >= -s && v[want] <= s && (v[want] + s) % 2 == 0)
                    ++want;
                CAPTURE(s);
                CHECK(db::first_non_value(v.data(), v.size(), s) == want);
            }
    }

    TEST_CASE("kh64w: equals its definition (db/format.h) and sees every bit") {
        // The definition written out plainly: lanes, strides, then kh64 of the lanes and
        // of the tail.
        auto reference = [](const std::vector<uint8_t>& b, uint64_t seed) {
            const uint64_t p1 = 0x9E3779B185EBCA87ull, p3 = 0x165667B19E3779F9ull;
            std::vector<uint64_t> lane(8);
            for (uint64_t k = 0; k < 8; ++k) lane[k] = seed + k * p3;
            const size_t strides = b.size() / 64;
            for (size_t t = 0; t < strides; ++t)
                for (size_t k = 0; k < 8; ++k) {
                    uint64_t w = 0;
                    for (int byte = 7; byte >= 0; --byte) w = (w << 8) | b[64 * t + 8 * k + byte];
                    const uint64_t x = (lane[k] ^ w) * p1;
                    lane[k] = (x << 31) | (x >> 33);
                }
            const uint64_t h = db::kh64(lane.data(), 64, db::kh64(nullptr, 0, seed ^ b.size()));
            return db::kh64(b.data() + 64 * strides, b.size() - 64 * strides, h);
        };
        std::mt19937_64 rng(11);
        for (size_t len : {size_t(0), size_t(1), size_t(63), size_t(64), size_t(65), size_t(200),
                           size_t(1000), size_t(4096 + 17)}) {
            std::vector<uint8_t> b(len);
            for (auto& x : b) x = static_cast<uint8_t>(rng());
            const uint64_t seed = rng();
            CAPTURE(len);
            CHECK(db::kh64w(b.data(), len, seed) == reference(b, seed));
            CHECK(db::kh64w(b.data(), len, seed) != db::kh64w(b.data(), len, seed + 1));
        }
        // Every single-bit flip of a 300-byte region changes the checksum.
        std::vector<uint8_t> b(300);
        for (auto& x : b) x = static_cast<uint8_t>(rng());
        const uint64_t h = db::kh64w(b.data(), b.size());
        int same = 0;
        for (size_t i = 0; i < 8 * b.size(); ++i) {
            b[i / 8] ^= static_cast<uint8_t>(1u << (i % 8));
            same += db::kh64w(b.data(), b.size()) == h;
            b[i / 8] ^= static_cast<uint8_t>(1u << (i % 8));
        }
        CHECK(same == 0);
    }

    TEST_CASE("files: block size and zstd level change the bytes, not the values") {
        TempDir a("blocks-small"), b("blocks-default");
        build(a.path.string(), 4, Rule::Standard, 12);
        build(b.path.string(), 4, Rule::Standard, 12, db::kDefaultBlockSize);
        for (int s = 0; s <= 12; ++s) {
            CAPTURE(s);
            auto fa = db::LayerFile::open(a.file(4, Rule::Standard, s), 4, Rule::Standard, s);
            auto fb = db::LayerFile::open(b.file(4, Rule::Standard, s), 4, Rule::Standard, s);
            CHECK(fa->header().block_size == 4096);
            CHECK(fb->header().block_size == db::kDefaultBlockSize);
            CHECK(fb->header().block_count == 1);  // m = 4 layers hold < 1 Mi entries
            CHECK(fb->header().level == db::kDefaultZstdLevel);
            CHECK(fa->read_all() == fb->read_all());
        }
        // The same values through a small block cache, where each cached layer is one block
        // shorter than the file's block size.
        std::string why;
        auto full = db::Database::open(b.path.string(), 4, Rule::Standard, 1 << 30, &why);
        auto small = db::Database::open(b.path.string(), 4, Rule::Standard, 40000, &why);
        REQUIRE(full);
        REQUIRE(small);
        CHECK(small->resident_layers() < 13);
        CHECK(probe_mismatches(*full, *small, 20000, 11) == 0);
    }

    TEST_CASE("files: verify passes, rebuild is byte-identical, resume reuses layers") {
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            TempDir a("a"), b("b");
            build(a.path.string(), 4, rule, 12);
            auto res = verify(a.path.string());
            CHECK_MESSAGE(res.ok(), (res.problems.empty() ? "" : res.problems[0]));
            CHECK(res.files == 13);
            CHECK(res.entries == db::layer_size(9, 12));
            // Interrupted build: only layers 0..7 there, and the half-written temp file of
            // layer 8 under the name the writer uses, left by a process that is gone.
            build(b.path.string(), 4, rule, 7);
            const std::string stale = db::temp_layer_path(b.file(4, rule, 8), dead_pid());
            spit(stale, "partial");
            auto stats = build(b.path.string(), 4, rule, 12);
            CHECK(!fs::exists(stale));
            for (int s = 0; s <= 12; ++s) {
                CHECK(stats[s].reused == (s <= 7));
                CHECK(slurp(a.file(4, rule, s)) == slurp(b.file(4, rule, s)));
            }
            // A damaged layer is rebuilt on resume, identical again.
            spit(b.file(4, rule, 10), "garbage");
            stats = build(b.path.string(), 4, rule, 12);
            CHECK(!stats[10].reused);
            CHECK(slurp(a.file(4, rule, 10)) == slurp(b.file(4, rule, 10)));
        }
    }

    TEST_CASE("files: corruption, truncation, swapped rule and a wrong entry are detected") {
        TempDir std_dir("std"), ec_dir("ec");
        build(std_dir.path.string(), 4, Rule::Standard, 12);
        build(ec_dir.path.string(), 4, Rule::EmptyCapture, 12);
        const std::string good9 = slurp(std_dir.file(4, Rule::Standard, 9));
        const std::string name9 = db::layer_file_name(4, Rule::Standard, 9);

        SUBCASE("one flipped byte in a block") {
            std::string bad = good9;
            bad[bad.size() - 100] ^= 0x01;
            spit(std_dir.file(4, Rule::Standard, 9), bad);
            auto res = verify(std_dir.path.string());
            CHECK(!res.ok());
            CHECK(any_problem_has(res, name9 + ": block"));
            std::string why;
            auto d = db::Database::open(std_dir.path.string(), 4, Rule::Standard, 1 << 30, &why);
            REQUIRE(d);
            CHECK(d->max_seeds() == 8);  // the run of usable layers ends below the damage
            // ... and open says so, naming the file and the problem.
            CAPTURE(why);
            CHECK(why.find(name9 + ": block ") == 0);
            CHECK(why.find("checksum mismatch") != std::string::npos);
            CHECK(why.find("; using layers 0..8") != std::string::npos);
        }
        SUBCASE("a missing layer below present ones is reported, not silently ignored") {
            std::filesystem::remove(std_dir.file(4, Rule::Standard, 9));
            std::string why;
            auto d = db::Database::open(std_dir.path.string(), 4, Rule::Standard, 1 << 30, &why);
            REQUIRE(d);
            CHECK(d->max_seeds() == 8);
            CAPTURE(why);
            CHECK(why.find(name9 + ": missing, but " + db::layer_file_name(4, Rule::Standard, 10) +
                           " exists") == 0);
            CHECK(why.find("; using layers 0..8") != std::string::npos);
            // Without layers above the gap the database simply ends there: no warning.
            for (int s = 10; s <= 12; ++s)
                std::filesystem::remove(std_dir.file(4, Rule::Standard, s));
            why = "stale";
            d = db::Database::open(std_dir.path.string(), 4, Rule::Standard, 1 << 30, &why);
            REQUIRE(d);
            CHECK(d->max_seeds() == 8);
            CHECK(why.empty());
        }
        SUBCASE("one flipped byte in the header") {
            std::string bad = good9;
            bad[20] ^= 0x40;
            spit(std_dir.file(4, Rule::Standard, 9), bad);
            auto res = verify(std_dir.path.string());
            CHECK(!res.ok());
            CHECK(any_problem_has(res, name9));
            std::string why;
            auto d = db::Database::open(std_dir.path.string(), 4, Rule::Standard, 1 << 30, &why);
            REQUIRE(d);
            CHECK(d->max_seeds() == 8);
            CAPTURE(why);
            CHECK(why.find(name9 + ": ") == 0);
            CHECK(why.find("; using layers 0..8") != std::string::npos);
        }
        SUBCASE("truncated file") {
            spit(std_dir.file(4, Rule::Standard, 9), good9.substr(0, good9.size() - 7));
            auto res = verify(std_dir.path.string());
            CHECK(!res.ok());
            CHECK(any_problem_has(res, name9 + ": truncated"));
        }
        SUBCASE("the other rule's file under this rule's name") {
            fs::copy_file(ec_dir.file(4, Rule::EmptyCapture, 9), std_dir.file(4, Rule::Standard, 9),
                          fs::copy_options::overwrite_existing);
            auto res = verify(std_dir.path.string());
            CHECK(!res.ok());
            CHECK(any_problem_has(res, name9 + ": holds m=4 empty-capture"));
        }
        SUBCASE("another m's file under this name") {
            TempDir m3("m3");
            build(m3.path.string(), 3, Rule::Standard, 9);
            fs::copy_file(m3.file(3, Rule::Standard, 9), std_dir.file(4, Rule::Standard, 9),
                          fs::copy_options::overwrite_existing);
            auto res = verify(std_dir.path.string());
            CHECK(!res.ok());
            CHECK(any_problem_has(res, name9 + ": holds m=3"));
        }
        SUBCASE("a wrong value written with valid checksums") {
            auto f = db::LayerFile::open(std_dir.file(4, Rule::Standard, 9), 4, Rule::Standard, 9);
            auto values = f->read_all();
            f.reset();
            values[1234] = static_cast<int8_t>(values[1234] + 2);
            db::write_layer(std_dir.file(4, Rule::Standard, 9), 4, Rule::Standard, 9, values.data(),
                            values.size());
            auto res = verify(std_dir.path.string());
            CHECK(!res.ok());
            CHECK(any_problem_has(res, name9 + ": entry 1234 "));
        }
        SUBCASE("odd file names are reported, not taken for a layer, and do not abort") {
            const std::string d = std_dir.path.string();
            fs::copy_file(std_dir.file(4, Rule::Standard, 1), d + "/kalah-m04-standard-s1.kdb");
            fs::copy_file(std_dir.file(4, Rule::Standard, 1), d + "/kalah-m4-standard-s01.kdb");
            spit(d + "/kalah-m99999999999-standard-s1.kdb", "x");
            spit(d + "/kalah-m4-standard-s99999999999.kdb", "x");
            auto res = verify(d);
            CHECK(!res.ok());
            CHECK(res.files == 13);  // the real layers still all check out
            for (const char* odd :
                 {"kalah-m04-standard-s1.kdb", "kalah-m4-standard-s01.kdb",
                  "kalah-m99999999999-standard-s1.kdb", "kalah-m4-standard-s99999999999.kdb"}) {
                CAPTURE(odd);
                CHECK(any_problem_has(res, std::string(odd) + ": unrecognised file name"));
            }
            CHECK(res.problems.size() == 4);
            auto r = run_kalah("verify-db --dir " + d);
            CAPTURE(r.err);
            CHECK(r.status == 1);
            CHECK(r.err.find("stoi") == std::string::npos);
            CHECK(r.err.find("kalah-m99999999999-standard-s1.kdb: unrecognised") !=
                  std::string::npos);
            CHECK(r.out.find("FAILED: 13 layer files") != std::string::npos);
        }
        SUBCASE("a missing layer") {
            fs::remove(std_dir.file(4, Rule::Standard, 5));
            auto res = verify(std_dir.path.string());
            CHECK(!res.ok());
            CHECK(any_problem_has(res, db::layer_file_name(4, Rule::Standard, 5) + ": missing"));
        }
    }

    TEST_CASE("files: write_layer leaves no temp file and never uses another writer's") {
        TempDir dir("write");
        const std::string path = dir.file(3, Rule::Standard, 4);
        // A value a layer of 4 seeds can hold (even, in [-4, 4]): others are damage.
        std::vector<int8_t> values(db::layer_size(6, 4), 2);
        // Another process's temp file at the old fixed name stays untouched.
        spit(path + ".tmp", "another builder's half-written layer");
        db::write_layer(path, 3, Rule::Standard, 4, values.data(), values.size());
        CHECK(slurp(path + ".tmp") == "another builder's half-written layer");
        CHECK(db::LayerFile::open(path, 3, Rule::Standard, 4)->read_all() == values);
        fs::remove(path + ".tmp");
        // A failed write (here the rename onto a non-empty directory) leaves no temp file.
        const std::string blocked = dir.file(3, Rule::Standard, 5);
        fs::create_directories(blocked + "/x");
        std::vector<int8_t> v5(db::layer_size(6, 5), 0);
        CHECK_THROWS_AS(db::write_layer(blocked, 3, Rule::Standard, 5, v5.data(), v5.size()),
                        std::runtime_error);
        std::vector<std::string> left;
        for (const auto& e : fs::directory_iterator(dir.path)) left.push_back(e.path().filename());
        std::sort(left.begin(), left.end());
        CHECK(left ==
              std::vector<std::string>{fs::path(path).filename(), fs::path(blocked).filename()});
    }

    TEST_CASE("hostile files: crafted block indexes are rejected, never read out of bounds") {
        TempDir dir("hostile");
        const std::string d = dir.path.string();
        build(d, 4, Rule::Standard, 12);
        const std::string path9 = dir.file(4, Rule::Standard, 9);
        const std::string good = slurp(path9);
        const std::string name9 = db::layer_file_name(4, Rule::Standard, 9);
        const size_t rec0 = db::kHeaderBytes, rec1 = db::kHeaderBytes + db::kIndexRecordBytes;
        REQUIRE(good.size() > rec1 + 24);
        const uint64_t size0 = get_u64_le(good, rec0 + 8);
        const uint64_t off1 = get_u64_le(good, rec1);
        REQUIRE(off1 == get_u64_le(good, rec0) + size0);

        struct Craft {
            const char* what;
            std::string bytes;
            const char* problem;  // part of the expected message
        };
        std::vector<Craft> crafts;
        {
            // Block 0's size wraps the running offset round 2^64 back to block 1's real
            // start: the sum of the sizes still equals the file size.
            std::string f = good;
            const uint64_t huge = ~uint64_t(0) - 15;  // 2^64 - 16
            put_u64_le(f, rec0 + 8, huge);
            put_u64_le(f, rec1, get_u64_le(good, rec0) + huge);  // offset0 - 16 (mod 2^64)
            put_u64_le(f, rec1 + 8, get_u64_le(good, rec1 + 8) + size0 + 16);
            reseal_header(f);
            crafts.push_back({"size that wraps round 2^64", f, "impossible size"});
        }
        {
            std::string f = good;
            put_u64_le(f, rec0 + 8, 0);
            put_u64_le(f, rec1, get_u64_le(good, rec0));
            put_u64_le(f, rec1 + 8, get_u64_le(good, rec1 + 8) + size0);
            reseal_header(f);
            crafts.push_back({"empty block", f, "impossible size"});
        }
        {
            // Block 0 claims more bytes than the file holds; the last block gives them back.
            std::string f = good;
            const uint64_t grow = good.size();
            put_u64_le(f, rec0 + 8, size0 + grow);
            put_u64_le(f, rec1, off1 + grow);
            reseal_header(f);
            crafts.push_back({"block past the end of the file", f, ""});
        }
        {
            // A block count whose index would need far more bytes than the file has.
            std::string f = good;
            f[24] = 1, f[25] = 0, f[26] = 0, f[27] = 0;  // block size 1
            const uint64_t entries = get_u64_le(good, 16);
            for (int i = 0; i < 4; ++i) f[28 + i] = static_cast<char>(entries >> (8 * i));
            reseal_header(f);
            crafts.push_back({"huge block count", f, "truncated (block index)"});
        }
        {
            std::string f = good;
            for (int i = 0; i < 4; ++i) f[24 + i] = static_cast<char>(0xff);
            reseal_header(f);
            crafts.push_back({"block size 2^32 - 1", f, "block size"});
        }
        for (const Craft& c : crafts) {
            CAPTURE(c.what);
            spit(path9, c.bytes);
            std::string message;
            try {
                db::LayerFile::open(path9, 4, Rule::Standard, 9);
            } catch (const db::FormatError& e) {
                message = e.what();
            }
            CAPTURE(message);
            CHECK(message.find(name9 + ": ") == 0);
            CHECK(message.find(c.problem) != std::string::npos);
            auto res = verify(d);
            CHECK(!res.ok());
            CHECK(any_problem_has(res, name9 + ": "));
            // The CLI: exit 1 and one line naming the file, on one and two threads.
            for (const char* threads : {"1", "2"}) {
                CAPTURE(threads);
                for (const std::string cmd : {"solve --pits 4 --seeds 3 --tt-mb 16",
                                              "query --pits 4 --seeds 3 --tt-mb 16"}) {
                    auto r = run_kalah(cmd + " --threads " + threads + " --db " + d);
                    CAPTURE(r.err);
                    CHECK(r.status == 1);
                    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
                    CHECK(r.err.find(name9 + ": ") != std::string::npos);
                }
            }
            auto r = run_kalah("verify-db --dir " + d);
            CHECK(r.status == 1);
            CHECK(r.err.find(name9 + ": ") != std::string::npos);
        }
    }

    TEST_CASE("hostile files: a damaged block met during a search exits 1 on any thread count") {
        TempDir dir("damaged-block");
        const std::string d = dir.path.string();
        build(d, 4, Rule::Standard, 12);
        // Flip one byte inside every block of layers 10..12 (header and index intact, so
        // the files open; the damage is found only when a probe decodes the block).
        for (int s = 10; s <= 12; ++s) {
            std::string f = slurp(dir.file(4, Rule::Standard, s));
            const uint32_t blocks = static_cast<uint8_t>(f[28]) | static_cast<uint8_t>(f[29]) << 8;
            for (uint32_t b = 0; b < blocks; ++b) {
                const size_t rec = db::kHeaderBytes + db::kIndexRecordBytes * b;
                f[get_u64_le(f, rec) + get_u64_le(f, rec + 8) / 2] ^= 0x10;
            }
            spit(dir.file(4, Rule::Standard, s), f);
        }
        // With 40 KB only the low layers are held in memory: layers 10..12 are read through
        // the block cache, during the search.
        for (const char* threads : {"1", "2", "3"}) {
            CAPTURE(threads);
            for (const std::string cmd :
                 {"solve --pits 4 --seeds 3", "query --pits 4 --seeds 3 --moves A1"}) {
                auto r = run_kalah(cmd + " --tt-mb 16 --db-memory-gb 0.00004 --threads " + threads +
                                   " --db " + d);
                CAPTURE(r.err);
                CHECK(r.status == 1);
                CHECK(r.err.find("checksum mismatch (damaged)") != std::string::npos);
                CHECK(r.err.find("kalah-m4-standard-s1") != std::string::npos);
                CHECK(r.out.empty());
            }
        }
    }

    TEST_CASE("faults: stale temporaries of dead writers are removed, a live writer's kept") {
        TempDir dir("stale");
        const std::string d = dir.path.string();
        const std::string layer = dir.file(3, Rule::Standard, 5);
        const std::string dead = db::temp_layer_path(layer, dead_pid());
        const std::string mine = db::temp_layer_path(layer, ::getpid());
        const std::string live = db::temp_layer_path(layer, ::getppid());  // still running
        const std::string other_rule =
            db::temp_layer_path(dir.file(3, Rule::EmptyCapture, 5), dead_pid());
        for (const auto& p : {dead, mine, live, other_rule}) spit(p, "partial");
        spit(d + "/notes.tmp", "not ours");
        auto removed = db::remove_stale_temporaries(d, 3, Rule::Standard);
        std::sort(removed.begin(), removed.end());
        std::vector<std::string> expect = {fs::path(dead).filename(), fs::path(mine).filename()};
        std::sort(expect.begin(), expect.end());
        CHECK(removed == expect);
        CHECK(!fs::exists(dead));
        CHECK(!fs::exists(mine));
        CHECK(fs::exists(live));
        CHECK(fs::exists(other_rule));
        CHECK(fs::exists(d + "/notes.tmp"));
    }

    TEST_CASE("faults: build-db killed (kill -9) at random points resumes byte-identical") {
        // A build of a second or so, killed at a random moment of it, several times; after
        // each kill every layer file present must pass all its checks (a file appears only
        // complete), and the resumed build must leave the files of an uninterrupted build,
        // byte for byte, and no temporary file.
        TempDir ref("kill-ref");
        const std::string args =
            "build-db --pits 5 --max-seeds 15 --threads 2 --block-entries 65536";
        const auto t0 = std::chrono::steady_clock::now();
        auto r = run_kalah(args + " --dir " + ref.path.string());
        const double full =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        REQUIRE(r.status == 0);
        const std::vector<std::string> names = files_in(ref.path.string());
        REQUIRE(names.size() == 32);  // 16 layer files and their packed twins
        const uint64_t seed = std::random_device{}();
        CAPTURE(seed);
        std::mt19937_64 rng(seed);
        int killed_mid_build = 0, killed_mid_write = 0;
        for (int run = 0; run < 6; ++run) {
            CAPTURE(run);
            TempDir dir("kill");
            const std::string d = dir.path.string();
            const auto delay = std::chrono::microseconds(static_cast<int64_t>(
                std::uniform_real_distribution<>(0.05, 1.0)(rng) * full * 1e6));
            const pid_t pid =
                spawn_kalah_quiet({"build-db", "--pits", "5", "--max-seeds", "15", "--threads", "2",
                                   "--block-entries", "65536", "--dir", d});
            REQUIRE(pid >= 0);
            int status = 0;
            if (run % 2 == 0) {
                std::this_thread::sleep_for(delay);
            } else {
                // The riskiest moment: while a file is being written (its temporary name
                // is in the directory), after a random part of the build. A writer that
                // wrote in place would be caught with a partial layer file here. Waiting
                // for a temporary, not for any new name: a small file (a packed twin) can
                // be written and renamed between two looks, and a kill then misses it.
                std::this_thread::sleep_for(delay / 2);
                while (!any_temporary(d) && ::waitpid(pid, &status, WNOHANG) == 0)
                    std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            const std::vector<std::string> left = files_in(d);
            killed_mid_write += any_temporary(d);
            if (WIFSIGNALED(status) && left.size() < names.size() + (any_temporary(d) ? 1 : 0))
                ++killed_mid_build;
            // Whatever the kill left under a layer's or a twin's name is a complete, valid
            // file.
            for (const std::string& name : names) {
                const fs::path p = dir.path / name;
                if (!fs::exists(p)) continue;
                CAPTURE(name);
                CHECK(slurp(p.string()) == slurp((ref.path / name).string()));
            }
            r = run_kalah(args + " --dir " + d);
            CAPTURE(r.err);
            CHECK(r.status == 0);
            CHECK(files_in(d) == names);  // no temporary file left
            for (const std::string& name : names)
                CHECK(slurp((dir.path / name).string()) == slurp((ref.path / name).string()));
        }
        // The kills must have hit builds in progress, or the test proved nothing.
        CHECK(killed_mid_build >= 2);
        CHECK(killed_mid_write >= 1);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
        // A failed allocation (here the resident layers, under a 30 MB address-space limit
        // that the program itself fits in) is one clear line and exit 1, not an abort.
        // (Sanitizers reserve terabytes of address space: no such limit under them.)
        const std::string cmd = "ulimit -v 30000 && " + std::string(KALAH_BIN) +
                                " solve --pits 5 --seeds 2 --threads 1 --db " + ref.path.string() +
                                " >/dev/null 2>" + ref.path.string() + "/err";
        const int raw = std::system(cmd.c_str());
        const std::string err = slurp(ref.path.string() + "/err");
        CAPTURE(err);
        CHECK(WIFEXITED(raw));
        CHECK(WEXITSTATUS(raw) == 1);
        CHECK(err ==
              "kalah solve: error: out of memory (a smaller --tt-mb, --db-memory-gb or "
              "--memory-gb may fit)\n");
#endif
    }

    TEST_CASE("faults: a full disk (file-size limit) fails cleanly and resumes") {
        TempDir ref("fsize-ref"), dir("fsize");
        const std::string d = dir.path.string();
        const std::string args =
            "build-db --pits 4 --max-seeds 16 --threads 2 --block-entries 4096";
        auto r = run_kalah(args + " --dir " + ref.path.string());
        REQUIRE(r.status == 0);
        // 64 blocks of 512 bytes (dash) or 1 KiB (bash): the larger layers do not fit.
        const std::string cmd = "ulimit -f 64 && " + std::string(KALAH_BIN) + " " + args +
                                " --dir " + d + " >/dev/null 2>" + d + "/../fsize.err";
        const int raw = std::system(cmd.c_str());
        const std::string err = slurp(d + "/../fsize.err");
        fs::remove(d + "/../fsize.err");
        CAPTURE(err);
        REQUIRE(WIFEXITED(raw));
        CHECK(WEXITSTATUS(raw) == 1);
        CHECK(err.find("File too large") != std::string::npos);
        CHECK(std::count(err.begin(), err.end(), '\n') >= 1);
        CHECK(!any_temporary(d));
        // What was written before the failure is complete and correct; the rest is absent.
        int present = 0;
        for (int s = 0; s <= 16; ++s) {
            const std::string p = dir.file(4, Rule::Standard, s);
            if (!fs::exists(p)) continue;
            ++present;
            CHECK(slurp(p) == slurp(ref.file(4, Rule::Standard, s)));
        }
        CHECK(present > 0);
        CHECK(present < 17);
        r = run_kalah(args + " --dir " + d);
        CHECK(r.status == 0);
        for (int s = 0; s <= 16; ++s)
            CHECK(slurp(dir.file(4, Rule::Standard, s)) == slurp(ref.file(4, Rule::Standard, s)));
    }

    // Kalah(4, *) empty-capture layers 0..12 in blocks of 4096, with their packed twins
    // (the fixture's build() has none).
    void build_with_twins(const std::string& dir) {
        db::BuildOptions b;
        b.dir = dir;
        b.m = 4;
        b.rule = Rule::EmptyCapture;
        b.max_seeds = 12;
        b.memory_gb = 1;
        b.block_size = 4096;
        db::build_database(b);
    }

    // verify_database holds a checked layer for the layers above it in its packed twin
    // (mapped) once the twin equals the file, so a deep database is checked in the memory
    // of one raw layer; lower layers without a good twin are held raw, within memory_gb.
    TEST_CASE("verify: lower layers read in their twins, memory bounded by memory_gb") {
        TempDir dir("verify_memory");
        build_with_twins(dir.path.string());
        const uint64_t top = db::layer_size(8, 12), all = db::layer_size(9, 12);
        db::VerifyOptions o;
        o.dir = dir.path.string();
        // Room for the largest layer raw and a quarter more: less than all of them.
        o.memory_gb = double(top + top / 4) / double(1ull << 30);
        REQUIRE(top + top / 4 < all);
        auto res = db::verify_database(o);
        CAPTURE(res.problems.size());
        CHECK(res.ok());
        CHECK(res.files == 13);
        CHECK(res.twins == 13);
        CHECK(res.entries == all);
        // Damage in a lower layer whose twin agrees with it (both rewritten with one value
        // off) is still found: the layer above re-derives against the twin's values.
        auto f = db::LayerFile::open(dir.file(4, Rule::EmptyCapture, 9), 4, Rule::EmptyCapture, 9);
        auto values = f->read_all();
        f.reset();
        values[values.size() / 2] = static_cast<int8_t>(values[values.size() / 2] + 2);
        db::write_layer(dir.file(4, Rule::EmptyCapture, 9), 4, Rule::EmptyCapture, 9, values.data(),
                        values.size(), 4096);
        const std::string twin =
            (dir.path / db::PackedLayer::file_name(4, Rule::EmptyCapture, 9)).string();
        const auto rewritten =
            db::LayerFile::open(dir.file(4, Rule::EmptyCapture, 9), 4, Rule::EmptyCapture, 9);
        db::PackedLayer::pack(values.data(), values.size(), 9)
            .write_file(twin, 4, Rule::EmptyCapture, rewritten->header().file_checksum);
        res = db::verify_database(o);
        CHECK(!res.ok());
        CHECK(res.twins == 13);  // the rewritten twin equals its (wrong) file
        CHECK(any_problem_has(res, db::layer_file_name(4, Rule::EmptyCapture, 9) + ": entry "));
        // Without the twins every lower layer is held raw: the bound stops the check with
        // one problem naming the layer, instead of growing past it.
        for (int s = 0; s <= 12; ++s)
            std::filesystem::remove(dir.path /
                                    db::PackedLayer::file_name(4, Rule::EmptyCapture, s));
        res = db::verify_database(o);
        CHECK(!res.ok());
        CHECK(res.twins == 0);
        CHECK(any_problem_has(res, "needs more than --memory-gb"));
        o.memory_gb = 1;
        res = db::verify_database(o);
        CHECK(!res.ok());  // layer 9 is still wrong, and nothing else stops the check
        CHECK(any_problem_has(res, db::layer_file_name(4, Rule::EmptyCapture, 9) + ": entry "));
        CHECK(!any_problem_has(res, "--memory-gb"));
        CHECK(res.entries == all);
        auto bad = run_kalah("verify-db --memory-gb 0 --db " + dir.path.string());
        CHECK(bad.status == 2);
        CHECK(bad.err.find("--memory-gb") != std::string::npos);
    }

    // A layer larger than memory_gb is checked through its twin: its file block by block
    // against the twin, then every (or the sampled) entry re-derived reading the layer in
    // the twin, the process holding a block at a time.
    // A layer file (.kdb) that fails its checksum is an error wherever the database is
    // opened (db/open.h: every command, the web service, the C and Python API), also when its
    // packed twin (.kpk, intact, the same values) could answer every probe in its place.
    TEST_CASE(
        "damage: a .kdb failing its checksum beside an intact twin is an error in every layout") {
        TempDir dir("kdb_beside_twin");
        const std::string d = dir.path.string();
        build_with_twins(d);
        const std::string name = db::layer_file_name(4, Rule::EmptyCapture, 10);
        REQUIRE(fs::exists(dir.path / db::PackedLayer::file_name(4, Rule::EmptyCapture, 10)));
        std::string bytes = slurp(d + "/" + name);
        for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 64; ++i) bytes[i] ^= 0xFF;
        spit(d + "/" + name, bytes);
        // A position of layer 10 (10 seeds in pits): the damaged layer's own.
        const std::string query =
            "query --position 3,2,0,0/2,3,0,0/0,0/A --rule empty-capture --quiet --db " + d;
        for (const std::string layout : {"auto", "mapped", "packed", "lines", "raw"}) {
            CAPTURE(layout);
            const auto r = run_kalah(query + " --db-layout " + layout);
            CHECK(r.status == 1);
            CHECK(r.out.empty());
            CHECK(r.err.find(name + ": ") != std::string::npos);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
        db::OpenRequest req;
        req.dir = d;
        req.m = 4;
        req.rule = Rule::EmptyCapture;
        req.memory_bytes = size_t(1) << 30;
        CHECK_THROWS_AS(db::open_checked(req), db::FormatError);
#if KALAH_HAS_SERVE
        // The web service: no value from that database (its error is logged naming the file).
        kalah::serve::ServeConfig c;
        c.tt_mb = 4;
        c.db_dir = d;
        c.db_memory_bytes = size_t(1) << 30;  // the layers held, as `kalah serve` holds them
        kalah::serve::Api api(c);
        const auto reply =
            api.get("query", {{"position", "3,2,0,0/2,3,0,0/0,0/A"}, {"rule", "empty-capture"}});
        CHECK(reply.status == 500);
        CHECK(reply.body.find("\"value\"") == std::string::npos);
#endif
    }

    TEST_CASE("--db naming a file, not a directory: bad input, one line, exit 2") {
        TempDir dir("db_is_a_file");
        const std::string file = dir.path.string() + "/README.md";
        spit(file, "not a database\n");
        for (const std::string cmd :
             {"query --pits 4 --seeds 3 --quiet", "solve --pits 3 --seeds 2", "verify-db",
              "build-db --pits 3 --max-seeds 4"}) {
            CAPTURE(cmd);
            const auto r = run_kalah(cmd + " --db " + file);
            CHECK(r.status == 2);
            CHECK(r.out.empty());
            CHECK(r.err.find(file + ": not a directory") != std::string::npos);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
    }

    TEST_CASE("verify: a layer larger than memory_gb is checked block by block through its twin") {
        TempDir dir("verify_twin");
        build_with_twins(dir.path.string());
        const uint64_t all = db::layer_size(9, 12);
        db::VerifyOptions o;
        o.dir = dir.path.string();
        o.memory_gb = double(db::layer_size(8, 6)) / double(1ull << 30);  // layers 7..12 do not fit
        REQUIRE(db::layer_size(8, 7) > db::layer_size(8, 6));
        auto res = db::verify_database(o);
        CAPTURE(res.problems.size());
        CHECK(res.ok());
        CHECK(res.files == 13);
        CHECK(res.twins == 13);
        CHECK(res.entries == all);
        o.sample = 300;
        res = db::verify_database(o);
        CHECK(res.ok());
        o.sample = 0;
        const std::string top = dir.file(4, Rule::EmptyCapture, 12);
        const std::string good = slurp(top);
        // A byte of a block changed: named by its block, before the file checksum.
        {
            std::string bad = good;
            bad[bad.size() - 100] ^= 4;
            spit(top, bad);
            res = db::verify_database(o);
            CHECK(!res.ok());
            CHECK(
                any_problem_has(res, db::layer_file_name(4, Rule::EmptyCapture, 12) + ": block "));
            spit(top, good);
        }
        // A layer one value off, file and twin rewritten to agree (checksums valid): the
        // twin equals its file, the re-derivation through the twin finds the entry.
        auto f =
            db::LayerFile::open(dir.file(4, Rule::EmptyCapture, 10), 4, Rule::EmptyCapture, 10);
        auto values = f->read_all();
        f.reset();
        const std::string layer10 = slurp(dir.file(4, Rule::EmptyCapture, 10));
        const std::string twin10 =
            (dir.path / db::PackedLayer::file_name(4, Rule::EmptyCapture, 10)).string();
        const std::string twin10_bytes = slurp(twin10);
        values[values.size() / 3] = static_cast<int8_t>(values[values.size() / 3] - 2);
        db::write_layer(dir.file(4, Rule::EmptyCapture, 10), 4, Rule::EmptyCapture, 10,
                        values.data(), values.size(), 4096);
        const auto rewritten =
            db::LayerFile::open(dir.file(4, Rule::EmptyCapture, 10), 4, Rule::EmptyCapture, 10);
        db::PackedLayer::pack(values.data(), values.size(), 10)
            .write_file(twin10, 4, Rule::EmptyCapture, rewritten->header().file_checksum);
        res = db::verify_database(o);
        CHECK(!res.ok());
        CHECK(any_problem_has(res, db::layer_file_name(4, Rule::EmptyCapture, 10) + ": entry " +
                                       std::to_string(values.size() / 3) + " "));
        // The file back, the twin left one value off (bound to the old file: refused).
        spit(dir.file(4, Rule::EmptyCapture, 10), layer10);
        res = db::verify_database(o);
        CHECK(!res.ok());
        CHECK(any_problem_has(res, db::PackedLayer::file_name(4, Rule::EmptyCapture, 10)));
        // A twin of the right file with one value off: the block comparison finds it.
        const auto original =
            db::LayerFile::open(dir.file(4, Rule::EmptyCapture, 10), 4, Rule::EmptyCapture, 10);
        db::PackedLayer::pack(values.data(), values.size(), 10)
            .write_file(twin10, 4, Rule::EmptyCapture, original->header().file_checksum);
        res = db::verify_database(o);
        CHECK(!res.ok());
        CHECK(any_problem_has(res, db::PackedLayer::file_name(4, Rule::EmptyCapture, 10) +
                                       ": entry " + std::to_string(values.size() / 3) + " "));
        CHECK(res.files == 10);  // 0..9: nothing above the layer that cannot be read
        spit(twin10, twin10_bytes);
        CHECK(db::verify_database(o).ok());
        // No twin for a layer that does not fit: not checked, said, and nothing above it.
        std::filesystem::remove(dir.path / db::PackedLayer::file_name(4, Rule::EmptyCapture, 11));
        res = db::verify_database(o);
        CHECK(!res.ok());
        CHECK(any_problem_has(res, "no packed twin to check it through"));
        CHECK(res.files == 11);
    }

    TEST_CASE("verify --sample: N entries a layer, the same ranks every run, damage found") {
        TempDir dir("sample");
        build(dir.path.string(), 4, Rule::Standard, 12);
        db::VerifyOptions o;
        o.dir = dir.path.string();
        o.sample = 500;
        auto res = db::verify_database(o);
        CHECK(res.ok());
        uint64_t expect = 0;
        for (int s = 0; s <= 12; ++s) expect += std::min<uint64_t>(500, db::layer_size(8, s));
        CHECK(res.entries == expect);
        // Every value of layer 11 off by 2, checksums valid: any sample finds it.
        auto f = db::LayerFile::open(dir.file(4, Rule::Standard, 11), 4, Rule::Standard, 11);
        auto values = f->read_all();
        f.reset();
        for (auto& v : values) v = static_cast<int8_t>(v + 2);
        db::write_layer(dir.file(4, Rule::Standard, 11), 4, Rule::Standard, 11, values.data(),
                        values.size(), 4096);
        o.sample = 3;
        res = db::verify_database(o);
        CHECK(!res.ok());
        CHECK(any_problem_has(res, db::layer_file_name(4, Rule::Standard, 11) + ": entry "));
        // The same ranks every run: the same first bad entry.
        const auto again = db::verify_database(o);
        CHECK(again.problems == res.problems);
        auto r = run_kalah("verify-db --sample 3 --json --db " + dir.path.string());
        CHECK(r.status == 1);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j.at("ok") == false);
        // The command reports what the library found: the same entries, the same problems.
        CHECK(j.at("entries") == res.entries);
        CHECK(j.at("problems") == res.problems);
    }
}
