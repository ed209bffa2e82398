// The opening books built into the program (serve/books.h).
#include "serve/books.h"

#include <stdexcept>

#include "core/notation.h"

namespace kalah::serve {

const std::vector<Book>& builtin_books() {
    static const std::vector<Book> books = [] {
        std::vector<Book> out;
        for (size_t i = 0; i < kBookCount; ++i) {
            try {
                out.push_back(Book::parse(kBookTexts[i].text, kBookTexts[i].name));
            } catch (const InputError& e) {
                throw std::logic_error(std::string("built-in book: ") + e.what());
            }
        }
        return out;
    }();
    return books;
}

const Book* builtin_book(int m, int n, Rule rule) {
    for (const Book& b : builtin_books()) {
        const Book::Header& h = b.header();
        if (h.pits == m && h.seeds == n && h.rule == rule) return &b;
    }
    return nullptr;
}

const Book* builtin_book_for(const Board& b, Rule rule) {
    const int m = b.pits();
    const int total = b.seeds_in_pits() + b.own_store() + b.opp_store();
    if (m < 1 || total % (2 * m) != 0) return nullptr;
    return builtin_book(m, total / (2 * m), rule);
}

}  // namespace kalah::serve
