// Bitboard-packed Kalah(m,n) position, seen from the side to move, with SWAR sowing.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace kalah {

// Layout of Board::cells, one byte ("slot") per pit or store, numbered along the
// mover's sowing circuit so that a sowing only ever adds to consecutive slots:
//
//   byte:   0      ..  m-1      m         m+1     ..  2m       2m+1       2m+2..15
//         +------+----+------+---------+-------+----+-------+----------+-----------+
//         | P0   | .. | Pm-1 | store   | Q0    | .. | Qm-1  | store    | always 0  |
//         +------+----+------+---------+-------+----+-------+----------+-----------+
//           mover's pits       mover's   opponent's pits      opponent's
//           (P0 farthest from  store     (Q0 farthest from    store: not on
//            the mover's store)           the opponent's)      the mover's circuit
//
// The circuit is slots 0..2m (length L = 2m+1); slot 2m+1 is skipped. Pit Pi faces
// Q(m-1-i), i.e. slot i faces slot 2m-i. When South moves, P0..Pm-1 are A1..Am and
// Q0..Qm-1 are B1..Bm; when North moves the rows trade places (flip()).
//
// Worked example, Kalah(6,4) after South's A3 A6 (rules.md examples 1-2), North to move:
//   South row 4 4 0 5 5 0 store 2, North row 5 5 5 5 4 4 store 0. Seen by North:
//   bytes 0..13 = 05 05 05 05 04 04 | 00 | 04 04 00 05 05 00 | 02
//   cells = 0x02'00'05'05'00'04'04'00'04'04'05'05'05'05 (byte 0 is least significant).
//
// Every count is < 128 (at most kMaxSeeds seeds exist), so a sowing of k seeds from
// slot p is one 128-bit addition of a precomputed constant delta[m][p][k] that holds
// -k at slot p, +laps on every circuit slot and +1 on the next (k mod L) slots. Plain
// integer addition is exact because every resulting byte is again in 0..255.

using Cells = unsigned __int128;

constexpr int kMaxPits = 6;
constexpr int kMaxSeeds = 127;  // total seeds on the board; keeps every byte < 128

enum class Rule : uint8_t { Standard, EmptyCapture };
enum class Side : uint8_t { South, North };  // South = A row, moves first

constexpr Side other(Side s) { return s == Side::South ? Side::North : Side::South; }

// What one move did; enough to derive the notation suffix.
struct MoveResult {
    bool extra = false;    // last seed in own store and game not over: mover moves again
    bool over = false;     // a row is empty after the move; both rows were swept
    uint8_t captured = 0;  // seeds put in the store by a capture (opposite + last), 0 if none
};

// Fixed-capacity list of legal pits (0-based, mover's view), in ascending order.
struct MoveList {
    std::array<uint8_t, kMaxPits> pit{};
    int size = 0;
    const uint8_t* begin() const { return pit.data(); }
    const uint8_t* end() const { return pit.data() + size; }
};

class Board {
  public:
    Board() = default;
    // Start position of Kalah(m,n): n seeds in every pit, South to move.
    static Board start(int m, int n);
    // Board from explicit rows (South's A1..Am, North's B1..Bm), stores and side to move.
    // Counts must be non-negative with total <= kMaxSeeds; m in 1..kMaxPits.
    static Board from_rows(int m, const int* south, const int* north, int store_south,
                           int store_north, Side to_move);

    int pits() const { return m_; }
    Side to_move() const { return to_move_; }
    Cells cells() const { return cells_; }

    // Slot access in the mover's view (see layout).
    int slot(int i) const {
        return static_cast<int>(static_cast<uint64_t>(cells_ >> (8 * i)) & 0xff);
    }
    int own_pit(int i) const { return slot(i); }
    int opp_pit(int i) const { return slot(m_ + 1 + i); }
    int own_store() const { return slot(m_); }
    int opp_store() const { return slot(2 * m_ + 1); }

    // Absolute access: pit i (0-based) of a side, a side's store.
    int pit(Side s, int i) const { return s == to_move_ ? own_pit(i) : opp_pit(i); }
    int store(Side s) const { return s == to_move_ ? own_store() : opp_store(); }

    int seeds_in_pits() const;
    int seeds_in_row_own() const;
    int seeds_in_row_opp() const;
    bool over() const { return own_row() == 0 || opp_row() == 0; }

    // Bit i set when the mover's pit i is non-empty.
    unsigned legal_mask() const;
    MoveList legal_moves() const;

    // Play the mover's pit (must be legal). Afterwards the board is seen from whoever
    // moves next: the same side after an extra move, the opponent otherwise. After a move
    // that ends the game, the rows are swept into the stores and the view is unchanged.
    MoveResult play(int pit, Rule rule);

    // Pits only, mover's view, stores cleared: the key of transposition tables and
    // databases (the value of the pits does not depend on the stores).
    Cells pits_key() const;
    // Same position with both stores emptied.
    Board without_stores() const;
    // Swap the view: the other side to move, rows and stores trade places.
    void flip();

    bool operator==(const Board& o) const {
        return cells_ == o.cells_ && m_ == o.m_ && to_move_ == o.to_move_;
    }

  private:
    Cells own_row() const;
    Cells opp_row() const;
    void sweep();

    Cells cells_ = 0;
    uint8_t m_ = 0;
    Side to_move_ = Side::South;
};

}  // namespace kalah
