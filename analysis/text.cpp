// Text of positions for people (analysis/text.h).
#include "analysis/text.h"

namespace kalah::analysis {

int final_store(const Board& b, Side s) {
    int row = 0;
    for (int i = 0; i < b.pits(); ++i) row += b.pit(s, i);
    return b.store(s) + row;
}

std::string draw_board(const Board& b) {
    const int m = b.pits();
    auto cell = [](int v) {
        std::string t = std::to_string(v);
        return std::string(t.size() < 3 ? 3 - t.size() : 0, ' ') + t + " ";
    };
    auto label = [](char side, int i) {
        std::string t = std::string(1, side) + std::to_string(i);
        return " " + t + "  ";
    };
    std::string out = "        ";
    for (int i = m; i >= 1; --i) out += label('B', i);
    out += "\n        ";
    for (int i = m - 1; i >= 0; --i) out += cell(b.pit(Side::North, i)) + " ";
    out += "\n  " + cell(b.store(Side::North)) + std::string(5 * m + 2, ' ') +
           cell(b.store(Side::South)) + "\n        ";
    for (int i = 0; i < m; ++i) out += cell(b.pit(Side::South, i)) + " ";
    out += "\n        ";
    for (int i = 1; i <= m; ++i) out += label('A', i);
    out += "\n";
    if (b.over()) {
        int a = final_store(b, Side::South), n = final_store(b, Side::North);
        out += "  game over: A " + std::to_string(a) + " - B " + std::to_string(n) + "\n";
    } else {
        out += std::string("  ") + (b.to_move() == Side::South ? "A" : "B") + " to move\n";
    }
    return out;
}

const char* source_text(AnswerSource s) {
    switch (s) {
        case AnswerSource::Book:
            return "from the opening book";
        case AnswerSource::Database:
            return "from the endgame database";
        case AnswerSource::Search:
            break;
    }
    return "searched";
}

}  // namespace kalah::analysis
