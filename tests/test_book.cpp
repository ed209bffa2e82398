// Opening books (solver/book.h, solver/known.h): enumeration against a plain breadth-first
// twin, values against brute force, the text format's checks, a solver with a book
// answering as one without, and the books built into the program.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "brute_force.h"
#include "cli_runner.h"
#include "core/notation.h"
#include "db/database.h"
#include "solver/book.h"
#include "solver/known.h"
#include "solver/solver.h"
#include "temp_dir.h"

using namespace kalah;
using test_files::TempDir;

namespace {

// The book of (m, n, rule, plies) valued by solver s.
Book build_book(Solver& s, int m, int n, Rule rule, int plies) {
    return Book::build(m, n, rule, plies, [&](const Board& b) { return s.value(b); });
}

SolverOptions small_options() {
    SolverOptions o;
    o.tt_mb = 16;
    o.threads = 1;
    return o;
}

// South's final margin of b under perfect play, by brute force.
int brute_value(BruteForce& bf, const Board& b) {
    const int pits = bf.pits_value(ref::from_board(b));
    const int mover = b.own_store() - b.opp_store() + pits;
    return b.to_move() == Side::South ? mover : -mover;
}

// The slow twin of Book::positions: every distinct position (by its text) within `plies`
// sowings of the start, games in play only.
std::set<std::string> positions_twin(int m, int n, Rule rule, int plies) {
    std::set<std::string> seen{format_position(Board::start(m, n))};
    std::vector<Board> level{Board::start(m, n)};
    for (int ply = 0; ply < plies; ++ply) {
        std::vector<Board> next;
        for (const Board& b : level)
            for (int p = 0; p < m; ++p) {
                if (b.own_pit(p) == 0) continue;
                Board c = b;
                c.play(p, rule);
                if (!c.over() && seen.insert(format_position(c)).second) next.push_back(c);
            }
        level = std::move(next);
    }
    return seen;
}

// Replaces the value of the entry on `line` (1-based, counted in the text) by `value`.
std::string with_value(const std::string& text, int line, int value) {
    std::istringstream in(text);
    std::string out, l;
    for (int i = 1; std::getline(in, l); ++i) {
        if (i == line) l = l.substr(0, l.find(' ')) + " " + std::to_string(value);
        out += l + "\n";
    }
    return out;
}

std::string parse_error(const std::string& text) {
    try {
        Book::parse(text, "b.book");
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

// South's final margin of b from a pits value in b's mover's view (stores added).
int south_margin(const Board& b, int pits_value) {
    const int mover = b.own_store() - b.opp_store() + pits_value;
    return b.to_move() == Side::South ? mover : -mover;
}

// South's final margin of b as `book` values it (b or, for a finished game, the sweep).
int book_margin(const Book& book, const Board& b) {
    if (b.over()) return south_margin(b, b.seeds_in_row_own() - b.seeds_in_row_opp());
    const std::optional<int> v = book.pits_value(b);
    REQUIRE(v.has_value());
    return south_margin(b, *v);
}

}  // namespace

TEST_SUITE("book") {
    TEST_CASE("positions: every position within P plies once, as a plain breadth-first walk") {
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture})
            for (auto [m, n, plies] : {std::tuple{3, 3, 4}, {4, 3, 3}, {6, 4, 2}, {5, 2, 5}}) {
                CAPTURE(m);
                CAPTURE(n);
                CAPTURE(plies);
                const std::vector<Board> got = Book::positions(m, n, rule, plies);
                std::set<std::string> texts;
                for (const Board& b : got) texts.insert(format_position(b));
                CHECK(texts.size() == got.size());  // each once
                CHECK(texts == positions_twin(m, n, rule, plies));
                CHECK(got.front() == Board::start(m, n));
            }
    }

    TEST_CASE("build: every value is brute force's; format and parse give the same book") {
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture})
            for (auto [m, n, plies] : {std::tuple{3, 3, 5}, {4, 2, 4}, {3, 4, 3}}) {
                CAPTURE(m);
                CAPTURE(n);
                Solver s(m, rule, small_options());
                const Book book = build_book(s, m, n, rule, plies);
                BruteForce bf(m, rule);
                REQUIRE(book.size() > 1);
                for (const Book::Entry& e : book.entries()) {
                    CAPTURE(format_position(e.board));
                    CHECK(e.value == brute_value(bf, e.board));
                }
                CHECK(book.inconsistencies().empty());
                const Book again = Book::parse(book.format(), "again");
                REQUIRE(again.size() == book.size());
                for (size_t i = 0; i < book.size(); ++i) {
                    CHECK(again.entries()[i].board == book.entries()[i].board);
                    CHECK(again.entries()[i].value == book.entries()[i].value);
                }
                CHECK(again.format() == book.format());
            }
    }

    TEST_CASE("a solver with a book answers as one without, and without a search") {
        const int m = 4, n = 3;
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            Solver plain(m, rule, small_options());
            const Book book = build_book(plain, m, n, rule, 3);
            SolverOptions o = small_options();
            o.book = &book;
            Solver with(m, rule, o);
            for (const Book::Entry& e : book.entries()) {
                CAPTURE(format_position(e.board));
                Solver fresh(m, rule, small_options());
                const uint64_t n0 = with.stats().nodes;
                CHECK(with.value(e.board) == fresh.value(e.board));
                CHECK(with.pits_value(e.board) == fresh.pits_value(e.board));
                CHECK(with.stats().nodes == n0);  // the book answered
                const auto a = with.move_values(e.board), b = fresh.move_values(e.board);
                REQUIRE(a.size() == b.size());
                for (size_t i = 0; i < a.size(); ++i) {
                    CHECK(a[i].pit == b[i].pit);
                    CHECK(a[i].value == b[i].value);
                    CHECK(a[i].text == b[i].text);
                }
                // A test of the exact value answers both ways.
                const int pv = fresh.pits_value(e.board);
                CHECK(with.test(e.board, pv) >= pv);
                CHECK(with.test(e.board, pv + 2) < pv + 2);
                // The principal variation keeps the value move by move.
                const std::vector<PlayedMove> line = with.principal_variation(e.board);
                Board end = e.board;
                for (const PlayedMove& mv : line) end.play(mv.pit, rule);
                CHECK(end.over());
                CHECK(end.store(Side::South) - end.store(Side::North) == e.value);
            }
            // Positions outside the book are searched as before: the same values and nodes.
            int outside = 0;
            for (const Board& far : Book::positions(m, n, rule, 5)) {
                if (book.pits_value(far) || ++outside > 20) continue;
                Solver a(m, rule, small_options());
                SolverOptions ob = small_options();
                ob.book = &book;
                Solver b(m, rule, ob);
                CHECK(a.value(far) == b.value(far));
                CHECK(a.stats().nodes == b.stats().nodes);
            }
            CHECK(outside > 20);
        }
    }

    TEST_CASE("inconsistencies: a parent whose value is not its best move's is named") {
        Solver s(3, Rule::Standard, small_options());
        const Book book = build_book(s, 3, 3, Rule::Standard, 4);
        const std::string text = book.format();
        // The start (the first entry, line 4 of the text) and the entry of one of its moves:
        // each forged by 2 seeds is caught, the start by itself, the move through its parent.
        for (int line : {4, 5}) {
            CAPTURE(line);
            const Book::Entry& e = book.entries()[size_t(line - 4)];
            const Book forged = Book::parse(with_value(text, line, e.value + 2), "forged");
            const auto bad = forged.inconsistencies();
            REQUIRE(!bad.empty());
            CHECK(bad.front().find(format_position(book.entries()[0].board)) != std::string::npos);
        }
    }

    TEST_CASE("parse: each defect is one line naming the file, the line and the problem") {
        const std::string head = "kalah-book 1 pits 3 seeds 1 rule standard plies 1 entries 2\n";
        const std::string start = "1,1,1/1,1,1/0,0/A";
        Solver s(3, Rule::Standard, small_options());
        const Book good = build_book(s, 3, 1, Rule::Standard, 1);
        REQUIRE(good.size() == 4);
        const std::string e0 = format_position(good.entries()[0].board) + " " +
                               std::to_string(good.entries()[0].value) + "\n";
        const std::string e1 = format_position(good.entries()[1].board) + " " +
                               std::to_string(good.entries()[1].value) + "\n";
        CHECK(parse_error("# only a comment\n" + head + e0 + e1) == "");
        CHECK(parse_error("") == "b.book: empty (no kalah-book header)");
        CHECK(parse_error("kalah-book 2 pits 3 seeds 1 rule standard plies 1 entries 2\n")
                  .find("b.book:1: book format version '2'") == 0);
        CHECK(parse_error("hello\n").find("b.book:1: not a kalah book") == 0);
        CHECK(parse_error("kalah-book 1 pits 7 seeds 1 rule standard plies 1 entries 2\n")
                  .find("b.book:1: no such board") == 0);
        CHECK(parse_error("kalah-book 1 pits 3 seeds 1 rule nope plies 1 entries 2\n") != "");
        CHECK(parse_error(head + e0).find("b.book: 1 entries, the header says 2") == 0);
        CHECK(parse_error(head + e0 + e1 + e1).find("b.book:4: more entries") == 0);
        CHECK(parse_error(head + e0 + e0).find("b.book:3: the position's pits") == 0);
        CHECK(parse_error(head + e0 + "2,2,2/2,2,2/0,0/A 0\n")
                  .find("b.book:3: a position of 12 seeds") == 0);
        CHECK(parse_error(head + e0 + "1,1/1,1/1,1/A 0\n").find("b.book:3: a position of 2 pits") ==
              0);
        CHECK(parse_error(head + e0 + start + " 1\n").find("b.book:3: value '1'") == 0);
        CHECK(parse_error(head + e0 + start + " 8\n").find("b.book:3: value '8'") == 0);
        CHECK(parse_error(head + e0 + start + " x\n").find("b.book:3: value 'x'") == 0);
        CHECK(parse_error(head + e0 + start + "\n").find("b.book:3: expected 'POSITION VALUE'") ==
              0);
        CHECK(parse_error(head + e0 + "0,0,0/1,1,1/3,0/A 0\n").find("b.book:3: a finished game") ==
              0);
        CHECK(parse_error(head + e0 + "1,1,1/1,1/0,0/A 0\n").find("b.book:3: ") == 0);
        // The file: read as a regular file only.
        TempDir dir("book");
        const std::string path = (dir.path / "b.book").string();
        { std::ofstream(path) << good.format(); }
        CHECK(Book::read(path).size() == good.size());
        CHECK_THROWS_AS(Book::read(dir.path.string()), InputError);
        CHECK_THROWS_AS(Book::read(path + ".none"), InputError);
    }

    TEST_CASE("kalah build-book and verify-book: a book re-proved; a forged value fails") {
        TempDir dir("book_cli");
        const std::string path = (dir.path / "b.book").string();
        CliResult r = run_kalah(
            "build-book --pits 4 --seeds 2 --plies 3 --db /nonexistent -q "
            "--threads 1 --tt-mb 16 --out " +
            path);
        REQUIRE(r.status == 0);
        r = run_kalah("verify-book --book " + path +
                      " --db /nonexistent -q --threads 1 --tt-mb 16");
        CHECK(r.status == 0);
        // A leaf (the last entry, at the third ply) forged: the re-proof catches it.
        const std::string text = slurp_file(path);
        const Book book = Book::parse(text, path);
        const int lines = int(std::count(text.begin(), text.end(), '\n'));
        { std::ofstream(path) << with_value(text, lines, book.entries().back().value + 2); }
        r = run_kalah("verify-book --book " + path +
                      " --db /nonexistent -q --threads 1 --tt-mb 16");
        CHECK(r.status == 1);
        CHECK(r.err.find("the search proves " + std::to_string(book.entries().back().value)) !=
              std::string::npos);
        r = run_kalah("verify-book --book " + dir.path.string() + " --db /nonexistent -q");
        CHECK(r.status == 2);
        CHECK(r.err.find("kalah verify-book: book ") == 0);
        r = run_kalah("build-book --pits 4 --seeds 2 --plies 9 --out " + path);
        CHECK(r.status == 2);
    }

    TEST_CASE("known_answer: a book's and a database's positions, the solver's values, sourced") {
        const int m = 4, n = 3;
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            CAPTURE(rule_name(rule));
            Solver plain(m, rule, small_options());
            const Book book = build_book(plain, m, n, rule, 3);
            SolverOptions ob = small_options();
            ob.book = &book;
            const Solver with(m, rule, ob);
            int whole = 0, value_only = 0;
            for (const Book::Entry& e : book.entries()) {
                CAPTURE(format_position(e.board));
                Solver fresh(m, rule, small_options());
                const std::optional<KnownValue> v = known_value(e.board, rule, &book, nullptr);
                REQUIRE(v.has_value());
                CHECK(v->value == fresh.value(e.board));
                CHECK(v->source == AnswerSource::Book);
                // Known whole when the book holds every move's position too (or it ends the
                // game): the entries of the last ply's parents.
                bool all = true;
                for (int p : e.board.legal_moves()) {
                    Board c = e.board;
                    c.play(p, rule);
                    all = all && (c.over() || book.pits_value(c).has_value());
                }
                const std::optional<KnownAnswer> a = known_answer(e.board, rule, &book, nullptr);
                REQUIRE(a.has_value() == all);
                if (!a) {
                    ++value_only;
                    continue;
                }
                ++whole;
                CHECK(a->value == v->value);
                CHECK(a->source == AnswerSource::Book);
                const std::vector<MoveValue> mv = fresh.move_values(e.board);
                REQUIRE(a->moves.size() == mv.size());
                for (size_t i = 0; i < mv.size(); ++i) {
                    CHECK(a->moves[i].pit == mv[i].pit);
                    CHECK(a->moves[i].value == mv[i].value);
                    CHECK(a->moves[i].text == mv[i].text);
                }
                // A solver with the book knows the same, through the same lookup.
                const std::optional<KnownAnswer> s = with.known(e.board);
                REQUIRE(s.has_value());
                CHECK(s->value == a->value);
                CHECK(s->source == AnswerSource::Book);
            }
            CHECK(whole > 0);
            CHECK(value_only > 0);
            // Past the book, without a database, nothing is known.
            int outside = 0;
            for (const Board& far : Book::positions(m, n, rule, 5)) {
                if (book.pits_value(far)) continue;
                ++outside;
                CHECK_FALSE(known_value(far, rule, &book, nullptr).has_value());
                CHECK_FALSE(with.known(far).has_value());
            }
            CHECK(outside > 0);
            // A database's positions (random games down to its top layer): source database,
            // the values of a search without it.
            const auto db = db::Database::build_in_memory(m, rule, 8);
            std::mt19937 rng(7);
            int from_db = 0;
            for (int game = 0; game < 30; ++game) {
                Board b = Board::start(m, n);
                while (!b.over() && b.seeds_in_pits() > 8) {
                    const MoveList moves = b.legal_moves();
                    b.play(moves.pit[rng() % moves.size], rule);
                }
                CAPTURE(format_position(b));
                const std::optional<KnownAnswer> a = known_answer(b, rule, nullptr, db.get());
                REQUIRE(a.has_value());
                CHECK(a->source == AnswerSource::Database);  // a finished game's too
                Solver fresh(m, rule, small_options());
                CHECK(a->value == fresh.value(b));
                const std::vector<MoveValue> mv = fresh.move_values(b);
                REQUIRE(a->moves.size() == mv.size());
                for (size_t i = 0; i < mv.size(); ++i) CHECK(a->moves[i].value == mv[i].value);
                if (!b.over()) ++from_db;
            }
            CHECK(from_db > 10);
        }
    }

    TEST_CASE("query, solve, play: Kalah(6,4)'s first plies from the built-in book, sourced") {
        const std::string no_db = " --db /nonexistent --memory-db off --quiet";
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            const std::string r = rule_name(rule);
            CAPTURE(r);
            // The book's text as the repository holds it (the binary embeds this file).
            const Book data =
                Book::read(std::string(KALAH_SOURCE_DIR) + "/data/book/kalah-6-4-" + r + ".book");
            for (const std::string moves : {"", "A1 B2", "A3 A6 B1"}) {
                CAPTURE(moves);
                Board b = Board::start(6, 4);
                std::string args = "query --pits 6 --seeds 4 --rule " + r + no_db;
                if (!moves.empty()) {
                    replay(b, moves, rule);
                    args += " --moves \"" + moves + "\"";
                }
                const auto q = run_kalah(args + " --json");
                REQUIRE(q.status == 0);
                const auto j = nlohmann::json::parse(q.out);
                CHECK(j["source"] == "book");
                CHECK(j["nodes"] == 0);
                CHECK(j["value"] == book_margin(data, b));
                REQUIRE(j["moves"].size() == size_t(b.legal_moves().size));
                size_t i = 0;
                for (int p : b.legal_moves()) {
                    Board c = b;
                    c.play(p, rule);
                    CHECK(j["moves"][i++]["value"] == book_margin(data, c));
                }
                const auto text = run_kalah(args);
                CHECK(text.status == 0);
                CHECK(text.out.find("; from the opening book\n") != std::string::npos);
            }
            // The start's value as published (results/table.csv): +8 standard, +10 empty-capture.
            CHECK(book_margin(data, Board::start(6, 4)) == (rule == Rule::Standard ? 8 : 10));
            // --no-book searches: Kalah(6,4) is not valued within 0.2 s (exit 3).
            CHECK(
                run_kalah("query --pits 6 --seeds 4 --no-book --time-limit 0.2 --rule " + r + no_db)
                    .status == 3);
            // solve: the value from the book at once, printed before the principal
            // variation's search; stopped in it, the value stays (exit 3); --json prints
            // nothing then, as any stopped search.
            const std::string value_line = std::string("value: ") +
                                           (rule == Rule::Standard ? "+8" : "+10") +
                                           " (W for South; from the opening book)\n";
            const std::string solve =
                "solve --pits 6 --seeds 4 --time-limit 0.3 --rule " + r + no_db;
            const auto s = run_kalah(solve);
            CHECK(s.status == 3);
            CHECK(s.out.find(value_line) != std::string::npos);
            CHECK(s.err.find("the value above is proven") != std::string::npos);
            CHECK(s.err.find("no value is known") == std::string::npos);
            const auto sj = run_kalah(solve + " --json");
            CHECK(sj.status == 3);
            CHECK(sj.out.empty());
            // play: the engine's first turn and the hint after it, from the book.
            const auto game = run_kalah(
                "play --pits 6 --seeds 4 --side B --level perfect --seed 3 "
                "--rule " +
                    r + " --db /nonexistent --memory-db off",
                "hint\nquit\n");
            CHECK(game.status == 0);
            CHECK(game.out.find("(values from the opening book)") != std::string::npos);
            CHECK(game.out.find("; from the opening book)\n") != std::string::npos);
        }
        // A board without a book is searched, and says so.
        const auto q = run_kalah("query --pits 4 --seeds 3 --json" + no_db);
        REQUIRE(q.status == 0);
        const auto j = nlohmann::json::parse(q.out);
        CHECK(j["source"] == "search");
        CHECK(j["value"] == 6);
        CHECK(j["nodes"] > 0);
        const auto s = run_kalah("solve --pits 4 --seeds 3 --json" + no_db);
        REQUIRE(s.status == 0);
        CHECK(nlohmann::json::parse(s.out)["source"] == "search");
    }

    TEST_CASE(
        "the built-in books: each parses, every parent is its best move, starts as published") {
        REQUIRE(builtin_books().size() == kBookCount);
        // Published start values (results/table.csv, the reference-checked value table).
        std::map<std::tuple<int, int, std::string>, int> table;
        {
            std::istringstream csv(
                slurp_file(std::string(KALAH_SOURCE_DIR) + "/results/table.csv"));
            std::string line;
            std::getline(csv, line);  // header
            while (std::getline(csv, line)) {
                std::vector<std::string> f;
                std::istringstream ls(line);
                for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
                if (f.size() > 3 && !f[3].empty())
                    table[{std::stoi(f[0]), std::stoi(f[1]), f[2]}] = std::stoi(f[3]);
            }
        }
        for (const Book& b : builtin_books()) {
            const Book::Header& h = b.header();
            CAPTURE(h.pits);
            CAPTURE(h.seeds);
            CHECK(b.inconsistencies().empty());
            // Every position within its plies is answered.
            for (const Board& p : Book::positions(h.pits, h.seeds, h.rule, h.plies))
                CHECK(b.pits_value(p).has_value());
            REQUIRE(b.entries().front().board == Board::start(h.pits, h.seeds));
            const auto it = table.find({h.pits, h.seeds, rule_name(h.rule)});
            REQUIRE(it != table.end());
            CHECK(b.entries().front().value == it->second);
            CHECK(builtin_book(h.pits, h.seeds, h.rule) == &b);
            CHECK(builtin_book_for(b.entries().back().board, h.rule) == &b);
        }
    }
}
