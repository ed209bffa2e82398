// The commands' JSON objects (analysis/reports.h), shared by the CLI and the web API.
#include "analysis/reports.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "analysis/json.h"
#include "analysis/text.h"
#include "solver/known.h"

namespace kalah::analysis {

void add_search_figures(Json& j, const SearchFigures& f) {
    j["nodes"] = f.nodes;
    j["seconds"] = f.seconds;
    j["nodes_per_second"] = f.nodes_per_second();
    j["threads"] = f.threads;
    j["cpu_seconds"] = f.cpu_seconds;
    j["tt_mib"] = f.tt_mib;
    j["tt_budget_mib"] = f.tt_budget_mib;
}

std::string search_figures_text(const SearchFigures& f) {
    std::ostringstream out;
    out << "nodes: " << f.nodes << ", seconds: " << f.seconds
        << ", nodes/s: " << f.nodes_per_second();
    return out.str();
}

std::string question_text(const Question& q) {
    const std::string name = q.name();
    return "v " + q.text() + (name.empty() ? "" : " (" + name + " for South)");
}

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
}  // namespace

QueryReport query_report(Solver& solver, const Board& b, Rule rule, QueryBounds* proven) {
    QueryReport q;
    q.board = b;
    q.rule = rule;
    const uint64_t nodes0 = solver.stats().nodes;
    const auto t0 = Clock::now();
    // Step 1. Known without a search (solver/known.h): the book or the database holds b
    // and every move, or the game is over.
    if (const std::optional<KnownAnswer> k = solver.known(b)) {
        q.value = k->value;
        q.moves = k->moves;
        q.source = k->source;
        if (proven) proven->lower = proven->upper = q.value;
        q.seconds = since(t0);
        return q;
    }
    // Step 2. A search (the solver still answers from its book and database what they hold).
    q.source = AnswerSource::Search;
    if (proven) {
        PassHook hook(solver, [&](const MtdPass& p) { proven->add_pass(p); });
        q.value = solver.value(b);
        proven->lower = proven->upper = q.value;
    } else {
        q.value = solver.value(b);
    }
    q.moves = solver.move_values(b);
    q.seconds = since(t0);
    q.nodes = solver.stats().nodes - nodes0;
    return q;
}

Json query_fields(const QueryReport& q) {
    const Board& b = q.board;
    Json moves = Json::array(), best = Json::array();
    for (const auto& mv : q.moves) {
        moves.push_back({{"move", mv.text}, {"value", mv.value}, {"best", mv.value == q.value}});
        // Best for the mover: the moves whose value is the position's.
        if (mv.value == q.value) best.push_back(mv.text);
    }
    Json j = {{"position", format_position(b)},
              {"rule", rule_name(q.rule)},
              {"to_move", to_move_text(b)},
              {"over", b.over()},
              {"value", q.value},
              {"result", result_letter(q.value)},
              {"moves", moves},
              {"best", best},
              {"source", source_name(q.source)}};
    if (b.over()) j["score"] = score_json(b);
    j["nodes"] = q.nodes;
    j["seconds"] = q.seconds;
    return j;
}

std::string query_json(const QueryReport& q) { return json_line(query_fields(q)); }

namespace {
// Bounds lo <= v <= hi on the pits value of b (mover's view) as bounds on South's final
// margin, stores included.
std::pair<int, int> south_bounds(const Board& b, int lo, int hi) {
    const int sd = b.own_store() - b.opp_store();
    if (b.to_move() == Side::South) return {sd + lo, sd + hi};
    return {-(sd + hi), -(sd + lo)};
}
// What the seed count alone proves of b's value (exact for a finished game).
std::pair<int, int> seed_bounds(const Board& b) {
    if (b.over()) {
        const int v = final_store(b, Side::South) - final_store(b, Side::North);
        return {v, v};
    }
    const int s = b.seeds_in_pits();
    return south_bounds(b, -s, s);
}
void tighten(int& lower, int& upper, std::pair<int, int> by) {
    lower = std::max(lower, by.first);
    upper = std::min(upper, by.second);
}
}  // namespace

QueryBounds::QueryBounds(const Board& b, Rule r) : board(b), rule(r) {
    std::tie(lower, upper) = seed_bounds(b);
    if (b.over()) return;
    for (int p : b.legal_moves()) {
        Board c = b;
        const MoveResult res = c.play(p, r);
        Move mv;
        mv.pit = p;
        mv.text = format_move(b.to_move(), p, res);
        std::tie(mv.lower, mv.upper) = seed_bounds(c);
        moves.push_back(std::move(mv));
    }
}

void QueryBounds::add_pass(const MtdPass& p) {
    tighten(lower, upper, south_bounds(board, p.lower, p.upper));
}

Json query_unknown_fields(const QueryBounds& q, const std::string& reason, int budget_ms) {
    Json moves = Json::array();
    for (const auto& mv : q.moves)
        moves.push_back({{"move", mv.text}, {"lower", mv.lower}, {"upper", mv.upper}});
    return {{"position", format_position(q.board)},
            {"rule", rule_name(q.rule)},
            {"unknown", true},
            {"reason", reason},
            {"budget_ms", budget_ms},
            {"lower", q.lower},
            {"upper", q.upper},
            {"moves", moves},
            {"nodes", q.nodes},
            {"seconds", q.seconds}};
}

void query_stream(Solver& solver, QueryBounds& bounds,
                  const std::function<bool(const Json&)>& event) {
    const Board& b = bounds.board;
    const uint64_t nodes0 = solver.stats().nodes;
    const auto t0 = Clock::now();
    // The figures of an event: the stream's nodes (the finished searches' in the solver's
    // statistics, the running one's from its pass) and wall time.
    auto account = [&](uint64_t running) {
        bounds.nodes = solver.stats().nodes - nodes0 + running;
        bounds.seconds = since(t0);
    };
    auto send = [&](Json j) {
        if (!event(j)) throw SearchStopped("the stream's reader went away");
    };
    // Step 1. The position's value, one event per MTD(f) pass.
    {
        PassHook hook(solver, [&](const MtdPass& p) {
            bounds.add_pass(p);
            account(p.nodes);
            send({{"event", "bound"},
                  {"pass", p.pass},
                  {"lower", bounds.lower},
                  {"upper", bounds.upper},
                  {"nodes", bounds.nodes},
                  {"seconds", bounds.seconds}});
        });
        const int v = solver.value(b);
        bounds.lower = bounds.upper = v;
    }
    // Step 2. Each move's value, one event per pass of its search, or one event for a move
    // valued without a search (the game ends, or the database holds the position).
    for (QueryBounds::Move& mv : bounds.moves) {
        Board c = b;
        c.play(mv.pit, bounds.rule);
        bool exact_sent = false;
        auto move_event = [&] {
            exact_sent = mv.lower == mv.upper;
            send({{"event", "move"},
                  {"move", mv.text},
                  {"lower", mv.lower},
                  {"upper", mv.upper},
                  {"nodes", bounds.nodes},
                  {"seconds", bounds.seconds}});
        };
        {
            PassHook hook(solver, [&](const MtdPass& p) {
                tighten(mv.lower, mv.upper, south_bounds(c, p.lower, p.upper));
                account(p.nodes);
                move_event();
            });
            const int v = solver.value(c);
            mv.lower = mv.upper = v;
        }
        if (!exact_sent) {
            account(0);
            move_event();
        }
    }
    // Step 3. The exact answer, by query's own function: what `kalah query` prints. Every
    // value it needs is in the table now.
    QueryReport q = query_report(solver, b, bounds.rule);
    account(0);
    q.nodes = bounds.nodes;
    q.seconds = bounds.seconds;
    Json j = {{"event", "value"}};
    j.update(query_fields(q));
    send(j);
}

PvReport pv_report(Solver& solver, const Board& start, Rule rule) {
    PvReport p;
    p.start = start;
    p.rule = rule;
    const uint64_t nodes0 = solver.stats().nodes;
    const auto t0 = Clock::now();
    const std::optional<KnownValue> k = solver.known_value(start);
    p.value = k ? k->value : solver.value(start);
    p.source = k ? k->source : AnswerSource::Search;
    p.pv = solver.principal_variation(start);
    p.seconds = since(t0);
    p.nodes = solver.stats().nodes - nodes0;
    return p;
}

PvText pv_text(const Board& start, const std::vector<PlayedMove>& pv, Rule rule) {
    PvText t;
    t.end = start;
    for (const auto& m : pv) {
        // The first turn: the moves of the side to move up to its last extra move.
        if (m.side == start.to_move() && t.best_turn.size() == t.line.size())
            t.best_turn += (t.best_turn.empty() ? "" : " ") + m.text;
        t.line += (t.line.empty() ? "" : " ") + m.text;
        t.end.play(m.pit, rule);
    }
    return t;
}

Json pv_fields(const PvReport& p) {
    const PvText t = pv_text(p.start, p.pv, p.rule);
    Json best = Json::array();
    // best: solve values only the principal variation's first move, so it lists that one.
    if (!p.pv.empty()) best.push_back(p.pv.front().text);
    return {{"position", format_position(p.start)},
            {"rule", rule_name(p.rule)},
            {"value", p.value},
            {"result", result_letter(p.value)},
            {"source", source_name(p.source)},
            {"best", best},
            {"best_turn", t.best_turn},
            {"pv", t.line},
            {"score", score_json(t.end)}};
}

std::string pv_json(const PvReport& p) {
    Json j = pv_fields(p);
    j["nodes"] = p.nodes;
    j["seconds"] = p.seconds;
    return json_line(j);
}

std::string pie_json(const PieReport& rep, const Board& start, Rule rule, uint64_t nodes,
                     double seconds) {
    Json openings = Json::array(), fairest = Json::array();
    for (const PieRow& r : rep.rows)
        openings.push_back({{"opening", r.opening.text},
                            {"value", r.value},
                            {"north", r.value < 0   ? "keep"
                                      : r.value > 0 ? "swap"
                                                    : "either"},
                            {"pie_value", r.pie_value}});
    for (size_t i : rep.fairest) fairest.push_back(rep.rows[i].opening.text);
    return json_line({{"pits", start.pits()},
                      {"start", format_position(start)},
                      {"rule", rule_name(rule)},
                      {"openings", openings},
                      {"fairest", fairest},
                      {"pie_value", rep.pie_value},
                      {"value", rep.plain_value},
                      {"nodes", nodes},
                      {"seconds", std::round(seconds * 1e3) / 1e3}});  // milliseconds
}

std::string show_json(const Board& b, Rule rule, const std::vector<PlayedMove>& played) {
    Json j = {{"position", format_position(b)},
              {"rule", rule_name(rule)},
              {"moves", move_texts_json(played)},
              {"to_move", to_move_text(b)},
              {"over", b.over()}};
    if (b.over()) j["score"] = score_json(b);
    return json_line(j);
}

EngineMove engine_move(Solver& solver, const Board& b, Rule rule, Level level, Rng& rng) {
    EngineMove e;
    e.board = b;
    e.rule = rule;
    e.level = level;
    if (b.over()) return e;
    if (const std::optional<KnownAnswer> k = solver.known(b)) {
        e.moves = k->moves;
        e.source = k->source;
    } else {
        e.moves = solver.move_values(b);
        e.source = AnswerSource::Search;
    }
    e.chosen = static_cast<int>(choose_move(e.moves, b.to_move(), level, rng));
    return e;
}

std::string engine_move_json(const EngineMove& e) {
    Json j = {{"position", format_position(e.board)},
              {"rule", rule_name(e.rule)},
              {"level", level_spec(e.level).name},
              {"move", nullptr}};
    if (e.chosen < 0) {
        j["best"] = Json::array();
        return json_line(j);
    }
    const MoveValue& mv = e.moves[e.chosen];
    int best = -(1 << 30);
    for (const auto& x : e.moves) best = std::max(best, for_side(x.value, e.board.to_move()));
    Json best_moves = Json::array();
    for (const auto& x : e.moves)
        if (for_side(x.value, e.board.to_move()) == best) best_moves.push_back(x.text);
    Board after = e.board;
    after.play(mv.pit, e.rule);
    j["move"] = mv.text;
    j["value"] = mv.value;
    j["best"] = best_moves;
    j["position_after"] = format_position(after);
    j["source"] = source_name(e.source);
    return json_line(j);
}

}  // namespace kalah::analysis
