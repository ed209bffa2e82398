// kalah-ablate: one search by the experiments build's solver (kalah_solver_experiments,
// solver/search_experiments.h) with search features switched off, printed as one JSON line:
// what results/solver.md and results/parallel.md measured with `kalah solve --ablate`
// before the switches left the product. Every combination is exact: the value is the
// product's, the nodes and seconds are what the feature is worth.
//
//   build/kalah-ablate --pits 5 --seeds 4 --rule empty-capture --ablate etc
//   {"ablate":["etc"],"nodes":4570320,"position":"...","rule":"empty-capture",
//    "seconds":1.82,"threads":1,"value":12, ...}
#include <boost/program_options.hpp>
#include <chrono>
#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/notation.h"
#include "db/database.h"
#include "db/open.h"
#include "solver/question.h"
#include "solver/solver.h"

namespace po = boost::program_options;
using namespace kalah;

namespace {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

int run(int argc, char** argv) {
    po::options_description opts("kalah-ablate options");
    // clang-format off
    opts.add_options()
        ("pits", po::value<int>(), "pits a side (with --seeds: the start position)")
        ("seeds", po::value<int>(), "seeds a pit at the start")
        ("position", po::value<std::string>(), "a position instead (notation of rules.md)")
        ("rule", po::value<std::string>()->default_value("standard"), "standard or empty-capture")
        ("threads", po::value<int>()->default_value(1), "search threads")
        ("tt-mb", po::value<size_t>()->default_value(1024), "transposition table budget, MiB")
        ("db", po::value<std::string>(), "endgame database directory (kalah build-db); none: no database")
        ("db-memory-gb", po::value<double>()->default_value(8), "memory for the database, GiB")
        ("memory-db", po::value<int>(),
         "without --db: build layers 0..K in memory first (what `kalah solve` does for large "
         "searches: it names its K on stderr); excluded from the seconds")
        ("prove", po::value<std::string>(), "settle a question (win, loss, >=+4, ...) with one test")
        ("guess", po::value<int>(), "first MTD(f) guess (pits value, mover's view)")
        ("ablate", po::value<std::string>()->default_value(""),
         "features switched off, comma-separated: tt-move, ordering, etc; parallel: defer "
         "(plain lazy SMP), follow, root-defer, cut-move, cut-join, plain (a team of one)")
        ("help,h", "show this help");
    // clang-format on
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, opts), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        throw UsageError(e.what());
    }
    if (vm.count("help")) {
        std::cout << "usage: kalah-ablate (--pits M --seeds N | --position P) [--ablate LIST] "
                     "[options]\n\n"
                  << opts;
        return 0;
    }

    const Rule rule = parse_rule(vm["rule"].as<std::string>());
    Board start;
    if (vm.count("position")) {
        start = parse_position(vm["position"].as<std::string>());
    } else {
        if (!vm.count("pits") || !vm.count("seeds"))
            throw UsageError("give --pits and --seeds, or --position");
        const int m = vm["pits"].as<int>(), n = vm["seeds"].as<int>();
        if (m < 1 || m > kMaxPits || n < 1 || n > 10)
            throw UsageError("--pits must be 1.." + std::to_string(kMaxPits) +
                             " and --seeds 1..10");
        start = Board::start(m, n);
    }
    const int m = start.pits();

    SolverOptions o;
    o.tt_mb = vm["tt-mb"].as<size_t>();
    o.threads = vm["threads"].as<int>();
    if (o.threads < 1 || o.tt_mb < 1) throw UsageError("--threads and --tt-mb must be positive");
    if (vm.count("guess")) o.guess = vm["guess"].as<int>();
    std::vector<std::string> off;
    std::stringstream list(vm["ablate"].as<std::string>());
    for (std::string f; std::getline(list, f, ',');) {
        if (f.empty()) continue;
        if (!switch_off(o.experiments, f))
            throw UsageError("--ablate: unknown feature '" + f + "'");
        off.push_back(f);
    }
    std::optional<Question> question;
    if (vm.count("prove")) {
        question = parse_question(vm["prove"].as<std::string>());
        if (!question)
            throw UsageError("--prove: not a question: " + vm["prove"].as<std::string>());
    }

    std::unique_ptr<db::Database> db;
    if (vm.count("db")) {
        db::OpenRequest r;
        r.dir = vm["db"].as<std::string>();
        r.m = m;
        r.rule = rule;
        r.memory_bytes = size_t(vm["db-memory-gb"].as<double>() * double(1ull << 30));
        db::Opened opened = db::open_checked(r);
        if (!opened.db) throw UsageError("--db " + r.dir + ": " + opened.why_none);
        if (!opened.warning.empty()) std::cerr << "kalah-ablate: " << opened.warning << "\n";
        db = std::move(opened.db);
    } else if (vm.count("memory-db")) {
        db = db::Database::build_in_memory(m, rule, vm["memory-db"].as<int>());
    }
    o.db = db.get();

    Solver solver(m, rule, o);
    nlohmann::json j = {{"position", format_position(start)},
                        {"rule", rule_name(rule)},
                        {"threads", o.threads},
                        {"tt_mb", o.tt_mb},
                        {"db_max_seeds", db ? db->max_seeds() : -1},
                        {"ablate", off}};
    // Seconds as `kalah solve` counts them: the search alone (database load excluded).
    const auto t0 = std::chrono::steady_clock::now();
    if (question) {
        const BoundAnswer a = settle(solver, start, rule, *question, false);
        j["prove"] = question->text();
        j["proved"] = a.proved;
        j["lower"] = a.lower;
        j["upper"] = a.upper;
    } else {
        j["value"] = solver.value(start);
    }
    j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    j["nodes"] = solver.stats().nodes;
    j["cpu_seconds"] = solver.stats().cpu_seconds;
    std::cout << j.dump() << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const UsageError& e) {
        std::cerr << "kalah-ablate: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "kalah-ablate: " << e.what() << "\n";
        return 1;
    }
}
