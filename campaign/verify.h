// Re-proving a certificate's leaves (campaign/certificate.h), each by a fresh solver, with a
// journal of the leaves checked so that a long verification resumes.
#pragma once

// Every leaf is proved from nothing: a new Solver (empty table, no book) per leaf, so no
// state carried from one leaf to another (or from the campaign's workers) enters a proof;
// only the endgame database the options name is shared, and its evidence is its own
// (value hashes, verify-db). A database leaf whose seeds the database holds is compared
// with it; any other leaf is one null-window test of exactly its claim.
//
// The leaf journal is text, one line a checked leaf, appended and fsync'd:
//
//   kalah-leaf-journal 1 CRC         the certificate's crc32 line (binds the journal to it)
//   leaf ID OUTCOME NODES SECONDS X  X = crc32 of the line before " X", 8 hex digits
//
// OUTCOME is proved, refuted or over-budget. Reading keeps the lines whose crc holds and
// that name a leaf of the certificate, up to the first that does not (a torn tail from a
// kill); a journal of another certificate is refused.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "campaign/certificate.h"
#include "campaign/journal.h"
#include "campaign/tree.h"
#include "solver/solver.h"

namespace kalah::campaign {

struct LeafCheck {
    enum class Outcome { Proved, Refuted, OverBudget };
    int node = 0;
    Outcome outcome = Outcome::Proved;
    uint64_t nodes = 0;
    double seconds = 0;
};
const char* outcome_name(LeafCheck::Outcome o);

// Re-proves leaf node `id` of c by a new solver made with opts (its node_limit and
// time_limit_seconds the leaf's budget; SearchStopped is OverBudget).
LeafCheck reprove_leaf(const Certificate& c, int id, const SolverOptions& opts);

// Whether opts' database answers leaf `id` of c by a probe (reprove_leaf then compares its
// claim with the database's value instead of searching).
bool leaf_in_database(const Certificate& c, int id, const SolverOptions& opts);

// The leaf's re-proof as a campaign job, for a worker on another rank (run_job with an
// empty table: the same test reprove_leaf runs): one null-window test of exactly its
// claim, ">= b" the test at b, "<= b" the test at b + 1 (v <= b is v < b + 1). The budget
// is the worker's own.
Job leaf_job(const Certificate& c, int id);
// The check of leaf `id` from the record of its leaf_job: a bound that agrees with the
// claim is Proved, one that contradicts it Refuted, a split (over the budget) OverBudget.
LeafCheck leaf_check_of(const Certificate& c, int id, const JobRecord& r);

struct LeafJournalError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The last check of each leaf a leaf journal of c holds, read without changing the file: a
// damaged tail is left out and described in `damage`. Throws LeafJournalError for a
// journal of another certificate or a file that is missing or cannot be read.
std::map<int, LeafCheck> read_leaf_journal(const std::string& path, const Certificate& c,
                                           std::string& damage);

// Leaf claims proved for other certificates, by position: a claim about one position's value
// holds whatever certificate it is a leaf of, so a leaf of a certificate of the same board
// and rule whose claim one of them implies (the same position; ">= b" by ">= b'" with
// b' >= b, "<= b" by "<= b'" with b' <= b) needs no second proof. Redrawing a certificate
// from a longer journal, or drawing one of a campaign rooted at a first turn, keeps most
// leaves; their proofs carry over.
class ProvedLeaves {
  public:
    // Proofs about Kalah with m pits a side under rule (any number of seeds: a leaf's
    // claim is about its position only).
    ProvedLeaves(int m, Rule rule) : m_(m), rule_(rule) {}
    // Adds the leaves of c that `checks` (its leaf journal's) holds as proved. Throws
    // std::invalid_argument for a certificate of another number of pits or rule.
    void add(const Certificate& c, const std::map<int, LeafCheck>& checks);
    // A proved check whose claim implies that of leaf `id` of c (its node set to id), or
    // nothing. Throws std::invalid_argument when c is of another number of pits or rule.
    std::optional<LeafCheck> find(const Certificate& c, int id) const;
    size_t size() const { return count_; }

  private:
    void check_game(const Certificate& c) const;
    int m_;
    Rule rule_;
    size_t count_ = 0;
    std::map<Cells, std::vector<std::pair<CertClaim, LeafCheck>>> by_position_;
};

class LeafJournal {
  public:
    // Opens or creates the journal at path for c; a damaged tail is cut (the file rewritten
    // under a temporary name and renamed) and described in `damage`. Throws
    // LeafJournalError for a journal of another certificate or a file that cannot be used.
    static LeafJournal open(const std::string& path, const Certificate& c, std::string& damage);
    LeafJournal(LeafJournal&&) noexcept;
    ~LeafJournal();
    LeafJournal(const LeafJournal&) = delete;
    LeafJournal& operator=(const LeafJournal&) = delete;
    LeafJournal& operator=(LeafJournal&&) = delete;

    // The last check of each leaf the journal holds.
    const std::map<int, LeafCheck>& checks() const { return checks_; }
    // Appends a line and fsyncs. Throws LeafJournalError when the write fails.
    void append(const LeafCheck& check);

  private:
    LeafJournal() = default;
    int fd_ = -1;
    std::string path_;
    std::map<int, LeafCheck> checks_;
};

}  // namespace kalah::campaign
