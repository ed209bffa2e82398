// `kalah pie`: the value of every opening turn of South and of the game under the pie rule.
#include <cstdio>
#include <iostream>

#include "analysis/analysis.h"
#include "analysis/reports.h"
#include "cli/command.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace {
namespace po = boost::program_options;

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s);
    return buf;
}

const char* north_choice(int v) { return v < 0 ? "keeps" : v > 0 ? "swaps" : "either"; }

int run(const std::vector<std::string>& args) {
    po::options_description opts("pie options");
    add_game_options(opts, false);
    po::options_description expert("expert options");
    add_solver_options(opts, expert);
    add_output_options(opts);
    po::variables_map vm;
    if (!parse_options("pie", "(--pits M --seeds N | --position P) [--rule R] [options]", opts,
                       args, vm, &expert, true))
        return 0;
    Rule rule;
    Board start = game_from_options(vm, rule);
    SolverSetup setup = make_solver(vm, "pie", start, rule);
    Solver& solver = *setup.solver;
    PieReport rep = pie_analysis(solver, start, rule);
    const SolverStats& st = solver.stats();

    if (vm.count("json")) {
        std::cout << pie_json(rep, start, rule, st.nodes, st.seconds);
        return 0;
    }

    std::cout << "Kalah pie rule, start " << format_position(start) << " (" << rule_name(rule)
              << "): " << rep.rows.size() << " opening turns of A\n"
              << "V = A's final margin with perfect play after the opening (B to move);\n"
              << "B keeps its seat if V < 0 and swaps if V > 0, and so gets |V|.\n\n";
    size_t w = 8;
    for (const auto& r : rep.rows) w = std::max(w, r.opening.text.size() + 2);
    std::cout << "opening" << std::string(w - 7, ' ') << "     V  B       pie value\n";
    for (const auto& r : rep.rows) {
        std::string v = signed_value(r.value), pv = signed_value(r.pie_value);
        std::string ch = north_choice(r.value);
        std::cout << r.opening.text << std::string(w - r.opening.text.size(), ' ')
                  << std::string(6 - std::min<size_t>(6, v.size()), ' ') << v << "  " << ch
                  << std::string(8 - ch.size(), ' ')
                  << std::string(9 - std::min<size_t>(9, pv.size()), ' ') << pv << "\n";
    }
    std::cout << "\nfairest opening" << (rep.fairest.size() == 1 ? "" : "s")
              << " (|V| = " << -rep.pie_value << "):";
    for (size_t i : rep.fairest) std::cout << "  " << rep.rows[i].opening.text;
    std::cout << "\nvalue under the pie rule: " << signed_value(rep.pie_value)
              << " for A (the opener)\nvalue without the pie rule: "
              << signed_value(rep.plain_value) << " for A\n"
              << "nodes " << st.nodes << ", " << seconds_text(st.seconds) << " s\n";
    return 0;
}

int guarded_run(const std::vector<std::string>& args) { return guarded("pie", run, args); }
const RegisterCommand reg({"pie", "value of every opening turn under the pie rule", guarded_run});

}  // namespace
}  // namespace kalah::cli
