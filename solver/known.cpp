// Known answers: the built-in opening books and the lookup of solver/known.h.
#include "solver/known.h"

#include <stdexcept>
#include <string>

#include "core/notation.h"
#include "db/database.h"

namespace kalah {

const char* source_name(AnswerSource s) {
    switch (s) {
        case AnswerSource::Book:
            return "book";
        case AnswerSource::Database:
            return "database";
        case AnswerSource::Search:
            break;
    }
    return "search";
}

const std::vector<Book>& builtin_books() {
    static const std::vector<Book> books = [] {
        std::vector<Book> out;
        for (size_t i = 0; i < kBookCount; ++i) {
            try {
                out.push_back(Book::parse(kBookTexts[i].text, kBookTexts[i].name));
            } catch (const std::exception& e) {
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

namespace {
// South's final margin from a margin in b's mover's view.
int south_view(const Board& b, int mover_margin) {
    return b.to_move() == Side::South ? mover_margin : -mover_margin;
}
}  // namespace

std::optional<KnownValue> known_value(const Board& b, Rule rule, const Book* book,
                                      const db::Database* db) {
    (void)rule;  // the book and the database are of one rule: the caller's
    const int stores = b.own_store() - b.opp_store();
    if (b.over())
        return KnownValue{south_view(b, stores + b.seeds_in_row_own() - b.seeds_in_row_opp()),
                          AnswerSource::Database};
    if (book)
        if (const auto v = book->pits_value(b))
            return KnownValue{south_view(b, stores + *v), AnswerSource::Book};
    if (db && b.seeds_in_pits() <= db->max_seeds())
        return KnownValue{south_view(b, stores + db->probe(b.without_stores())),
                          AnswerSource::Database};
    return std::nullopt;
}

std::optional<KnownAnswer> known_answer(const Board& b, Rule rule, const Book* book,
                                        const db::Database* db) {
    const std::optional<KnownValue> v = known_value(b, rule, book, db);
    if (!v) return std::nullopt;
    KnownAnswer a;
    a.value = v->value;
    a.source = v->source;
    for (int p : b.legal_moves()) {
        Board c = b;
        const MoveResult r = c.play(p, rule);
        const std::optional<KnownValue> cv = known_value(c, rule, book, db);
        if (!cv) return std::nullopt;
        if (cv->source == AnswerSource::Book) a.source = AnswerSource::Book;
        a.moves.push_back({p, cv->value, format_move(b.to_move(), p, r)});
    }
    return a;
}

}  // namespace kalah
