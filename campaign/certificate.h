// Proof certificates: the proof DAG of a campaign's settled claims, drawn from its tree, in
// the text format of docs/certificate.md; its reading back, and a replay of its moves.
#pragma once

// A certificate proves claims "v(start) >= b" or "<= b" about the start of Kalah(m,n) from
// leaves, each a claim about one position: at a node with a claim ">= b" one move of the
// mover whose worth is at least b, at a node with "<= b" every legal move with worth at
// most b (the worth: g for a move that ends the game, g + v(child) after an extra move,
// g - v(child) otherwise; core/step.h), down to leaves proved by a journal record (a job's
// search) or read from the endgame database. Everything but the leaves is checked by
// replaying moves; checker/check_certificate.py does that with no code of ours, and
// verify-certificate (campaign/verify.h) re-proves the leaves.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "campaign/journal.h"
#include "campaign/tree.h"

namespace kalah::campaign {

constexpr const char* kCertificateMagic = "kalah-certificate";
constexpr int kCertificateVersion = 1;

// A claim about a pits value: v >= bound (lower) or v <= bound.
struct CertClaim {
    bool lower = true;
    int bound = 0;
    bool operator==(const CertClaim&) const = default;
};
// ">=+2", "<=-4" as the file writes them ("+" for positive bounds is not written there:
// ">=2").
std::string claim_text(const CertClaim& c);

struct CertNode {
    enum class Kind { Move, All, Job, Db };
    // A child entry of Move/All: a node, or the move ends the game, or the needed bound
    // holds whatever the child's value is (its seeds alone give it).
    static constexpr int kEnd = -1;
    static constexpr int kAny = -2;
    Board pos;  // pits only, the mover's view (South to move, stores zero)
    CertClaim claim;
    Kind kind = Kind::Job;
    int pit = 0;                // Move: the mover's pit, 0-based
    std::vector<int> children;  // Move: one entry; All: one per legal move in pit order
    // Job: the journal record behind the leaf (index, its beta and result, its nodes).
    uint64_t record = 0;
    int beta = 0, result = 0;
    uint64_t nodes = 0;
    int db_value = 0;  // Db: the database's value
    bool leaf() const { return kind == Kind::Job || kind == Kind::Db; }
};

struct Certificate {
    CampaignParams params;
    struct Root {
        int node = 0;
        CertClaim claim;
    };
    std::vector<Root> roots;
    std::vector<CertNode> nodes;  // every child after its parent
    uint32_t crc = 0;             // the file's crc32 line (parse_certificate)
    size_t leaves() const;
};

// The tree does not prove what was asked (or the records behind a bound are missing).
struct CertificateError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The proof of each claim about the tree's root, drawn from its bounds: at a node a
// record's bound or the database's value proves is a leaf (the record of the journal
// `records`, as applied to the tree, that proves it, or the tree's database); otherwise
// its moves, at ">=" nodes the move whose subproof has the fewest leaves. Throws
// CertificateError when the root's bounds do not give a claim.
Certificate extract_certificate(const ProofTree& tree, const std::vector<JobRecord>& records,
                                const std::vector<CertClaim>& claims);

// The file's text (docs/certificate.md), its crc32 line included.
std::string format_certificate(const Certificate& c);
// Reads a certificate's text, checking its syntax, counts, ID order and crc32 (not its
// moves: check_certificate). Throws CertificateError naming the line and the problem.
Certificate parse_certificate(const std::string& text);
// Replays every move of c under its rule with this project's move code and checks the
// bound arithmetic and the roots (the checker script does the same with its own);
// "" when it holds, else what fails (the node and why).
std::string check_certificate(const Certificate& c);

// CRC-32 (IEEE, as zlib's crc32) of bytes.
uint32_t crc32(const void* data, size_t len, uint32_t crc = 0);

}  // namespace kalah::campaign
