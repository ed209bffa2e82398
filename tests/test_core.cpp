// Game core: bitboard Board against the reference engine, perft counts, rules.md examples.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/board.h"
#include "core/le.h"
#include "core/notation.h"
#include "core/step.h"
#include "random_position.h"
#include "reference_engine.h"

namespace {

using kalah::Board;
using kalah::MoveResult;
using kalah::Rule;
using kalah::Side;

constexpr Rule kRules[] = {Rule::Standard, Rule::EmptyCapture};

std::string describe(const ref::Pos& p) {
    std::ostringstream s;
    for (int i = 0; i < p.m; ++i) s << (i ? "," : "") << p.a[i];
    s << "/";
    for (int i = 0; i < p.m; ++i) s << (i ? "," : "") << p.b[i];
    s << "/" << p.store_a << "," << p.store_b << "/" << (p.south_to_move ? "A" : "B");
    return s.str();
}

// Counts moves played by the differential tests and the first disagreement seen.
struct Diff {
    long moves = 0;
    long mismatches = 0;
    std::string first;

    void fail(const std::string& what) {
        if (mismatches++ == 0) first = what;
    }

    // Board and reference must describe the same position, game state and legal moves.
    template <class Ctx>
    bool same_state(const Board& b, const ref::Pos& p, Ctx ctx) {
        if (!(ref::from_board(b) == p) || !(b == ref::to_board(p))) {
            fail(ctx() + ": board " + describe(ref::from_board(b)) + " vs ref " + describe(p));
            return false;
        }
        if (b.over() != ref::over(p)) {
            fail(ctx() + ": over() differs at " + describe(p));
            return false;
        }
        unsigned mask = 0;
        for (int pit : ref::legal(p)) mask |= 1u << pit;
        if (b.legal_mask() != mask) {
            fail(ctx() + ": legal moves differ at " + describe(p));
            return false;
        }
        return true;
    }

    // Plays `pit` on both engines and compares everything; false on a disagreement.
    bool step(Board& b, ref::Pos& p, int pit, Rule rule) {
        const ref::Pos before = p;
        MoveResult r = b.play(pit, rule);
        ref::Result q = ref::play(p, pit, rule);
        ++moves;
        // The context text is built only when needed: it would dominate the runtime.
        auto ctx = [&] {
            return describe(before) + " pit " + std::to_string(pit) + " " + kalah::rule_name(rule);
        };
        if (r.extra != q.extra || r.over != q.over || r.captured != q.captured) {
            fail(ctx() + ": result (extra,over,captured) board " + std::to_string(r.extra) + "," +
                 std::to_string(r.over) + "," + std::to_string(r.captured) + " ref " +
                 std::to_string(q.extra) + "," + std::to_string(q.over) + "," +
                 std::to_string(q.captured));
            return false;
        }
        return same_state(b, p, ctx);
    }
};

int total_seeds(const ref::Pos& p) {
    int t = p.store_a + p.store_b;
    for (int i = 0; i < p.m; ++i) t += p.a[i] + p.b[i];
    return t;
}

// An arbitrary (not necessarily reachable) position with at most kMaxSeeds seeds:
// several seed distributions, including pits that lap the board and exact laps.
ref::Pos random_position(std::mt19937_64& rng, int m) {
    ref::Pos p{};
    p.m = m;
    const int len = 2 * m + 1;
    auto uni = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
    int mode = uni(0, 4);
    for (int i = 0; i < m; ++i) {
        switch (mode) {
            case 0:  // small counts, many empty pits (captures, empty rows)
                p.a[i] = uni(0, 3) == 0 ? uni(0, 3) : 0;
                p.b[i] = uni(0, 3) == 0 ? uni(0, 3) : 0;
                break;
            case 1:
                p.a[i] = uni(0, 6);
                p.b[i] = uni(0, 6);
                break;
            case 2:
                p.a[i] = uni(0, 15);
                p.b[i] = uni(0, 15);
                break;
            default:
                p.a[i] = uni(0, 2) ? uni(0, 4) : 0;
                p.b[i] = uni(0, 2) ? uni(0, 4) : 0;
                break;
        }
    }
    p.store_a = uni(0, 3) ? uni(0, 30) : 0;
    p.store_b = uni(0, 3) ? uni(0, 30) : 0;
    p.south_to_move = rng() & 1;
    int* own = p.south_to_move ? p.a : p.b;
    if (mode >= 3) {
        // One big pit of the mover: an exact number of laps, one off it, or anything.
        int pit = uni(0, m - 1);
        int laps = uni(1, 127 / len);
        int k = mode == 3 ? laps * len + uni(-1, 1) : uni(1, 127);
        own[pit] = k < 1 ? 1 : k;
    }
    // Trim to the board's capacity: first the stores, then random pits.
    while (total_seeds(p) > kalah::kMaxSeeds) {
        int excess = total_seeds(p) - kalah::kMaxSeeds;
        if (p.store_a + p.store_b > 0) {
            int& s = p.store_a > 0 ? p.store_a : p.store_b;
            int take = std::min(s, excess);
            s -= take;
            continue;
        }
        int* row = uni(0, 1) ? p.a : p.b;
        int& c = row[uni(0, m - 1)];
        c -= std::min(c, excess);
    }
    return p;
}

// Leaf count to `depth` plies; a finished game is a leaf. Extra moves count as plies.
long perft_ref(const ref::Pos& p, int depth, Rule rule) {
    if (depth == 0 || ref::over(p)) return 1;
    long n = 0;
    for (int pit : ref::legal(p)) {
        ref::Pos c = p;
        ref::play(c, pit, rule);
        n += perft_ref(c, depth - 1, rule);
    }
    return n;
}

long perft_board(const Board& b, int depth, Rule rule) {
    if (depth == 0 || b.over()) return 1;
    long n = 0;
    for (int pit : b.legal_moves()) {
        Board c = b;
        c.play(pit, rule);
        n += perft_board(c, depth - 1, rule);
    }
    return n;
}

Board rows(int m, std::vector<int> south, std::vector<int> north, int sa, int sb, Side side) {
    return Board::from_rows(m, south.data(), north.data(), sa, sb, side);
}

}  // namespace

TEST_SUITE("core") {
    TEST_CASE("differential: random playouts from the start, every m, both rules") {
        std::mt19937_64 rng(20261129);
        Diff d;
        for (int m = 1; m <= 6; ++m) {
            for (int n = 1; n <= 12 && 2 * m * n <= kalah::kMaxSeeds; ++n) {
                // Small n are where most positions live; larger n exercise laps.
                if (n > 6 && n % 3 != 0 && 2 * m * n <= 72) continue;
                for (Rule rule : kRules) {
                    const long target = d.moves + 20000;
                    while (d.moves < target && d.mismatches == 0) {
                        Board b = Board::start(m, n);
                        ref::Pos p = ref::start(m, n);
                        while (!ref::over(p)) {
                            auto moves = ref::legal(p);
                            if (!d.step(b, p, moves[rng() % moves.size()], rule)) break;
                        }
                    }
                }
            }
        }
        INFO("first mismatch: " << d.first);
        CHECK(d.mismatches == 0);
        CHECK(d.moves > 1500000);
        MESSAGE("reachable-position moves compared: " << d.moves);
    }

    TEST_CASE("differential: arbitrary positions, big pits and exact laps") {
        std::mt19937_64 rng(7);
        Diff d;
        long positions = 0;
        for (int m = 1; m <= 6; ++m) {
            for (Rule rule : kRules) {
                for (int i = 0; i < 120000 && d.mismatches == 0; ++i) {
                    ref::Pos p = random_position(rng, m);
                    Board b = ref::to_board(p);
                    ++positions;
                    if (!d.same_state(b, p, [&] { return "construct " + describe(p); })) break;
                    // A few moves from there (the first one from the arbitrary position).
                    for (int ply = 0; ply < 8 && !ref::over(p); ++ply) {
                        auto moves = ref::legal(p);
                        if (!d.step(b, p, moves[rng() % moves.size()], rule)) break;
                    }
                }
            }
        }
        INFO("first mismatch: " << d.first);
        CHECK(d.mismatches == 0);
        CHECK(positions == 6 * 2 * 120000);
        MESSAGE("arbitrary positions: " << positions << ", moves compared: " << d.moves);
    }

    TEST_CASE("differential: every pit and seed count, alone on its row") {
        // Deterministic sweep: each m, each pit, k = 1..127 seeds in that pit alone
        // (plus one opposite seed or not), both rules, both sides to move.
        Diff d;
        for (int m = 1; m <= 6; ++m)
            for (int pit = 0; pit < m; ++pit)
                for (int k = 1; k <= kalah::kMaxSeeds - 2; ++k)
                    for (int facing = 0; facing <= 1; ++facing)
                        for (bool south : {true, false})
                            for (Rule rule : kRules) {
                                ref::Pos p{};
                                p.m = m;
                                p.south_to_move = south;
                                int* own = south ? p.a : p.b;
                                int* opp = south ? p.b : p.a;
                                own[pit] = k;
                                opp[m - 1 - pit] = facing;
                                opp[0] += 1;  // keep the opponent's row non-empty
                                Board b = ref::to_board(p);
                                d.step(b, p, pit, rule);
                            }
        INFO("first mismatch: " << d.first);
        CHECK(d.mismatches == 0);
    }

    TEST_CASE("perft: Board agrees with the reference engine") {
        struct Case {
            int m, n, depth;
        };
        const Case cases[] = {{1, 1, 6}, {2, 2, 8}, {3, 3, 7}, {4, 3, 6},
                              {5, 4, 5}, {6, 4, 5}, {6, 6, 5}, {6, 10, 4}};
        for (const Case& c : cases)
            for (Rule rule : kRules) {
                CAPTURE(c.m);
                CAPTURE(c.n);
                CAPTURE(c.depth);
                CHECK(perft_board(Board::start(c.m, c.n), c.depth, rule) ==
                      perft_ref(ref::start(c.m, c.n), c.depth, rule));
            }
    }

    TEST_CASE("perft: pinned leaf counts") {
        // These literals were computed with the reference engine (tests/reference_engine.h,
        // perft_ref above), not with Board; Board must reproduce them.
        CHECK(perft_board(Board::start(6, 4), 1, Rule::Standard) == 6);
        struct Pin {
            int m, n, depth;
            Rule rule;
            long leaves;
        };
        const Pin pins[] = {
            {6, 4, 7, Rule::Standard, 114430},  {6, 4, 7, Rule::EmptyCapture, 113959},
            {6, 6, 8, Rule::Standard, 962153},  {6, 6, 8, Rule::EmptyCapture, 961846},
            {5, 4, 8, Rule::Standard, 134771},  {5, 4, 8, Rule::EmptyCapture, 134534},
            {4, 3, 12, Rule::Standard, 940713}, {4, 3, 12, Rule::EmptyCapture, 905507},
            {3, 3, 14, Rule::Standard, 51745},  {3, 3, 14, Rule::EmptyCapture, 45212},
            {2, 3, 14, Rule::Standard, 45},     {2, 3, 14, Rule::EmptyCapture, 42},
        };
        for (const Pin& p : pins) {
            CAPTURE(p.m);
            CAPTURE(p.n);
            CAPTURE(p.depth);
            CHECK(perft_board(Board::start(p.m, p.n), p.depth, p.rule) == p.leaves);
        }
    }

    TEST_CASE("rules.md examples 1 and 2: A3+ then A6") {
        Board b = Board::start(6, 4);
        MoveResult r = b.play(2, Rule::Standard);
        CHECK(r.extra);
        CHECK(!r.over);
        CHECK(r.captured == 0);
        CHECK(b.to_move() == Side::South);
        CHECK(kalah::format_position(b) == "4,4,0,5,5,5/4,4,4,4,4,4/1,0/A");
        CHECK(kalah::format_move(Side::South, 2, r) == "A3+");
        r = b.play(5, Rule::Standard);
        CHECK(!r.extra);
        CHECK(r.captured == 0);
        CHECK(b.to_move() == Side::North);
        CHECK(kalah::format_position(b) == "4,4,0,5,5,0/5,5,5,5,4,4/2,0/B");
        CHECK(b.seeds_in_pits() + b.store(Side::South) + b.store(Side::North) == 48);
    }

    TEST_CASE("rules.md example 3: capture A2x6") {
        for (Rule rule : kRules) {
            Board b = rows(6, {4, 1, 0, 4, 4, 4}, {4, 4, 4, 5, 4, 4}, 0, 0, Side::South);
            MoveResult r = b.play(1, rule);
            CHECK(r.captured == 6);
            CHECK(!r.extra);
            CHECK(kalah::format_move(Side::South, 1, r) == "A2x6");
            CHECK(kalah::format_position(b) == "4,0,0,4,4,4/4,4,4,0,4,4/6,0/B");
        }
    }

    TEST_CASE("rules.md example 4: empty opposite pit, standard vs empty-capture") {
        Board s = rows(6, {4, 1, 0, 4, 4, 4}, {4, 4, 4, 0, 4, 4}, 0, 0, Side::South);
        Board e = s;
        MoveResult rs = s.play(1, Rule::Standard);
        CHECK(rs.captured == 0);
        CHECK(kalah::format_position(s) == "4,0,1,4,4,4/4,4,4,0,4,4/0,0/B");
        CHECK(kalah::format_move(Side::South, 1, rs) == "A2");
        MoveResult re = e.play(1, Rule::EmptyCapture);
        CHECK(re.captured == 1);
        CHECK(kalah::format_position(e) == "4,0,0,4,4,4/4,4,4,0,4,4/1,0/B");
        CHECK(kalah::format_move(Side::South, 1, re) == "A2x1");
    }

    TEST_CASE("rules.md example 5: exact lap of 13 seeds captures A2x2") {
        for (Rule rule : kRules) {
            Board b = rows(6, {4, 13, 4, 4, 4, 4}, {4, 4, 4, 4, 0, 4}, 0, 0, Side::South);
            MoveResult r = b.play(1, rule);
            CHECK(r.captured == 2);
            CHECK(kalah::format_move(Side::South, 1, r) == "A2x2");
            // 1 sown into the store + 2 captured; A2 and B5 end empty.
            CHECK(kalah::format_position(b) == "5,0,5,5,5,5/5,5,5,5,0,5/3,0/B");
        }
    }

    TEST_CASE("rules.md example 6: end sweep 26-22") {
        for (Rule rule : kRules) {
            Board b = rows(6, {1, 1, 1, 1, 1, 0}, {0, 0, 0, 0, 0, 1}, 21, 21, Side::North);
            MoveResult r = b.play(5, rule);  // B6: last seed in North's store, row empty
            CHECK(r.over);
            CHECK(!r.extra);  // the game ended, so no extra move
            CHECK(b.over());
            CHECK(b.store(Side::South) == 26);
            CHECK(b.store(Side::North) == 22);
            CHECK(b.seeds_in_pits() == 0);
            CHECK(kalah::format_move(Side::North, 5, r) == "B6#");
        }
    }

    TEST_CASE("move step: the gain is the mover's change of store difference") {
        std::mt19937 rng(35);
        long moves = 0;
        for (int m = 1; m <= kalah::kMaxPits; ++m)
            for (Rule rule : kRules)
                for (int t = 0; t < 300; ++t) {
                    const Board b =
                        random_position(rng, m, 2 + int(rng() % (8 * m)));  // both rows non-empty
                    const Side mover = b.to_move();
                    const int before = b.store(mover) - b.store(kalah::other(mover));
                    for (int p : b.legal_moves()) {
                        Board c = b, d = b;
                        const kalah::MoveStep st = kalah::play_step(c, p, rule);
                        const MoveResult r = d.play(p, rule);
                        INFO(kalah::format_position(b), " pit ", p);
                        CHECK(c == d);
                        CHECK(st.extra == r.extra);
                        CHECK(st.over == r.over);
                        CHECK(st.captured == r.captured);
                        CHECK(st.gain == d.store(mover) - d.store(kalah::other(mover)) - before);
                        // The same step from the pits alone.
                        Board e = b.without_stores();
                        const kalah::MoveStep sp = kalah::play_step_from_pits(e, p, rule);
                        if (!st.over) CHECK(e.without_stores() == c.without_stores());
                        CHECK(sp.extra == st.extra);
                        CHECK(sp.over == st.over);
                        CHECK(sp.captured == st.captured);
                        CHECK(sp.gain == st.gain);
                        ++moves;
                    }
                }
        CHECK(moves > 10000);
    }

    TEST_CASE("move step: the gains of a whole game add up to its final margin") {
        std::mt19937 rng(5);
        for (int m = 1; m <= kalah::kMaxPits; ++m)
            for (Rule rule : kRules)
                for (int n = 1; n <= 6; ++n) {
                    Board b = Board::start(m, n);
                    int south = 0;  // South's store difference, summed from the gains
                    while (!b.over()) {
                        const kalah::MoveList ml = b.legal_moves();
                        const Side mover = b.to_move();
                        const kalah::MoveStep st =
                            kalah::play_step(b, ml.pit[rng() % unsigned(ml.size)], rule);
                        south += mover == Side::South ? st.gain : -st.gain;
                    }
                    CHECK(south == b.store(Side::South) - b.store(Side::North));
                }
    }

    TEST_CASE("move step: value, child value, bounds, window and threshold agree") {
        for (const bool extra : {false, true})
            for (int gain = -12; gain <= 12; ++gain) {
                kalah::MoveStep st;
                st.extra = extra;
                st.gain = gain;
                for (int v = -20; v <= 20; ++v) {
                    CHECK(st.child_value(st.value(v)) == v);
                    for (int beta = -30; beta <= 30; ++beta) {
                        // The parent's test "value >= beta" is the child's test at
                        // child_beta(beta), negated after a move that passes the turn.
                        const bool child_yes = v >= st.child_beta(beta);
                        CHECK((st.value(v) >= beta) == (extra ? child_yes : !child_yes));
                        for (int alpha = beta - 3; alpha < beta; ++alpha) {
                            const auto w = st.child_window(alpha, beta);
                            CHECK((alpha < st.value(v) && st.value(v) < beta) ==
                                  (w.alpha < v && v < w.beta));
                        }
                    }
                }
                for (int lo = -6; lo <= 6; ++lo)
                    for (int hi = lo; hi <= 6; ++hi) {
                        int least = 1000, most = -1000;
                        for (int v = lo; v <= hi; ++v)
                            least = std::min(least, st.value(v)),
                            most = std::max(most, st.value(v));
                        CHECK(st.lower(lo, hi) == least);
                        CHECK(st.upper(lo, hi) == most);
                    }
            }
        for (int seeds = 0; seeds < 6; ++seeds)
            for (int r = -9; r <= 9; ++r) {
                CHECK(((kalah::round_up(seeds, r) - seeds) & 1) == 0);
                CHECK(((kalah::round_down(seeds, r) - seeds) & 1) == 0);
                CHECK(kalah::round_up(seeds, r) - r == ((r - seeds) & 1));
                CHECK(r - kalah::round_down(seeds, r) == ((r - seeds) & 1));
            }
    }

    // core/le.h, the byte codec of every binary file, against arithmetic: a value is the sum
    // of its bytes times powers of 256, whatever the host's byte order.
    TEST_CASE("le: known bytes, and random values against the sum of bytes times 256^i") {
        unsigned char b[8];
        kalah::put_u16(b, 0x1234);
        CHECK((b[0] == 0x34 && b[1] == 0x12));
        kalah::put_u32(b, 0x89abcdefu);
        CHECK((b[0] == 0xef && b[1] == 0xcd && b[2] == 0xab && b[3] == 0x89));
        kalah::put_u64(b, 0x0102030405060708ull);
        for (int i = 0; i < 8; ++i) CHECK(b[i] == 8 - i);
        std::mt19937_64 rng(20261204);
        for (int trial = 0; trial < 20000; ++trial) {
            unsigned char raw[8];
            for (unsigned char& c : raw) c = static_cast<unsigned char>(rng());
            uint64_t sum = 0, scale = 1;
            for (int i = 0; i < 8; ++i, scale *= 256) sum += raw[i] * scale;
            CHECK(kalah::get_u64(raw) == sum);
            CHECK(kalah::get_u32(raw) == (sum & 0xffffffffu));
            CHECK(kalah::get_u16(raw) == (sum & 0xffffu));
            unsigned char back[8] = {};
            kalah::put_u64(back, sum);
            CHECK(std::equal(back, back + 8, raw));
            kalah::put_u32(back, static_cast<uint32_t>(sum >> 32));
            CHECK(std::equal(back, back + 4, raw + 4));
            kalah::put_u16(back, static_cast<uint16_t>(sum >> 48));
            CHECK(std::equal(back, back + 2, raw + 6));
        }
    }
}
