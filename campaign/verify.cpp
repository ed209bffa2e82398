// Re-proving a certificate's leaves and the journal of those checked (campaign/verify.h).
#include "campaign/verify.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/notation.h"
#include "core/regular_file.h"
#include "db/database.h"
#include "db/format.h"

namespace kalah::campaign {
namespace {

constexpr const char* kLeafMagic = "kalah-leaf-journal";

std::string hex8(uint32_t x) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", x);
    return buf;
}

std::string header_line(const Certificate& c) {
    return std::string(kLeafMagic) + " 1 " + hex8(c.crc) + "\n";
}

std::string check_line(const LeafCheck& k) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.3f", k.seconds);
    std::string line = "leaf " + std::to_string(k.node) + " " + outcome_name(k.outcome) + " " +
                       std::to_string(k.nodes) + " " + secs;
    return line + " " + hex8(crc32(line.data(), line.size())) + "\n";
}

// One journal line (without its newline) of certificate c, or nothing.
bool parse_check_line(const std::string& line, const Certificate& c, LeafCheck& k) {
    const size_t sp = line.rfind(' ');
    if (sp == std::string::npos || line.size() - sp - 1 != 8) return false;
    if (hex8(crc32(line.data(), sp)) != line.substr(sp + 1)) return false;
    char outcome[32] = {};
    unsigned long long nodes = 0;
    int id = -1;
    double secs = 0;
    int used = 0;
    const std::string body = line.substr(0, sp);
    if (std::sscanf(body.c_str(), "leaf %d %31s %llu %lf%n", &id, outcome, &nodes, &secs, &used) !=
            4 ||
        used != static_cast<int>(body.size()))
        return false;
    if (id < 0 || static_cast<size_t>(id) >= c.nodes.size() || !c.nodes[id].leaf()) return false;
    const std::string o = outcome;
    if (o == "proved")
        k.outcome = LeafCheck::Outcome::Proved;
    else if (o == "refuted")
        k.outcome = LeafCheck::Outcome::Refuted;
    else if (o == "over-budget")
        k.outcome = LeafCheck::Outcome::OverBudget;
    else
        return false;
    k.node = id;
    k.nodes = nodes;
    k.seconds = secs;
    return true;
}

}  // namespace

const char* outcome_name(LeafCheck::Outcome o) {
    switch (o) {
        case LeafCheck::Outcome::Proved:
            return "proved";
        case LeafCheck::Outcome::Refuted:
            return "refuted";
        case LeafCheck::Outcome::OverBudget:
            return "over-budget";
    }
    return "?";
}

namespace {
// The threshold t of the one test "v >= t?" that settles claim c.
int claim_test(const CertClaim& c) { return c.lower ? c.bound : c.bound + 1; }
LeafCheck::Outcome outcome_of_test(const CertClaim& c, bool ge) {
    return ge == c.lower ? LeafCheck::Outcome::Proved : LeafCheck::Outcome::Refuted;
}
}  // namespace

bool leaf_in_database(const Certificate& c, int id, const SolverOptions& opts) {
    return opts.db && c.nodes.at(id).pos.seeds_in_pits() <= opts.db->max_seeds();
}

LeafCheck reprove_leaf(const Certificate& c, int id, const SolverOptions& opts) {
    const CertNode& leaf = c.nodes.at(id);
    LeafCheck k;
    k.node = id;
    const auto t0 = std::chrono::steady_clock::now();
    if (leaf_in_database(c, id, opts)) {
        const int t = claim_test(leaf.claim);
        k.outcome = outcome_of_test(leaf.claim, opts.db->probe(leaf.pos) >= t);
    } else {
        SolverOptions o = opts;
        o.book = nullptr;
        Solver solver(c.params.m, c.params.rule, o);
        const int t = claim_test(leaf.claim);
        try {
            k.outcome = outcome_of_test(leaf.claim, solver.test(leaf.pos, t) >= t);
        } catch (const SearchStopped&) {
            k.outcome = LeafCheck::Outcome::OverBudget;
        }
        k.nodes = solver.stats().nodes;
    }
    k.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return k;
}

Job leaf_job(const Certificate& c, int id) {
    const CertNode& leaf = c.nodes.at(id);
    Job job;
    job.pos = leaf.pos;
    job.beta = claim_test(leaf.claim);
    return job;
}

LeafCheck leaf_check_of(const Certificate& c, int id, const JobRecord& r) {
    const CertNode& leaf = c.nodes.at(id);
    if (r.key != leaf.pos.pits_key() || r.beta != claim_test(leaf.claim))
        throw std::logic_error("leaf_check_of: a record of another test");
    LeafCheck k;
    k.node = id;
    k.outcome = r.kind == JobRecord::Kind::Split ? LeafCheck::Outcome::OverBudget
                                                 : outcome_of_test(leaf.claim, r.result >= r.beta);
    k.nodes = r.nodes;
    k.seconds = r.seconds;
    return k;
}

namespace {
// The journal's text (empty when there is no file) and whether the file exists.
std::string read_journal_text(const std::string& path, bool& exists) {
    std::string why;
    std::string text;
    int fd = open_regular_file(path, O_RDONLY, &why);
    exists = fd >= 0;
    if (!exists && why.find("No such file") == std::string::npos)
        throw LeafJournalError(path + ": " + why);
    if (exists) {
        char buf[1 << 16];
        for (;;) {
            const ssize_t got = ::read(fd, buf, sizeof buf);
            if (got < 0) {
                ::close(fd);
                throw LeafJournalError(path + ": cannot read: " + std::strerror(errno));
            }
            if (got == 0) break;
            text.append(buf, size_t(got));
            if (text.size() > (size_t(1) << 30)) {
                ::close(fd);
                throw LeafJournalError(path + ": larger than 1 GiB: not a leaf journal");
            }
        }
        ::close(fd);
    }
    return text;
}

// The checks of a journal's text for c, and the length of its good prefix (0 for an empty
// text); a damaged line and what follows are described in `damage`.
size_t parse_journal_text(const std::string& path, const std::string& text, const Certificate& c,
                          std::map<int, LeafCheck>& checks, std::string& damage) {
    if (text.empty()) return 0;
    const std::string header = header_line(c);
    if (text.compare(0, header.size(), header) != 0) {
        if (text.rfind(std::string(kLeafMagic) + " ", 0) == 0)
            throw LeafJournalError(path +
                                   ": a leaf journal of another certificate (its first "
                                   "line is not '" +
                                   header.substr(0, header.size() - 1) + "')");
        throw LeafJournalError(path + ": not a leaf journal (no '" + kLeafMagic + "' line)");
    }
    size_t good = header.size();
    while (good < text.size()) {
        const size_t nl = text.find('\n', good);
        LeafCheck k;
        if (nl == std::string::npos || !parse_check_line(text.substr(good, nl - good), c, k)) {
            damage = path + ": line " +
                     std::to_string(1 + std::count(text.begin(), text.begin() + long(good), '\n')) +
                     " is torn or damaged: it and what follows are dropped";
            break;
        }
        checks[k.node] = k;
        good = nl + 1;
    }
    return good;
}
}  // namespace

std::map<int, LeafCheck> read_leaf_journal(const std::string& path, const Certificate& c,
                                           std::string& damage) {
    bool exists = false;
    const std::string text = read_journal_text(path, exists);
    if (!exists) throw LeafJournalError(path + ": no such file");
    std::map<int, LeafCheck> checks;
    parse_journal_text(path, text, c, checks, damage);
    return checks;
}

void ProvedLeaves::check_game(const Certificate& c) const {
    if (c.params.m != m_ || c.params.rule != rule_)
        throw std::invalid_argument("a certificate of " + std::to_string(c.params.m) +
                                    " pits, rule " + rule_name(c.params.rule) + ", not of " +
                                    std::to_string(m_) + " pits, rule " + rule_name(rule_));
}

void ProvedLeaves::add(const Certificate& c, const std::map<int, LeafCheck>& checks) {
    check_game(c);
    for (const auto& [id, k] : checks) {
        if (k.outcome != LeafCheck::Outcome::Proved) continue;
        const CertNode& n = c.nodes.at(size_t(id));
        if (!n.leaf()) continue;
        by_position_[n.pos.pits_key()].push_back({n.claim, k});
        ++count_;
    }
}

std::optional<LeafCheck> ProvedLeaves::find(const Certificate& c, int id) const {
    check_game(c);
    const CertNode& n = c.nodes.at(size_t(id));
    const auto it = by_position_.find(n.pos.pits_key());
    if (it == by_position_.end()) return std::nullopt;
    for (const auto& [claim, k] : it->second) {
        if (claim.lower != n.claim.lower) continue;
        if (claim.lower ? claim.bound >= n.claim.bound : claim.bound <= n.claim.bound) {
            LeafCheck found = k;
            found.node = id;
            return found;
        }
    }
    return std::nullopt;
}

LeafJournal LeafJournal::open(const std::string& path, const Certificate& c, std::string& damage) {
    LeafJournal j;
    j.path_ = path;
    bool exists = false;
    const std::string text = read_journal_text(path, exists);
    const size_t good = parse_journal_text(path, text, c, j.checks_, damage);
    if (!exists || text.empty() || good < text.size()) {
        const std::string header = header_line(c);
        const std::string keep = good ? text.substr(0, good) : header;
        db::write_file_durably(path, {{keep.data(), keep.size()}});
    }
    std::string why;
    j.fd_ = open_regular_file(path, O_WRONLY | O_APPEND, &why);
    if (j.fd_ < 0) throw LeafJournalError(path + ": " + why);
    return j;
}

LeafJournal::LeafJournal(LeafJournal&& o) noexcept
    : fd_(o.fd_), path_(std::move(o.path_)), checks_(std::move(o.checks_)) {
    o.fd_ = -1;
}

LeafJournal::~LeafJournal() {
    if (fd_ >= 0) ::close(fd_);
}

void LeafJournal::append(const LeafCheck& check) {
    const std::string line = check_line(check);
    if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()) ||
        ::fsync(fd_) != 0)
        throw LeafJournalError(path_ + ": cannot append: " + std::strerror(errno));
    checks_[check.node] = check;
}

}  // namespace kalah::campaign
