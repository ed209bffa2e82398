// Opening books: the exact values of every position within a few plies of the start of a
// Kalah(m,n), proven by this solver (`kalah build-book`) and kept as text, so that the
// first positions of a common board answer at once (`kalah serve` uses the books built into
// the program: data/book/). The solver consults a book at the root of each public call
// (SolverOptions::book), before the database and the search; it never consults one inside
// a search, so a book changes no node count of a search it does not answer.
//
// The file (one text format, read as untrusted input):
//   # comment lines and blank lines anywhere
//   kalah-book 1 pits M seeds N rule RULE plies P entries E
//   POSITION VALUE            (E lines: position notation, South's final margin)
// Every position holds 2MN seeds, no two entries share pits and side to move, and a
// finished game's value is its final margin. `verify-book` re-proves the entries and checks
// that each parent's value is its best move's.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/board.h"

namespace kalah {

class Book {
  public:
    struct Entry {
        Board board;
        int value = 0;  // South's final margin, stores included, under perfect play
    };
    struct Header {
        int pits = 0, seeds = 0;
        Rule rule = Rule::Standard;
        int plies = 0;
    };

    Book() = default;
    // Parses a book file's text. Throws InputError "SOURCE:LINE: what is wrong" on any
    // defect (source names the file in the message).
    static Book parse(const std::string& text, const std::string& source);
    // Reads and parses the regular file at path (InputError when it cannot be read).
    static Book read(const std::string& path);
    // The file's text (the format above); parse(format()) gives the same book.
    std::string format() const;

    // Every position within `plies` plies (single sowings) of Kalah(m,n)'s start under
    // `rule`, each once, in order of first reach (breadth first, moves in pit order).
    static std::vector<Board> positions(int m, int n, Rule rule, int plies);
    // The book of those positions, each valued by `value` (South's final margin under
    // perfect play: a solver of m pits and `rule`, e.g. Solver::value; the book knows no
    // solver, so that the solver can consult books without an include circle); `progress`
    // (may be empty) hears after each entry: entries done, entries in all.
    static Book build(int m, int n, Rule rule, int plies,
                      const std::function<int(const Board&)>& value,
                      const std::function<void(size_t, size_t)>& progress = {});

    const Header& header() const { return header_; }
    const std::vector<Entry>& entries() const { return entries_; }
    size_t size() const { return entries_.size(); }

    // The pits value of b (mover's view, stores ignored, as Solver::pits_value) if the book
    // holds b's pits with b's number of pits; nullopt otherwise.
    std::optional<int> pits_value(const Board& b) const;

    // Positions of the book whose value differs from the best of its moves' values where the
    // book holds every move's position (each as "POSITION: VALUE, best move gives V").
    std::vector<std::string> inconsistencies() const;

  private:
    struct CellsHash {
        size_t operator()(Cells c) const {
            const uint64_t lo = static_cast<uint64_t>(c), hi = static_cast<uint64_t>(c >> 64);
            return static_cast<size_t>((lo ^ (hi * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL);
        }
    };
    void add(const Board& b, int value, const std::string& where);

    Header header_;
    std::vector<Entry> entries_;
    std::unordered_map<Cells, int, CellsHash> pits_values_;  // pits_key() -> pits value
};

}  // namespace kalah
