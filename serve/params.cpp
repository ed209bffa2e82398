// The web API's parameter parser (serve/params.h).
#include "serve/params.h"

#include <charconv>

#include "analysis/reports.h"

namespace kalah::serve {

const std::set<std::string> kGameParams = {"position", "pits", "seeds", "rule", "moves"};

namespace {
// A name as it may be quoted back: short and printable, so that an error message cannot
// carry a long or hostile string.
std::string quoted(const std::string& name) {
    std::string s;
    for (unsigned char c : name.substr(0, 40)) s += (c >= 0x20 && c <= 0x7e) ? char(c) : '?';
    return "'" + s + "'";
}
}  // namespace

Params::Params(const std::multimap<std::string, std::string>& raw,
               const std::set<std::string>& endpoint_names) {
    for (const auto& [key, value] : raw) {
        if (!kGameParams.count(key) && !endpoint_names.count(key))
            throw InputError("unknown parameter " + quoted(key));
        if (raw.count(key) > 1) throw InputError("parameter " + quoted(key) + " given twice");
        const size_t cap = key == "moves" ? kMaxMovesChars : kMaxParamChars;
        if (value.size() > cap)
            throw InputError("parameter " + quoted(key) + " is longer than " + std::to_string(cap) +
                             " characters");
        for (unsigned char c : value)
            if (c < 0x20 || c > 0x7e)
                throw InputError("parameter " + quoted(key) +
                                 " holds a character that is not printable ASCII");
        // An empty record is no moves; any other parameter needs a value.
        if (value.empty() && key != "moves")
            throw InputError("parameter " + quoted(key) + " is empty");
        values_[key] = value;
    }
}

std::optional<std::string> Params::text(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::optional<int64_t> Params::integer(const std::string& name, int64_t lo, int64_t hi) const {
    auto t = text(name);
    if (!t) return std::nullopt;
    int64_t v = 0;
    const char* end = t->data() + t->size();
    auto [ptr, ec] = std::from_chars(t->data(), end, v);
    if (ec != std::errc() || ptr != end || v < lo || v > hi)
        throw InputError("parameter " + quoted(name) + " must be an integer " + std::to_string(lo) +
                         ".." + std::to_string(hi) + ", not '" + *t + "'");
    return v;
}

std::optional<uint64_t> Params::unsigned64(const std::string& name) const {
    auto t = text(name);
    if (!t) return std::nullopt;
    uint64_t v = 0;
    const char* end = t->data() + t->size();
    auto [ptr, ec] = std::from_chars(t->data(), end, v);
    if (ec != std::errc() || ptr != end)
        throw InputError("parameter " + quoted(name) + " must be an integer 0.." +
                         std::to_string(UINT64_MAX) + ", not '" + *t + "'");
    return v;
}

GameRequest parse_game(const Params& p) {
    GameRequest r;
    if (auto rule = p.text("rule")) {
        try {
            r.rule = parse_rule(*rule);
        } catch (const InputError& e) {
            throw InputError("parameter 'rule': " + std::string(e.what()));
        }
    }
    if (auto pos = p.text("position")) {
        if (p.has("pits") || p.has("seeds"))
            throw InputError("give either position or pits and seeds, not both");
        try {
            r.start = parse_position(*pos);
        } catch (const InputError& e) {
            throw InputError("parameter 'position': " + std::string(e.what()));
        }
    } else {
        if (!p.has("pits") && !p.has("seeds"))
            throw InputError("which position? give position=P, or pits=M&seeds=N (a start)");
        if (p.has("pits") != p.has("seeds"))
            throw InputError("parameters 'pits' and 'seeds' go together");
        const int m = int(*p.integer("pits", 1, kMaxPits));
        const int n = int(*p.integer("seeds", 1, kMaxSeeds));
        if (2 * m * n > kMaxSeeds)
            throw InputError("Kalah(" + std::to_string(m) + "," + std::to_string(n) + ") has " +
                             std::to_string(2 * m * n) + " seeds; at most " +
                             std::to_string(kMaxSeeds) + " are supported");
        r.start = Board::start(m, n);
    }
    r.board = r.start;
    if (auto moves = p.text("moves")) {
        try {
            r.played = analysis::replay_plies(r.board, *moves, r.rule);
        } catch (const InputError& e) {
            throw InputError("parameter 'moves': " + std::string(e.what()));
        }
    }
    return r;
}

}  // namespace kalah::serve
