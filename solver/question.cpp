#include "solver/question.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <vector>

#include "core/notation.h"
#include "core/step.h"
#include "solver/solver.h"

namespace kalah {

namespace {

std::string signed_number(int v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%+d", v);
    return buf;
}
}  // namespace

int Question::beta(int seeds) const { return round_up(seeds, lower ? bound : bound + 1); }

std::string Question::text() const { return (lower ? ">= " : "<= ") + signed_number(bound); }

std::string Question::name() const {
    if (lower && bound == 1) return "win";
    if (!lower && bound == -1) return "loss";
    if (lower && bound == 0) return "not a loss";
    if (!lower && bound == 0) return "not a win";
    return "";
}

std::optional<Question> parse_question(const std::string& text) {
    std::string t;
    for (const char c : text)
        if (!std::isspace(static_cast<unsigned char>(c)))
            t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t == "win") return Question{true, 1};
    if (t == "loss") return Question{false, -1};
    if (!t.empty() && t[0] == 'v') t.erase(0, 1);
    bool lower, strict;
    size_t at;
    if (t.rfind(">=", 0) == 0)
        lower = true, strict = false, at = 2;
    else if (t.rfind("<=", 0) == 0)
        lower = false, strict = false, at = 2;
    else if (t.rfind('>', 0) == 0)
        lower = true, strict = true, at = 1;
    else if (t.rfind('<', 0) == 0)
        lower = false, strict = true, at = 1;
    else
        return std::nullopt;
    if (at < t.size() && t[at] == '+' && at + 1 < t.size() &&
        std::isdigit(static_cast<unsigned char>(t[at + 1])))
        ++at;
    if (at >= t.size()) return std::nullopt;
    int b = 0;
    const char* first = t.data() + at;
    const char* last = t.data() + t.size();
    const auto [end, ec] = std::from_chars(first, last, b);
    if (ec != std::errc() || end != last || b < -1000 || b > 1000) return std::nullopt;
    if (strict) b += lower ? 1 : -1;
    return Question{lower, b};
}

std::string bound_text(bool lower, int bound) {
    return std::string("v ") + (lower ? ">= " : "<= ") + signed_number(bound);
}

BoundAnswer settle(Solver& solver, const Board& b, Rule rule, const Question& q, bool find_move) {
    BoundAnswer a;
    a.question = q;
    if (b.over()) {
        const int v = solver.value(b);
        a.lower = a.upper = v;
        a.proved = q.lower ? v >= q.bound : v <= q.bound;
        return a;
    }
    // Both kinds ask "V >= B?" (an upper question v <= bound is its negation with B =
    // bound + 1). With sd the mover's store minus the other's and pv the mover's pits value:
    // South to move: V = sd + pv, so V >= B <=> pv >= B - sd;
    // North to move: V = -(sd + pv), so V >= B <=> pv <= -B - sd <=> not pv >= -B - sd + 1.
    const bool south = b.to_move() == Side::South;
    const int sd = b.own_store() - b.opp_store();
    const int s = b.seeds_in_pits();
    const int big_b = q.lower ? q.bound : q.bound + 1;
    const int t = round_up(s, south ? big_b - sd : -big_b - sd + 1);
    const int r = solver.test(b, t);
    const bool at_least = r >= t;  // pv >= r; else pv <= r
    const bool v_at_least_b = at_least == south;
    a.proved = q.lower == v_at_least_b;
    const int plo = at_least ? r : -s, phi = at_least ? s : r;
    a.lower = south ? sd + plo : -(sd + phi);
    a.upper = south ? sd + phi : -(sd + plo);
    if (!find_move || !at_least) return a;
    // The mover holds pv >= t: some move keeps V on the mover's side of that bound.
    const Question keep = south ? Question{true, sd + t} : Question{false, -(sd + t)};
    a.kept = keep;
    std::vector<int> order;
    const int hint = solver.table_move(b);
    if (hint >= 0) order.push_back(hint);
    for (const int p : b.legal_moves())
        if (p != hint) order.push_back(p);
    for (const int p : order) {
        Board c = b;
        const MoveResult mr = c.play(p, rule);
        if (settle(solver, c, rule, keep, false).proved) {
            a.move = p;
            a.move_text = format_move(b.to_move(), p, mr);
            return a;
        }
    }
    return a;
}

}  // namespace kalah
