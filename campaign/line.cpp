// A campaign's root and its frame (campaign/line.h).
#include "campaign/line.h"

#include <sstream>
#include <stdexcept>

#include "campaign/journal.h"
#include "core/notation.h"

namespace kalah::campaign {

std::pair<int, int> RootFrame::margins(int lo, int hi) const {
    return sign > 0 ? std::pair{offset + lo, offset + hi} : std::pair{offset - hi, offset - lo};
}

Question RootFrame::question(const Question& q) const {
    // margin >= b  <=>  v >= b - offset (South moves)  <=>  v <= offset - b (North moves);
    // margin <= b likewise with the directions swapped.
    return Question{q.lower == (sign > 0), sign * (q.bound - offset)};
}

namespace {
// Plays the line; "" or the problem. b ends at the root.
std::string replay_line(const CampaignParams& p, Board& b) {
    b = Board::start(p.m, p.n);
    if (p.line.size() > size_t(kMaxLine))
        return "a line of " + std::to_string(p.line.size()) + " plies (at most " +
               std::to_string(kMaxLine) + ")";
    for (size_t i = 0; i < p.line.size(); ++i) {
        const int pit = p.line[i];
        const std::string ply = "ply " + std::to_string(i + 1);
        if (pit >= p.m)
            return ply + ": pit " + std::to_string(pit + 1) + " of " + std::to_string(p.m);
        const std::string name = pit_name(b.to_move(), pit);
        if (b.own_pit(pit) == 0) return ply + " (" + name + "): the pit is empty";
        b.play(pit, p.rule);
        if (b.over()) return ply + " (" + name + ") ends the game: a campaign needs a game to play";
    }
    return "";
}
}  // namespace

std::string check_line(const CampaignParams& p) {
    Board b;
    return replay_line(p, b);
}

RootFrame root_frame(const CampaignParams& p) {
    RootFrame f;
    if (const std::string bad = replay_line(p, f.board); !bad.empty())
        throw std::invalid_argument("campaign line: " + bad);
    f.offset = f.board.store(Side::South) - f.board.store(Side::North);
    f.sign = f.board.to_move() == Side::South ? 1 : -1;
    return f;
}

std::string line_text(const CampaignParams& p) {
    Board b = Board::start(p.m, p.n);
    std::string out;
    for (const uint8_t pit : p.line) {
        const Side side = b.to_move();
        const MoveResult r = b.play(pit, p.rule);
        if (!out.empty()) out += ' ';
        out += format_move(side, pit, r);
    }
    return out;
}

std::string plain_line_text(const CampaignParams& p) {
    Board b = Board::start(p.m, p.n);
    std::string out;
    for (const uint8_t pit : p.line) {
        if (!out.empty()) out += ' ';
        out += pit_name(b.to_move(), pit);
        if (pit < p.m && b.own_pit(pit) > 0 && !b.over()) b.play(pit, p.rule);
    }
    return out;
}

std::string margin_claim_text(const CampaignParams& p, bool lower, int bound) {
    const RootFrame f = root_frame(p);
    const int m = f.margin(bound);
    const bool margin_lower = lower == (f.sign > 0);
    const std::string line = line_text(p);
    return std::string("v ") + (margin_lower ? ">= " : "<= ") + (m >= 0 ? "+" : "") +
           std::to_string(m) + (line.empty() ? "" : " after " + line);
}

std::vector<uint8_t> parse_line(int m, int n, Rule rule, const std::string& moves) {
    Board b = Board::start(m, n);
    std::vector<PlayedMove> played;
    std::istringstream in(moves);
    std::string ply;
    while (in >> ply) {
        try {
            played.push_back(replay(b, ply, rule).front());
        } catch (const InputError& e) {
            throw InputError("--moves: ply " + std::to_string(played.size() + 1) + ": " + e.what());
        }
    }
    if (played.empty()) throw InputError("--moves: no move given");
    if (played.size() > size_t(kMaxLine))
        throw InputError("--moves: " + std::to_string(played.size()) +
                         " plies; a campaign's line "
                         "holds at most " +
                         std::to_string(kMaxLine));
    if (b.over())
        throw InputError("--moves: the game is over after '" + played.back().text +
                         "': a campaign needs a game to play");
    std::vector<uint8_t> line;
    for (const PlayedMove& mv : played) line.push_back(static_cast<uint8_t>(mv.pit));
    return line;
}

}  // namespace kalah::campaign
