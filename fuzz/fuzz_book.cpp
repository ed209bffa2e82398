// libFuzzer target: the opening-book parser (solver/book.h). Any input may be rejected with
// InputError; a crash, a sanitizer report, a hang or a broken round trip is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/notation.h"
#include "solver/book.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace kalah;
    const std::string text(reinterpret_cast<const char*>(data), size);
    Book book;
    try {
        book = Book::parse(text, "fuzz");
    } catch (const InputError&) {
        return 0;
    }
    // What parses formats to a text that parses to the same entries, and every entry
    // answers for its own pits.
    const std::string again = book.format();
    const Book round = Book::parse(again, "again");
    if (round.size() != book.size() || round.format() != again) __builtin_trap();
    for (const Book::Entry& e : book.entries())
        if (!book.pits_value(e.board)) __builtin_trap();
    (void)book.inconsistencies();
    return 0;
}
