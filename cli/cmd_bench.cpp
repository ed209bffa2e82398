// `kalah bench`: a fixed suite of searches; prints nodes, time and nodes/s, and a signature.
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "analysis/json.h"
#include "cli/command.h"
#include "db/database.h"
#include "solver/solver.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace {
namespace po = boost::program_options;

// The suite: a spread of board sizes, seed counts, both rules and game phases (start
// positions and positions after a few opening moves). Each is solved from a cleared table
// so that, with one thread and the same --tt-mb, the node count of every search (and so
// the total, the "Bench:" signature) is deterministic. Changing the suite, the default
// table size or the search changes the signature; bench/signature.txt holds it.
struct BenchCase {
    Rule rule;
    const char* position;  // position text (see README), a start or a position of a game
};
constexpr BenchCase kSuite[] = {
    {Rule::Standard, "4,4,4,4/4,4,4,4/0,0/A"},
    {Rule::EmptyCapture, "5,5,5,5/5,5,5,5/0,0/A"},
    {Rule::Standard, "3,3,3,3,3/3,3,3,3,3/0,0/A"},
    {Rule::EmptyCapture, "4,4,4,4,4/4,4,4,4,4/0,0/A"},
    {Rule::Standard, "0,5,5,5,5/0,5,5,5,5/0,0/A"},  // Kalah(5,4) after A1 B1
    {Rule::Standard, "3,3,3,3,3,3/3,3,3,3,3,3/0,0/A"},
    {Rule::EmptyCapture, "3,3,3,3,3,3/3,3,3,3,3,3/0,0/A"},
    {Rule::Standard, "1,2,4,9,2,0/0,2,8,0,1,8/8,3/A"},      // Kalah(6,4), 11 plies of the PV in
    {Rule::EmptyCapture, "5,0,1,6,6,0/0,5,0,6,5,5/8,1/B"},  // Kalah(6,4) after A3+ A6 B3 A2x6
    {Rule::Standard, "0,6,5,4,3,1/7,6,5,3,2,0/5,13/A"},     // Kalah(6,5), 12 plies in
};
constexpr size_t kDefaultBenchTtMb = 256;

int run(const std::vector<std::string>& args) {
    po::options_description opts("bench options");
    // One thread by default: the node signature is deterministic only then.
    add_threads_option(opts, 1);
    add_tt_option(opts, kDefaultBenchTtMb);
    add_db_options(opts, /*use_default_dir=*/false);  // a database changes the node counts
    add_output_options(opts);
    po::variables_map vm;
    if (!parse_options("bench", "[--threads T] [--tt-mb X] [--db D] [--json]", opts, args, vm))
        return 0;
    const int threads = threads_option(vm);
    const size_t tt_mb = checked_tt_mb(vm);
    const bool json = vm.count("json") > 0;

    struct Row {
        std::string name;
        int value;
        uint64_t nodes;
        double seconds;
    };
    std::vector<Row> rows;
    uint64_t total_nodes = 0;
    double total_seconds = 0;
    for (const BenchCase& c : kSuite) {
        Board b = parse_position(c.position);
        auto database = open_database(vm, "bench", b.pits(), c.rule);
        SolverOptions so;
        so.tt_mb = tt_mb;
        so.threads = threads;
        so.db = database.get();
        Solver solver(b.pits(), c.rule, so);
        auto t0 = std::chrono::steady_clock::now();
        int v = solver.value(b);
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        Row r{std::string(c.position) + " " + rule_name(c.rule), v, solver.stats().nodes, secs};
        total_nodes += r.nodes;
        total_seconds += secs;
        if (!json)
            std::cout << std::left << std::setw(48) << r.name << std::right << " value "
                      << std::setw(3) << v << "  nodes " << std::setw(12) << r.nodes << "  "
                      << std::fixed << std::setprecision(3) << std::setw(8) << secs << " s  "
                      << std::setprecision(2) << std::setw(6) << r.nodes / secs / 1e6 << " Mnodes/s"
                      << std::endl;
        rows.push_back(r);
    }
    if (json) {
        Json positions = Json::array();
        for (const auto& r : rows)
            positions.push_back(
                {{"name", r.name}, {"value", r.value}, {"nodes", r.nodes}, {"seconds", r.seconds}});
        std::cout << json_line(
            {{"threads", threads},
             {"tt_budget_mib", tt_mb},
             {"positions", positions},
             {"nodes", total_nodes},
             {"seconds", total_seconds},
             {"nodes_per_second", static_cast<uint64_t>(total_nodes / total_seconds)}});
    } else {
        std::cout << "Total: " << total_nodes << " nodes in " << std::fixed << std::setprecision(3)
                  << total_seconds << " s, " << std::setprecision(2)
                  << total_nodes / total_seconds / 1e6 << " Mnodes/s (" << threads
                  << (threads == 1 ? " thread" : " threads") << ")\n"
                  << "Bench: " << total_nodes << "\n";
    }
    return 0;
}

int guarded_run(const std::vector<std::string>& args) { return guarded("bench", run, args); }
const RegisterCommand reg({"bench", "search a fixed suite; nodes, time, nodes/s", guarded_run});

}  // namespace
}  // namespace kalah::cli
