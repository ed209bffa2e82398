// `kalah pie`, `annotate` and `play` against a brute-force minimax over the reference engine.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "brute_force.h"
#include "cli_runner.h"
#include "reference_engine.h"

namespace {
using kalah::Rule;

const char* rule_arg(Rule r) { return r == Rule::Standard ? "standard" : "empty-capture"; }

// One memo per (m, rule) for the whole suite (values do not depend on n: keys are pits).
BruteForce& brute(int m, Rule rule) {
    static std::vector<std::unique_ptr<BruteForce>> cache;
    for (auto& b : cache)
        if (b->pits() == m && b->rule() == rule) return *b;
    cache.push_back(std::make_unique<BruteForce>(m, rule));
    return *cache.back();
}

int for_mover(int south_margin, const ref::Pos& p) {
    return p.south_to_move ? south_margin : -south_margin;
}
int sign(int v) { return (v > 0) - (v < 0); }

// Notation of rules.md, written here from the reference engine's result.
std::string move_text(bool south, int pit, const ref::Result& r) {
    std::string s = std::string(1, south ? 'A' : 'B') + std::to_string(pit + 1);
    if (r.extra) s += '+';
    if (r.captured) s += 'x' + std::to_string(r.captured);
    if (r.over) s += '#';
    return s;
}

// Plays "A3" / "B5x9#" (suffix ignored) on p; returns false if it is not legal there.
bool play_text(ref::Pos& p, const std::string& text, Rule rule, std::string* full = nullptr) {
    if (text.size() < 2 || ref::over(p)) return false;
    bool south = text[0] == 'A';
    int pit = text[1] - '1';
    if (south != p.south_to_move || pit < 0 || pit >= p.m) return false;
    if ((south ? p.a[pit] : p.b[pit]) == 0) return false;
    ref::Result r = ref::play(p, pit, rule);
    if (full) *full = move_text(south, pit, r);
    return true;
}

// Every complete first turn of the mover (moves while the extra move holds).
void openings(const ref::Pos& p, Rule rule, const std::string& prefix,
              std::vector<std::pair<std::string, ref::Pos>>& out) {
    for (int pit : ref::legal(p)) {
        ref::Pos q = p;
        ref::Result r = ref::play(q, pit, rule);
        std::string t = prefix + (prefix.empty() ? "" : " ") + move_text(p.south_to_move, pit, r);
        if (r.extra)
            openings(q, rule, t, out);
        else
            out.push_back({t, q});
    }
}

// The 2000 paper's digit notation (reference-values.md): pits from 0 on each side from the
// mover's farthest pit (A1 / B1), the moves of one turn together, '-' passes the turn.
std::vector<std::string> paper_moves(const std::string& line) {
    std::vector<std::string> out;
    char side = 'A';
    for (char c : line) {
        if (c == '-')
            side = side == 'A' ? 'B' : 'A';
        else
            out.push_back(std::string(1, side) + std::to_string(c - '0' + 1));
    }
    return out;
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
    return s;
}

std::vector<std::smatch> all_matches(const std::string& text, const std::regex& re) {
    std::vector<std::smatch> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
         ++it)
        out.push_back(*it);
    return out;
}

struct MoveLine {
    int ply;
    std::string move;
    int before, after, loss;
    std::string mark;
};
// The `moves` of `kalah annotate --json`, parsed as JSON.
std::vector<MoveLine> annotate_json_moves(const std::string& out) {
    std::vector<MoveLine> v;
    const auto j = nlohmann::json::parse(out);
    for (const auto& m : j.at("moves"))
        v.push_back({m.at("ply").get<int>(), m.at("move").get<std::string>(),
                     m.at("before").get<int>(), m.at("after").get<int>(), m.at("loss").get<int>(),
                     m.at("mark").get<std::string>()});
    return v;
}

// Game lines from `kalah play` output, in order: ("you"|"engine", move).
std::vector<std::pair<std::string, std::string>> play_lines(const std::string& out) {
    static const std::regex re("(you play|engine plays) ([AB][0-9][^\\s]*)");
    std::vector<std::pair<std::string, std::string>> v;
    for (const auto& m : all_matches(out, re))
        v.push_back({m[1] == "you play" ? "you" : "engine", m[2]});
    return v;
}

// A game from `prefix` of the paper line: at the first ply >= from where the mover has a move
// of the wanted kind (blunder: changes the W/D/L result for the mover; mistake: loses seeds
// but keeps it), that move is played; the rest is perfect play (lowest best pit). Returns
// the record and sets ply (1-based) and the expected loss.
std::string planted_game(BruteForce& bf, int m, int n, const std::vector<std::string>& line,
                         bool blunder, int from, int& ply, int& loss) {
    ref::Pos p = ref::start(m, n);
    std::vector<std::string> rec;
    ply = 0;
    for (size_t i = 0; !ref::over(p); ++i) {
        auto mv = bf.move_values(p);
        int best = -1000;
        for (int pit : ref::legal(p)) best = std::max(best, for_mover(mv[pit], p));
        int choice = -1;
        if (ply == 0 && static_cast<int>(i) + 1 >= from) {
            for (int pit : ref::legal(p)) {
                int v = for_mover(mv[pit], p);
                if (v < best && (sign(v) != sign(best)) == blunder) {
                    choice = pit;
                    ply = static_cast<int>(i) + 1;
                    loss = best - v;
                    break;
                }
            }
        }
        // Before the planted move: the paper's move when it is a best move here (the line is
        // perfect under empty-capture only), else the lowest best pit; after it: perfect play.
        if (choice < 0 && ply == 0 && i < line.size() && (line[i][0] == 'A') == p.south_to_move) {
            int pit = line[i][1] - '1';
            if (mv[pit] != -1000 && for_mover(mv[pit], p) == best) choice = pit;
        }
        if (choice < 0) {
            for (int pit : ref::legal(p))
                if (for_mover(mv[pit], p) == best) {
                    choice = pit;
                    break;
                }
        }
        bool south = p.south_to_move;
        ref::Result r = ref::play(p, choice, bf.rule());
        rec.push_back(move_text(south, choice, r));
    }
    return join(rec);
}

}  // namespace

TEST_SUITE("analysis") {
    TEST_CASE("pie: every opening's value and the pie value agree with brute force") {
        struct Config {
            int m, n;
        };
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (Config c : {Config{1, 3}, Config{2, 2}, Config{2, 4}, Config{3, 2}, Config{3, 3},
                             Config{3, 4}, Config{4, 2}, Config{4, 3}}) {
                CAPTURE(c.m);
                CAPTURE(c.n);
                CAPTURE(rule_arg(rule));
                BruteForce& bf = brute(c.m, rule);
                std::vector<std::pair<std::string, ref::Pos>> ops;
                openings(ref::start(c.m, c.n), rule, "", ops);
                int min_abs = 1000, max_v = -1000;
                std::vector<int> values;
                for (auto& o : ops) {
                    values.push_back(bf.value(o.second));
                    min_abs = std::min(min_abs, std::abs(values.back()));
                    max_v = std::max(max_v, values.back());
                }
                CHECK(max_v == bf.value(ref::start(c.m, c.n)));
                auto r = run_kalah("pie --pits " + std::to_string(c.m) + " --seeds " +
                                   std::to_string(c.n) + " --rule " + rule_arg(rule) +
                                   " --tt-mb 16 --json");
                REQUIRE(r.status == 0);
                const auto j = nlohmann::json::parse(r.out);
                const auto& rows = j.at("openings");
                REQUIRE(rows.size() == ops.size());
                std::vector<std::string> fairest;
                for (size_t i = 0; i < ops.size(); ++i) {
                    CHECK(rows[i].at("opening") == ops[i].first);
                    CHECK(rows[i].at("value") == values[i]);
                    CHECK(rows[i].at("pie_value") == -std::abs(values[i]));
                    CHECK(rows[i].at("north") == (values[i] < 0   ? "keep"
                                                  : values[i] > 0 ? "swap"
                                                                  : "either"));
                    if (std::abs(values[i]) == min_abs) fairest.push_back(ops[i].first);
                }
                CHECK(j.at("fairest") == fairest);
                CHECK(j.at("pie_value") == -min_abs);
                CHECK(j.at("value") == max_v);
            }
        }
    }

    TEST_CASE("pie: human output names the fairest openings") {
        auto r = run_kalah("pie --pits 3 --seeds 3 --tt-mb 16");
        CHECK(r.status == 0);
        CHECK(r.out.find("fairest opening") != std::string::npos);
        CHECK(r.out.find("value under the pie rule:") != std::string::npos);
        auto b = run_kalah("pie --position 1,1/1,1/0,0/B");
        CHECK(b.status == 2);
        CHECK(b.err.find("A must be to move") != std::string::npos);
        CHECK(run_kalah("pie --pits 3 --seeds 3 --tt-mb 0").status == 2);
    }

    TEST_CASE("annotate: the paper's perfect games have no mistakes") {
        struct Game {
            int m, n;
            const char* line;
            int value;
        };
        // reference-values.md, "Perfect games from the paper" (empty-capture), final margins.
        for (Game g : {Game{4, 3, "13-1-032-2-3-0-1320-3-0-2", 16 - 8},
                       Game{6, 2, "42-42-30-0-1-1-4-5", 17 - 7},
                       Game{4, 4, "02-2-3-0-2-21-303231-0-32-1-0", 17 - 15}}) {
            CAPTURE(g.line);
            auto moves = paper_moves(g.line);
            auto r = run_kalah("annotate --pits " + std::to_string(g.m) + " --seeds " +
                               std::to_string(g.n) + " --rule empty-capture --tt-mb 16 --json " +
                               "--moves \"" + join(moves) + "\"");
            REQUIRE(r.status == 0);
            auto lines = annotate_json_moves(r.out);
            REQUIRE(lines.size() == moves.size());
            for (const auto& l : lines) {
                CAPTURE(l.ply);
                CHECK(l.loss == 0);
                CHECK(l.mark == "");
                CHECK(l.before == g.value);
                CHECK(l.after == g.value);
            }
            const auto j = nlohmann::json::parse(r.out);
            for (const char* side : {"A", "B"}) {
                CAPTURE(side);
                const auto& sum = j.at("summary").at(side);
                CHECK(sum.at("blunders") == 0);
                CHECK(sum.at("mistakes") == 0);
                CHECK(sum.at("biggest_mistake").is_null());
            }
            CHECK(j.at("value") == g.value);
        }
    }

    TEST_CASE("annotate: a planted blunder or mistake is marked, and only it") {
        const int m = 4, n = 3;
        int planted[2] = {0, 0};  // games with a planted mistake / blunder
        for (Rule rule : {Rule::EmptyCapture, Rule::Standard}) {
            BruteForce& bf = brute(m, rule);
            auto line = paper_moves("13-1-032-2-3-0-1320-3-0-2");
            for (bool blunder : {true, false}) {
                for (int from : {1, 5, 9}) {
                    CAPTURE(rule_arg(rule));
                    CAPTURE(blunder);
                    CAPTURE(from);
                    int ply = 0, loss = 0;
                    std::string rec = planted_game(bf, m, n, line, blunder, from, ply, loss);
                    CAPTURE(rec);
                    if (ply == 0) continue;  // no such move in this game from there on
                    ++planted[blunder];
                    auto r =
                        run_kalah(std::string("annotate --pits 4 --seeds 3 --tt-mb 16 --json ") +
                                  "--rule " + rule_arg(rule) + " --moves \"" + rec + "\"");
                    REQUIRE(r.status == 0);
                    auto lines = annotate_json_moves(r.out);
                    REQUIRE(!lines.empty());
                    int marked = 0;
                    for (const auto& l : lines) {
                        if (l.ply == ply) {
                            CHECK(l.loss == loss);
                            CHECK(l.mark == (blunder ? "??" : "?"));
                            CHECK(l.before - l.after != 0);
                        } else {
                            CHECK(l.loss == 0);
                            CHECK(l.mark == "");
                        }
                        marked += !l.mark.empty();
                    }
                    CHECK(marked == 1);
                    // Human output: the same move carries the mark and the summary names it.
                    auto h = run_kalah(std::string("annotate --pits 4 --seeds 3 --tt-mb 16 ") +
                                       "--rule " + rule_arg(rule) + " --moves \"" + rec + "\"");
                    CHECK(h.status == 0);
                    CHECK(h.out.find("biggest mistake: " + std::to_string(ply) + ". ") !=
                          std::string::npos);
                }
            }
        }
        CHECK(planted[0] >= 3);
        CHECK(planted[1] >= 3);
    }

    TEST_CASE("annotate: record file with comments and move numbers; bad input") {
        std::string path = "/tmp/kalah_annotate_" + std::to_string(::getpid()) + ".txt";
        {
            std::ofstream f(path);
            auto moves = paper_moves("13-1-032-2-3-0-1320-3-0-2");
            f << "; Kalah(4,3), the paper's perfect game\n1. A2+ A4 ; South\n2. B2\n"
              << join(std::vector<std::string>(moves.begin() + 3, moves.end())) << "\n";
        }
        auto r =
            run_kalah("annotate --pits 4 --seeds 3 --rule empty-capture --tt-mb 16 --file " + path);
        std::remove(path.c_str());
        CHECK(r.status == 0);
        CHECK(r.out.find("16 moves") != std::string::npos);
        CHECK(r.out.find("final score: A 16 - B 8") != std::string::npos);

        auto bad = run_kalah("annotate --pits 4 --seeds 3 --moves \"A2 B1\"");
        CHECK(bad.status == 2);
        CHECK(bad.err.find("out of turn") != std::string::npos);
        CHECK(run_kalah("annotate --pits 4 --seeds 3").status == 2);
        CHECK(run_kalah("annotate --pits 4 --seeds 3 --file /nonexistent/x").status == 2);
        CHECK(run_kalah("play --pits 3 --seeds 2 --level genius").status == 2);
        CHECK(run_kalah("play --pits 3 --seeds 2 --side C").status == 2);
    }

    TEST_CASE("play: illegal input is explained, hint and undo work, EOF ends cleanly") {
        // Kalah(3,2) standard, person A. BruteForce force gives the hint.
        BruteForce& bf = brute(3, Rule::Standard);
        ref::Pos start = ref::start(3, 2);
        auto mv = bf.move_values(start);
        int best = *std::max_element(mv.begin(), mv.end());
        std::string hint;
        for (int pit = 0; pit < 3; ++pit)
            if (mv[pit] == best) {
                ref::Pos q = start;
                std::string t;
                play_text(q, std::string(1, 'A') + char('1' + pit), Rule::Standard, &t);
                hint += (hint.empty() ? "" : " or ") + t;
            }
        auto r = run_kalah("play --pits 3 --seeds 2 --level perfect --seed 7 --tt-mb 16",
                           "undo\nhint\n7\nB1\nA9\nfoo\n\nA1 A2\n1\nundo\n1\n1\n");
        CHECK(r.status == 0);
        CHECK(r.out.find("nothing to undo") != std::string::npos);
        CHECK(r.out.find("hint: " + hint + " ") != std::string::npos);
        CHECK(r.out.find("illegal: there is no pit 7") != std::string::npos);
        CHECK(r.out.find("illegal: move 'B1' is out of turn") != std::string::npos);
        CHECK(r.out.find("illegal: move 'A9' names pit 9") != std::string::npos);
        CHECK(r.out.find("illegal: move 'foo'") != std::string::npos);
        CHECK(r.out.find("one move or command per line") != std::string::npos);
        CHECK(r.out.find("took back A1") != std::string::npos);
        CHECK(r.out.find("end of input") != std::string::npos);
        // After the undo, the game restarts from the start: replaying the move lines after the
        // last "took back" from the start position must be legal.
        auto tail = r.out.substr(r.out.rfind("took back"));
        ref::Pos p = start;
        auto lines = play_lines(tail);
        REQUIRE(!lines.empty());
        CHECK(lines.front().second.substr(0, 2) == "A1");
        for (const auto& l : lines) CHECK(play_text(p, l.second, Rule::Standard));
        // An empty pit, as a bare number and in notation.
        auto e = run_kalah("play --position 0,2,2/2,2,2/0,0/A --level perfect --seed 1 --tt-mb 16",
                           "1\na1\nquit\n");
        CHECK(e.status == 0);
        CHECK(e.out.find("illegal: move 'A1' is illegal: pit A1 is empty") != std::string::npos);
        CHECK(e.out.find("illegal: move 'a1' is illegal: pit A1 is empty") != std::string::npos);
        CHECK(e.out.find("you quit") != std::string::npos);
    }

    TEST_CASE("play: the perfect engine never leaves a best move and wins its won game") {
        // Engine plays A in Kalah(4,3) (a first-player win under both rules); the scripted
        // person cycles through the pits 1..4, so illegal (empty) pits are skipped by the
        // program's own re-asking.
        for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            CAPTURE(rule_arg(rule));
            BruteForce& bf = brute(4, rule);
            const int game_value = bf.value(ref::start(4, 3));
            REQUIRE(game_value > 0);
            std::string input;
            for (int i = 0; i < 200; ++i) input += std::to_string(i % 4 + 1) + "\n";
            auto r = run_kalah(std::string("play --pits 4 --seeds 3 --side B --level perfect ") +
                                   "--seed 3 --tt-mb 16 --rule " + rule_arg(rule),
                               input);
            CHECK(r.status == 0);
            ref::Pos p = ref::start(4, 3);
            for (const auto& [who, text] : play_lines(r.out)) {
                CAPTURE(text);
                if (who == "engine") {
                    auto mv = bf.move_values(p);
                    int best = -1000;
                    for (int pit : ref::legal(p)) best = std::max(best, for_mover(mv[pit], p));
                    CHECK(for_mover(mv[text[1] - '1'], p) == best);
                }
                std::string full;
                REQUIRE(play_text(p, text, rule, &full));
                CHECK(full == text);
            }
            REQUIRE(ref::over(p));
            const int margin = p.store_a - p.store_b;
            CHECK(margin >= game_value);
            CHECK(r.out.find("final score: A " + std::to_string(p.store_a) + " - B " +
                             std::to_string(p.store_b) + ": you lose by " +
                             std::to_string(margin)) != std::string::npos);
            CHECK(r.out.find("your moves, annotated:") != std::string::npos);
            // The closing annotation covers the person's side only.
            CHECK(r.out.find("B (North): ") != std::string::npos);
            CHECK(r.out.find("A (South): ") == std::string::npos);
        }
    }

    TEST_CASE("play: levels are reproducible with --seed and deviate within their bounds") {
        BruteForce& bf = brute(4, Rule::Standard);
        std::string input;
        for (int i = 0; i < 200; ++i) input += std::to_string(i % 4 + 1) + "\n";
        struct L {
            const char* name;
            int max_loss;  // -1: any
        };
        for (L level : {L{"easy", -1}, L{"medium", 6}, L{"hard", 2}}) {
            CAPTURE(level.name);
            std::string args = std::string("play --pits 4 --seeds 3 --side B --tt-mb 16 --level ") +
                               level.name + " --seed 11";
            auto a = run_kalah(args, input);
            auto b = run_kalah(args, input);
            CHECK(a.status == 0);
            CHECK(a.out == b.out);
            ref::Pos p = ref::start(4, 3);
            for (const auto& [who, text] : play_lines(a.out)) {
                if (who == "engine" && level.max_loss >= 0) {
                    auto mv = bf.move_values(p);
                    int best = -1000;
                    for (int pit : ref::legal(p)) best = std::max(best, for_mover(mv[pit], p));
                    CHECK(best - for_mover(mv[text[1] - '1'], p) <= level.max_loss);
                }
                REQUIRE(play_text(p, text, Rule::Standard));
            }
            CHECK(ref::over(p));
        }
    }
}
