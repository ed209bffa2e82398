// The web API's own parameter parser: a request's query parameters, checked and typed into
// the request the endpoints run, with a 400 message that names the bad parameter. The CLI
// parses its options with Boost.Program_options; a web request never goes through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/notation.h"

namespace kalah::serve {

// Length caps of the parameters (README, "Web API").
inline constexpr size_t kMaxMovesChars = 4000;
inline constexpr size_t kMaxParamChars = 200;

// The parameters of one request after the checks every endpoint shares: known names only
// (the game's and the endpoint's), each at most once, printable ASCII, within the caps,
// non-empty except `moves`. Every failure throws InputError naming the parameter.
class Params {
  public:
    Params(const std::multimap<std::string, std::string>& raw,
           const std::set<std::string>& endpoint_names);
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    std::optional<std::string> text(const std::string& name) const;
    // A decimal integer in lo..hi, or InputError "parameter 'pits' must be ...".
    std::optional<int64_t> integer(const std::string& name, int64_t lo, int64_t hi) const;
    std::optional<uint64_t> unsigned64(const std::string& name) const;

  private:
    std::map<std::string, std::string> values_;
};

// The names every endpoint takes: position | pits & seeds, rule, moves.
extern const std::set<std::string> kGameParams;

// The game a request names: the start position, the moves played from it (`moves`, in
// the notation of rules.md), the position they reach and the rule.
struct GameRequest {
    Board start, board;
    Rule rule = Rule::Standard;
    std::vector<PlayedMove> played;
};
GameRequest parse_game(const Params& p);  // throws InputError

}  // namespace kalah::serve
