// Opening-turn enumeration, pie-rule analysis, game annotation and engine levels.
#include "analysis/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "analysis/text.h"
#include "db/database.h"

namespace kalah::analysis {

int for_side(int south_margin, Side s) { return s == Side::South ? south_margin : -south_margin; }

namespace {
int sign(int v) { return (v > 0) - (v < 0); }
char side_letter(Side s) { return s == Side::South ? 'A' : 'B'; }

void turns_from(const Board& b, Rule rule, Turn& cur, std::vector<Turn>& out) {
    for (int p : b.legal_moves()) {
        Board next = b;
        Side mover = b.to_move();
        MoveResult r = next.play(p, rule);
        cur.moves.push_back({mover, p, r, format_move(mover, p, r)});
        if (r.extra) {
            turns_from(next, rule, cur, out);
        } else {
            Turn t;
            t.moves = cur.moves;
            for (size_t i = 0; i < t.moves.size(); ++i) t.text += (i ? " " : "") + t.moves[i].text;
            t.after = next;
            out.push_back(std::move(t));
        }
        cur.moves.pop_back();
    }
}
}  // namespace

std::vector<Turn> enumerate_turns(const Board& b, Rule rule) {
    std::vector<Turn> out;
    if (b.over()) return out;
    Turn cur;
    turns_from(b, rule, cur, out);
    return out;
}

PieReport pie_analysis(Solver& solver, const Board& start, Rule rule) {
    if (start.over()) throw InputError("the game is already over: there is no opening turn");
    if (start.to_move() != Side::South)
        throw InputError("the pie rule applies to the first player's opening: A must be to move");
    PieReport rep;
    int min_abs = 1 << 30;
    rep.plain_value = -(1 << 30);
    for (Turn& t : enumerate_turns(start, rule)) {
        int v = solver.value(t.after);
        rep.rows.push_back({std::move(t), v, -std::abs(v)});
        min_abs = std::min(min_abs, std::abs(v));
        rep.plain_value = std::max(rep.plain_value, v);
    }
    for (size_t i = 0; i < rep.rows.size(); ++i)
        if (std::abs(rep.rows[i].value) == min_abs) rep.fairest.push_back(i);
    rep.pie_value = -min_abs;
    return rep;
}

const char* mark_text(Mark m) { return m == Mark::Mistake ? "?" : m == Mark::Blunder ? "??" : ""; }

Annotation annotate_game(Solver& solver, const Board& start, const std::vector<PlayedMove>& moves,
                         Rule rule) {
    Annotation a;
    a.start = start;
    Board b = start;
    for (size_t i = 0; i < moves.size(); ++i) {
        const PlayedMove& pm = moves[i];
        if (b.over() || pm.side != b.to_move() || b.own_pit(pm.pit) == 0)
            throw InputError("move " + std::to_string(i + 1) + " '" + pm.text +
                             "' cannot be played here");
        MoveNote n;
        n.ply = static_cast<int>(i) + 1;
        n.move = pm;
        n.before = b;
        const Side s = b.to_move();
        auto mv = solver.move_values(b);
        int best = -(1 << 30), played = 0;
        for (const auto& x : mv) {
            best = std::max(best, for_side(x.value, s));
            if (x.pit == pm.pit) played = for_side(x.value, s);
        }
        for (const auto& x : mv)
            if (for_side(x.value, s) == best) n.best.push_back(x.text);
        n.before_value = for_side(best, s);
        n.after_value = for_side(played, s);
        n.loss = best - played;
        if (n.loss > 0) n.mark = sign(best) != sign(played) ? Mark::Blunder : Mark::Mistake;
        b.play(pm.pit, rule);

        PlayerSummary& ps = a.player[static_cast<int>(s)];
        ++ps.moves;
        ps.total_loss += n.loss;
        if (n.loss == 0) ++ps.best;
        if (n.mark == Mark::Mistake) ++ps.mistakes;
        if (n.mark == Mark::Blunder) ++ps.blunders;
        if (n.loss > 0 && (ps.worst < 0 || n.loss > a.notes[ps.worst].loss))
            ps.worst = static_cast<int>(a.notes.size());
        a.notes.push_back(std::move(n));
    }
    a.end = b;
    a.end_value = solver.value(b);
    return a;
}

namespace {
std::string pad(const std::string& s, size_t w, bool right = false) {
    if (s.size() >= w) return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

std::string summary_line(const Annotation& a, Side s) {
    const PlayerSummary& ps = a.player[static_cast<int>(s)];
    std::ostringstream os;
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * ps.accuracy());
    os << side_letter(s) << " (" << (s == Side::South ? "South" : "North") << "): " << ps.moves
       << " move" << (ps.moves == 1 ? "" : "s") << ", " << ps.best << " best (accuracy " << pct
       << "), " << ps.mistakes << " mistake" << (ps.mistakes == 1 ? "" : "s") << ", " << ps.blunders
       << " blunder" << (ps.blunders == 1 ? "" : "s") << ", " << ps.total_loss << " seed"
       << (ps.total_loss == 1 ? "" : "s") << " given away";
    if (ps.worst >= 0) {
        const MoveNote& w = a.notes[ps.worst];
        os << "; biggest mistake: " << w.ply << ". " << w.move.text << mark_text(w.mark) << " (-"
           << w.loss << ", best " << w.best.front() << ")";
    }
    return os.str();
}
}  // namespace

std::string format_annotation(const Annotation& a, const Side* only) {
    std::ostringstream os;
    os << " ply  move      before  after  loss  best\n";
    for (const MoveNote& n : a.notes) {
        if (only && n.move.side != *only) continue;
        std::string mv = n.move.text + mark_text(n.mark);
        os << pad(std::to_string(n.ply), 4, true) << "  " << pad(mv, 9) << " "
           << pad(signed_value(n.before_value), 6, true) << " "
           << pad(signed_value(n.after_value), 6, true);
        if (n.loss) {
            os << " " << pad(std::to_string(n.loss), 5, true) << " ";
            for (const auto& b : n.best) os << " " << b;
        }
        os << "\n";
    }
    os << "(values: A's final margin under perfect play; loss in seeds for the mover;\n"
          " ? = mistake, ?? = blunder that changes the result)\n";
    for (Side s : {Side::South, Side::North})
        if (!only || *only == s) os << summary_line(a, s) << "\n";
    if (a.end.over()) {
        int fa = final_store(a.end, Side::South), fb = final_store(a.end, Side::North);
        os << "final score: A " << fa << " - B " << fb << " ("
           << (fa > fb   ? "A wins"
               : fa < fb ? "B wins"
                         : "draw");
        if (fa != fb) os << " by " << std::abs(fa - fb);
        os << ")\n";
    } else {
        os << "game not finished: " << side_letter(a.end.to_move()) << " to move, value "
           << signed_value(a.end_value) << " for A with perfect play\n";
    }
    return os.str();
}

std::string annotation_json(const Annotation& a, Rule rule) {
    Json moves = Json::array();
    for (const MoveNote& n : a.notes) {
        Json best = Json::array();
        for (const auto& b : n.best) best.push_back(b);
        moves.push_back({{"ply", n.ply},
                         {"side", std::string(1, side_letter(n.move.side))},
                         {"move", n.move.text},
                         {"before", n.before_value},
                         {"after", n.after_value},
                         {"loss", n.loss},
                         {"mark", mark_text(n.mark)},
                         {"best", best}});
    }
    Json summary = Json::object();
    for (Side s : {Side::South, Side::North}) {
        const PlayerSummary& ps = a.player[static_cast<int>(s)];
        Json worst = nullptr;
        if (ps.worst >= 0) {
            const MoveNote& w = a.notes[ps.worst];
            worst = {{"ply", w.ply}, {"move", w.move.text}, {"loss", w.loss}};
        }
        summary[std::string(1, side_letter(s))] = {
            {"moves", ps.moves},
            {"best", ps.best},
            {"accuracy", std::round(ps.accuracy() * 1e4) / 1e4},  // four decimals
            {"mistakes", ps.mistakes},
            {"blunders", ps.blunders},
            {"total_loss", ps.total_loss},
            {"biggest_mistake", worst}};
    }
    Json j = {{"start", format_position(a.start)},
              {"rule", rule_name(rule)},
              {"moves", moves},
              {"summary", summary},
              {"end", format_position(a.end)},
              {"over", a.end.over()},
              {"value", a.end_value}};
    if (a.end.over()) j["score"] = score_json(a.end);
    return json_line(j);
}

std::string read_record_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError("cannot read game record '" + path + "'");
    std::string line, out;
    while (std::getline(in, line)) {
        if (auto c = line.find(';'); c != std::string::npos) line.erase(c);
        std::istringstream words(line);
        std::string w;
        while (words >> w) {
            // A move number "12." (digits and a final dot) is not a move.
            if (w.size() > 1 && w.back() == '.' &&
                std::all_of(w.begin(), w.end() - 1, [](char c) { return c >= '0' && c <= '9'; }))
                continue;
            out += w + " ";
        }
    }
    return out;
}

const LevelSpec& level_spec(Level l) {
    static const LevelSpec kSpecs[] = {
        {Level::Easy, "easy", 0.60, -1},
        {Level::Medium, "medium", 0.35, 6},
        {Level::Hard, "hard", 0.15, 2},
        {Level::Perfect, "perfect", 0.0, 0},
    };
    return kSpecs[static_cast<int>(l)];
}

Level parse_level(const std::string& text) {
    for (Level l : {Level::Easy, Level::Medium, Level::Hard, Level::Perfect})
        if (text == level_spec(l).name) return l;
    throw InputError("unknown level '" + text + "': use easy, medium, hard or perfect");
}

size_t choose_move(const std::vector<MoveValue>& mv, Side mover, Level level, Rng& rng) {
    const LevelSpec& spec = level_spec(level);
    int best = -(1 << 30);
    for (const auto& x : mv) best = std::max(best, for_side(x.value, mover));
    std::vector<size_t> best_moves, weaker;
    for (size_t i = 0; i < mv.size(); ++i) {
        int loss = best - for_side(mv[i].value, mover);
        if (loss == 0)
            best_moves.push_back(i);
        else if (spec.max_loss < 0 || loss <= spec.max_loss)
            weaker.push_back(i);
    }
    // Draw the deviation coin on every move, so a seed fixes the whole sequence of choices.
    const bool deviate = spec.deviate > 0 && rng.unit() < spec.deviate;
    if (deviate && !weaker.empty()) return weaker[rng.below(weaker.size())];
    return best_moves[rng.below(best_moves.size())];
}

}  // namespace kalah::analysis
