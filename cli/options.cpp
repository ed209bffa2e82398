// The options shared by the commands (cli/options.h).
#include "cli/options.h"

#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "analysis/reports.h"
#include "db/database.h"
#include "db/format.h"
#include "db/index.h"
#include "db/open.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace po = boost::program_options;

void add_game_options(po::options_description& opts, bool with_moves) {
    // clang-format off
    opts.add_options()
        ("pits", po::value<int>(), "pits per side m (1..6); with --seeds, the start position")
        ("seeds", po::value<int>(), "seeds per pit n at the start")
        ("position", po::value<std::string>(), "position 'A1,..,Am/B1,..,Bm/storeA,storeB/side'")
        ("rule", po::value<std::string>()->default_value("standard"),
         "capture rule: standard or empty-capture");
    // clang-format on
    if (with_moves)
        opts.add_options()("moves", po::value<std::string>()->default_value(""),
                           "moves to play first, e.g. \"A3+ A6 B2\"");
}

void add_start_options(po::options_description& opts, bool required) {
    auto* pits = po::value<int>();
    auto* seeds = po::value<int>();
    if (required) {
        pits->required();
        seeds->required();
    }
    // clang-format off
    opts.add_options()
        ("pits", pits, "pits per side m (1..6)")
        ("seeds", seeds, "seeds per pit n")
        ("rule", po::value<std::string>()->default_value("standard"),
         "capture rule: standard or empty-capture");
    // clang-format on
}

void add_question_option(po::options_description& opts, const std::string& what) {
    const std::string help =
        "settle one question instead of the exact value: win, loss, 'v>=B', 'v>B', 'v<=B' or "
        "'v<B' (B: South's margin)" +
        (what.empty() ? "" : "; " + what);
    opts.add_options()("prove", po::value<std::string>(), help.c_str());
}

std::optional<Question> question_option(const po::variables_map& vm) {
    if (!vm.count("prove")) return std::nullopt;
    const std::string text = vm["prove"].as<std::string>();
    const std::optional<Question> q = parse_question(text);
    if (!q)
        throw InputError("--prove: '" + text +
                         "' is not a question (win, loss, 'v>=B', 'v>B', 'v<=B', 'v<B')");
    return q;
}

void add_guess_option(po::options_description& expert, const std::string& help) {
    expert.add_options()("guess", po::value<int>(), help.c_str());
}

Board checked_start(int m, int n) {
    if (m < 1 || m > kMaxPits) throw InputError("--pits must be 1..6, not " + std::to_string(m));
    if (n < 1) throw InputError("--seeds must be at least 1, not " + std::to_string(n));
    if (2L * m * n > kMaxSeeds)
        throw InputError("Kalah(" + std::to_string(m) + "," + std::to_string(n) + ") has " +
                         std::to_string(2L * m * n) + " seeds; at most " +
                         std::to_string(kMaxSeeds) + " are supported");
    return Board::start(m, n);
}

int guess_option(const po::variables_map& vm, int m, int n, int otherwise) {
    if (!vm.count("guess")) return otherwise;
    const int guess = vm["guess"].as<int>();
    const int seeds = 2 * m * n;  // checked_start bounds m and n first
    if (guess < -seeds || guess > seeds)
        throw InputError("--guess must be -" + std::to_string(seeds) + ".." +
                         std::to_string(seeds) + " (the seeds of Kalah(" + std::to_string(m) + "," +
                         std::to_string(n) + ")), not " + std::to_string(guess));
    return guess;
}

Board game_from_options(const po::variables_map& vm, Rule& rule, std::vector<PlayedMove>* played,
                        bool required) {
    rule = parse_rule(vm["rule"].as<std::string>());
    Board b;
    if (vm.count("position")) {
        if (vm.count("pits") || vm.count("seeds"))
            throw InputError("give either --position or --pits/--seeds, not both");
        b = parse_position(vm["position"].as<std::string>());
    } else {
        if (vm.count("pits") != vm.count("seeds"))
            throw InputError("--pits and --seeds go together");
        if (!vm.count("pits") && required)
            throw InputError("which position? give --pits M --seeds N (a start) or --position P");
        const int m = vm.count("pits") ? vm["pits"].as<int>() : 6;
        const int n = vm.count("seeds") ? vm["seeds"].as<int>() : 4;
        b = checked_start(m, n);
    }
    if (vm.count("moves")) {
        auto moves = replay_plies(b, vm["moves"].as<std::string>(), rule);
        if (played) *played = std::move(moves);
    }
    return b;
}

void add_threads_option(po::options_description& opts, int default_threads) {
    // Every core, unless OMP_NUM_THREADS says otherwise (OpenMP's own default).
    const int d = default_threads > 0 ? default_threads : omp_get_max_threads();
    opts.add_options()("threads", po::value<int>()->default_value(d),
                       default_threads > 0 ? "threads"
                                           : "threads (default: every core); any count gives "
                                             "the same results");
}

int threads_option(const po::variables_map& vm) {
    const int t = vm["threads"].as<int>();
    // More than 4 per core is a typo, not a request.
    const int most = 4 * omp_get_num_procs();
    if (t < 1 || t > most)
        throw InputError("--threads must be 1.." + std::to_string(most) + " (4 per core), not " +
                         std::to_string(t));
    return t;
}

void add_tt_option(po::options_description& opts, size_t default_mib) {
    opts.add_options()("tt-mb", po::value<size_t>()->default_value(default_mib),
                       "transposition table budget in MiB (allocated as it fills)");
}

size_t checked_tt_mb(const po::variables_map& vm) {
    const size_t mb = vm["tt-mb"].as<size_t>();
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const size_t phys_mb =
        pages > 0 && page > 0 ? size_t(pages) * size_t(page) >> 20 : size_t(1) << 20;
    if (mb < 1 || mb > phys_mb)
        throw InputError("--tt-mb must be 1.." + std::to_string(phys_mb) +
                         " (this machine's memory in MiB), not " + std::to_string(mb));
    return mb;
}

void add_db_options(po::options_description& opts, bool use_default_dir) {
    auto dir = po::value<std::string>();
    if (use_default_dir) dir->default_value(kDefaultDbDir);
    opts.add_options()("db", dir, "endgame database directory (made by kalah build-db)")(
        "db-memory-gb", po::value<double>()->default_value(kDefaultDbMemoryGib),
        "memory for the database in GiB (layers held in memory plus a block cache)")(
        "db-layout", po::value<std::string>()->default_value("auto"),
        "layers in memory: raw (one byte an entry), packed (~0.45 bytes an entry, a "
        "slightly slower probe), mapped (packed, probed in place in the memory-mapped .kpk "
        "twins: the fastest open), lines (0.67 bytes an entry in 64-byte lines built from "
        "the twins at open: one cache miss a probe, for long searches), or auto (mapped "
        "when every layer has its twin, else raw when every layer fits so in "
        "--db-memory-gb, else packed)")(
        "db-raw-gb", po::value<double>()->default_value(0),
        "whatever --db-layout says, hold the top layers one byte an entry (decoded at "
        "open) while they add up to at most this many GiB: a faster probe for long "
        "searches; counted in --db-memory-gb");
}

double db_memory_gib(const po::variables_map& vm) {
    const double gb = vm["db-memory-gb"].as<double>();
    if (!(gb > 0) || !(gb <= 1 << 20))
        throw InputError("--db-memory-gb must be a positive number of GiB");
    return gb;
}

uint64_t db_raw_top_bytes(const po::variables_map& vm) {
    const double gb = vm["db-raw-gb"].as<double>();
    if (!(gb >= 0) || !(gb <= 1 << 20))
        throw InputError("--db-raw-gb must be a number of GiB, 0 or more");
    return static_cast<uint64_t>(gb * double(1ull << 30));
}

db::Database::Layout db_layout(const po::variables_map& vm) {
    const std::string name = vm["db-layout"].as<std::string>();
    if (name == "auto") return db::Database::Layout::Auto;
    if (name == "raw") return db::Database::Layout::Raw;
    if (name == "packed") return db::Database::Layout::Packed;
    if (name == "mapped") return db::Database::Layout::Mapped;
    if (name == "lines") return db::Database::Layout::Lines;
    throw InputError("--db-layout must be auto, raw, packed, mapped or lines, not '" + name + "'");
}

void check_db_dir(const std::string& dir) {
    std::error_code ec;
    const auto st = std::filesystem::status(dir, ec);
    if (std::filesystem::exists(st) && !std::filesystem::is_directory(st))
        throw InputError("--db " + dir +
                         ": not a directory (an endgame database is a directory of layer files)");
}

std::unique_ptr<db::Database> open_database(const po::variables_map& vm, const std::string& cmd,
                                            int m, Rule rule, const std::string& otherwise) {
    if (!vm.count("db")) return nullptr;
    db::OpenRequest r;
    r.dir = vm["db"].as<std::string>();
    check_db_dir(r.dir);
    r.m = m;
    r.rule = rule;
    r.memory_bytes = static_cast<size_t>(db_memory_gib(vm) * double(1ull << 30));
    r.layout = db_layout(vm);
    r.raw_top_bytes = db_raw_top_bytes(vm);
    db::Opened o = db::open_checked(r);  // a damaged file throws (exit 1)
    if (!o.db) {
        std::cerr << "kalah " << cmd << ": no endgame database (" << o.why_none << "); "
                  << otherwise << "\n";
        return nullptr;
    }
    if (!o.warning.empty()) std::cerr << "kalah " << cmd << ": warning: " << o.warning << "\n";
    std::cerr << "kalah " << cmd << ": " << db::describe(*o.db, r.dir) << "\n";
    return std::move(o.db);
}

void add_time_limit_option(po::options_description& opts) {
    opts.add_options()("time-limit", po::value<double>(),
                       "stop a search still running after S seconds (exit 3, no value)");
}

double time_limit_option(const po::variables_map& vm) {
    if (!vm.count("time-limit")) return 0;
    const double s = vm["time-limit"].as<double>();
    if (!(s > 0) || !(s <= 1e7))
        throw InputError("--time-limit must be a positive number of seconds");
    return s;
}

void add_book_option(po::options_description& opts) {
    opts.add_options()("no-book",
                       "search every position: do not answer the first plies of Kalah(6,4) "
                       "and the other boards of data/book/ from the built-in opening books");
}

const Book* book_option(const po::variables_map& vm, const Board& b, Rule rule) {
    return vm.count("no-book") ? nullptr : builtin_book_for(b, rule);
}

void add_output_options(po::options_description& opts) {
    opts.add_options()("json", "print one JSON object")(
        "quiet,q", "no progress lines on stderr (warnings and errors still print)");
}

bool quiet(const po::variables_map& vm) { return vm.count("quiet") > 0; }

void add_solver_options(po::options_description& opts, po::options_description& expert) {
    add_tt_option(opts);
    add_threads_option(opts);
    add_db_options(opts);
    // clang-format off
    expert.add_options()
        ("heartbeat-seconds", po::value<double>(),
         "seconds between heartbeat lines (default 2 on a terminal, else 10)")
        ("memory-db", po::value<std::string>()->default_value("auto"),
         "without a database on disk: build layers 0..K in memory first (auto: when the "
         "search is large enough to gain; off: never; or K)");
    // clang-format on
}

namespace {
// A heartbeat on a terminal rewrites one line; the next line printed must first clear it.
std::atomic<bool> line_open{false};
void print_progress(const std::string& s, bool rewrite) {
    if (rewrite) {
        std::cerr << "\r" << s << "\033[K" << std::flush;
        line_open = true;
        return;
    }
    if (line_open.exchange(false)) std::cerr << "\r\033[K";
    std::cerr << s << "\n" << std::flush;
}
}  // namespace

namespace {
// Layers 0..K built in memory when no database covers the board: only for searches of at
// least kMemoryDbMinSeeds seeds (smaller ones are done before the layers would be), K at
// most kMemoryDbGap seeds below the root and the layers at most kMemoryDbEntries positions
// (m = 6: layers 0..17, 52 M positions; the time they take: results/db.md, "Layers built
// in memory when no database covers the board").
constexpr int kMemoryDbMinSeeds = 44;
constexpr int kMemoryDbGap = 20;
constexpr uint64_t kMemoryDbEntries = uint64_t(64) << 20;

// K of --memory-db for this search, or -1 for none.
int memory_db_seeds(const po::variables_map& vm, int m, int root_seeds, double memory_gib) {
    const std::string want = vm.count("memory-db") ? vm["memory-db"].as<std::string>() : "off";
    const uint64_t memory = static_cast<uint64_t>(memory_gib * double(1ull << 30));
    if (want == "off") return -1;
    if (want == "auto") {
        if (root_seeds < kMemoryDbMinSeeds) return -1;
        const int k = db::Database::in_memory_seeds(m, std::min(kMemoryDbEntries, memory));
        return std::min(k, root_seeds - kMemoryDbGap);
    }
    int k = -1;
    try {
        size_t used = 0;
        k = std::stoi(want, &used);
        if (used != want.size()) k = -1;
    } catch (const std::exception&) {
        k = -1;
    }
    if (k < 0 || k > kMaxSeeds)
        throw InputError("--memory-db must be auto, off or a seed count 0..127, not '" + want +
                         "'");
    if (k > db::Database::in_memory_seeds(m, memory))
        throw InputError("--memory-db " + want + ": layers 0.." + want +
                         " do not fit in --db-memory-gb");
    return k;
}
}  // namespace

SolverOptions solver_options(const po::variables_map& vm, const std::string& cmd, int m, Rule rule,
                             int root_seeds, std::unique_ptr<db::Database>& db, bool passes,
                             bool booked) {
    SolverOptions o;
    o.tt_mb = checked_tt_mb(vm);
    o.threads = threads_option(vm);
    const bool tty = ::isatty(2);
    if (vm.count("heartbeat-seconds")) {
        const double s = vm["heartbeat-seconds"].as<double>();
        if (!(s > 0) || !(s <= 86400))
            throw InputError("--heartbeat-seconds must be a positive number of seconds");
        o.heartbeat_seconds = s;
    } else {
        o.heartbeat_seconds = tty ? 2 : 10;
    }
    if (!quiet(vm)) {
        if (passes) o.progress = [](const std::string& s) { print_progress(s, false); };
        o.heartbeat = [tty](const std::string& s) { print_progress(s, tty); };
    }
    const double memory_gib = db_memory_gib(vm);
    const int memory_k = memory_db_seeds(vm, m, booked ? 0 : root_seeds, memory_gib);
    // Last: the options are all valid before a line about the database is printed.
    db = open_database(vm, cmd, m, rule,
                       booked ? "answering from the opening book"
                       : memory_k >= 0
                           ? "building layers 0.." + std::to_string(memory_k) + " in memory"
                           : "searching without one");
    if (!db && memory_k >= 0) {
        const auto t0 = std::chrono::steady_clock::now();
        db = db::Database::build_in_memory(m, rule, memory_k);
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "built layers 0..%d in memory (%.1f M positions, %.1f s; kalah build-db "
                      "keeps a database on disk)",
                      memory_k, double(db::layer_size(2 * m + 1, memory_k)) / 1e6,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        std::cerr << "kalah " << cmd << ": " << buf << "\n";
    }
    o.db = db.get();
    return o;
}

void end_progress_line() {
    if (line_open.exchange(false)) std::cerr << "\r\033[K" << std::flush;
}

SolverSetup make_solver(const po::variables_map& vm, const std::string& cmd, const Board& start,
                        Rule rule, bool heartbeat) {
    SolverSetup s;
    const int m = start.pits();
    SolverOptions o = solver_options(vm, cmd, m, rule, start.seeds_in_pits(), s.db, false);
    if (!heartbeat) o.heartbeat = nullptr;
    s.solver = std::make_unique<Solver>(m, rule, o);
    return s;
}

}  // namespace kalah::cli
