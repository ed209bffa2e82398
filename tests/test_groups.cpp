// A top layer solved in groups of row totals (db/groups.*, BuildOptions::Top::Groups), and the
// streaming pieces it rests on: the kh64 stream, the streaming layer writer, row ranks, the
// merge of group files back into rank order; each against its whole-layer twin.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.h"
#include "db/builder.h"
#include "db/format.h"
#include "db/groups.h"
#include "db/index.h"
#include "temp_dir.h"

namespace {

using kalah::Rule;
namespace db = kalah::db;
namespace fs = std::filesystem;
using test_files::files_in;
using test_files::slurp;
using test_files::spit;
using test_files::TempDir;

bool any_named(const std::string& dir, const std::string& tail) {
    for (const std::string& n : files_in(dir))
        if (n.size() >= tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0)
            return true;
    return false;
}

db::BuildOptions options(const std::string& dir, int m, Rule rule, int k,
                         db::BuildOptions::Top top) {
    db::BuildOptions o;
    o.dir = dir;
    o.m = m;
    o.rule = rule;
    o.max_seeds = k;
    o.memory_gb = 4;
    o.block_size = 4096;
    o.top = top;
    return o;
}

// The group of configuration c (2m pits): its mover's row total, and its index in the group.
std::pair<int, uint64_t> group_of(const uint8_t* c, int m, int s) {
    int a = 0;
    for (int i = 0; i < m; ++i) a += c[i];
    return {a, db::rank(c, m) * db::layer_size(m, s - a) + db::rank(c + m, m)};
}

}  // namespace

TEST_SUITE("db") {
    TEST_CASE("groups: kh64 in pieces equals kh64 of the whole, and a wrong length is refused") {
        std::mt19937_64 rng(7);
        for (int trial = 0; trial < 300; ++trial) {
            const size_t len = trial < 40 ? trial : rng() % 5000;
            std::vector<uint8_t> data(len);
            for (auto& b : data) b = static_cast<uint8_t>(rng());
            const uint64_t seed = rng();
            db::Kh64Stream h(len, seed);
            for (size_t at = 0; at < len;) {
                const size_t piece = std::min<size_t>(len - at, rng() % 23);
                h.update(data.data() + at, piece);
                at += piece;
            }
            CHECK(h.finish() == db::kh64(data.data(), len, seed));
        }
        db::Kh64Stream short_one(10);
        short_one.update("abc", 3);
        CHECK_THROWS_AS(short_one.finish(), std::logic_error);
    }

    TEST_CASE("groups: the streaming layer writer writes write_layer's bytes") {
        TempDir dir("writer");
        std::mt19937_64 rng(11);
        for (const uint32_t block : {1024u, 4096u, 5000u}) {
            for (const uint64_t n : {uint64_t(1), uint64_t(1023), uint64_t(70001)}) {
                CAPTURE(block);
                CAPTURE(n);
                std::vector<int8_t> values(n);
                for (auto& v : values) v = static_cast<int8_t>(int(rng() % 41) - 20);
                const std::string whole = (dir.path / "whole.kdb").string();
                const std::string streamed = (dir.path / "streamed.kdb").string();
                db::write_layer(whole, 5, Rule::Standard, 20, values.data(), n, block, 3);
                db::LayerWriter w(streamed, 5, Rule::Standard, 20, n, block, 3);
                for (uint64_t at = 0; at < n;) {
                    const uint64_t piece = std::min<uint64_t>(n - at, rng() % 9000);
                    w.append(values.data() + at, piece);
                    at += piece;
                }
                const uint64_t checksum = w.finish();
                CHECK(slurp(streamed) == slurp(whole));
                const std::string bytes = slurp(whole);
                uint64_t recorded = 0;  // the file checksum field, bytes 48..55 (format.h)
                for (int i = 0; i < 8; ++i)
                    recorded |= uint64_t(static_cast<uint8_t>(bytes[48 + i])) << (8 * i);
                CHECK(checksum == recorded);
            }
        }
        // Unfinished (or given a wrong count): no file, no temporary.
        {
            db::LayerWriter w((dir.path / "cut.kdb").string(), 5, Rule::Standard, 20, 100);
            std::vector<int8_t> few(50);
            w.append(few.data(), few.size());
            CHECK_THROWS_AS(w.finish(), std::runtime_error);
            CHECK_THROWS_AS(w.append(few.data(), 51), std::runtime_error);
        }
        CHECK(!fs::exists(dir.path / "cut.kdb"));
        CHECK(!any_named(dir.path.string(), ".tmp"));
    }

    TEST_CASE("groups: rank_row equals rank over every row up to 12 seeds") {
        auto check = [&]<int M>() {
            for (int t = 0; t <= 12; ++t) {
                uint8_t c[8] = {};
                c[0] = static_cast<uint8_t>(t);
                uint64_t expect = 0;
                do {
                    uint64_t row = 0;
                    for (int i = 0; i < M; ++i) row |= uint64_t(c[i]) << (8 * i);
                    REQUIRE(db::rank_row<M>(row) == expect);
                    REQUIRE(db::rank(c, M) == expect);
                    ++expect;
                } while (db::next_configuration(c, M));
                CHECK(expect == db::layer_size(M, t));
            }
        };
        check.template operator()<1>();
        check.template operator()<2>();
        check.template operator()<3>();
        check.template operator()<4>();
        check.template operator()<5>();
        check.template operator()<6>();
    }

    TEST_CASE(
        "groups: layer order within a group is group order, and the merge restores rank order") {
        TempDir dir("merge");
        const std::string d = dir.path.string();
        for (const int m : {1, 2, 3, 4}) {
            const int s = m == 4 ? 9 : 7;
            CAPTURE(m);
            const uint64_t n = db::layer_size(2 * m, s);
            std::mt19937_64 rng(m);
            std::vector<int8_t> layer(n);
            for (auto& v : layer) v = static_cast<int8_t>(int(rng() % 15) - 7);
            // Split the layer into its groups by each configuration's group index: the
            // indices of a group must come up 0, 1, 2, ... in rank order.
            std::vector<std::vector<int8_t>> groups(s + 1);
            uint8_t c[16] = {};
            db::unrank(0, s, 2 * m, c);
            for (uint64_t r = 0; r < n; ++r) {
                const auto [a, i] = group_of(c, m, s);
                REQUIRE(i == groups[a].size());
                groups[a].push_back(layer[r]);
                db::next_configuration(c, 2 * m);
            }
            uint64_t sum = 0;
            for (int a = 0; a <= s; ++a) {
                REQUIRE(groups[a].size() == db::group_size(m, s, a));
                sum += groups[a].size();
                db::write_group_file(d + "/" + db::group_file_name(m, Rule::Standard, s, a), m,
                                     Rule::Standard, s, a, groups[a].data());
            }
            CHECK(sum == n);
            // Merged back in pieces of odd sizes: the layer, value for value.
            auto in = db::merge_groups(d, m, Rule::Standard, s);
            std::vector<int8_t> merged(n);
            for (uint64_t at = 0; at < n;) {
                const uint64_t piece = std::min<uint64_t>(n - at, 1 + rng() % 997);
                in->read(merged.data() + at, piece);
                at += piece;
            }
            CHECK_NOTHROW(in->finish());
            CHECK(merged == layer);
            // A byte after the header changed (a chunk's length, or inside its zstd frame):
            // the merge throws, at a read (the frame does not decode to its chunk) or at
            // finish() (the values' hash), naming the file, before a layer could be written.
            const std::string victim = d + "/" + db::group_file_name(m, Rule::Standard, s, 1);
            const std::string good_bytes = slurp(victim);
            std::string bytes;
            for (const size_t at :
                 {size_t(48), size_t(52), good_bytes.size() / 2 + 26, good_bytes.size() - 1}) {
                CAPTURE(at);
                bytes = good_bytes;
                bytes[at] ^= 1;
                spit(victim, bytes);
                CHECK(!db::group_file_ok(victim, m, Rule::Standard, s, 1));
                try {
                    auto bad = db::merge_groups(d, m, Rule::Standard, s);
                    bad->read(merged.data(), n);
                    bad->finish();
                    FAIL("a damaged group file was merged");
                } catch (const db::FormatError& e) {
                    CHECK(std::string(e.what()).find(fs::path(victim).filename().string()) !=
                          std::string::npos);
                }
            }
            // Another layer's group under this name, or a short file: refused at open.
            spit(victim, slurp(d + "/" + db::group_file_name(m, Rule::Standard, s, 0)));
            CHECK_THROWS_AS(db::merge_groups(d, m, Rule::Standard, s), db::FormatError);
            spit(victim, bytes.substr(0, 30));
            CHECK_THROWS_AS(db::merge_groups(d, m, Rule::Standard, s), db::FormatError);
            fs::remove(victim);
            CHECK_THROWS_AS(db::merge_groups(d, m, Rule::Standard, s), db::FormatError);
            for (const auto& e : fs::directory_iterator(d)) fs::remove(e.path());
        }
    }

    TEST_CASE(
        "groups: a top layer built in groups is byte-identical to the whole build, m = 1..6") {
        using Top = db::BuildOptions::Top;
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 1; m <= 6; ++m) {
                const int k = m <= 2 ? 16 : m == 3 ? 13 : m == 4 ? 11 : m == 5 ? 10 : 8;
                CAPTURE(m);
                CAPTURE(rule);
                TempDir whole("whole"), groups("groups");
                const auto ws =
                    db::build_database(options(whole.path.string(), m, rule, k, Top::Whole));
                std::ostringstream log;
                auto o = options(groups.path.string(), m, rule, k, Top::Groups);
                o.log = &log;
                const auto gs = db::build_database(o);
                CHECK(log.str().find("top layer solved in groups") != std::string::npos);
                REQUIRE(gs.size() == ws.size());
                CHECK(gs.back().value_hash == ws.back().value_hash);
                CHECK(gs.back().compressed_bytes == ws.back().compressed_bytes);
                CHECK(files_in(groups.path.string()) == files_in(whole.path.string()));
                for (const std::string& name : files_in(whole.path.string()))
                    CHECK(slurp((groups.path / name).string()) ==
                          slurp((whole.path / name).string()));
                // Reused (the file present): the same value hash, without solving; a missing
                // twin is packed again from the file.
                fs::remove(groups.path / db::PackedLayer::file_name(m, rule, k));
                const auto again =
                    db::build_database(options(groups.path.string(), m, rule, k, Top::Groups));
                CHECK(again.back().reused);
                CHECK(again.back().value_hash == ws.back().value_hash);
                for (const std::string& name : files_in(whole.path.string()))
                    CHECK(slurp((groups.path / name).string()) ==
                          slurp((whole.path / name).string()));
                // A damaged block of the top layer (its last byte): solved again, not reused.
                const std::string top = (groups.path / db::layer_file_name(m, rule, k)).string();
                std::string bytes = slurp(top);
                bytes.back() ^= 0x20;
                spit(top, bytes);
                const auto fixed =
                    db::build_database(options(groups.path.string(), m, rule, k, Top::Groups));
                CHECK(!fixed.back().reused);
                CHECK(slurp(top) == slurp((whole.path / db::layer_file_name(m, rule, k)).string()));
            }
        }
    }

    TEST_CASE("groups: the plan solves the top layer whole while it fits, in groups after") {
        using Top = db::BuildOptions::Top;
        using Lower = db::BuildOptions::Lower;
        db::BuildOptions o;
        o.m = 6;
        o.max_seeds = 34;
        o.memory_gb = 22;
        // Whole with mapped lower layers needs about 26 GB at 34 seeds; in groups, the
        // lower layers and the largest pair (1.37 G entries), but first layer 33 is solved
        // whole beside the lower layers: 31 GB with them packed, 19.5 GB (18.19 GiB) with
        // them mapped.
        CHECK(db::largest_pair(6, 34) == 1369447002ull);  // 2 C(21,5) C(23,5): a = 16, 18
        auto p = db::build_plan_of(o);
        CHECK(p.top == Top::Groups);
        CHECK(p.lower == Lower::Mapped);
        o.memory_gb = 18.5;
        p = db::build_plan_of(o);
        CHECK(p.top == Top::Groups);
        CHECK(p.lower == Lower::Mapped);
        o.memory_gb = 18;  // below layer 33's whole solve
        CHECK_THROWS_AS(db::build_plan_of(o), std::invalid_argument);
        o.memory_gb = 22;
        o.lower = Lower::Packed;
        CHECK_THROWS_AS(db::build_plan_of(o), std::invalid_argument);
        o.lower = Lower::Mapped;
        CHECK(db::build_plan_of(o).top == Top::Groups);
        o.memory_gb = 16;
        CHECK_THROWS_AS(db::build_plan_of(o), std::invalid_argument);
        o.lower = Lower::Auto;
        o.memory_gb = 30;
        CHECK(db::build_plan_of(o).top == Top::Whole);
        o.top = Top::Groups;
        CHECK(db::build_plan_of(o).top == Top::Groups);
        o.memory_gb = 10;
        try {
            db::build_plan_of(o);
            FAIL("a plan above the memory bound");
        } catch (const std::invalid_argument& e) {
            CHECK(std::string(e.what()).find("--memory-gb") != std::string::npos);
        }
        for (int k = 28; k <= 34; ++k) {
            CHECK(db::build_memory_bytes(6, k, Lower::Mapped, Top::Groups) <
                  db::build_memory_bytes(6, k, Lower::Mapped, Top::Whole));
            // The layer under a top solved in groups is solved whole: the bound covers it.
            for (Lower l : {Lower::Raw, Lower::Packed, Lower::Mapped})
                CHECK(db::build_memory_bytes(6, k, l, Top::Groups) >=
                      db::build_memory_bytes(6, k - 1, l, Top::Whole));
        }
    }

    TEST_CASE("groups: a killed build keeps its finished pairs and resumes byte-identical") {
        TempDir ref("groups-ref");
        const std::string args =
            "build-db --pits 5 --max-seeds 16 --threads 2 --block-entries 65536 --top-layer groups";
        auto r = run_kalah(args + " --dir " + ref.path.string());
        REQUIRE(r.status == 0);
        const std::vector<std::string> names = files_in(ref.path.string());
        REQUIRE(names.size() == 34);  // 17 layer files and their twins, no group file
        // Kill while group files are on disk (the top layer's pairs under way), then resume.
        int kept_runs = 0;
        for (int run = 0; run < 4; ++run) {
            CAPTURE(run);
            TempDir dir("groups-kill");
            const std::string d = dir.path.string();
            const pid_t pid = spawn_kalah_quiet({"build-db", "--pits", "5", "--max-seeds", "16",
                                                 "--threads", "2", "--block-entries", "65536",
                                                 "--top-layer", "groups", "--dir", d});
            REQUIRE(pid >= 0);
            int status = 0;
            const int want = 1 + run * 2;  // group files present before the kill
            auto groups_on_disk = [&] {
                int count = 0;
                for (const std::string& n : files_in(d))
                    count += n.size() > 4 && n.compare(n.size() - 4, 4, ".kgr") == 0;
                return count;
            };
            while (groups_on_disk() < want && ::waitpid(pid, &status, WNOHANG) == 0)
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            const bool had_groups = groups_on_disk() > 0;
            r = run_kalah(args + " --dir " + d);
            CAPTURE(r.err);
            CHECK(r.status == 0);
            if (had_groups &&
                r.err.find("group pairs kept from an interrupted build") != std::string::npos)
                ++kept_runs;
            CHECK(files_in(d) == names);  // no group file, no temporary left
            for (const std::string& name : names)
                CHECK(slurp((dir.path / name).string()) == slurp((ref.path / name).string()));
        }
        CHECK(kept_runs >= 2);
    }

    TEST_CASE("groups: stale temporaries of group files are removed, others kept") {
        TempDir dir("groups-stale");
        const std::string d = dir.path.string();
        const std::string g = d + "/" + db::group_file_name(3, Rule::Standard, 9, 4);
        const long pid = [] {
            const pid_t p = ::fork();
            if (p == 0) ::_exit(0);
            int st = 0;
            ::waitpid(p, &st, 0);
            return static_cast<long>(p);
        }();
        const std::string dead = db::temp_layer_path(g, pid);
        const std::string live = db::temp_layer_path(g, ::getppid());
        const std::string odd = d + "/kalah-m3-standard-s9-gx.kgr." + std::to_string(pid) + ".tmp";
        for (const auto& p : {dead, live, odd}) spit(p, "partial");
        const auto removed = db::remove_stale_temporaries(d, 3, Rule::Standard);
        CHECK(removed == std::vector<std::string>{fs::path(dead).filename().string()});
        CHECK(fs::exists(live));
        CHECK(fs::exists(odd));
    }
}
