// Files that are not files, sizes and values out of range, option ranges: every command
// ends with its documented exit status and one line naming the file, never a hang.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "campaign/journal.h"
#include "campaign/trace.h"
#include "cli_runner.h"
#include "db/builder.h"
#include "db/database.h"
#include "db/format.h"
#include "db/index.h"
#include "db/packed.h"
#include "solver/solver.h"
#include "temp_dir.h"

using namespace kalah;
using test_files::TempDir;
namespace fs = std::filesystem;

namespace {

// Every run here is killed after this many seconds: a hang fails the test, never hangs it.
constexpr int kLimit = 30;

// The value `--json` prints for Kalah(3,2), standard: the solver's, without a database.
int json_value(const std::string& out) { return nlohmann::json::parse(out).at("value").get<int>(); }
int value_3_2() { return Solver(3, Rule::Standard).value(Board::start(3, 2)); }

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// How many lines of s hold `part`.
int lines_with(const std::string& s, const std::string& part) {
    int k = 0;
    for (size_t at = 0; at < s.size();) {
        size_t end = s.find('\n', at);
        if (end == std::string::npos) end = s.size();
        k += s.substr(at, end - at).find(part) != std::string::npos;
        at = end + 1;
    }
    return k;
}

// Layers 0..6 of Kalah(3, *) standard, with their packed twins. One thread: the build is not
// what these tests are about, and the builder's OpenMP loops (libgomp is not built for
// ThreadSanitizer) make the TSan phase's trust-threads report races that are not there.
void build_small(const std::string& d) {
    const CliResult r = run_kalah("build-db --pits 3 --max-seeds 6 --threads 1 -q --dir " + d);
    REQUIRE(r.status == 0);
}

void make_fifo(const std::string& path) {
    fs::remove(path);
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
}

// A command over the database d, its stderr one line naming `file`, with this status.
void check_one_line(const std::string& cmd, int status, const std::string& file,
                    const std::string& problem) {
    CAPTURE(cmd);
    const CliResult r = run_kalah_within(kLimit, cmd);
    CAPTURE(r.err);
    CHECK(r.status == status);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find(file) != std::string::npos);
    CHECK(r.err.find(problem) != std::string::npos);
}

// `kalah serve` over the database d, where it is built: it opens every layer at its start
// under the open policy of every command (db/open.h), so a layer file that stops a search
// stops the server before it listens. A server that started anyway would run until
// kLimit kills it: a wrong exit status.
std::vector<std::string> serve_over(const std::string& d, const std::string& layout = "auto") {
#ifdef KALAH_HAS_SERVE
    return {"serve --port 0 -q --tt-mb 16 --db-layout " + layout + " --db " + d};
#else
    (void)d;
    (void)layout;
    return {};
#endif
}

}  // namespace

TEST_SUITE("trust") {
    TEST_CASE("not a file: a FIFO as a layer, a twin, a journal or a log never hangs") {
        TempDir dir("fifo");
        const std::string d = dir.path.string();
        build_small(d);
        const std::string kdb = db::layer_file_name(3, Rule::Standard, 4);
        const std::string kpk = db::PackedLayer::file_name(3, Rule::Standard, 4);
        SUBCASE("a layer file") {
            make_fifo(d + "/" + kdb);
            for (const std::string layout : {"auto", "raw", "packed", "mapped", "lines"}) {
                check_one_line(
                    "solve --pits 3 --seeds 2 -q --tt-mb 16 --db-layout " + layout + " --db " + d,
                    1, kdb, "not a regular file (a FIFO)");
                check_one_line("query --pits 3 --seeds 2 --moves A1 -q --tt-mb 16 --db-layout " +
                                   layout + " --db " + d,
                               1, kdb, "not a regular file (a FIFO)");
            }
            for (const std::string& serve : serve_over(d))
                check_one_line(serve, 1, kdb, "not a regular file (a FIFO)");
            check_one_line("verify-db -q --dir " + d, 1, kdb, "not a regular file (a FIFO)");
            check_one_line("build-db --pits 3 --max-seeds 6 -q --dir " + d, 1, kdb,
                           "not a regular file (a FIFO)");
        }
        SUBCASE("a packed twin: skipped by a search, reported by verify-db") {
            make_fifo(d + "/" + kpk);
            for (const std::string layout : {"auto", "packed", "mapped", "lines"}) {
                CAPTURE(layout);
                const CliResult r = run_kalah_within(
                    kLimit, "solve --pits 3 --seeds 2 -q --tt-mb 16 --json --db-layout " + layout +
                                " --db " + d);
                CAPTURE(r.err);
                CHECK(r.status == 0);
                CHECK(json_value(r.out) == value_3_2());
            }
            check_one_line("verify-db -q --dir " + d, 1, kpk, "not a regular file (a FIFO)");
            check_one_line("build-db --pits 3 --max-seeds 6 -q --dir " + d, 1, kpk,
                           "not a regular file (a FIFO)");
        }
        SUBCASE("a campaign journal") {
            const std::string c = d + "/c";
            fs::create_directories(c);
            make_fifo(c + "/" + campaign::kJournalName);
            check_one_line("campaign --pits 3 --seeds 2 -q --tt-mb 16 --db /nonexistent --dir " + c,
                           1, campaign::kJournalName, "not a regular file (a FIFO)");
            check_one_line("campaign --status --db /nonexistent --dir " + c, 1,
                           campaign::kJournalName, "not a regular file (a FIFO)");
        }
        SUBCASE("a campaign's logs: left out with one warning, the campaign finishes") {
            for (const char* log : {"progress.csv", campaign::kTraceName}) {
                CAPTURE(log);
                const std::string c = d + "/c_" + std::string(log);
                fs::create_directories(c);
                make_fifo(c + "/" + log);
                const CliResult r = run_kalah_within(
                    kLimit,
                    "campaign --pits 3 --seeds 2 -q --json --tt-mb 16 --job-nodes 1000 --db " + d +
                        " --dir " + c);
                CAPTURE(r.err);
                CHECK(r.status == 0);
                CHECK(json_value(r.out) == value_3_2());
                // One line about it (the other says which database is used).
                CHECK(lines_with(r.err, log) == 1);
                CHECK(lines_with(r.err, std::string(log) + ": not a regular file (a FIFO)") == 1);
                const CliResult st = run_kalah_within(kLimit, "campaign --status --dir " + c);
                CHECK(st.status == 0);
            }
        }
    }
}

namespace {

void put_le(std::string& s, size_t at, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}

// The one line of a command that must fail on a layer: status 1, naming the file and
// the problem, within kLimit seconds.
void check_layer_error(const std::string& cmd, const std::string& file,
                       const std::string& problem) {
    check_one_line(cmd, 1, file, problem);
}

}  // namespace

TEST_SUITE("trust") {
    TEST_CASE("sizes: a sparse layer claiming tiny blocks is refused before its index is read") {
        TempDir dir("sparse");
        // Layer 19 of m = 6: 54,627,300 entries. A header claiming one-entry blocks (an
        // index of 1.3 GB) over a sparse file of that size: refused from the header alone.
        const int m = 6, s = 19;
        const uint64_t n = db::layer_size(2 * m, s);
        std::string head(db::kHeaderBytes, '\0');
        std::memcpy(head.data(), db::kMagic, 8);
        put_le(head, 8, db::kFormatVersion, 4);
        head[12] = static_cast<char>(m);
        head[14] = static_cast<char>(s);
        put_le(head, 16, n, 8);
        put_le(head, 24, 1, 4);  // block size 1
        put_le(head, 28, n, 4);  // block count
        const std::string path = dir.file(m, Rule::Standard, s);
        test_files::spit(path, head);
        fs::resize_file(path, db::kHeaderBytes + db::kIndexRecordBytes * n + n);
        std::string message;
        try {
            db::LayerFile::open(path, m, Rule::Standard, s);
        } catch (const db::FormatError& e) {
            message = e.what();
        }
        CAPTURE(message);
        CHECK(message.find(db::layer_file_name(m, Rule::Standard, s) + ": block size 1 below the "
                                                                       "minimum") == 0);
    }

    TEST_CASE("sizes: a journal that is a device or a FIFO is refused, not read for ever") {
        TempDir dir("journal_dev");
        const std::string c = (dir.path / "c").string();
        fs::create_directories(c);
        fs::create_symlink("/dev/zero", c + "/" + campaign::kJournalName);
        // Only through the binary under a timeout: a regression must fail, not hang.
        check_one_line("campaign --status --db /nonexistent --dir " + c, 1, campaign::kJournalName,
                       "not a regular file (a device)");
        check_one_line("campaign --pits 3 --seeds 2 -q --tt-mb 16 --db /nonexistent --dir " + c, 1,
                       campaign::kJournalName, "not a regular file (a device)");
    }

    TEST_CASE("values: a layer of values out of [-s, s] with valid checksums is damage") {
        TempDir dir("range");
        const std::string d = dir.path.string();
        build_small(d);
        const int s = 5;
        const std::string kdb = db::layer_file_name(3, Rule::Standard, s);
        const std::string path = dir.file(3, Rule::Standard, s);
        const uint64_t n = db::layer_size(6, s);
        SUBCASE("every entry -128, twin removed") {
            std::vector<int8_t> values(n, -128);
            db::write_layer(path, 3, Rule::Standard, s, values.data(), n, db::kMinBlockSize);
        }
        SUBCASE("one entry s + 2, twin removed") {
            auto values = db::LayerFile::open(path, 3, Rule::Standard, s)->read_all();
            values[n / 2] = static_cast<int8_t>(s + 2);
            db::write_layer(path, 3, Rule::Standard, s, values.data(), n, db::kMinBlockSize);
        }
        SUBCASE("one entry of the wrong parity, twin removed") {
            auto values = db::LayerFile::open(path, 3, Rule::Standard, s)->read_all();
            values[7] = static_cast<int8_t>(values[7] == s ? s - 1 : values[7] + 1);
            db::write_layer(path, 3, Rule::Standard, s, values.data(), n, db::kMinBlockSize);
        }
        fs::remove(dir.path / db::PackedLayer::file_name(3, Rule::Standard, s));
        CHECK_THROWS_WITH_AS(db::LayerFile::open(path, 3, Rule::Standard, s)->read_all(),
                             doctest::Contains((kdb + ": entry ").c_str()), db::FormatError);
        for (const std::string layout : {"raw", "packed", "mapped", "lines", "auto"})
            for (const std::string threads : {"1", "2"}) {
                const std::string opts =
                    " -q --tt-mb 16 --threads " + threads + " --db-layout " + layout + " --db " + d;
                check_layer_error("solve --pits 3 --seeds 2" + opts, kdb, "damaged");
                check_layer_error("query --pits 3 --seeds 2 --moves A1" + opts, kdb, "damaged");
                if (threads == "1")
                    for (const std::string& serve : serve_over(d, layout))
                        check_layer_error(serve, kdb, "damaged");
                // Read through the block cache (nothing resident) as well: the damage is
                // met during the search, after the line saying which database is used.
                const CliResult r = run_kalah_within(
                    kLimit, "solve --pits 3 --seeds 2 --db-memory-gb 0.000001" + opts);
                CAPTURE(r.err);
                CHECK(r.status == 1);
                CHECK(lines_with(r.err, kdb) == 1);
                CHECK(lines_with(r.err, "damaged") == 1);
                CHECK(r.out.empty());
            }
        check_layer_error("verify-db -q --dir " + d, kdb, "damaged");
        // build-db sees the damage and rebuilds the layer: then everything checks.
        CliResult r = run_kalah_within(kLimit, "build-db --pits 3 --max-seeds 6 --dir " + d);
        CAPTURE(r.err);
        CHECK(r.status == 0);
        CHECK(r.err.find("rebuilding " + kdb + ": entry ") != std::string::npos);
        r = run_kalah_within(kLimit, "verify-db -q --dir " + d);
        CHECK(r.status == 0);
        r = run_kalah_within(kLimit, "query --pits 3 --seeds 2 -q --tt-mb 16 --db " + d);
        CHECK(r.status == 0);
    }
}

TEST_SUITE("trust") {
    TEST_CASE("options: --guess outside the board's seeds is bad input (exit 2, one line)") {
        TempDir dir("guess");
        const std::string c = (dir.path / "c").string();
        for (const std::string guess : {"2147483647", "-2147483648", "13", "-13"}) {
            CAPTURE(guess);
            // Kalah(3,2): 12 seeds, a margin of -12..12.
            check_one_line(
                "solve --pits 3 --seeds 2 -q --tt-mb 16 --db /nonexistent --guess " + guess, 2,
                "--guess must be -12..12", guess);
            check_one_line("campaign --pits 3 --seeds 2 -q --tt-mb 16 --db /nonexistent --dir " +
                               c + " --guess " + guess,
                           2, "--guess must be -12..12", guess);
            CHECK(!fs::exists(c));  // refused before the directory is made
        }
        // In range: accepted, the same value as without it.
        CliResult r = run_kalah_within(
            kLimit, "solve --pits 3 --seeds 2 -q --tt-mb 16 --db /nonexistent --json --guess 12");
        CHECK(r.status == 0);
        const CliResult plain = run_kalah_within(
            kLimit, "solve --pits 3 --seeds 2 -q --tt-mb 16 --db /nonexistent --json");
        REQUIRE(plain.status == 0);
        CHECK(nlohmann::json::parse(r.out)["value"] == nlohmann::json::parse(plain.out)["value"]);
        // --status reads the board from the journal.
        r = run_kalah_within(kLimit,
                             "campaign --pits 3 --seeds 2 -q --tt-mb 16 --db /nonexistent "
                             "--job-nodes 1000 --dir " +
                                 c);
        REQUIRE(r.status == 0);
        check_one_line("campaign --status --db /nonexistent --guess 2147483647 --dir " + c, 2,
                       "--guess must be -12..12", "2147483647");
    }
}

TEST_SUITE("trust") {
    TEST_CASE("not a file: a symlink loop or a directory as a layer, one behaviour everywhere") {
        TempDir dir("loop");
        const std::string d = dir.path.string();
        build_small(d);
        const std::string kdb = db::layer_file_name(3, Rule::Standard, 4);
        const std::string path = d + "/" + kdb;
        std::string problem;
        SUBCASE("a symbolic link loop") {
            fs::remove(path);
            fs::create_symlink(kdb, path);
            problem = "a symbolic link loop";
        }
        SUBCASE("a directory") {
            fs::remove(path);
            fs::create_directories(path + "/x");
            problem = "a directory, not a file";
        }
        std::vector<std::string> cmds = {
            "solve --pits 3 --seeds 2 -q --tt-mb 16 --threads 1 --db " + d,
            "solve --pits 3 --seeds 2 -q --tt-mb 16 --threads 2 --db-layout raw --db " + d,
            "query --pits 3 --seeds 2 --moves A1 -q --tt-mb 16 --db " + d,
            "query --pits 3 --seeds 2 -q --tt-mb 16 --db-layout mapped --db " + d,
            "verify-db -q --dir " + d,
            "build-db --pits 3 --max-seeds 6 -q --dir " + d};
        for (const std::string& serve : serve_over(d)) cmds.push_back(serve);
        for (const std::string& cmd : cmds) {
            check_one_line(cmd, 1, kdb + ": " + problem, problem);
            const CliResult r = run_kalah_within(kLimit, cmd);
            CHECK(r.err.find("truncated") == std::string::npos);
            // build-db replaces no such thing: no hint that it would.
            CHECK(r.err.find("rebuilds") == std::string::npos);
        }
    }
}

namespace {

// The child's half of the truncation test below, run in its own process (a SIGBUS that
// kills it is then a failed test, not a dead test runner): opens the database in dir
// mapped, checks a probe of layer 6, truncates that layer's twin to nothing and probes
// again: the probe must throw FormatError naming the twin.
int mapped_truncation_child(const std::string& dir) {
    std::string why;
    auto d = db::Database::open(dir, 3, Rule::Standard, size_t(1) << 30, &why, nullptr,
                                db::Database::Layout::Mapped);
    if (!d || d->packed_layers() != 7) return 10;
    const int own[3] = {2, 1, 0}, opp[3] = {0, 1, 2};  // 6 seeds in the pits
    const Board b = Board::from_rows(3, own, opp, 0, 0, Side::South);
    const int before = d->probe(b);
    if (before < -6 || before > 6) return 11;
    const std::string twin = dir + "/" + db::PackedLayer::file_name(3, Rule::Standard, 6);
    if (::truncate(twin.c_str(), 0) != 0) return 12;
    for (int call = 0; call < 2; ++call) {
        try {
            if (call == 0) {
                d->probe(b);
            } else {
                const Board* bs[1] = {&b};
                int out[1];
                d->probe_many(bs, 1, out);
            }
            return 13 + call;  // no error: a value read from a file that is gone
        } catch (const db::FormatError& e) {
            const std::string m = e.what();
            if (m.find(db::PackedLayer::file_name(3, Rule::Standard, 6) +
                       ": truncated while mapped") != 0)
                return 15;
        }
    }
    // Step 2. Two threads probing the cut layer at once (the guard's faults on both), then a
    // 2-thread search from a position above the database, whose probes meet the cut layer:
    // each ends in the same FormatError, none in SIGBUS or a value.
    std::atomic<int> named{0};
    auto prober = [&] {
        for (int i = 0; i < 20; ++i) {
            try {
                d->probe(b);
                return;
            } catch (const db::FormatError& e) {
                if (std::string(e.what()).find("truncated while mapped") == std::string::npos)
                    return;
            }
        }
        ++named;
    };
    std::thread t1(prober), t2(prober);
    t1.join();
    t2.join();
    if (named != 2) return 16;
    SolverOptions o;
    o.tt_mb = 4;
    o.threads = 2;
    o.parallel_min_seeds = 0;  // parallel at every position
    o.db = d.get();
    Solver solver(3, Rule::Standard, o);
    const int own2[3] = {2, 2, 1}, opp2[3] = {1, 1, 2};  // 9 seeds: its lines enter layer 6
    try {
        solver.pits_value(Board::from_rows(3, own2, opp2, 0, 0, Side::South));
        return 17;  // a value from a search that met a cut layer
    } catch (const db::FormatError& e) {
        if (std::string(e.what()).find("truncated while mapped") == std::string::npos) return 18;
    }
    return 0;
}

// The child's half of the build truncation test below: builds layers 0..6 of Kalah(3, *)
// standard with the lower layers mapped from their twins, and truncates layer 4's twin as
// soon as layer 4 is done: building layer 5 (whose captures reach layer 4) must end in
// FormatError naming that twin, with no file of layer 5 left behind.
int build_truncation_child(const std::string& dir) {
    db::BuildOptions o;
    o.dir = dir;
    o.m = 3;
    o.max_seeds = 6;
    o.threads = 1;  // see build_small
    o.memory_gb = 1;
    o.lower = db::BuildOptions::Lower::Mapped;
    const std::string twin = db::PackedLayer::file_name(3, Rule::Standard, 4);
    o.on_layer = [&](const db::LayerStats& st) {
        if (st.s == 4 && ::truncate((dir + "/" + twin).c_str(), 0) != 0) std::exit(20);
    };
    try {
        db::build_database(o);
        return 21;  // layer 5 built from a layer read as zeros
    } catch (const db::FormatError& e) {
        if (std::string(e.what()) != twin + ": truncated while mapped") return 22;
    }
    for (const auto& f : fs::directory_iterator(dir))
        if (f.path().filename().string().find("-s5.") != std::string::npos) return 23;
    return 0;
}

// Runs this test binary again on the child case `name` (a fresh process: no OpenMP pool
// inherited through fork; a SIGBUS that kills it is a failed test, not a dead test
// runner), with env=dir. Returns its exit status, or -1 if it did not exit.
int run_child_case(const std::string& env, const std::string& dir, const std::string& name) {
    const std::string cmd = env + "=" + dir + " timeout -k 2 " + std::to_string(kLimit) +
                            " /proc/" + std::to_string(::getpid()) +
                            "/exe --no-skip -ts=trust -tc='" + name +
                            "' --no-version >/dev/null 2>&1";
    const int raw = std::system(cmd.c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

}  // namespace

TEST_SUITE("trust") {
    TEST_CASE("mapped: the child of the build truncation test" * doctest::skip()) {
        const char* dir = std::getenv("KALAH_TRUST_BUILD_DIR");
        REQUIRE(dir != nullptr);
        CHECK(build_truncation_child(dir) == 0);
    }

    TEST_CASE("mapped: a lower layer's twin truncated during a build is an error naming it") {
        TempDir dir("build");
        CHECK(run_child_case("KALAH_TRUST_BUILD_DIR", dir.path.string(),
                             "mapped: the child of the build*") == 0);
    }

    TEST_CASE("mapped: the child of the truncation test" * doctest::skip()) {
        const char* dir = std::getenv("KALAH_TRUST_MAPPED_DIR");
        REQUIRE(dir != nullptr);
        CHECK(mapped_truncation_child(dir) == 0);
    }

    TEST_CASE("mapped: a twin truncated while mapped is an error naming it, not SIGBUS") {
        TempDir dir("mapped");
        const std::string d = dir.path.string();
        build_small(d);
        CHECK(run_child_case("KALAH_TRUST_MAPPED_DIR", d, "mapped: the child of the truncation*") ==
              0);
    }
}
