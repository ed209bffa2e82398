// Opening books (solver/book.h): the text format, breadth-first enumeration, building and
// the consistency check.
#include "solver/book.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <unordered_set>

#include "core/notation.h"
#include "core/regular_file.h"

namespace kalah {

namespace {

constexpr const char* kMagic = "kalah-book";
constexpr int kVersion = 1;
constexpr size_t kMaxBookBytes = size_t(64) << 20;  // far above any book worth shipping

int mover_margin(const Board& b, int south_margin) {
    return b.to_move() == Side::South ? south_margin : -south_margin;
}

// The final margin of a finished game (South's, stores included).
int final_margin(const Board& b) {
    const int rows = b.seeds_in_row_own() - b.seeds_in_row_opp();  // 0 once swept
    return b.store(Side::South) - b.store(Side::North) +
           (b.to_move() == Side::South ? rows : -rows);
}

bool parse_int(const std::string& s, int& out) {
    if (s.empty() || s.size() > 6) return false;
    size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (i == s.size()) return false;
    long v = 0;
    for (; i < s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    out = static_cast<int>(s[0] == '-' ? -v : v);
    return true;
}

std::string trim_cr(std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
}

}  // namespace

void Book::add(const Board& b, int value, const std::string& where) {
    const auto [it, fresh] = pits_values_.emplace(
        b.pits_key(), mover_margin(b, value) - (b.own_store() - b.opp_store()));
    if (!fresh)
        throw InputError(where + ": the position's pits and side to move are already in the book");
    entries_.push_back({b, value});
}

Book Book::parse(const std::string& text, const std::string& source) {
    Book book;
    std::istringstream in(text);
    std::string line;
    int line_no = 0;
    bool have_header = false;
    long expected = -1;
    auto where = [&] { return source + ":" + std::to_string(line_no); };
    while (std::getline(in, line)) {
        ++line_no;
        line = trim_cr(line);
        const size_t first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#') continue;
        std::istringstream words(line);
        std::vector<std::string> w;
        for (std::string x; words >> x;) w.push_back(x);
        if (!have_header) {
            // kalah-book 1 pits M seeds N rule RULE plies P entries E
            if (w.size() != 12 || w[0] != kMagic)
                throw InputError(where() + ": not a kalah book (expected the line 'kalah-book " +
                                 std::to_string(kVersion) +
                                 " pits M seeds N rule RULE plies P entries E')");
            int version = 0;
            if (!parse_int(w[1], version) || version != kVersion)
                throw InputError(where() + ": book format version '" + w[1].substr(0, 12) +
                                 "' (this program reads version " + std::to_string(kVersion) + ")");
            int entries = 0;
            if (w[2] != "pits" || w[4] != "seeds" || w[6] != "rule" || w[8] != "plies" ||
                w[10] != "entries" || !parse_int(w[3], book.header_.pits) ||
                !parse_int(w[5], book.header_.seeds) || !parse_int(w[9], book.header_.plies) ||
                !parse_int(w[11], entries))
                throw InputError(where() + ": malformed book header");
            const Header& h = book.header_;
            if (h.pits < 1 || h.pits > kMaxPits || h.seeds < 1 || 2 * h.pits * h.seeds > kMaxSeeds)
                throw InputError(where() + ": no such board Kalah(" + w[3] + "," + w[5] + ")");
            if (h.plies < 0 || entries < 0)
                throw InputError(where() + ": negative plies or entries");
            try {
                book.header_.rule = parse_rule(w[7]);
            } catch (const InputError& e) {
                throw InputError(where() + ": " + e.what());
            }
            expected = entries;
            have_header = true;
            continue;
        }
        if (w.size() != 2) throw InputError(where() + ": expected 'POSITION VALUE'");
        Board b;
        try {
            b = parse_position(w[0]);
        } catch (const InputError& e) {
            throw InputError(where() + ": " + e.what());
        }
        const Header& h = book.header_;
        if (b.pits() != h.pits)
            throw InputError(where() + ": a position of " + std::to_string(b.pits()) +
                             " pits in a book of " + std::to_string(h.pits));
        const int total = b.seeds_in_pits() + b.own_store() + b.opp_store();
        if (total != 2 * h.pits * h.seeds)
            throw InputError(where() + ": a position of " + std::to_string(total) +
                             " seeds in a book of Kalah(" + std::to_string(h.pits) + "," +
                             std::to_string(h.seeds) + ")");
        if (b.over()) throw InputError(where() + ": a finished game (a book holds games in play)");
        int value = 0;
        if (!parse_int(w[1], value) || value < -total || value > total || (value - total) % 2 != 0)
            throw InputError(where() + ": value '" + w[1].substr(0, 12) +
                             "' is not a final margin of " + std::to_string(total) + " seeds");
        if (long(book.entries_.size()) == expected)
            throw InputError(where() + ": more entries than the header's " +
                             std::to_string(expected));
        book.add(b, value, where());
    }
    if (!have_header) throw InputError(source + ": empty (no kalah-book header)");
    if (long(book.entries_.size()) != expected)
        throw InputError(source + ": " + std::to_string(book.entries_.size()) +
                         " entries, the header says " + std::to_string(expected) +
                         " (a truncated file?)");
    return book;
}

Book Book::read(const std::string& path) {
    std::string why;
    const int fd = open_regular_file(path, O_RDONLY, &why);
    if (fd < 0) throw InputError("book " + path + ": " + why);
    std::string text;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int e = errno;
            ::close(fd);
            throw InputError("book " + path + ": cannot read: " + std::strerror(e));
        }
        if (n == 0) break;
        text.append(buf, size_t(n));
        if (text.size() > kMaxBookBytes) {
            ::close(fd);
            throw InputError("book " + path + ": larger than " +
                             std::to_string(kMaxBookBytes >> 20) + " MiB: not a book");
        }
    }
    ::close(fd);
    return parse(text, path);
}

std::string Book::format() const {
    std::ostringstream out;
    out << "# Opening book of Kalah(" << header_.pits << "," << header_.seeds << "), rule "
        << rule_name(header_.rule) << ": every position within " << header_.plies
        << " plies of the start,\n# each with its value (South's final margin under perfect "
           "play), proven by kalah build-book.\n";
    out << kMagic << " " << kVersion << " pits " << header_.pits << " seeds " << header_.seeds
        << " rule " << rule_name(header_.rule) << " plies " << header_.plies << " entries "
        << entries_.size() << "\n";
    for (const Entry& e : entries_) out << format_position(e.board) << " " << e.value << "\n";
    return out.str();
}

std::vector<Board> Book::positions(int m, int n, Rule rule, int plies) {
    struct BoardHash {
        size_t operator()(const Board& b) const {
            const Cells c = b.cells();
            return std::hash<uint64_t>()(uint64_t(c) ^ uint64_t(c >> 64) * 31 ^
                                         uint64_t(b.to_move()));
        }
    };
    std::vector<Board> out{Board::start(m, n)};
    std::unordered_set<Board, BoardHash> seen(out.begin(), out.end());
    size_t level_begin = 0;
    for (int ply = 0; ply < plies; ++ply) {
        const size_t level_end = out.size();
        for (size_t i = level_begin; i < level_end; ++i) {
            for (int p : out[i].legal_moves()) {
                Board c = out[i];
                c.play(p, rule);
                if (!c.over() && seen.insert(c).second) out.push_back(c);
            }
        }
        level_begin = level_end;
    }
    return out;
}

Book Book::build(int m, int n, Rule rule, int plies, const std::function<int(const Board&)>& value,
                 const std::function<void(size_t, size_t)>& progress) {
    Book book;
    book.header_ = {m, n, rule, plies};
    const std::vector<Board> all = positions(m, n, rule, plies);
    for (const Board& b : all) {
        // Two positions with the same pits and mover but other stores share their pits
        // value: the first one's entry answers for both.
        if (book.pits_values_.count(b.pits_key())) continue;
        book.add(b, value(b), "build");
        if (progress) progress(book.size(), all.size());
    }
    return book;
}

std::optional<int> Book::pits_value(const Board& b) const {
    if (b.pits() != header_.pits || pits_values_.empty()) return std::nullopt;
    const auto it = pits_values_.find(b.pits_key());
    if (it == pits_values_.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> Book::inconsistencies() const {
    std::vector<std::string> out;
    for (const Entry& e : entries_) {
        const Side mover = e.board.to_move();
        int best = 0;
        bool have_best = false, complete = true;
        for (int p : e.board.legal_moves()) {
            Board c = e.board;
            c.play(p, header_.rule);
            int v;
            if (c.over()) {
                v = final_margin(c);
            } else if (auto pv = pits_value(c)) {
                v = c.own_store() - c.opp_store() + *pv;  // c's mover's margin
                if (c.to_move() != Side::South) v = -v;
            } else {
                complete = false;
                break;
            }
            const int mine = mover == Side::South ? v : -v;
            if (!have_best || mine > best) best = mine;
            have_best = true;
        }
        if (!complete || !have_best) continue;
        const int best_south = mover == Side::South ? best : -best;
        if (best_south != e.value)
            out.push_back(format_position(e.board) + ": " + std::to_string(e.value) +
                          ", best move gives " + std::to_string(best_south));
    }
    return out;
}

}  // namespace kalah
