// The commands' JSON objects (analysis/reports.h), shared by the CLI and the web API.
#include "analysis/reports.h"

#include <chrono>
#include <cstdio>
#include <sstream>

#include "analysis/text.h"

namespace kalah::analysis {

std::string result_letter(int v) { return v > 0 ? "W" : v < 0 ? "L" : "D"; }

std::vector<PlayedMove> replay_plies(Board& b, const std::string& record, Rule rule) {
    std::vector<PlayedMove> played;
    std::istringstream in(record);
    std::string tok;
    while (in >> tok) {
        try {
            auto one = replay(b, tok, rule);
            played.push_back(std::move(one.front()));
        } catch (const InputError& e) {
            throw InputError("ply " + std::to_string(played.size() + 1) + ": " + e.what());
        }
    }
    return played;
}

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}
const char* to_move_text(const Board& b) {
    return b.over() ? "none" : b.to_move() == Side::South ? "A" : "B";
}
std::string score_json(const Board& b) {
    return "[" + std::to_string(final_store(b, Side::South)) + ", " +
           std::to_string(final_store(b, Side::North)) + "]";
}
}  // namespace

QueryReport query_report(Solver& solver, const Board& b, Rule rule) {
    QueryReport q;
    q.board = b;
    q.rule = rule;
    const uint64_t nodes0 = solver.stats().nodes;
    const auto t0 = Clock::now();
    q.value = solver.value(b);
    q.moves = solver.move_values(b);
    q.seconds = since(t0);
    q.nodes = solver.stats().nodes - nodes0;
    return q;
}

std::string query_json(const QueryReport& q) {
    const Board& b = q.board;
    std::ostringstream os;
    // Best for the mover: the moves whose value is the position's.
    std::vector<std::string> best;
    for (const auto& mv : q.moves)
        if (mv.value == q.value) best.push_back(mv.text);
    os << "{\"position\": " << json_string(format_position(b))
       << ", \"rule\": " << json_string(rule_name(q.rule)) << ", \"to_move\": \"" << to_move_text(b)
       << "\", \"over\": " << (b.over() ? "true" : "false") << ", \"value\": " << q.value
       << ", \"result\": \"" << result_letter(q.value) << "\", \"moves\": [";
    for (size_t i = 0; i < q.moves.size(); ++i)
        os << (i ? ", " : "") << "{\"move\": " << json_string(q.moves[i].text)
           << ", \"value\": " << q.moves[i].value
           << ", \"best\": " << (q.moves[i].value == q.value ? "true" : "false") << "}";
    os << "], \"best\": [";
    for (size_t i = 0; i < best.size(); ++i) os << (i ? ", " : "") << json_string(best[i]);
    os << "]";
    if (b.over()) os << ", \"score\": " << score_json(b);
    os << ", \"nodes\": " << q.nodes << ", \"seconds\": " << q.seconds << "}\n";
    return os.str();
}

PvReport pv_report(Solver& solver, const Board& start, Rule rule) {
    PvReport p;
    p.start = start;
    p.rule = rule;
    const uint64_t nodes0 = solver.stats().nodes;
    const auto t0 = Clock::now();
    p.value = solver.value(start);
    p.pv = solver.principal_variation(start);
    p.seconds = since(t0);
    p.nodes = solver.stats().nodes - nodes0;
    return p;
}

std::string pv_fields_json(const PvReport& p) {
    Board end = p.start;
    std::string best, line;
    for (const auto& m : p.pv) {
        // The first turn: the moves of the side to move up to its last extra move.
        if (m.side == p.start.to_move() && best.size() == line.size())
            best += (best.empty() ? "" : " ") + m.text;
        line += (line.empty() ? "" : " ") + m.text;
        end.play(m.pit, p.rule);
    }
    std::ostringstream os;
    // best: solve values only the principal variation's first move, so it lists that one.
    os << "\"position\": " << json_string(format_position(p.start))
       << ", \"rule\": " << json_string(rule_name(p.rule)) << ", \"value\": " << p.value
       << ", \"result\": \"" << result_letter(p.value) << "\", \"best\": ["
       << (p.pv.empty() ? "" : json_string(p.pv.front().text))
       << "], \"best_turn\": " << json_string(best) << ", \"pv\": " << json_string(line)
       << ", \"score\": " << score_json(end);
    return os.str();
}

std::string pv_json(const PvReport& p) {
    std::ostringstream os;
    os << "{" << pv_fields_json(p) << ", \"nodes\": " << p.nodes << ", \"seconds\": " << p.seconds
       << "}\n";
    return os.str();
}

std::string pie_json(const PieReport& rep, const Board& start, Rule rule, uint64_t nodes,
                     double seconds) {
    std::ostringstream os;
    os << "{\"pits\": " << start.pits() << ", \"start\": " << json_string(format_position(start))
       << ", \"rule\": " << json_string(rule_name(rule)) << ",\n \"openings\": [";
    for (size_t i = 0; i < rep.rows.size(); ++i) {
        const PieRow& r = rep.rows[i];
        os << (i ? ",\n  " : "\n  ") << "{\"opening\": " << json_string(r.opening.text)
           << ", \"value\": " << r.value << ", \"north\": \""
           << (r.value < 0   ? "keep"
               : r.value > 0 ? "swap"
                             : "either")
           << "\", \"pie_value\": " << r.pie_value << "}";
    }
    os << "],\n \"fairest\": [";
    for (size_t i = 0; i < rep.fairest.size(); ++i)
        os << (i ? ", " : "") << json_string(rep.rows[rep.fairest[i]].opening.text);
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.3f", seconds);
    os << "], \"pie_value\": " << rep.pie_value << ", \"value\": " << rep.plain_value
       << ", \"nodes\": " << nodes << ", \"seconds\": " << secs << "}\n";
    return os.str();
}

std::string show_json(const Board& b, Rule rule, const std::vector<PlayedMove>& played) {
    std::ostringstream os;
    os << "{\"position\": " << json_string(format_position(b))
       << ", \"rule\": " << json_string(rule_name(rule)) << ", \"moves\": [";
    for (size_t i = 0; i < played.size(); ++i) os << (i ? ", " : "") << json_string(played[i].text);
    os << "], \"to_move\": \"" << (b.to_move() == Side::South ? 'A' : 'B') << "\""
       << ", \"over\": " << (b.over() ? "true" : "false");
    if (b.over()) os << ", \"score\": " << score_json(b);
    os << "}\n";
    return os.str();
}

EngineMove engine_move(Solver& solver, const Board& b, Rule rule, Level level, Rng& rng) {
    EngineMove e;
    e.board = b;
    e.rule = rule;
    e.level = level;
    if (b.over()) return e;
    e.moves = solver.move_values(b);
    e.chosen = static_cast<int>(choose_move(e.moves, b.to_move(), level, rng));
    return e;
}

std::string engine_move_json(const EngineMove& e) {
    std::ostringstream os;
    os << "{\"position\": " << json_string(format_position(e.board))
       << ", \"rule\": " << json_string(rule_name(e.rule)) << ", \"level\": \""
       << level_spec(e.level).name << "\", \"move\": ";
    if (e.chosen < 0) {
        os << "null, \"best\": []}\n";
        return os.str();
    }
    const MoveValue& mv = e.moves[e.chosen];
    int best = -(1 << 30);
    for (const auto& x : e.moves) best = std::max(best, for_side(x.value, e.board.to_move()));
    Board after = e.board;
    after.play(mv.pit, e.rule);
    os << json_string(mv.text) << ", \"value\": " << mv.value << ", \"best\": [";
    bool first = true;
    for (const auto& x : e.moves)
        if (for_side(x.value, e.board.to_move()) == best) {
            os << (first ? "" : ", ") << json_string(x.text);
            first = false;
        }
    os << "], \"position_after\": " << json_string(format_position(after)) << "}\n";
    return os.str();
}

}  // namespace kalah::analysis
