// `kalah solve` and `kalah query`: exact values, best moves and principal variations.
#include <chrono>
#include <cstdio>

#include <omp.h>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "db/database.h"
#include "solver/solver.h"

namespace kalah::cli {
namespace {
namespace po = boost::program_options;

const char* kTTHelp =
    "transposition table size in MiB (default 1024: 16 bytes an entry, 64 M entries). It is "
    "the memory the search may use, allocated as the table fills (fourfold steps, past "
    "16 MiB only while it keeps evicting results of large subtrees, past 256 MiB only once "
    "it has evicted half its entries' worth of them; all of it from the "
    "start for whole games of 44 or more seeds above the database), so small problems "
    "stay small. "
    "Kalah(6,4) without a database needs no more: a 4096 MiB table "
    "searched 2% fewer nodes but took longer (results/solver.md); raise it for Kalah(6,5) "
    "and larger";

void add_solver_options(po::options_description& opts) {
    // clang-format off
    opts.add_options()
        ("tt-mb", po::value<size_t>()->default_value(SolverOptions{}.tt_mb), kTTHelp)
        ("threads", po::value<int>()->default_value(omp_get_max_threads()),
         "search threads (default: all cores); every count gives the same values")
        ("ablate", po::value<std::string>()->default_value(""),
         "for measurements: comma-separated features to switch off: tt-move, ordering, etc, "
         "defer (parallel: plain lazy SMP, no deferral of busy children), follow (parallel: "
         "helpers defer the root's first move in every pass), root-defer (parallel: in a pass "
         "expected to fail low, helpers defer the root's first move only if it is busy), "
         "cut-move (parallel: a cut found past deferred moves is stored with its move), "
         "cut-join (parallel: at expected cut nodes too, busy later moves are deferred), "
         "plain (one thread runs the parallel code path as a team of one)")
        ("json", "print one JSON object");
    // clang-format on
    add_db_options(opts, 8.0);
}

std::string result_word(int v) { return v > 0 ? "W" : v < 0 ? "L" : "D"; }

// Builds solver options from the command line; `db` keeps the database alive.
SolverOptions solver_options(const po::variables_map& vm, const char* cmd, int m, Rule rule,
                             std::unique_ptr<db::Database>& db, bool progress) {
    SolverOptions o;
    o.tt_mb = checked_tt_mb(vm);
    o.threads = vm["threads"].as<int>();
    if (o.threads < 1 || o.threads > 1024)
        throw InputError("--threads must be 1..1024, not " + std::to_string(o.threads));
    std::stringstream ab(vm["ablate"].as<std::string>());
    std::string f;
    while (std::getline(ab, f, ',')) {
        // clang-format off
        if (f == "tt-move") o.use_tt_move = false;
        else if (f == "ordering") o.use_ordering = false;
        else if (f == "etc") o.use_etc = false;
        else if (f == "defer") o.use_defer = false;  // parallel: plain lazy SMP
        else if (f == "follow") o.use_follow = false;  // parallel: helpers defer at the root
        else if (f == "root-defer") o.use_root_defer = false;  // parallel: may race
        else if (f == "cut-move") o.use_cut_move_rule = false;  // parallel: cut moves
        else if (f == "cut-join") o.use_cut_join = false;  // parallel: defer at cut nodes
        else if (f == "plain") o.use_plain_path = false;  // a team of one
        else if (!f.empty()) throw InputError("--ablate: unknown feature '" + f + "'");
        // clang-format on
    }
    if (progress) o.progress = [](const std::string& s) { std::cerr << s << "\n"; };
    // Last: the options are all valid before a line about the database is printed.
    db = open_database(vm, cmd, m, rule);
    o.db = db.get();
    return o;
}

int run_solve(const std::vector<std::string>& args) {
    po::options_description opts("solve options");
    opts.add_options()
        ("pits", po::value<int>()->default_value(6), "pits per side m (1..6)")
        ("seeds", po::value<int>()->default_value(4), "seeds per pit n")
        ("rule", po::value<std::string>()->default_value("standard"),
         "capture rule: standard or empty-capture")
        ("guess", po::value<int>(), "first MTD(f) guess (South's margin)");
    add_solver_options(opts);
    po::variables_map vm;
    if (!parse_options("solve", "--pits M --seeds N [--rule R] [--tt-mb X] [--json]", opts, args,
                       vm))
        return 0;
    const Rule rule = parse_rule(vm["rule"].as<std::string>());
    const int m = vm["pits"].as<int>(), n = vm["seeds"].as<int>();
    const Board start = checked_start(m, n);
    std::unique_ptr<db::Database> db;
    SolverOptions o = solver_options(vm, "solve", m, rule, db, true);
    if (vm.count("guess")) o.guess = vm["guess"].as<int>();
    Solver solver(m, rule, o);
    const auto t0 = std::chrono::steady_clock::now();
    const int value = solver.value(start);
    const uint64_t nodes = solver.stats().nodes;
    const double cpu = solver.stats().cpu_seconds;
    const double table_mib = double(solver.stats().tt_bytes) / (1 << 20);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto pv = solver.principal_variation(start);
    Board end = start;
    std::string best, line;
    for (const auto& p : pv) {
        if (p.side == Side::South && best.size() == line.size()) best += (best.empty() ? "" : " ") + p.text;
        line += (line.empty() ? "" : " ") + p.text;
        end.play(p.pit, rule);
    }
    const int sa = final_store(end, Side::South), sb = final_store(end, Side::North);
    const double nps = secs > 0 ? nodes / secs : 0;
    if (vm.count("json")) {
        std::cout << "{\"pits\": " << m << ", \"seeds\": " << n
                  << ", \"rule\": " << json_string(rule_name(rule)) << ", \"value\": " << value
                  << ", \"result\": \"" << result_word(value) << "\", \"best\": "
                  << json_string(best) << ", \"pv\": " << json_string(line)
                  << ", \"score\": [" << sa << ", " << sb << "], \"nodes\": " << nodes
                  << ", \"seconds\": " << secs << ", \"nodes_per_second\": " << uint64_t(nps)
                  << ", \"threads\": " << o.threads << ", \"cpu_seconds\": " << cpu
                  << ", \"tt_mib\": " << table_mib << "}\n";
        return 0;
    }
    std::cout << "Kalah(" << m << "," << n << "), rule " << rule_name(rule) << "\n"
              << "value: " << (value > 0 ? "+" : "") << value << " (" << result_word(value)
              << " for South)\n"
              << "best first turn: " << best << "\n"
              << "pv: " << line << "\n"
              << "final score: " << sa << "-" << sb << "\n"
              << "nodes: " << nodes << ", seconds: " << secs << ", nodes/s: " << uint64_t(nps)
              << "\n"
              << "threads: " << o.threads << ", cpu seconds: " << cpu << " (nodes summed over "
              << "threads)\n"
              << "transposition table: " << table_mib << " MiB of " << o.tt_mb << " MiB\n";
    return 0;
}

int run_query(const std::vector<std::string>& args) {
    po::options_description opts("query options");
    add_game_options(opts);
    add_solver_options(opts);
    po::variables_map vm;
    if (!parse_options("query",
                       "(--position P | --pits M --seeds N --moves \"...\") [--rule R] [--json]",
                       opts, args, vm))
        return 0;
    Rule rule;
    Board b = game_from_options(vm, rule);
    std::unique_ptr<db::Database> db;
    Solver solver(b.pits(), rule, solver_options(vm, "query", b.pits(), rule, db, false));
    const int value = solver.value(b);
    const auto moves = solver.move_values(b);
    const bool south = b.to_move() == Side::South;
    // Best for the mover: highest South margin for South, lowest for North.
    auto is_best = [&](int v) { return v == value; };
    std::vector<std::string> best;
    for (const auto& mv : moves)
        if (is_best(mv.value)) best.push_back(mv.text);
    const char* to_move = b.over() ? "none" : south ? "A" : "B";
    if (vm.count("json")) {
        std::cout << "{\"position\": " << json_string(format_position(b))
                  << ", \"rule\": " << json_string(rule_name(rule)) << ", \"to_move\": \""
                  << to_move << "\", \"over\": " << (b.over() ? "true" : "false")
                  << ", \"value\": " << value << ", \"result\": \"" << result_word(value)
                  << "\", \"moves\": [";
        for (size_t i = 0; i < moves.size(); ++i)
            std::cout << (i ? ", " : "") << "{\"move\": " << json_string(moves[i].text)
                      << ", \"value\": " << moves[i].value
                      << ", \"best\": " << (is_best(moves[i].value) ? "true" : "false") << "}";
        std::cout << "], \"best\": [";
        for (size_t i = 0; i < best.size(); ++i)
            std::cout << (i ? ", " : "") << json_string(best[i]);
        std::cout << "]";
        if (b.over())
            std::cout << ", \"score\": [" << final_store(b, Side::South) << ", "
                      << final_store(b, Side::North) << "]";
        std::cout << "}\n";
        return 0;
    }
    std::cout << "position: " << format_position(b) << " (" << rule_name(rule) << ")\n"
              << draw_board(b);
    if (b.over()) {
        std::cout << "game over, final score " << final_store(b, Side::South) << "-"
                  << final_store(b, Side::North) << ": value " << value << "\n";
        return 0;
    }
    std::cout << "value: " << (value > 0 ? "+" : "") << value
              << " (South's final margin), " << to_move << " to move\n";
    for (const auto& mv : moves)
        std::cout << "  " << mv.text << std::string(mv.text.size() < 8 ? 8 - mv.text.size() : 1, ' ')
                  << (mv.value > 0 ? "+" : "") << mv.value << (is_best(mv.value) ? "  best" : "")
                  << "\n";
    return 0;
}

int guarded_solve(const std::vector<std::string>& args) { return guarded("solve", run_solve, args); }
int guarded_query(const std::vector<std::string>& args) { return guarded("query", run_query, args); }
const RegisterCommand reg_solve({"solve", "solve Kalah(m,n) exactly: value, best turn, PV",
                                 guarded_solve});
const RegisterCommand reg_query({"query", "exact value of a position and of each legal move",
                                 guarded_query});

}  // namespace
}  // namespace kalah::cli
