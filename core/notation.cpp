// Parsing and formatting of positions, moves and game records.
#include "core/notation.h"

#include <cctype>
#include <sstream>

namespace kalah {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

// A non-negative decimal count; `what` names it in the error.
int parse_count(const std::string& s, const std::string& what) {
    if (s.empty()) throw InputError("empty " + what);
    if (s[0] == '-') throw InputError("negative " + what + " '" + s + "'");
    long v = 0;
    for (char c : s) {
        if (!std::isdigit(static_cast<unsigned char>(c)))
            throw InputError("non-numeric " + what + " '" + s + "'");
        v = v * 10 + (c - '0');
        if (v > 1000000) throw InputError(what + " '" + s + "' is too large");
    }
    return static_cast<int>(v);
}

}  // namespace

Board parse_position(const std::string& text) {
    auto parts = split(text, '/');
    if (parts.size() != 4)
        throw InputError("position '" + text +
                         "' must have 4 '/'-separated fields: A pits/B pits/stores/side");
    auto a = split(parts[0], ',');
    auto b = split(parts[1], ',');
    if (a.size() != b.size())
        throw InputError("position has " + std::to_string(a.size()) + " A pits but " +
                         std::to_string(b.size()) + " B pits");
    if (a.size() < 1 || a.size() > kMaxPits)
        throw InputError("position has " + std::to_string(a.size()) +
                         " pits per side; 1 to 6 are supported");
    const int m = static_cast<int>(a.size());
    int south[kMaxPits], north[kMaxPits];
    long total = 0;
    for (int i = 0; i < m; ++i) {
        south[i] = parse_count(a[i], "seed count of A" + std::to_string(i + 1));
        north[i] = parse_count(b[i], "seed count of B" + std::to_string(i + 1));
        total += south[i] + north[i];
    }
    auto stores = split(parts[2], ',');
    if (stores.size() != 2) throw InputError("stores field '" + parts[2] + "' must be 'A,B'");
    int sa = parse_count(stores[0], "store of A");
    int sb = parse_count(stores[1], "store of B");
    total += sa + sb;
    if (total > kMaxSeeds)
        throw InputError("position holds " + std::to_string(total) + " seeds; at most " +
                         std::to_string(kMaxSeeds) + " are supported");
    if (total == 0) throw InputError("position holds no seeds");
    Side side;
    if (parts[3] == "A")
        side = Side::South;
    else if (parts[3] == "B")
        side = Side::North;
    else
        throw InputError("side to move '" + parts[3] + "' must be A or B");
    return Board::from_rows(m, south, north, sa, sb, side);
}

std::string format_position(const Board& b) {
    std::ostringstream os;
    for (Side s : {Side::South, Side::North}) {
        for (int i = 0; i < b.pits(); ++i) os << (i ? "," : "") << b.pit(s, i);
        os << '/';
    }
    os << b.store(Side::South) << ',' << b.store(Side::North) << '/'
       << (b.to_move() == Side::South ? 'A' : 'B');
    return os.str();
}

Rule parse_rule(const std::string& text) {
    if (text == "standard") return Rule::Standard;
    if (text == "empty-capture") return Rule::EmptyCapture;
    throw InputError("unknown rule '" + text + "': use standard or empty-capture");
}

std::string rule_name(Rule r) { return r == Rule::Standard ? "standard" : "empty-capture"; }

std::string pit_name(Side side, int pit) {
    return std::string(1, side == Side::South ? 'A' : 'B') + std::to_string(pit + 1);
}

MoveText parse_move(const std::string& text, int m) {
    MoveText mv;
    size_t i = 0;
    if (text.empty()) throw InputError("empty move");
    char c = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    if (c != 'A' && c != 'B')
        throw InputError("move '" + text + "' must start with A or B and a pit number");
    mv.side = c == 'A' ? Side::South : Side::North;
    ++i;
    size_t digits = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == digits) throw InputError("move '" + text + "' has no pit number");
    // One digit names every pit (m <= 6); refuse longer numbers rather than misread them.
    if (i - digits > 1 || text[digits] == '0')
        throw InputError("move '" + text + "' names pit " + text.substr(digits, i - digits) +
                         " but the board has pits 1.." + std::to_string(m));
    int pit = text[digits] - '0';
    if (pit < 1 || pit > m)
        throw InputError("move '" + text + "' names pit " + std::to_string(pit) +
                         " but the board has pits 1.." + std::to_string(m));
    mv.pit = pit - 1;
    if (i < text.size()) {
        mv.has_suffix = true;
        if (text[i] == '+') {
            mv.suffix.extra = true;
            ++i;
        } else if (text[i] == 'x') {
            ++i;
            size_t start = i;
            while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
            if (i == start || i - start > 3)
                throw InputError("move '" + text + "' has a capture suffix without a count");
            const int count = std::stoi(text.substr(start, i - start));
            if (count == 0) throw InputError("move '" + text + "' claims a capture of 0 seeds");
            if (count > kMaxSeeds)  // would wrap in the uint8_t field
                throw InputError("move '" + text + "' claims a capture of more than " +
                                 std::to_string(kMaxSeeds) + " seeds");
            mv.suffix.captured = static_cast<uint8_t>(count);
        }
        if (i < text.size() && text[i] == '#') {
            mv.suffix.over = true;
            ++i;
        }
        if (i != text.size())
            throw InputError("move '" + text + "' has an unknown suffix '" + text.substr(i) + "'");
    }
    return mv;
}

std::string format_move(Side side, int pit, const MoveResult& r) {
    std::string s = pit_name(side, pit);
    if (r.extra) s += '+';
    if (r.captured) s += 'x' + std::to_string(r.captured);
    if (r.over) s += '#';
    return s;
}

std::vector<PlayedMove> replay(Board& b, const std::string& record, Rule rule) {
    std::vector<PlayedMove> played;
    std::istringstream in(record);
    std::string tok;
    while (in >> tok) {
        MoveText mv = parse_move(tok, b.pits());
        if (b.over()) throw InputError("move '" + tok + "' comes after the game ended");
        if (mv.side != b.to_move())
            throw InputError(std::string("move '") + tok + "' is out of turn: " +
                             (b.to_move() == Side::South ? "A" : "B") + " is to move");
        if (b.own_pit(mv.pit) == 0)
            throw InputError("move '" + tok + "' is illegal: pit " + pit_name(mv.side, mv.pit) +
                             " is empty");
        MoveResult r = b.play(mv.pit, rule);
        std::string text = format_move(mv.side, mv.pit, r);
        if (mv.has_suffix && (mv.suffix.extra != r.extra || mv.suffix.captured != r.captured ||
                              mv.suffix.over != r.over))
            throw InputError("move '" + tok + "' has the wrong suffix: the move is " + text);
        played.push_back({mv.side, mv.pit, r, text});
    }
    return played;
}

}  // namespace kalah
