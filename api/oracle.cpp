// The oracle: exact values from the database where it holds the position, proven searches
// within a budget elsewhere.
#include "api/oracle.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/notation.h"
#include "db/format.h"
#include "db/open.h"
#include "db/packed.h"

namespace kalah::api {
namespace {

// South's margin from a margin in b's mover's view.
int south_view(const Board& b, int mover_margin) {
    return b.to_move() == Side::South ? mover_margin : -mover_margin;
}

// Whether dir holds a layer file (or packed twin) of any m and rule: the names of
// db/format.h, "kalah-m<m>-<rule>-s<s>.kdb" / ".kpk".
bool has_layer_file(const std::string& dir) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        const std::string ext = e.path().extension().string();
        if (name.rfind("kalah-m", 0) == 0 && (ext == ".kdb" || ext == ".kpk")) return true;
    }
    return false;
}

}  // namespace

const char* stop_name(Coverage::Stop s) {
    switch (s) {
        case Coverage::Stop::End:
            return "end";
        case Coverage::Stop::Missing:
            return "missing";
        case Coverage::Stop::Damaged:
            return "damaged";
        case Coverage::Stop::NotOpened:
            break;
    }
    return "not-opened";
}

const char* source_name(Source s) {
    switch (s) {
        case Source::Database:
            return "database";
        case Source::Search:
            return "search";
        case Source::Unknown:
            break;
    }
    return "unknown";
}

Oracle::Oracle(const std::string& dir, Options options) : dir_(dir), options_(options) {
    if (dir_.empty()) return;
    std::error_code ec;
    if (!std::filesystem::exists(dir_, ec))
        throw NotFound("database directory " + dir_ + ": not found");
    if (!std::filesystem::is_directory(dir_, ec))
        throw NotFound("database directory " + dir_ + ": not a directory");
    if (!has_layer_file(dir_))
        throw NotFound("database directory " + dir_ +
                       ": no layer files (kalah-m<M>-<rule>-s<S>.kdb, made by kalah build-db)");
}

Oracle::~Oracle() = default;

const db::Database* Oracle::database(int m, Rule rule) {
    if (dir_.empty()) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_pair(m, rule);
    const auto it = databases_.find(key);
    if (it != databases_.end()) return it->second.get();
    // The open policy of every command (db/open.h): no layer for (m, rule) at all is no
    // database (values are then searched); a damaged or unreadable layer file is an error
    // naming the file, whatever its depth, never a silent search past it.
    db::Opened opened;
    try {
        opened = db::open_checked({dir_, m, rule, options_.db_memory_mib << 20});
    } catch (const db::FormatError& e) {
        throw DatabaseError(e.what());
    }
    return (databases_[key] = std::move(opened.db)).get();
}

std::unique_ptr<Solver> Oracle::take_solver(int m, Rule rule, const db::Database* db) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto& idle = idle_solvers_[std::make_pair(m, rule)];
        if (!idle.empty()) {
            auto s = std::move(idle.back());
            idle.pop_back();
            return s;
        }
    }
    SolverOptions o;
    o.tt_mb = options_.tt_mib;
    o.threads = options_.threads;
    o.db = db;
    return std::make_unique<Solver>(m, rule, o);
}

void Oracle::give_back(int m, Rule rule, std::unique_ptr<Solver> s) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_solvers_[std::make_pair(m, rule)].push_back(std::move(s));
}

Value Oracle::value(const Board& b, Rule rule, Budget budget) {
    Value v;
    // Step 1. A finished game: the sweep decides.
    if (b.over()) {
        v.value = south_view(
            b, b.own_store() - b.opp_store() + b.seeds_in_row_own() - b.seeds_in_row_opp());
        v.source = Source::Database;
        return v;
    }
    // Step 2. The database holds it.
    const db::Database* db = database(b.pits(), rule);
    if (db && b.seeds_in_pits() <= db->max_seeds()) {
        try {
            v.value = south_view(b, b.own_store() - b.opp_store() + db->probe(b));
        } catch (const db::FormatError& e) {
            throw DatabaseError(e.what());
        }
        v.source = Source::Database;
        return v;
    }
    // Step 3. A search with a pooled solver (its table keeps what earlier calls proved). A
    // solver that threw anything else is dropped, not pooled again.
    std::unique_ptr<Solver> s = take_solver(b.pits(), rule, db);
    s->set_limits(budget.node_limit, budget.time_limit_seconds);
    const uint64_t n0 = s->stats().nodes;
    try {
        v.value = s->value(b);
        v.source = Source::Search;
    } catch (const SearchStopped&) {
        v.source = Source::Unknown;
    } catch (const db::FormatError& e) {
        give_back(b.pits(), rule, std::move(s));
        throw DatabaseError(e.what());
    }
    v.nodes = s->stats().nodes - n0;
    give_back(b.pits(), rule, std::move(s));
    return v;
}

std::vector<MoveValue> Oracle::move_values(const Board& b, Rule rule, Budget budget) {
    std::vector<MoveValue> out;
    if (b.over()) return out;
    const Side mover = b.to_move();
    for (int p : b.legal_moves()) {
        Board c = b;
        const MoveResult r = c.play(p, rule);
        out.push_back({p, format_move(mover, p, r), value(c, rule, budget)});
    }
    // Best first for the mover; unknown last; stable, so ties stay in pit order.
    const int sign = mover == Side::South ? 1 : -1;
    std::stable_sort(out.begin(), out.end(), [sign](const MoveValue& x, const MoveValue& y) {
        const bool kx = x.value.source != Source::Unknown, ky = y.value.source != Source::Unknown;
        if (kx != ky) return kx;
        return kx && sign * x.value.value > sign * y.value.value;
    });
    return out;
}

Oracle::Best Oracle::best_moves(const Board& b, Rule rule, Budget budget) {
    const std::vector<MoveValue> moves = move_values(b, rule, budget);
    Best best;
    for (const MoveValue& mv : moves) {
        if (mv.value.source == Source::Unknown) return Best{{}, Source::Unknown};
        if (mv.value.source == Source::Search) best.source = Source::Search;
        if (mv.value.value == moves.front().value.value) best.pits.push_back(mv.pit);
    }
    std::sort(best.pits.begin(), best.pits.end());
    return best;
}

std::vector<Coverage> Oracle::coverage(bool open) {
    std::vector<Coverage> out;
    if (dir_.empty()) return out;
    const auto present = [&](const std::string& name) {
        std::error_code ec;
        return std::filesystem::exists(
            std::filesystem::symlink_status(std::filesystem::path(dir_) / name, ec));
    };
    // A layer's file or its packed twin: what makes a pit count and rule present, and a
    // missing layer below it a gap (as db::Database::open sees the run).
    const auto any_file = [&](int m, Rule rule, int s) {
        return present(db::layer_file_name(m, rule, s)) ||
               present(db::PackedLayer::file_name(m, rule, s));
    };
    for (int m = 1; m <= kMaxPits; ++m)
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            int top = -1;  // the highest layer with a file
            for (int s = kMaxSeeds; s >= 0 && top < 0; --s)
                if (any_file(m, rule, s)) top = s;
            if (top < 0) continue;
            Coverage c;
            c.m = m;
            c.rule = rule;
            const std::string what = std::to_string(m) + " pits, " + rule_name(rule);
            // Step 1. Opened (or opened now) under the policy of every command.
            const db::Database* db = nullptr;
            if (!open) {
                std::lock_guard<std::mutex> lock(mutex_);
                const auto it = databases_.find({m, rule});
                if (it == databases_.end()) {
                    // (A set refused as damaged is not kept open either.)
                    c.reason = what + ": not opened (a probe of it opens it, or info with open)";
                    out.push_back(c);
                    continue;
                }
                db = it->second.get();
            } else {
                try {
                    db = database(m, rule);
                } catch (const DatabaseError& e) {
                    // Step 2. Damaged: the message names the file ("<dir>/<file>: ...").
                    c.stop = Coverage::Stop::Damaged;
                    c.reason = e.what();
                    for (int s = 0; s <= kMaxSeeds; ++s) {
                        const std::string name = db::layer_file_name(m, rule, s);
                        if (c.reason.find("/" + name + ": ") != std::string::npos) {
                            c.stop_layer = s;
                            c.file = name;
                            break;
                        }
                    }
                    out.push_back(c);
                    continue;
                }
            }
            // Step 3. Layers 0..K used (none when db is null: layer 0 has no .kdb); the
            // next layer missing below a higher one's file, or the end of the database.
            c.max_seeds = db ? db->max_seeds() : -1;
            c.stop_layer = c.max_seeds + 1;
            const std::string used = c.max_seeds < 0
                                         ? "no layer used"
                                         : "layers 0.." + std::to_string(c.max_seeds) + " used";
            if (c.stop_layer > kMaxSeeds) {
                c.stop = Coverage::Stop::End;
                c.stop_layer = -1;
                c.reason = what + ": every layer, " + used;
            } else if (c.stop_layer < top ||
                       (c.stop_layer == top && !present(db::layer_file_name(m, rule, top)))) {
                c.stop = Coverage::Stop::Missing;
                c.file = db::layer_file_name(m, rule, c.stop_layer);
                c.reason = what + ": " + c.file + " missing, but layer " + std::to_string(top) +
                           " has a file; " + used;
            } else {
                c.stop = Coverage::Stop::End;
                c.file = db::layer_file_name(m, rule, c.stop_layer);
                c.reason = what + ": " + used + ", the next layer (" + c.file +
                           ") not built (kalah build-db --max-seeds " +
                           std::to_string(c.stop_layer) + " adds it)";
            }
            out.push_back(c);
        }
    return out;
}

}  // namespace kalah::api
