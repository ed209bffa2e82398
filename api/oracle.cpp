// The oracle: exact values from the database where it holds the position, proven searches
// within a budget elsewhere.
#include "api/oracle.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

#include "core/notation.h"
#include "db/format.h"
#include "db/open.h"
#include "db/packed.h"
#include "solver/known.h"

namespace kalah::api {
namespace {

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
        case Source::Book:
            return "book";
        case Source::Unknown:
            break;
    }
    return "unknown";
}

// One call's budget as it is spent: its deadline, the nodes its searches took, and the
// caller's interrupt.
struct Oracle::Call {
    using Clock = std::chrono::steady_clock;
    static constexpr auto kSlice = std::chrono::milliseconds(50);  // between polls

    explicit Call(const Budget& b) : node_limit(b.node_limit), interrupted(b.interrupted) {
        if (b.time_limit_seconds > 0)
            deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(b.time_limit_seconds));
    }

    std::optional<Clock::time_point> deadline;
    uint64_t node_limit;  // 0: none
    uint64_t nodes = 0;   // searched by this call so far
    const std::function<bool()>& interrupted;
    bool was_interrupted = false;

    bool spent() const {
        return (node_limit && nodes >= node_limit) || (deadline && Clock::now() >= *deadline);
    }
    // The limits of the next search, for Solver::set_limits (0: none); call when !spent().
    uint64_t nodes_left() const { return node_limit ? node_limit - nodes : 0; }
    double seconds_left() const {
        if (!deadline) return 0;
        return std::max(1e-6, std::chrono::duration<double>(*deadline - Clock::now()).count());
    }
    // Asks the caller; true is remembered.
    bool poll() {
        if (interrupted && interrupted()) was_interrupted = true;
        return was_interrupted;
    }
    void throw_if_interrupted() {
        if (poll()) throw Interrupted("interrupted");
    }
    // Waits until ready(slice) answers true (it waits at most slice), polling the caller
    // between slices: false when the deadline passes first.
    template <class Ready>
    bool wait(Ready&& ready) {
        for (;;) {
            Clock::duration slice = kSlice;
            if (deadline) {
                const auto now = Clock::now();
                if (now >= *deadline) return ready(Clock::duration::zero());
                slice = std::min(slice, *deadline - now);
            }
            if (ready(slice)) return true;
            throw_if_interrupted();
        }
    }
};

Oracle::Oracle(const std::string& dir, Options options) : dir_(dir), options_(options) {
    max_solvers_ = options_.max_solvers > 0 ? options_.max_solvers
                                            : std::max(1, int(std::thread::hardware_concurrency()));
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

// The shared futures of std::async wait for their opening in their destructor: an oracle
// destroyed while a database opens waits for it.
Oracle::~Oracle() = default;

std::optional<const db::Database*> Oracle::database(int m, Rule rule, Call& call, bool wait) {
    if (dir_.empty()) return nullptr;
    Opening opening;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = databases_.find({m, rule});
        if (it == databases_.end()) {
            // The open policy of every command (db/open.h): no layer for (m, rule) at all is
            // no database (values are then searched); a damaged or unreadable layer file is
            // an error naming the file, whatever its depth, never a silent search past it.
            // Opening maps or reads every layer (seconds for deep ones): in the background,
            // so that the call's budget holds; the error, if any, is kept for every call.
            db::OpenRequest request{dir_, m, rule, options_.db_memory_mib << 20};
            Opening o = std::async(std::launch::async, [request] {
                            try {
                                return std::shared_ptr<const db::Database>(
                                    db::open_checked(request).db.release());
                            } catch (const db::FormatError& e) {
                                throw DatabaseError(e.what());
                            }
                        }).share();
            it = databases_.emplace(Key{m, rule}, std::move(o)).first;
        }
        opening = it->second;
    }
    const auto ready = [&](auto slice) {
        return opening.wait_for(slice) == std::future_status::ready;
    };
    const bool open = wait ? call.wait(ready) : ready(std::chrono::seconds(0));
    if (!open) return std::nullopt;
    return opening.get().get();
}

std::unique_ptr<Solver> Oracle::take_solver(int m, Rule rule, const db::Database* db, Call& call) {
    std::unique_ptr<Solver> taken, evicted;
    const bool got = call.wait([&](auto slice) {
        std::unique_lock<std::mutex> lock(mutex_);
        for (int round = 0; round < 2; ++round) {
            auto& idle = idle_solvers_[{m, rule}];
            if (!idle.empty()) {
                taken = std::move(idle.back());
                idle.pop_back();
                return true;
            }
            if (solvers_ < max_solvers_) {
                ++solvers_;
                return true;
            }
            // At the cap: an idle solver of another (m, rule) makes room.
            for (auto& [key, others] : idle_solvers_)
                if (!others.empty()) {
                    evicted = std::move(others.back());
                    others.pop_back();
                    return true;
                }
            if (round == 0 && slice > slice.zero()) solver_returned_.wait_for(lock, slice);
        }
        return false;
    });
    evicted.reset();  // outside the lock: freeing its table takes a while
    if (!got) return nullptr;
    if (taken) return taken;
    SolverOptions o;
    o.tt_mb = options_.tt_mib;
    o.threads = options_.threads;
    o.db = db;
    try {
        return std::make_unique<Solver>(m, rule, o);
    } catch (...) {
        drop_solver();
        throw;
    }
}

void Oracle::give_back(int m, Rule rule, std::unique_ptr<Solver> s) {
    s->set_poll({});
    {
        std::lock_guard<std::mutex> lock(mutex_);
        idle_solvers_[{m, rule}].push_back(std::move(s));
    }
    solver_returned_.notify_one();
}

void Oracle::drop_solver() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        --solvers_;
    }
    solver_returned_.notify_one();
}

Value Oracle::value(const Board& b, Rule rule, const Budget& budget) {
    Call call(budget);
    return value_in(b, rule, call);
}

Value Oracle::value_in(const Board& b, Rule rule, Call& call) {
    Value v;
    const auto known = [&v](const KnownValue& k) {
        v.value = k.value;
        v.source = k.source == AnswerSource::Book ? Source::Book : Source::Database;
        return v;
    };
    // Step 1. Known without the database (solver/known.h): a finished game, or the opening
    // book built into the program holds it. The database's opening starts (or goes on) in
    // the background without a wait; an opening that has failed is the error it is.
    const Book* book = options_.books ? builtin_book_for(b, rule) : nullptr;
    if (const std::optional<KnownValue> k = known_value(b, rule, book, nullptr)) {
        if (!b.over()) database(b.pits(), rule, call, /*wait=*/false);
        return known(*k);
    }
    // Step 2. The database holds it (answered even when the budget is spent: a probe).
    const std::optional<const db::Database*> opened = database(b.pits(), rule, call);
    if (!opened) return v;  // still opening when the budget ran out
    const db::Database* db = *opened;
    try {
        if (const std::optional<KnownValue> k = known_value(b, rule, nullptr, db)) return known(*k);
    } catch (const db::FormatError& e) {
        throw DatabaseError(e.what());
    }
    // Step 3. A search with a pooled solver (its table keeps what earlier calls proved), in
    // what is left of the budget. A solver that threw anything but a damaged block is
    // dropped, not pooled again.
    if (call.spent()) return v;
    std::unique_ptr<Solver> s = take_solver(b.pits(), rule, db, call);
    if (!s) return v;  // no solver free within the budget
    s->set_book(book);
    s->set_limits(call.nodes_left(), call.seconds_left());
    if (call.interrupted) s->set_poll([&call] { return call.poll(); });
    const uint64_t n0 = s->stats().nodes;
    try {
        v.value = s->value(b);
        v.source = Source::Search;
    } catch (const SearchStopped&) {
        v.source = Source::Unknown;
    } catch (const db::FormatError& e) {
        give_back(b.pits(), rule, std::move(s));
        throw DatabaseError(e.what());
    } catch (...) {
        s.reset();
        drop_solver();
        throw;
    }
    v.nodes = s->stats().nodes - n0;
    call.nodes += v.nodes;
    give_back(b.pits(), rule, std::move(s));
    if (call.was_interrupted) throw Interrupted("interrupted");
    return v;
}

std::vector<MoveValue> Oracle::move_values(const Board& b, Rule rule, const Budget& budget) {
    std::vector<MoveValue> out;
    if (b.over()) return out;
    Call call(budget);
    const Side mover = b.to_move();
    for (int p : b.legal_moves()) {
        Board c = b;
        const MoveResult r = c.play(p, rule);
        out.push_back({p, format_move(mover, p, r), value_in(c, rule, call)});
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

Oracle::Best Oracle::best_moves(const Board& b, Rule rule, const Budget& budget) {
    const std::vector<MoveValue> moves = move_values(b, rule, budget);
    Best best;
    for (const MoveValue& mv : moves) {
        if (mv.value.source == Source::Unknown) return Best{{}, Source::Unknown};
        if (mv.value.source == Source::Search) best.source = Source::Search;
        if (mv.value.source == Source::Book && best.source == Source::Database)
            best.source = Source::Book;
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
                // Not opened, still opening (in the background since a probe's first use),
                // or refused as damaged (only an open reports that).
                const bool ready =
                    it != databases_.end() &&
                    it->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
                bool opened = false;
                if (ready) {
                    try {
                        db = it->second.get().get();
                        opened = true;
                    } catch (const DatabaseError&) {
                    }
                }
                if (!opened) {
                    c.reason = what + ": not opened (a probe of it opens it, or info with open)";
                    out.push_back(c);
                    continue;
                }
            } else {
                try {
                    const Budget none;
                    Call unlimited(none);
                    db = *database(m, rule, unlimited);
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
