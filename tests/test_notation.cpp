// Notation: position and move text round trips, game records, the 2000 paper's perfect games.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "core/board.h"
#include "core/notation.h"
#include "reference_engine.h"

namespace {

using kalah::Board;
using kalah::InputError;
using kalah::MoveResult;
using kalah::Rule;
using kalah::Side;

// Random position text with at most kMaxSeeds seeds, built by hand (not by the formatter).
std::string random_position_text(std::mt19937_64& rng, int m) {
    int budget = kalah::kMaxSeeds;
    auto take = [&](int hi) {
        int v = static_cast<int>(rng() % (hi + 1));
        if (v > budget) v = budget;
        budget -= v;
        return v;
    };
    std::string s;
    for (int row = 0; row < 2; ++row) {
        for (int i = 0; i < m; ++i) {
            if (i) s += ',';
            s += std::to_string(take(rng() % 4 ? 6 : 40));
        }
        s += "/";
    }
    int sa = take(30);
    int sb = take(30);
    if (budget == kalah::kMaxSeeds) sa = 1;  // at least one seed
    s += std::to_string(sa) + "," + std::to_string(sb) + "/" + (rng() & 1 ? "A" : "B");
    return s;
}

// Appends a word to a space-separated record.
void add_word(std::string& record, const std::string& word) {
    if (!record.empty()) record += ' ';
    record += word;
}

// One game of the paper's notation replayed: the Board, and the record in our notation.
struct PaperGame {
    Board board;
    std::string record;  // e.g. "A3+ A6 B2+ B1 ..."
    std::string error;   // non-empty when the line does not fit the turn structure
};

// The paper writes pits from 0 (the mover's farthest pit, i.e. A1 or B1), the moves of
// one turn together, and '-' between turns. Every move but the last of a turn must earn
// an extra move, the last must not, and the line must end the game.
PaperGame replay_paper_line(int m, int n, const std::string& line, Rule rule) {
    PaperGame g{Board::start(m, n), "", ""};
    std::vector<std::string> turns(1);
    for (char c : line) {
        if (c == '-')
            turns.emplace_back();
        else
            turns.back() += c;
    }
    for (size_t t = 0; t < turns.size(); ++t) {
        if (turns[t].empty()) {
            g.error = "empty turn " + std::to_string(t);
            return g;
        }
        for (size_t j = 0; j < turns[t].size(); ++j) {
            int pit = turns[t][j] - '0';
            if (pit < 0 || pit >= m || g.board.over() || g.board.own_pit(pit) == 0) {
                g.error = "illegal move in turn " + std::to_string(t);
                return g;
            }
            Side side = g.board.to_move();
            MoveResult r = g.board.play(pit, rule);
            add_word(g.record, kalah::format_move(side, pit, r));
            bool last_of_turn = j + 1 == turns[t].size();
            if (r.extra == last_of_turn) {
                g.error = "turn structure broken at turn " + std::to_string(t);
                return g;
            }
        }
    }
    if (!g.board.over()) g.error = "line does not end the game";
    return g;
}

}  // namespace

TEST_SUITE("notation") {
    TEST_CASE("start position text") {
        CHECK(kalah::format_position(Board::start(6, 4)) == "4,4,4,4,4,4/4,4,4,4,4,4/0,0/A");
        CHECK(kalah::parse_position("4,4,4,4,4,4/4,4,4,4,4,4/0,0/A") == Board::start(6, 4));
        CHECK(kalah::format_position(Board::start(1, 1)) == "1/1/0,0/A");
    }

    TEST_CASE("position text <-> Board round trips") {
        std::mt19937_64 rng(5);
        for (int m = 1; m <= 6; ++m)
            for (int i = 0; i < 3000; ++i) {
                std::string text = random_position_text(rng, m);
                CAPTURE(text);
                Board b = kalah::parse_position(text);
                CHECK(b.pits() == m);
                CHECK(kalah::format_position(b) == text);
                CHECK(kalah::parse_position(kalah::format_position(b)) == b);
                // The parsed board holds what the text says (checked via the reference).
                ref::Pos p = ref::from_board(b);
                CHECK(kalah::format_position(ref::to_board(p)) == text);
                CHECK(p.south_to_move == (text.back() == 'A'));
            }
    }

    TEST_CASE("move text <-> move round trips, every pit and suffix") {
        for (int m = 1; m <= 6; ++m)
            for (Side side : {Side::South, Side::North})
                for (int pit = 0; pit < m; ++pit)
                    for (int kind = 0; kind < 6; ++kind) {
                        MoveResult r;
                        r.extra = kind == 1;
                        const bool capture = kind == 2 || kind == 3;
                        r.captured = static_cast<uint8_t>(capture ? 1 + 7 * kind : 0);
                        r.over = kind == 3 || kind == 4;
                        std::string text = kalah::format_move(side, pit, r);
                        CAPTURE(text);
                        kalah::MoveText mv = kalah::parse_move(text, m);
                        CHECK(mv.side == side);
                        CHECK(mv.pit == pit);
                        CHECK(text.substr(0, 2) == kalah::pit_name(side, pit));
                        CHECK(mv.has_suffix == (r.extra || r.captured || r.over));
                        if (mv.has_suffix) {
                            CHECK(mv.suffix.extra == r.extra);
                            CHECK(mv.suffix.captured == r.captured);
                            CHECK(mv.suffix.over == r.over);
                        }
                    }
        CHECK(kalah::format_move(Side::North, 4, MoveResult{false, true, 9}) == "B5x9#");
        CHECK(kalah::parse_move("B5x9#", 6).suffix.captured == 9);
    }

    TEST_CASE("bad move and position text is an InputError") {
        CHECK_THROWS_AS(kalah::parse_move("C1", 6), InputError);
        CHECK_THROWS_AS(kalah::parse_move("A7", 6), InputError);
        CHECK_THROWS_AS(kalah::parse_move("A0", 6), InputError);
        CHECK_THROWS_AS(kalah::parse_move("A01", 6), InputError);  // not read as A1
        CHECK_THROWS_AS(kalah::parse_move("A0016", 6), InputError);
        CHECK_THROWS_AS(kalah::parse_move("A11", 6), InputError);
        CHECK_THROWS_AS(kalah::parse_move("A", 6), InputError);
        CHECK_THROWS_AS(kalah::parse_move("A3?", 6), InputError);
        CHECK_THROWS_AS(kalah::parse_move("A3x", 6), InputError);
        CHECK_THROWS_AS(kalah::parse_move("A3x0", 6), InputError);
        CHECK_THROWS_AS(kalah::parse_move("A3x300", 6), InputError);  // no such capture
        CHECK_THROWS_AS(kalah::parse_position("4,4/4,4/0,0"), InputError);
        CHECK_THROWS_AS(kalah::parse_position("4,4/4,4,4/0,0/A"), InputError);
        CHECK_THROWS_AS(kalah::parse_position("4,-4/4,4/0,0/A"), InputError);
        CHECK_THROWS_AS(kalah::parse_position("4,x/4,4/0,0/A"), InputError);
        CHECK_THROWS_AS(kalah::parse_position("100,4/4,4/0,30/A"), InputError);
        CHECK_THROWS_AS(kalah::parse_position("4,4/4,4/0,0/C"), InputError);
        CHECK_THROWS_AS(kalah::parse_position("1,1,1,1,1,1,1/1,1,1,1,1,1,1/0,0/A"), InputError);
        Board b = Board::start(6, 4);
        CHECK_THROWS_AS(kalah::replay(b, "A3x2 A6", Rule::Standard), InputError);  // A3 is A3+
        b = Board::start(6, 4);
        CHECK_THROWS_AS(kalah::replay(b, "A3+ A6#", Rule::Standard), InputError);  // not over
        b = Board::start(6, 4);
        CHECK_THROWS_AS(kalah::replay(b, "A3+ B1", Rule::Standard), InputError);  // out of turn
        b = Board::start(6, 4);
        CHECK_THROWS_AS(kalah::replay(b, "A3+ A3", Rule::Standard), InputError);  // empty pit
    }

    TEST_CASE("random games: format every move, re-parse and replay with suffixes") {
        std::mt19937_64 rng(99);
        const Rule rules[] = {Rule::Standard, Rule::EmptyCapture};
        int games = 0;
        for (int m = 1; m <= 6; ++m)
            for (int n = 1; n <= 6; ++n)
                for (Rule rule : rules)
                    for (int g = 0; g < 40; ++g, ++games) {
                        Board b = Board::start(m, n);
                        std::vector<std::string> texts;
                        std::string record, bare;
                        while (!b.over()) {
                            auto moves = b.legal_moves();
                            int pit = moves.pit[rng() % moves.size];
                            Side side = b.to_move();
                            texts.push_back(kalah::format_move(side, pit, b.play(pit, rule)));
                            add_word(record, texts.back());
                            add_word(bare, kalah::pit_name(side, pit));
                        }
                        CAPTURE(record);
                        CHECK(texts.back().back() == '#');
                        Board r1 = Board::start(m, n);
                        auto played = kalah::replay(r1, record, rule);
                        CHECK(r1 == b);
                        REQUIRE(played.size() == texts.size());
                        for (size_t i = 0; i < texts.size(); ++i) CHECK(played[i].text == texts[i]);
                        // Without suffixes the record replays to the same texts.
                        Board r2 = Board::start(m, n);
                        auto played2 = kalah::replay(r2, bare, rule);
                        CHECK(r2 == b);
                        for (size_t i = 0; i < texts.size(); ++i)
                            CHECK(played2[i].text == texts[i]);
                        // A move after the end is rejected.
                        Board r3 = Board::start(m, n);
                        CHECK_THROWS_AS(kalah::replay(r3, bare + " A1", rule), InputError);
                    }
        CHECK(games == 6 * 6 * 2 * 40);
    }

    TEST_CASE("perfect games of the 2000 paper replay to their final stores (empty-capture)") {
        struct Game {
            int m, n;
            const char* line;
            int south, north;
        };
        // reference-values.md, "Perfect games from the paper".
        const Game games[] = {
            {4, 1, "32-32-1", 5, 3},
            {4, 2, "3-3-230-231-1323", 11, 5},
            {4, 3, "13-1-032-2-3-0-1320-3-0-2", 16, 8},
            {4, 4, "02-2-3-0-2-21-303231-0-32-1-0", 17, 15},
            {5, 3, "24-3-3-03-41-1-04342-3-3-2-2-4-414342-3", 19, 11},
            {5, 4, "12-04-03-2-20-41-1-42-32-3-2-40-0-1", 26, 14},
            {6, 2, "42-42-30-0-1-1-4-5", 17, 7},
            {6, 3, "4-5-35-250-2-154-451535452-53-3-54-2", 19, 17},
            {6, 4, "25-10-3-3-5153-1-4-5-045-4-535452-53-4-1-3-2-0-54-1-3", 29, 19},
            {6, 5, "12-02-05-2-4-51-53-3-45-20-3-2-2-345-5-4-351-0-54-1-52-354-4-254-3-3", 36, 24},
        };
        for (const Game& g : games) {
            CAPTURE(g.m);
            CAPTURE(g.n);
            PaperGame p = replay_paper_line(g.m, g.n, g.line, Rule::EmptyCapture);
            CHECK(p.error == "");
            CHECK(p.board.store(Side::South) == g.south);
            CHECK(p.board.store(Side::North) == g.north);
            CHECK(g.south + g.north == 2 * g.m * g.n);
            // The same game in our notation, with suffixes, through replay().
            Board b = Board::start(g.m, g.n);
            kalah::replay(b, p.record, Rule::EmptyCapture);
            CHECK(b == p.board);
            // And on the reference engine.
            ref::Pos r = ref::start(g.m, g.n);
            Board again = Board::start(g.m, g.n);
            for (const auto& mv : kalah::replay(again, p.record, Rule::EmptyCapture))
                ref::play(r, mv.pit, Rule::EmptyCapture);
            CHECK(r.store_a == g.south);
            CHECK(r.store_b == g.north);
        }
    }
}
