// The opening books built into the program (data/book/*.book, embedded by
// cmake/embed_books.cmake): `kalah serve` answers the first plies of their boards from them
// at once (solver/book.h). Each is a text a test re-proves in part (tests/test_book.cpp)
// and `kalah verify-book` re-proves whole.
#pragma once

#include <cstddef>
#include <vector>

#include "core/board.h"
#include "solver/book.h"

namespace kalah::serve {

struct BookText {
    const char* name;  // the file's name under data/book/
    const char* text;
};
extern const BookText kBookTexts[];
extern const size_t kBookCount;

// Every built-in book, parsed on first use (a book that does not parse is a build defect:
// std::logic_error naming it).
const std::vector<Book>& builtin_books();
// The built-in book of Kalah(m,n) under `rule`, nullptr when there is none.
const Book* builtin_book(int m, int n, Rule rule);
// The book for a position: that of the board its seed count belongs to (2mn seeds), if any.
const Book* builtin_book_for(const Board& b, Rule rule);

}  // namespace kalah::serve
