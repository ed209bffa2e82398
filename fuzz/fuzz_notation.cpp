// libFuzzer target: the text parsers of core/notation.h (positions, moves, game records).
// Any input may be rejected with InputError; a crash, a sanitizer report, a hang or a
// broken round trip is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/notation.h"

namespace {

using namespace kalah;

// Whatever parses must format back to text that parses to the same board.
void position(const std::string& text) {
    Board b;
    try {
        b = parse_position(text);
    } catch (const InputError&) {
        return;
    }
    const std::string again = format_position(b);
    if (format_position(parse_position(again)) != again) __builtin_trap();
}

// A move of a fixed board (6 pits a side): parse, and if it names a pit, format what it
// claims.
void move(const std::string& text) {
    try {
        const MoveText mv = parse_move(text, 6);
        if (mv.pit < 0 || mv.pit >= 6) __builtin_trap();
        (void)format_move(mv.side, mv.pit, mv.suffix);
    } catch (const InputError&) {
    }
}

// Moves replayed from `start`: every move the replay accepts, written back as the replay
// wrote it, replays to the same board.
void moves(const Board& start, const std::string& text, Rule rule) {
    Board b = start;
    std::vector<PlayedMove> played;
    try {
        played = replay(b, text, rule);
    } catch (const InputError&) {
        return;
    }
    std::string again;
    for (const PlayedMove& p : played) again += p.text + " ";
    Board b2 = start;
    replay(b2, again, rule);
    if (format_position(b2) != format_position(b)) __builtin_trap();
}

// A record: the first line is the position, the rest the moves replayed from it.
void record(const std::string& text, Rule rule) {
    const size_t eol = text.find('\n');
    if (eol == std::string::npos) return;
    Board b;
    try {
        b = parse_position(text.substr(0, eol));
    } catch (const InputError&) {
        return;
    }
    moves(b, text.substr(eol + 1), rule);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    position(text);
    move(text);
    // The whole input as a move list from the start of Kalah(6,4), and as a record.
    const Board start = Board::start(6, 4);
    for (Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
        moves(start, text, rule);
        record(text, rule);
    }
    try {
        (void)parse_rule(text);
    } catch (const InputError&) {
    }
    return 0;
}
