// `kalah play`: a terminal game against the engine at a chosen level, read line by line.
#include <algorithm>
#include <cctype>
#include <iostream>
#include <random>
#include <sstream>

#include "analysis/analysis.h"
#include "analysis/reports.h"
#include "analysis/text.h"
#include "cli/command.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace {
namespace po = boost::program_options;

struct Step {
    Board before;
    PlayedMove move;
    bool by_person;
};

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string join_best(const std::vector<MoveValue>& mv, Side s) {
    int best = -(1 << 30);
    for (const auto& x : mv) best = std::max(best, for_side(x.value, s));
    std::string out;
    for (const auto& x : mv)
        if (for_side(x.value, s) == best) out += (out.empty() ? "" : " or ") + x.text;
    return out;
}

std::string outcome_for(int margin) {
    if (margin == 0) return "a draw";
    return std::string(margin > 0 ? "you win by " : "you lose by ") +
           std::to_string(std::abs(margin));
}

int run(const std::vector<std::string>& args) {
    po::options_description opts("play options");
    add_game_options(opts, false);
    po::options_description expert("expert options");
    add_solver_options(opts, expert);
    add_book_option(opts);
    opts.add_options()("level", po::value<std::string>()->default_value("medium"),
                       "engine strength: easy, medium, hard or perfect")(
        "side", po::value<std::string>()->default_value("A"), "your side: A (moves first) or B")(
        "seed", po::value<uint64_t>(), "random seed of the engine's choices (default: random)");
    po::variables_map vm;
    if (!parse_options(
            "play",
            "[--pits M --seeds N | --position P] [--rule R] [--level L] [--side A|B] [options]\n"
            "levels (per engine move: chance of a deliberate deviation, its largest loss):\n"
            "  easy 60%, any move; medium 35%, <= 6 seeds; hard 15%, <= 2 seeds; "
            "perfect never\n"
            "commands during the game: a move (A3, or just 3), hint, undo, quit",
            opts, args, vm, &expert))
        return 0;
    Rule rule;
    const Board start = game_from_options(vm, rule, nullptr, /*required=*/false);
    const Level level = parse_level(vm["level"].as<std::string>());
    const std::string side_text = vm["side"].as<std::string>();
    if (side_text != "A" && side_text != "B" && side_text != "a" && side_text != "b")
        throw InputError("--side must be A or B, not '" + side_text + "'");
    const Side person =
        std::toupper(static_cast<unsigned char>(side_text[0])) == 'A' ? Side::South : Side::North;
    const uint64_t seed = vm.count("seed") ? vm["seed"].as<uint64_t>() : std::random_device{}();
    SolverSetup setup = make_solver(vm, "play", start, rule, false);
    Solver& solver = *setup.solver;
    solver.set_book(book_option(vm, start, rule));
    Rng rng(seed);

    const char you = person == Side::South ? 'A' : 'B';
    std::cout << "Kalah " << format_position(start) << " (" << rule_name(rule) << "): you play "
              << you << ", the engine plays " << (you == 'A' ? 'B' : 'A') << " at level "
              << level_spec(level).name << " (seed " << seed << ")\n"
              << "type a move (" << you << "3, or just 3), hint, undo or quit\n\n"
              << draw_board(start);

    Board b = start;
    std::vector<Step> history;
    // `why` (the engine's moves): where the values it chose by came from.
    auto play_move = [&](int pit, bool by_person, const char* why = nullptr) {
        Side s = b.to_move();
        Board before = b;
        MoveResult r = b.play(pit, rule);
        PlayedMove pm{s, pit, r, format_move(s, pit, r)};
        history.push_back({before, pm, by_person});
        std::cout << (by_person ? "you play " : "engine plays ") << pm.text
                  << (why ? std::string(" (values ") + why + ")" : "") << "\n\n"
                  << draw_board(b);
    };
    auto annotate_person = [&]() {
        std::vector<PlayedMove> moves;
        for (const auto& st : history) moves.push_back(st.move);
        if (moves.empty()) return;
        Annotation a = annotate_game(solver, start, moves, rule);
        std::cout << "\nyour moves, annotated:\n" << format_annotation(a, &person);
    };

    std::string line;
    while (!b.over()) {
        if (b.to_move() != person) {
            // The values of the position and its moves, known (solver/known.h) or searched.
            const QueryReport q = query_report(solver, b, rule);
            play_move(q.moves[choose_move(q.moves, b.to_move(), level, rng)].pit, false,
                      source_text(q.source));
            continue;
        }
        std::cout << "your move> " << std::flush;
        if (!std::getline(std::cin, line)) {
            std::cout << "\nend of input: game abandoned\n";
            annotate_person();
            return 0;
        }
        std::istringstream words(line);
        std::vector<std::string> w;
        for (std::string t; words >> t;) w.push_back(t);
        if (w.empty()) continue;
        if (w.size() > 1) {
            std::cout << "one move or command per line, please\n";
            continue;
        }
        const std::string cmd = lower(w[0]);
        if (cmd == "quit" || cmd == "q" || cmd == "exit") {
            std::cout << "you quit the game\n";
            annotate_person();
            return 0;
        }
        if (cmd == "help") {
            std::cout << "type a move (" << you << "3, or just 3), hint, undo or quit\n";
            continue;
        }
        if (cmd == "hint") {
            const QueryReport q = query_report(solver, b, rule);
            std::cout << "hint: " << join_best(q.moves, person) << " (with perfect play from here "
                      << outcome_for(for_side(q.value, person)) << "; " << source_text(q.source)
                      << ")\n";
            continue;
        }
        if (cmd == "undo") {
            bool any = false;
            for (const auto& st : history) any = any || st.by_person;
            if (!any) {
                std::cout << "nothing to undo: you have not moved yet\n";
                continue;
            }
            std::string taken;
            for (;;) {
                Step st = history.back();
                history.pop_back();
                taken = st.move.text + (taken.empty() ? "" : " " + taken);
                b = st.before;
                if (st.by_person) break;
            }
            std::cout << "took back " << taken << "\n\n" << draw_board(b);
            continue;
        }
        std::string tok = w[0];
        if (std::all_of(tok.begin(), tok.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            if (tok.size() > 2 || std::stoi(tok) < 1 || std::stoi(tok) > b.pits()) {
                std::cout << "illegal: there is no pit " << tok << " (pits are 1.." << b.pits()
                          << "); try again\n";
                continue;
            }
            tok = std::string(1, you) + tok;
        }
        Board probe = b;
        try {
            std::vector<PlayedMove> one = replay(probe, tok, rule);
            play_move(one.front().pit, true);
        } catch (const InputError& e) {
            std::cout << "illegal: " << e.what() << "; try again\n";
        }
    }
    const int margin = for_side(final_store(b, Side::South) - final_store(b, Side::North), person);
    std::cout << "\nfinal score: A " << final_store(b, Side::South) << " - B "
              << final_store(b, Side::North) << ": " << outcome_for(margin) << "\n";
    annotate_person();
    return 0;
}

int guarded_run(const std::vector<std::string>& args) { return guarded("play", run, args); }
const RegisterCommand reg({"play", "play a game against the engine in the terminal", guarded_run});

}  // namespace
}  // namespace kalah::cli
