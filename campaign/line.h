// A campaign's root: the start of Kalah(m,n), or the position a line of moves from the
// start leads to, and the map between the root's pits value and South's final margin.
#pragma once

// A campaign rooted at a line (`kalah campaign --moves "A1 A3"`) proves bounds on one first
// turn, or any other line, of Kalah(m,n). Its proof tree is rooted at the position after the
// line, pits only and from its mover's view (campaign/tree.h), and its journal's records are
// facts about positions, whatever the root (so a line's campaign may start from another
// campaign's records: --import). What people ask and read stays South's final margin at the
// start of the game: the root's pits value v maps to it by
//
//     margin = offset + sign * v
//
// with offset the stores' difference (South's minus North's) after the line and sign +1
// when South moves at the root, -1 when North does. The start itself: offset 0, sign +1.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/board.h"
#include "solver/question.h"

namespace kalah::campaign {

struct CampaignParams;

// The longest line a journal's header holds (campaign/journal.h).
constexpr int kMaxLine = 32;

struct RootFrame {
    Board board;  // the position after the line: stores and side to move as played
    int offset = 0;
    int sign = 1;

    // South's margin for the root's pits value v, and back.
    int margin(int v) const { return offset + sign * v; }
    int value(int margin) const { return sign * (margin - offset); }
    // Bounds lo <= v <= hi as bounds on South's margin (swapped when North moves).
    std::pair<int, int> margins(int lo, int hi) const;
    // A question on South's margin as the same question on the root's pits value.
    Question question(const Question& q) const;
};

// Replays p's line from the start of Kalah(p.m, p.n): "" when every ply is a legal move
// (a non-empty pit of the side to move, 0-based in its own numbering) and the game is not
// over after the last one, else what is wrong ("ply 3 (A2): the pit is empty").
std::string check_line(const CampaignParams& p);
// The root of p (check_line must have passed; else std::invalid_argument).
RootFrame root_frame(const CampaignParams& p);
// The line in notation ("A1+ A3"), "" for none; plain: the pits alone ("A1 A3"), as a
// certificate writes it (docs/certificate.md).
std::string line_text(const CampaignParams& p);
std::string plain_line_text(const CampaignParams& p);
// A claim "v >= b" (lower) or "v <= b" on the root's pits value as South's margin:
// "v >= +2" at the start, "v <= +0 after A1+ A4" after a line.
std::string margin_claim_text(const CampaignParams& p, bool lower, int bound);
// The pits of a line in notation from the start, as the campaign's header keeps them
// (throws InputError naming the ply for an illegal one, and for one that ends the game or
// a line longer than kMaxLine).
std::vector<uint8_t> parse_line(int m, int n, Rule rule, const std::string& moves);

}  // namespace kalah::campaign
