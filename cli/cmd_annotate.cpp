// `kalah annotate`: every move of a game against perfect play, with ?/?? marks and a summary.
#include <iostream>

#include "analysis/analysis.h"
#include "cli/command.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace {
namespace po = boost::program_options;

int run(const std::vector<std::string>& args) {
    po::options_description opts("annotate options");
    add_game_options(opts, false);
    po::options_description expert("expert options");
    add_solver_options(opts, expert);
    // clang-format off
    opts.add_options()
        ("moves", po::value<std::string>(),
         "the game record, e.g. \"A3+ A6 B2 ...\" (suffixes optional)")
        ("file", po::value<std::string>(), "read the game record from a file (';' starts a comment)");
    // clang-format on
    add_output_options(opts);
    po::variables_map vm;
    if (!parse_options(
            "annotate",
            "(--pits M --seeds N | --position P) (--moves \"A3 A6 ...\" | --file F) [options]\n"
            "values are A's final margin under perfect play; a move that loses seeds is\n"
            "a mistake '?' if the mover's result (win/draw/loss) stays, a blunder '?"
            "?'\n"
            "if it changes",
            opts, args, vm, &expert, true))
        return 0;
    if (vm.count("moves") == vm.count("file"))
        throw InputError("give the game as --moves \"...\" or --file F (one of them)");
    Rule rule;
    po::variables_map start_vm = vm;  // game_from_options would replay --moves itself
    start_vm.erase("moves");
    Board start = game_from_options(start_vm, rule);
    std::string record = vm.count("moves") ? vm["moves"].as<std::string>()
                                           : read_record_file(vm["file"].as<std::string>());
    Board end = start;
    std::vector<PlayedMove> played = replay(end, record, rule);
    if (played.empty()) throw InputError("the game record holds no moves");

    SolverSetup setup = make_solver(vm, "annotate", start, rule);
    Annotation a = annotate_game(*setup.solver, start, played, rule);
    if (vm.count("json")) {
        std::cout << annotation_json(a, rule);
        return 0;
    }
    std::cout << "start " << format_position(start) << " (" << rule_name(rule) << "), "
              << played.size() << " moves\n"
              << format_annotation(a);
    return 0;
}

int guarded_run(const std::vector<std::string>& args) { return guarded("annotate", run, args); }
const RegisterCommand reg({"annotate", "mark every move of a game against perfect play",
                           guarded_run});

}  // namespace
}  // namespace kalah::cli
