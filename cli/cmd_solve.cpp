// `kalah solve` and `kalah query`: exact values, best moves and principal variations.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "analysis/json.h"
#include "analysis/reports.h"
#include "analysis/text.h"
#include "cli/command.h"
#include "db/database.h"
#include "solver/known.h"
#include "solver/question.h"
#include "solver/solver.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace {
namespace po = boost::program_options;

// The solver's figures of a search command; its JSON adds the database's top layer.
SearchFigures solver_figures(const Solver& solver, const SolverOptions& o, double secs) {
    return {solver.stats().nodes,
            secs,
            o.threads,
            solver.stats().cpu_seconds,
            double(solver.stats().tt_bytes) / (1 << 20),
            o.tt_mb};
}
void add_solver_figures(Json& j, const SearchFigures& f, const db::Database* db) {
    add_search_figures(j, f);
    j["db_seeds"] = db ? db->max_seeds() : -1;
}
// The figures' text lines after a result.
std::string solver_figures_text(const SearchFigures& f) {
    std::ostringstream out;
    out << search_figures_text(f) << "\n"
        << "threads: " << f.threads << ", cpu seconds: " << f.cpu_seconds
        << " (nodes summed over threads)\n"
        << "transposition table: " << f.tt_mib << " MiB of " << f.tt_budget_mib << " MiB\n";
    return out.str();
}

// `solve --prove Q` and `query --prove Q`: one null-window test settles Q instead of the
// exact value, at the start of Kalah(m,n) (is_start: the report names the game) or at any
// position (the report names the position).
int report_bound(const po::variables_map& vm, Solver& solver, const SolverOptions& o,
                 const db::Database* db, const Board& start, Rule rule, const Question& q,
                 bool is_start) {
    const int m = start.pits(), n = start.own_pit(0);
    const auto t0 = std::chrono::steady_clock::now();
    const BoundAnswer a = settle(solver, start, rule, q);
    const SearchFigures f = solver_figures(
        solver, o, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    end_progress_line();
    if (vm.count("json")) {
        // "seeds" names the game Kalah(m,n): only at its start.
        Json j = is_start ? Json{{"pits", m}, {"seeds", n}} : Json{{"pits", m}};
        j.update(Json{{"position", format_position(start)},
                      {"rule", rule_name(rule)},
                      {"bound", q.text()},
                      {"question", q.name().empty() ? "v " + q.text() : q.name()},
                      {"proved", a.proved},
                      {"lower", a.lower},
                      {"upper", a.upper},
                      {"move", a.move >= 0 ? Json(a.move_text) : Json(nullptr)},
                      {"move_keeps", a.move >= 0 ? Json(a.kept.text()) : Json(nullptr)}});
        add_solver_figures(j, f, db);
        std::cout << json_line(j);
        return 0;
    }
    if (is_start)
        std::cout << "Kalah(" << m << "," << n << "), rule " << rule_name(rule) << "\n";
    else
        std::cout << "position: " << format_position(start) << " (" << rule_name(rule) << ")\n";
    std::cout << "question: " << question_text(q) << "\n"
              << "answer: " << (a.proved ? "proved" : "refuted") << "; proven: v in ["
              << signed_value(a.lower) << ", " << signed_value(a.upper) << "]\n";
    if (a.move >= 0)
        std::cout << "a first move keeping v " << a.kept.text() << ": " << a.move_text << "\n";
    std::cout << solver_figures_text(f);
    return 0;
}

int run_solve(const std::vector<std::string>& args) {
    po::options_description opts("solve options");
    po::options_description expert("expert options");
    add_start_options(opts);
    add_solver_options(opts, expert);
    add_output_options(opts);
    add_book_option(opts);
    add_time_limit_option(opts);
    add_question_option(opts);
    add_guess_option(expert, "first MTD(f) guess (South's margin)");
    po::variables_map vm;
    if (!parse_options("solve", "--pits M --seeds N [--rule R] [options]", opts, args, vm, &expert,
                       true))
        return 0;
    const Rule rule = parse_rule(vm["rule"].as<std::string>());
    const int m = vm["pits"].as<int>(), n = vm["seeds"].as<int>();
    const Board start = checked_start(m, n);
    const std::optional<Question> question = question_option(vm);
    const int guess = guess_option(vm, m, n, 0);  // checked before anything is opened
    std::unique_ptr<db::Database> db;
    SolverOptions o = solver_options(vm, "solve", m, rule, start.seeds_in_pits(), db, true);
    if (vm.count("guess")) o.guess = guess;
    o.time_limit_seconds = time_limit_option(vm);
    o.book = book_option(vm, start, rule);
    Solver solver(m, rule, o);
    if (question) return report_bound(vm, solver, o, db.get(), start, rule, *question, true);
    const auto t0 = std::chrono::steady_clock::now();
    // The value as known without a search (solver/known.h), else searched: the figures are
    // the value's; the principal variation after it searches what the book and database
    // do not hold.
    const std::optional<KnownValue> known = solver.known_value(start);
    const int value = known ? known->value : solver.value(start);
    const SearchFigures f = solver_figures(
        solver, o, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    PvReport rep;
    rep.start = start;
    rep.rule = rule;
    rep.value = value;
    rep.source = known ? known->source : AnswerSource::Search;
    // The text's value first: a known one is printed at once, before the principal
    // variation's search (minutes past Kalah(6,4)'s book without a database).
    const bool json = vm.count("json") > 0;
    if (!json) {
        end_progress_line();
        std::cout << "Kalah(" << m << "," << n << "), rule " << rule_name(rule) << "\n"
                  << "value: " << signed_value(value) << " (" << result_letter(value)
                  << " for South; " << source_text(rep.source) << ")\n"
                  << std::flush;
    }
    try {
        rep.pv = solver.principal_variation(start);
    } catch (const SearchStopped& e) {
        if (json) throw;  // no object: exit 3, no value (cli/command.cpp)
        end_progress_line();
        std::cerr << "kalah solve: the principal variation was not finished within --time-limit ("
                  << e.what() << "); the value above is proven\n";
        return kExitStopped;
    }
    const PvText t = pv_text(start, rep.pv, rule);
    const int sa = final_store(t.end, Side::South), sb = final_store(t.end, Side::North);
    end_progress_line();
    if (json) {
        Json j = {{"pits", m}, {"seeds", n}};
        j.update(pv_fields(rep));
        add_solver_figures(j, f, db.get());
        std::cout << json_line(j);
        return 0;
    }
    std::cout << "best first turn: " << t.best_turn << "\n"
              << "pv: " << t.line << "\n"
              << "final score: " << sa << "-" << sb << "\n"
              << solver_figures_text(f);
    return 0;
}

int run_query(const std::vector<std::string>& args) {
    po::options_description opts("query options");
    po::options_description expert("expert options");
    add_game_options(opts);
    add_solver_options(opts, expert);
    add_output_options(opts);
    add_book_option(opts);
    add_time_limit_option(opts);
    add_question_option(opts, "v is South's final margin from this position, stores included");
    po::variables_map vm;
    if (!parse_options("query",
                       "(--position P | --pits M --seeds N [--moves \"...\"]) [--rule R] [options]",
                       opts, args, vm, &expert, true))
        return 0;
    Rule rule;
    Board b = game_from_options(vm, rule);
    const std::optional<Question> question = question_option(vm);
    const Book* book = book_option(vm, b, rule);
    // Answered by the book: no layers built in memory for a search that will not run (a
    // database on disk is still opened, and checked as always).
    const std::optional<KnownAnswer> k = known_answer(b, rule, book, nullptr);
    const bool booked = !question && k && k->source == AnswerSource::Book;
    std::unique_ptr<db::Database> db;
    SolverOptions o =
        solver_options(vm, "query", b.pits(), rule, b.seeds_in_pits(), db, false, booked);
    o.time_limit_seconds = time_limit_option(vm);
    o.book = book;
    Solver solver(b.pits(), rule, o);
    if (question) return report_bound(vm, solver, o, db.get(), b, rule, *question, false);
    const QueryReport rep = query_report(solver, b, rule);
    end_progress_line();
    if (vm.count("json")) {
        std::cout << query_json(rep);
        return 0;
    }
    const int value = rep.value;
    const auto& moves = rep.moves;
    auto is_best = [&](int v) { return v == value; };
    const char* to_move = b.to_move() == Side::South ? "A" : "B";
    std::cout << "position: " << format_position(b) << " (" << rule_name(rule) << ")\n"
              << draw_board(b);
    if (b.over()) {
        std::cout << "game over, final score " << final_store(b, Side::South) << "-"
                  << final_store(b, Side::North) << ": value " << value << "\n";
        return 0;
    }
    std::cout << "value: " << signed_value(value) << " (South's final margin), " << to_move
              << " to move; " << source_text(rep.source) << "\n";
    for (const auto& mv : moves)
        std::cout << "  " << mv.text
                  << std::string(mv.text.size() < 8 ? 8 - mv.text.size() : 1, ' ')
                  << signed_value(mv.value) << (is_best(mv.value) ? "  best" : "") << "\n";
    return 0;
}

int guarded_solve(const std::vector<std::string>& args) {
    return guarded("solve", run_solve, args);
}
int guarded_query(const std::vector<std::string>& args) {
    return guarded("query", run_query, args);
}
const RegisterCommand reg_solve({"solve", "solve Kalah(m,n) exactly: value, best turn, PV",
                                 guarded_solve});
const RegisterCommand reg_query({"query", "exact value of a position and of each legal move",
                                 guarded_query});

}  // namespace
}  // namespace kalah::cli
