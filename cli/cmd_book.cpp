// `kalah build-book` and `kalah verify-book`: opening books (solver/book.h), built by the
// solver and checked against it.
#include <algorithm>
#include <iostream>
#include <random>

#include "analysis/json.h"
#include "cli/command.h"
#include "db/format.h"
#include "solver/book.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace {
namespace po = boost::program_options;

int run_build(const std::vector<std::string>& args) {
    po::options_description opts("build-book options");
    po::options_description expert("expert options");
    add_start_options(opts);
    // clang-format off
    opts.add_options()
        ("plies", po::value<int>()->default_value(3),
         "every position within this many plies (single sowings) of the start, 0..6")
        ("out", po::value<std::string>()->required(), "the book file to write");
    // clang-format on
    add_solver_options(opts, expert);
    add_output_options(opts);
    po::variables_map vm;
    if (!parse_options("build-book", "--pits M --seeds N --out FILE [--plies P] [options]", opts,
                       args, vm, &expert, true))
        return 0;
    const int m = vm["pits"].as<int>(), n = vm["seeds"].as<int>();
    const Board start = checked_start(m, n);
    const Rule rule = parse_rule(vm["rule"].as<std::string>());
    const int plies = vm["plies"].as<int>();
    if (plies < 0 || plies > 6) throw InputError("--plies must be 0..6");
    const std::string out = vm["out"].as<std::string>();
    SolverSetup s = make_solver(vm, "build-book", start, rule);
    const bool q = quiet(vm);
    const Book book = Book::build(
        m, n, rule, plies, [&](const Board& b) { return s.solver->value(b); },
        [&](size_t done, size_t all) {
            if (!q)
                std::cerr << "\rbuild-book: " << done << "/" << all << " positions" << std::flush;
        });
    if (!q) std::cerr << "\n";
    const std::string text = book.format();
    db::write_file_durably(out, {{text.data(), text.size()}});
    const SolverStats& st = s.solver->stats();
    if (vm.count("json")) {
        std::cout << json_line({{"pits", m},
                                {"seeds", n},
                                {"rule", rule_name(rule)},
                                {"plies", plies},
                                {"entries", book.size()},
                                {"out", out},
                                {"nodes", st.nodes},
                                {"seconds", st.seconds}});
        return 0;
    }
    std::cout << "book of Kalah(" << m << "," << n << ") " << rule_name(rule) << ", " << plies
              << " plies: " << book.size() << " positions in " << out << " (" << st.nodes
              << " nodes, " << st.seconds << " s)\n";
    return 0;
}

// Re-proves the entries (all, or a random sample) with a solver that has no book, and checks
// each parent against its moves. Exit 1 when anything disagrees.
int run_verify(const std::vector<std::string>& args) {
    po::options_description opts("verify-book options");
    po::options_description expert("expert options");
    // clang-format off
    opts.add_options()
        ("book", po::value<std::string>()->required(), "the book file to check")
        ("sample", po::value<int>()->default_value(0),
         "re-prove this many entries drawn at random (0: every entry)")
        ("seed", po::value<uint64_t>(), "seed of the sample (default: random)");
    // clang-format on
    add_solver_options(opts, expert);
    add_output_options(opts);
    po::variables_map vm;
    if (!parse_options("verify-book", "--book FILE [--sample K] [options]", opts, args, vm, &expert,
                       true))
        return 0;
    const std::string path = vm["book"].as<std::string>();
    const Book book = Book::read(path);
    const int sample = vm["sample"].as<int>();
    if (sample < 0) throw InputError("--sample must be >= 0");
    const Book::Header& h = book.header();
    std::vector<size_t> picks(book.size());
    for (size_t i = 0; i < picks.size(); ++i) picks[i] = i;
    const uint64_t seed = vm.count("seed") ? vm["seed"].as<uint64_t>() : std::random_device{}();
    if (sample > 0 && size_t(sample) < picks.size()) {
        std::mt19937_64 rng(seed);
        std::shuffle(picks.begin(), picks.end(), rng);
        picks.resize(size_t(sample));
    }
    std::vector<std::string> problems = book.inconsistencies();
    SolverSetup s = make_solver(vm, "verify-book", Board::start(h.pits, h.seeds), h.rule);
    const bool q = quiet(vm);
    size_t done = 0;
    for (size_t i : picks) {
        const Book::Entry& e = book.entries()[i];
        const int v = s.solver->value(e.board);
        if (v != e.value)
            problems.push_back(format_position(e.board) + ": the book says " +
                               std::to_string(e.value) + ", the search proves " +
                               std::to_string(v));
        if (!q)
            std::cerr << "\rverify-book: " << ++done << "/" << picks.size() << " re-proved"
                      << std::flush;
    }
    if (!q && !picks.empty()) std::cerr << "\n";
    for (const std::string& p : problems) std::cerr << "kalah verify-book: " << p << "\n";
    if (vm.count("json")) {
        std::cout << json_line({{"book", path},
                                {"entries", book.size()},
                                {"reproved", picks.size()},
                                {"seed", seed},
                                {"problems", problems.size()},
                                {"ok", problems.empty()}});
    } else {
        std::cout << path << ": " << book.size() << " entries, " << picks.size()
                  << " re-proved, every parent checked against its moves: "
                  << (problems.empty() ? "ok" : std::to_string(problems.size()) + " problems")
                  << "\n";
    }
    return problems.empty() ? 0 : 1;
}

int guarded_build(const std::vector<std::string>& args) {
    return guarded("build-book", run_build, args);
}
int guarded_verify(const std::vector<std::string>& args) {
    return guarded("verify-book", run_verify, args);
}

const RegisterCommand reg_build({"build-book",
                                 "build an opening book: every position near the start, valued",
                                 guarded_build});
const RegisterCommand reg_verify({"verify-book", "re-prove an opening book's values",
                                  guarded_verify});

}  // namespace
}  // namespace kalah::cli
