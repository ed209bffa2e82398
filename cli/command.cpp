// Subcommand registry, option parsing and error reporting shared by all subcommands.
#include "cli/command.h"

#include <unistd.h>

#include <iostream>
#include <new>

#include "core/notation.h"
#include "db/database.h"
#include "db/format.h"

namespace kalah::cli {
namespace po = boost::program_options;

namespace {
std::vector<Command>& registry() {
    static std::vector<Command> r;
    return r;
}
}  // namespace

RegisterCommand::RegisterCommand(Command c) { registry().push_back(c); }
const std::vector<Command>& commands() { return registry(); }

int fail(const std::string& cmd, const std::string& message) {
    std::cerr << "kalah " << cmd << ": " << message << "\n";
    return kExitBadInput;
}

bool parse_options(const std::string& cmd, const std::string& usage,
                   po::options_description& opts, const std::vector<std::string>& args,
                   po::variables_map& vm) {
    opts.add_options()("help,h", "show this help");
    // No command takes positional arguments: a stray word is an error, not silently dropped.
    po::options_description all;
    all.add(opts).add_options()("stray-words", po::value<std::vector<std::string>>());
    po::positional_options_description stray;
    stray.add("stray-words", -1);
    po::store(po::command_line_parser(args).options(all).positional(stray).run(), vm);
    if (vm.count("stray-words"))
        throw InputError("unexpected argument '" +
                         vm["stray-words"].as<std::vector<std::string>>().front() +
                         "' (options start with --)");
    if (vm.count("help")) {
        std::cout << "usage: kalah " << cmd << " " << usage << "\n\n" << opts << "\n";
        return false;
    }
    po::notify(vm);
    return true;
}

int guarded(const std::string& cmd, int (*body)(const std::vector<std::string>&),
            const std::vector<std::string>& args) {
    try {
        return body(args);
    } catch (const po::error& e) {
        return fail(cmd, e.what());
    } catch (const InputError& e) {
        return fail(cmd, e.what());
    } catch (const std::invalid_argument& e) {
        return fail(cmd, e.what());
    } catch (const std::bad_alloc&) {
        std::cerr << "kalah " << cmd
                  << ": error: out of memory (a smaller --tt-mb, --db-memory-gb or --memory-gb "
                     "may fit)\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "kalah " << cmd << ": error: " << e.what() << "\n";
        return 1;
    }
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

}  // namespace kalah::cli

namespace kalah::cli {

Board checked_start(int m, int n) {
    if (m < 1 || m > kMaxPits) throw InputError("--pits must be 1..6, not " + std::to_string(m));
    if (n < 1) throw InputError("--seeds must be at least 1, not " + std::to_string(n));
    if (2L * m * n > kMaxSeeds)
        throw InputError("Kalah(" + std::to_string(m) + "," + std::to_string(n) + ") has " +
                         std::to_string(2L * m * n) + " seeds; at most " +
                         std::to_string(kMaxSeeds) + " are supported");
    return Board::start(m, n);
}

void add_game_options(po::options_description& opts, bool with_moves) {
    opts.add_options()
        ("pits", po::value<int>(), "pits per side m (1..6); with --seeds, the start position")
        ("seeds", po::value<int>(), "seeds per pit n at the start")
        ("position", po::value<std::string>(), "position 'A1,..,Am/B1,..,Bm/storeA,storeB/side'")
        ("rule", po::value<std::string>()->default_value("standard"), "capture rule: standard or empty-capture");
    if (with_moves)
        opts.add_options()("moves", po::value<std::string>()->default_value(""),
                           "moves to play first, e.g. \"A3+ A6 B2\"");
}

Board game_from_options(const po::variables_map& vm, Rule& rule, std::vector<PlayedMove>* played) {
    rule = parse_rule(vm["rule"].as<std::string>());
    Board b;
    if (vm.count("position")) {
        if (vm.count("pits") || vm.count("seeds"))
            throw InputError("give either --position or --pits/--seeds, not both");
        b = parse_position(vm["position"].as<std::string>());
    } else {
        int m = vm.count("pits") ? vm["pits"].as<int>() : 6;
        int n = vm.count("seeds") ? vm["seeds"].as<int>() : 4;
        if (vm.count("pits") != vm.count("seeds"))
            throw InputError("--pits and --seeds go together");
        b = checked_start(m, n);
    }
    if (vm.count("moves")) {
        auto moves = replay(b, vm["moves"].as<std::string>(), rule);
        if (played) *played = std::move(moves);
    }
    return b;
}

int final_store(const Board& b, Side s) {
    int row = 0;
    for (int i = 0; i < b.pits(); ++i) row += b.pit(s, i);
    return b.store(s) + row;
}

std::string draw_board(const Board& b) {
    const int m = b.pits();
    auto cell = [](int v) {
        std::string t = std::to_string(v);
        return std::string(t.size() < 3 ? 3 - t.size() : 0, ' ') + t + " ";
    };
    auto label = [](char side, int i) {
        std::string t = std::string(1, side) + std::to_string(i);
        return " " + t + "  ";
    };
    std::string out = "        ";
    for (int i = m; i >= 1; --i) out += label('B', i);
    out += "\n        ";
    for (int i = m - 1; i >= 0; --i) out += cell(b.pit(Side::North, i)) + " ";
    out += "\n  " + cell(b.store(Side::North)) + std::string(5 * m + 2, ' ') +
           cell(b.store(Side::South)) + "\n        ";
    for (int i = 0; i < m; ++i) out += cell(b.pit(Side::South, i)) + " ";
    out += "\n        ";
    for (int i = 1; i <= m; ++i) out += label('A', i);
    out += "\n";
    if (b.over()) {
        int a = final_store(b, Side::South), n = final_store(b, Side::North);
        out += "  game over: A " + std::to_string(a) + " - B " + std::to_string(n) + "\n";
    } else {
        out += std::string("  ") + (b.to_move() == Side::South ? "A" : "B") + " to move\n";
    }
    return out;
}

}  // namespace kalah::cli

namespace kalah::cli {

void add_db_options(po::options_description& opts, double default_gb, bool use_default_dir) {
    auto dir = po::value<std::string>();
    if (use_default_dir) dir->default_value(kDefaultDbDir);
    opts.add_options()
        ("db", dir, "endgame database directory (kalah build-db writes one); searched positions "
                    "with few enough seeds are read from it")
        ("db-memory-gb", po::value<double>()->default_value(default_gb),
         "memory for the database in GiB: layers held in memory (1 byte a position; m = 6 "
         "layers 0..26 take 2.7 GB) plus a cache of decoded blocks (at least 64 blocks: "
         "64 MiB with the default 1 Mi-entry blocks)");
}

std::unique_ptr<db::Database> open_database(const po::variables_map& vm, const std::string& cmd,
                                            int m, Rule rule) {
    if (!vm.count("db")) return nullptr;
    const double gb = vm["db-memory-gb"].as<double>();
    if (!(gb > 0) || !(gb <= 1 << 20))
        throw InputError("--db-memory-gb must be a positive number of GiB");
    const std::string dir = vm["db"].as<std::string>();
    std::string why;
    std::string damage;
    auto database = db::Database::open(dir, m, rule, static_cast<size_t>(gb * double(1ull << 30)),
                                       &why, &damage);
    // A damaged file is an error (exit 1), not a smaller database: the user asked for
    // this database, and `build-db` rebuilds exactly the damaged layers.
    if (!damage.empty())
        throw db::FormatError(dir + "/" + damage + " (kalah build-db rebuilds damaged layers)");
    if (!database) {
        std::cerr << "kalah " << cmd << ": no endgame database (" << why << "); searching without one\n";
        return nullptr;
    }
    if (!why.empty()) std::cerr << "kalah " << cmd << ": warning: " << why << "\n";
    std::cerr << "kalah " << cmd << ": endgame database " << dir << ", layers 0.." << database->max_seeds()
              << " seeds (m=" << m << ", " << rule_name(rule) << ")\n";
    return database;
}

}  // namespace kalah::cli

namespace kalah::cli {

size_t checked_tt_mb(const po::variables_map& vm) {
    const size_t mb = vm["tt-mb"].as<size_t>();
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const size_t phys_mb = pages > 0 && page > 0 ? size_t(pages) * size_t(page) >> 20 : size_t(1) << 20;
    if (mb < 1 || mb > phys_mb)
        throw InputError("--tt-mb must be 1.." + std::to_string(phys_mb) +
                         " (this machine's memory in MiB), not " + std::to_string(mb));
    return mb;
}

}  // namespace kalah::cli
