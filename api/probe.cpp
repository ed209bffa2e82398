// The C ABI of include/kalah/probe.h over the oracle: argument checks, conversions, and
// every exception turned into a status and a message.
#include "kalah/probe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "api/oracle.h"
#include "core/notation.h"
#include "db/format.h"

struct kalah_db {
    kalah::api::Oracle oracle;
};

namespace {

using kalah::Board;
using kalah::Rule;
using kalah::Side;

thread_local std::string last_error;

kalah_status fail(kalah_status status, const std::string& message) {
    last_error = message;
    return status;
}

struct Failure {
    kalah_status status;
    std::string message;
};

// Runs f, mapping every exception to a status; clears the message on success.
template <class F>
kalah_status guarded(F&& f) {
    try {
        const kalah_status s = f();
        if (s == KALAH_OK) last_error.clear();
        return s;
    } catch (const Failure& e) {
        return fail(e.status, e.message);
    } catch (const kalah::InputError& e) {
        return fail(KALAH_ERR_POSITION, e.what());
    } catch (const kalah::api::NotFound& e) {
        return fail(KALAH_ERR_NOT_FOUND, e.what());
    } catch (const kalah::api::DatabaseError& e) {
        return fail(KALAH_ERR_DATABASE, e.what());
    } catch (const kalah::db::FormatError& e) {
        return fail(KALAH_ERR_DATABASE, e.what());
    } catch (const std::bad_alloc&) {
        return fail(KALAH_ERR_MEMORY, "out of memory");
    } catch (const std::exception& e) {
        return fail(KALAH_ERR_INTERNAL, e.what());
    } catch (...) {
        return fail(KALAH_ERR_INTERNAL, "unknown internal error");
    }
}

void require(bool ok, kalah_status status, const std::string& message) {
    if (!ok) throw Failure{status, message};
}

Rule to_rule(kalah_rule r) {
    require(r == KALAH_RULE_STANDARD || r == KALAH_RULE_EMPTY_CAPTURE, KALAH_ERR_ARGUMENT,
            "rule must be KALAH_RULE_STANDARD or KALAH_RULE_EMPTY_CAPTURE, not " +
                std::to_string(int(r)));
    return r == KALAH_RULE_STANDARD ? Rule::Standard : Rule::EmptyCapture;
}

Board to_board(const kalah_position* p) {
    require(p != nullptr, KALAH_ERR_ARGUMENT, "position is NULL");
    require(p->pits >= 1 && p->pits <= KALAH_MAX_PITS, KALAH_ERR_POSITION,
            "position: pits must be 1.." + std::to_string(KALAH_MAX_PITS) + ", not " +
                std::to_string(p->pits));
    require(p->to_move == 0 || p->to_move == 1, KALAH_ERR_POSITION,
            "position: to_move must be 0 (South) or 1 (North), not " + std::to_string(p->to_move));
    long total = 0;
    const auto count = [&](int v, const char* what) {
        require(v >= 0, KALAH_ERR_POSITION,
                std::string("position: negative count in ") + what + ": " + std::to_string(v));
        total += v;
    };
    for (int i = 0; i < p->pits; ++i) count(p->south[i], "south");
    for (int i = 0; i < p->pits; ++i) count(p->north[i], "north");
    count(p->store_south, "store_south");
    count(p->store_north, "store_north");
    require(total <= kalah::kMaxSeeds, KALAH_ERR_POSITION,
            "position: " + std::to_string(total) + " seeds, more than " +
                std::to_string(kalah::kMaxSeeds));
    return Board::from_rows(p->pits, p->south, p->north, p->store_south, p->store_north,
                            p->to_move == 0 ? Side::South : Side::North);
}

void from_board(const Board& b, kalah_position* out) {
    kalah_position p{};
    p.pits = b.pits();
    for (int i = 0; i < b.pits(); ++i) {
        p.south[i] = b.pit(Side::South, i);
        p.north[i] = b.pit(Side::North, i);
    }
    p.store_south = b.store(Side::South);
    p.store_north = b.store(Side::North);
    p.to_move = b.to_move() == Side::South ? 0 : 1;
    *out = p;
}

kalah::api::Budget to_budget(const kalah_budget* budget) {
    kalah::api::Budget b;
    if (!budget) return b;
    require(std::isfinite(budget->time_limit_seconds) && budget->time_limit_seconds >= 0,
            KALAH_ERR_ARGUMENT, "budget: time_limit_seconds must be a finite number >= 0");
    b.node_limit = budget->node_limit;
    b.time_limit_seconds = budget->time_limit_seconds;
    return b;
}

kalah_value to_c(const kalah::api::Value& v) {
    kalah_value out{};
    out.value = v.value;
    out.source = v.source == kalah::api::Source::Database ? KALAH_SOURCE_DATABASE
                 : v.source == kalah::api::Source::Search ? KALAH_SOURCE_SEARCH
                 : v.source == kalah::api::Source::Book   ? KALAH_SOURCE_BOOK
                                                          : KALAH_SOURCE_UNKNOWN;
    out.nodes = v.nodes;
    return out;
}

// s cut to fit buf with its NUL, at a character's start (a UTF-8 continuation byte is not
// one).
void copy_cut(const std::string& s, char* buf, size_t size) {
    size_t n = std::min(s.size(), size - 1);
    if (n < s.size())
        while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
}

kalah_stop to_c(kalah::api::Coverage::Stop s) {
    using Stop = kalah::api::Coverage::Stop;
    return s == Stop::End       ? KALAH_STOP_END
           : s == Stop::Missing ? KALAH_STOP_MISSING
           : s == Stop::Damaged ? KALAH_STOP_DAMAGED
                                : KALAH_STOP_NOT_OPENED;
}

void copy_text(const std::string& s, char* buf, size_t size) {
    require(s.size() < size, KALAH_ERR_ARGUMENT,
            "buffer of " + std::to_string(size) + " bytes too small for '" + s + "'");
    std::memcpy(buf, s.c_str(), s.size() + 1);
}

}  // namespace

extern "C" {

const char* kalah_error_message(void) { return last_error.c_str(); }

const char* kalah_version(void) { return KALAH_VERSION_STRING; }

const char* kalah_status_name(kalah_status status) {
    switch (status) {
        case KALAH_OK:
            return "ok";
        case KALAH_ERR_ARGUMENT:
            return "argument";
        case KALAH_ERR_POSITION:
            return "position";
        case KALAH_ERR_NOT_FOUND:
            return "not-found";
        case KALAH_ERR_DATABASE:
            return "database";
        case KALAH_ERR_MEMORY:
            return "memory";
        case KALAH_ERR_INTERNAL:
            return "internal";
    }
    return "unknown-status";
}

kalah_status kalah_open(const char* dir, const kalah_options* options, kalah_db** out) {
    return guarded([&] {
        require(out != nullptr, KALAH_ERR_ARGUMENT, "kalah_open: out is NULL");
        *out = nullptr;
        kalah::api::Options o;
        if (options) {
            require(options->threads >= 0 && options->threads <= 1024, KALAH_ERR_ARGUMENT,
                    "options: threads must be 0 (default) .. 1024");
            if (options->db_memory_mib) o.db_memory_mib = options->db_memory_mib;
            if (options->tt_mib) o.tt_mib = options->tt_mib;
            if (options->threads) o.threads = options->threads;
        }
        *out = new kalah_db{kalah::api::Oracle(dir ? dir : "", o)};
        return KALAH_OK;
    });
}

kalah_status kalah_db_info(kalah_db* db, int open, kalah_layers* out, int capacity, int* count) {
    return guarded([&] {
        require(db != nullptr && count != nullptr, KALAH_ERR_ARGUMENT,
                "kalah_db_info: NULL argument");
        require(capacity >= 0 && (out != nullptr || capacity == 0), KALAH_ERR_ARGUMENT,
                "kalah_db_info: out is NULL or capacity negative");
        *count = 0;
        const auto entries = db->oracle.coverage(open != 0);
        for (const auto& c : entries) {
            if (*count < capacity) {
                kalah_layers& o = out[*count];
                o = kalah_layers{};
                o.pits = c.m;
                o.rule = c.rule == Rule::Standard ? KALAH_RULE_STANDARD : KALAH_RULE_EMPTY_CAPTURE;
                o.max_seeds = c.max_seeds;
                o.stop = to_c(c.stop);
                o.stop_layer = c.stop_layer;
                copy_cut(c.file, o.file, sizeof o.file);
                copy_cut(c.reason, o.reason, sizeof o.reason);
            }
            ++*count;
        }
        return KALAH_OK;
    });
}

void kalah_close(kalah_db* db) { delete db; }

kalah_status kalah_position_from_text(const char* text, kalah_position* out) {
    return guarded([&] {
        require(text != nullptr && out != nullptr, KALAH_ERR_ARGUMENT,
                "kalah_position_from_text: NULL argument");
        from_board(kalah::parse_position(text), out);
        return KALAH_OK;
    });
}

kalah_status kalah_position_to_text(const kalah_position* p, char* buf, size_t size) {
    return guarded([&] {
        require(buf != nullptr, KALAH_ERR_ARGUMENT, "kalah_position_to_text: buf is NULL");
        copy_text(kalah::format_position(to_board(p)), buf, size);
        return KALAH_OK;
    });
}

kalah_status kalah_start_position(int pits, int seeds, kalah_position* out) {
    return guarded([&] {
        require(out != nullptr, KALAH_ERR_ARGUMENT, "kalah_start_position: out is NULL");
        require(
            pits >= 1 && pits <= KALAH_MAX_PITS, KALAH_ERR_POSITION,
            "pits must be 1.." + std::to_string(KALAH_MAX_PITS) + ", not " + std::to_string(pits));
        require(seeds >= 0 && 2 * pits * seeds <= kalah::kMaxSeeds, KALAH_ERR_POSITION,
                "seeds must be 0.." + std::to_string(kalah::kMaxSeeds / (2 * pits)) + " for " +
                    std::to_string(pits) + " pits, not " + std::to_string(seeds));
        from_board(Board::start(pits, seeds), out);
        return KALAH_OK;
    });
}

kalah_status kalah_play(const kalah_position* p, int pit, kalah_rule rule, kalah_position* out,
                        char text[KALAH_MOVE_TEXT_SIZE]) {
    return guarded([&] {
        require(out != nullptr, KALAH_ERR_ARGUMENT, "kalah_play: out is NULL");
        const Rule r = to_rule(rule);
        Board b = to_board(p);
        require(!b.over(), KALAH_ERR_POSITION, "kalah_play: the game is over");
        require(pit >= 0 && pit < b.pits() && b.own_pit(pit) > 0, KALAH_ERR_POSITION,
                "kalah_play: pit " + std::to_string(pit) + " is not a legal move");
        const Side mover = b.to_move();
        const kalah::MoveResult res = b.play(pit, r);
        if (text) copy_text(kalah::format_move(mover, pit, res), text, KALAH_MOVE_TEXT_SIZE);
        from_board(b, out);
        return KALAH_OK;
    });
}

kalah_status kalah_value_of(kalah_db* db, const kalah_position* p, kalah_rule rule,
                            const kalah_budget* budget, kalah_value* out) {
    return guarded([&] {
        require(db != nullptr && out != nullptr, KALAH_ERR_ARGUMENT,
                "kalah_value_of: NULL argument");
        const Rule r = to_rule(rule);
        *out = to_c(db->oracle.value(to_board(p), r, to_budget(budget)));
        return KALAH_OK;
    });
}

kalah_status kalah_move_values(kalah_db* db, const kalah_position* p, kalah_rule rule,
                               const kalah_budget* budget, kalah_move_value* out, int* count) {
    return guarded([&] {
        require(db != nullptr && out != nullptr && count != nullptr, KALAH_ERR_ARGUMENT,
                "kalah_move_values: NULL argument");
        *count = 0;
        const Rule r = to_rule(rule);
        const auto moves = db->oracle.move_values(to_board(p), r, to_budget(budget));
        for (const auto& mv : moves) {
            kalah_move_value& o = out[*count];
            o = kalah_move_value{};
            o.pit = mv.pit;
            copy_text(mv.text, o.text, sizeof o.text);
            o.value = to_c(mv.value);
            ++*count;
        }
        return KALAH_OK;
    });
}

kalah_status kalah_best_moves(kalah_db* db, const kalah_position* p, kalah_rule rule,
                              const kalah_budget* budget, int* pits, int* count,
                              kalah_source* source) {
    return guarded([&] {
        require(db != nullptr && pits != nullptr && count != nullptr && source != nullptr,
                KALAH_ERR_ARGUMENT, "kalah_best_moves: NULL argument");
        *count = 0;
        const Rule r = to_rule(rule);
        const Board b = to_board(p);
        const auto best = db->oracle.best_moves(b, r, to_budget(budget));
        for (int pit : best.pits) pits[(*count)++] = pit;
        *source = to_c(kalah::api::Value{0, best.source, 0}).source;
        return KALAH_OK;
    });
}

}  // extern "C"
