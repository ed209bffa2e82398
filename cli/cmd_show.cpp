// `kalah show`: replay moves from a position and draw the board.
#include <iostream>

#include "analysis/reports.h"
#include "analysis/text.h"
#include "cli/command.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace {
namespace po = boost::program_options;

int run(const std::vector<std::string>& args) {
    po::options_description opts("show options");
    add_game_options(opts);
    opts.add_options()("json", "print a JSON object instead of the board");
    po::variables_map vm;
    if (!parse_options("show", "[--pits M --seeds N | --position P] [--moves \"A3 A6 ...\"]", opts,
                       args, vm))
        return 0;
    Rule rule;
    std::vector<PlayedMove> played;
    Board b = game_from_options(vm, rule, &played, /*required=*/false);
    if (vm.count("json")) {
        std::cout << show_json(b, rule, played);
        return 0;
    }
    if (!played.empty()) {
        std::cout << "moves:";
        for (const auto& p : played) std::cout << " " << p.text;
        std::cout << "\n";
    }
    std::cout << "position: " << format_position(b) << " (" << rule_name(rule) << ")\n"
              << draw_board(b);
    return 0;
}

int guarded_run(const std::vector<std::string>& args) { return guarded("show", run, args); }
const RegisterCommand reg({"show", "replay moves and draw the board", guarded_run});

}  // namespace
}  // namespace kalah::cli
