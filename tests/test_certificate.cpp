// Proof certificates: drawn from campaigns on small boards, every claim checked against
// brute force; the checks catch changed moves, claims and bytes; leaves re-proved fresh;
// the leaf journal; `campaign --certificate` and `verify-certificate` end to end.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "brute_force.h"
#include "campaign/campaign.h"
#include "campaign/certificate.h"
#include "campaign/verify.h"
#include "cli_runner.h"
#include "db_fixtures.h"
#include "oracle_workers.h"
#include "temp_dir.h"

using namespace kalah;
using namespace kalah::campaign;
using test_campaign::OracleWorkers;
using test_files::TempDir;

namespace {

// One memoised brute force per board and rule for every test of this file (Kalah(4,3)'s
// first value costs seconds).
BruteForce& brute(int m, Rule rule) {
    static std::map<std::pair<int, Rule>, std::unique_ptr<BruteForce>> all;
    auto& p = all[{m, rule}];
    if (!p) p = std::make_unique<BruteForce>(m, rule);
    return *p;
}

struct Drawn {
    Certificate cert;
    int value = 0;
};

// A campaign over the start of Kalah(m,n) run to its value by brute-force workers that
// split at random, and the certificate of its value.
Drawn draw(int m, int n, Rule rule, uint32_t seed, BruteForce& bf) {
    const CampaignParams p{m, n, rule};
    ProofTree tree(p, nullptr);
    OracleWorkers oracle(bf, seed, 1 + int(seed % 3));
    oracle.capacity_ = 1 + int(seed % 2);
    std::vector<JobRecord> records;
    const int v =
        solve_tree(tree, oracle, int(seed % 7) - 3,
                   [&](const JobRecord& r, const Dispatch&) { records.push_back(r); }, {});
    return {extract_certificate(tree, records, {{true, v}, {false, v}}), v};
}

// Every claim of c is true (brute force), every leaf's too.
void check_claims_true(const Certificate& c, BruteForce& bf) {
    for (const CertNode& n : c.nodes) {
        const int v = bf.pits_value(ref::from_board(n.pos));
        INFO(claim_text(n.claim), " v ", v);
        CHECK((n.claim.lower ? v >= n.claim.bound : v <= n.claim.bound));
    }
}

// A copy of c's text with line `line` (0-based) replaced and the crc32 line recomputed.
std::string with_line(const std::string& text, size_t line, const std::string& repl) {
    std::vector<std::string> lines;
    size_t a = 0;
    while (a < text.size()) {
        const size_t nl = text.find('\n', a);
        lines.push_back(text.substr(a, nl - a));
        a = nl + 1;
    }
    lines.pop_back();  // the crc32 line
    lines.at(line) = repl;
    std::string out;
    for (const std::string& l : lines) out += l + "\n";
    char crc[16];
    std::snprintf(crc, sizeof crc, "%08x", crc32(out.data(), out.size()));
    return out + "crc32 " + crc + "\n";
}

// A campaign rooted after `line` (campaign/line.h) run to its value by brute-force
// workers, and the certificate of the root's value.
Drawn draw_line(int m, int n, Rule rule, std::vector<uint8_t> line, uint32_t seed, BruteForce& bf) {
    const CampaignParams p{m, n, rule, std::move(line)};
    ProofTree tree(p, nullptr);
    OracleWorkers oracle(bf, seed, 1 + int(seed % 3));
    std::vector<JobRecord> records;
    const int v = solve_tree(
        tree, oracle, 0, [&](const JobRecord& r, const Dispatch&) { records.push_back(r); }, {});
    Drawn d{extract_certificate(tree, records, {{true, v}, {false, v}}), v};
    d.cert.params = p;
    return d;
}

// The text line of node id.
size_t node_line(const Certificate& c, int id) {
    return 5 + (c.params.line.empty() ? 0 : 1) + c.roots.size() + size_t(id);
}

}  // namespace

TEST_SUITE("campaign") {
    TEST_CASE(
        "certificate: drawn from campaigns on small boards, every claim true, moves replayed") {
        int certified = 0, with_leaves = 0;
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture})
            for (int m = 2; m <= 4; ++m) {
                BruteForce& bf = brute(m, rule);
                for (int n = 1; n <= (m == 4 ? 3 : 4); ++n)
                    for (uint32_t seed = 1; seed <= 3; ++seed) {
                        INFO("Kalah(", m, ",", n, ") ", rule_name(rule), " seed ", seed);
                        const Drawn d = draw(m, n, rule, seed, bf);
                        const Certificate& c = d.cert;
                        CHECK(d.value == bf.pits_value(ref::from_board(Board::start(m, n))));
                        REQUIRE(c.roots.size() == 2);
                        CHECK(c.nodes[c.roots[0].node].pos.pits_key() ==
                              Board::start(m, n).pits_key());
                        CHECK(check_certificate(c) == "");
                        check_claims_true(c, bf);
                        // Text round trip: the same certificate, the same bytes.
                        const std::string text = format_certificate(c);
                        const Certificate back = parse_certificate(text);
                        CHECK(format_certificate(back) == text);
                        CHECK(back.leaves() == c.leaves());
                        CHECK(check_certificate(back) == "");
                        ++certified;
                        with_leaves += c.leaves() > 0;
                    }
            }
        CHECK(certified == 2 * (4 + 4 + 3) * 3);
        CHECK(with_leaves > certified / 2);  // most proofs rest on job records
    }

    TEST_CASE("certificate: a changed move, claim, child or byte is caught") {
        BruteForce& bf = brute(4, Rule::Standard);
        // A proof of some depth: the first seed whose certificate has 8 internal nodes.
        Drawn d;
        for (uint32_t seed = 1; d.cert.nodes.size() - d.cert.leaves() < 8; ++seed) {
            REQUIRE(seed < 100);
            d = draw(4, 3, Rule::Standard, seed, bf);
        }
        const Certificate& c = d.cert;
        REQUIRE(check_certificate(c) == "");
        const std::string text = format_certificate(c);
        int moves_changed = 0, claims_weakened = 0;
        for (size_t i = 0; i < c.nodes.size(); ++i) {
            const CertNode& n = c.nodes[i];
            if (n.kind == CertNode::Kind::Move && n.children[0] >= 0) {
                // Another legal pit for the move: its child or its worth no longer fits.
                for (const int pit : n.pos.legal_moves()) {
                    if (pit == n.pit) continue;
                    Certificate bad = c;
                    bad.nodes[i].pit = pit;
                    const std::string why = check_certificate(bad);
                    if (!why.empty()) ++moves_changed;
                    // Never accepted unless that move also proves the claim (then its child
                    // must be the same node: impossible for another pit's sowing).
                    CHECK(!why.empty());
                    break;
                }
            }
            // A node's claim weakened by one step of its parity: a parent needs more.
            if (i > 0) {
                Certificate bad = c;
                bad.nodes[i].claim.bound += n.claim.lower ? -2 : 2;
                const std::string why = check_certificate(bad);
                CHECK(!why.empty());
                claims_weakened += !why.empty();
            }
        }
        CHECK(moves_changed > 0);
        CHECK(claims_weakened == int(c.nodes.size()) - 1);
        // A root claim stronger than the value: the root node's claim then differs.
        {
            Certificate bad = c;
            bad.roots[0].claim.bound += 2;
            CHECK(check_certificate(bad).find("root") != std::string::npos);
        }
        // Every byte of the text matters: a flipped digit fails the crc.
        {
            std::string bad = text;
            const size_t at = bad.find("node 0 ");
            bad[at + 5] = '1';
            CHECK_THROWS_AS(parse_certificate(bad), CertificateError);
        }
        // A cut file, a missing newline, an extra line, another format.
        CHECK_THROWS_AS(parse_certificate(text.substr(0, text.size() / 2)), CertificateError);
        CHECK_THROWS_AS(parse_certificate(text.substr(0, text.size() - 1)), CertificateError);
        CHECK_THROWS_AS(parse_certificate(with_line(text, 0, "kalah-certificate 2")),
                        CertificateError);
        CHECK_THROWS_AS(parse_certificate(with_line(text, 2, "rule other")), CertificateError);
        // A child ID not after its parent's (here: the node itself): refused by the reading.
        {
            int id = 0;
            while (c.nodes[id].leaf()) ++id;
            const bool move = c.nodes[id].kind == CertNode::Kind::Move;
            const std::string head = "node " + std::to_string(id) + " ";
            std::string line = text.substr(text.find(head));
            line = line.substr(0, line.find('\n'));
            line = line.substr(0, line.find(move ? " move " : " all ")) +
                   (move ? " move 1 " : " all ") + std::to_string(id);
            CHECK_THROWS_AS(parse_certificate(with_line(text, node_line(c, id), line)),
                            CertificateError);
        }
    }

    TEST_CASE(
        "certificate: rooted after a line, its root is the line's position; the line checked") {
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            BruteForce& bf = brute(4, rule);
            for (const auto& line : {std::vector<uint8_t>{1, 0}, std::vector<uint8_t>{0},
                                     std::vector<uint8_t>{3, 1}}) {
                const Drawn d = draw_line(4, 3, rule, line, 2, bf);
                const Certificate& c = d.cert;
                const RootFrame f = root_frame(c.params);
                INFO(rule_name(rule), " after ", line_text(c.params));
                CHECK(c.nodes[c.roots[0].node].pos.pits_key() == f.board.pits_key());
                CHECK(d.value == bf.pits_value(ref::from_board(f.board.without_stores())));
                CHECK(check_certificate(c) == "");
                check_claims_true(c, bf);
                const std::string text = format_certificate(c);
                CHECK(text.find("\nline " + plain_line_text(c.params) + "\n") != std::string::npos);
                const Certificate back = parse_certificate(text);
                CHECK(back.params == c.params);
                CHECK(format_certificate(back) == text);
                CHECK(check_certificate(back) == "");
                // Another line leads elsewhere: the root no longer holds its position.
                Certificate other = c;
                other.params.line = {2};
                CHECK(check_certificate(other).find("not the position after A3") !=
                      std::string::npos);
                // No line: the root is not the start.
                other.params.line.clear();
                CHECK(check_certificate(other).find("not the start") != std::string::npos);
                // Lines that are not games, refused by the reading.
                for (const char* bad :
                     {"line A2 B1", "line A2 A2", "line A5", "line A2+ A1", "line", "line  A2"})
                    CHECK_THROWS_AS(parse_certificate(with_line(text, 3, bad)), CertificateError);
            }
        }
    }

    TEST_CASE("certificate: leaves re-proved by a fresh solver; a false leaf is refuted") {
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            BruteForce& bf = brute(4, rule);
            const Drawn d = draw(4, 3, rule, 3, bf);
            SolverOptions o;
            o.tt_mb = 4;
            int leaves = 0;
            for (size_t i = 0; i < d.cert.nodes.size(); ++i) {
                if (!d.cert.nodes[i].leaf() || leaves == 12) continue;
                ++leaves;
                const LeafCheck k = reprove_leaf(d.cert, int(i), o);
                CHECK(k.outcome == LeafCheck::Outcome::Proved);
                // The same leaf claiming one parity step more than its true value: refuted.
                Certificate bad = d.cert;
                CertNode& n = bad.nodes[i];
                const int v = bf.pits_value(ref::from_board(n.pos));
                n.claim.bound = n.claim.lower ? v + 2 : v - 2;
                CHECK(reprove_leaf(bad, int(i), o).outcome == LeafCheck::Outcome::Refuted);
                // A budget too small to finish: over budget, not a verdict.
                if (n.pos.seeds_in_pits() >= 8) {
                    SolverOptions tiny = o;
                    tiny.node_limit = 1;
                    const LeafCheck t = reprove_leaf(d.cert, int(i), tiny);
                    CHECK(t.outcome != LeafCheck::Outcome::Refuted);
                }
            }
            CHECK(leaves > 0);
        }
    }

    TEST_CASE("certificate: a leaf the database holds is compared with its value, not searched") {
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            BruteForce& bf = brute(4, rule);
            TempDir dir("leafdb");
            const int k = 22;  // splits the drawn certificates' nodes (up to 24 seeds): some held,
                               // some searched
            test_db::build(dir.path.string(), 4, rule, k);
            std::string why;
            const auto db = db::Database::open(dir.path.string(), 4, rule, 1 << 28, &why);
            REQUIRE_MESSAGE(db, why);
            SolverOptions o;
            o.tt_mb = 4;
            o.db = db.get();
            int held = 0, searched = 0;
            for (const uint32_t seed : {3u, 4u, 5u}) {
                const Drawn d = draw(4, 3, rule, seed, bf);
                for (size_t i = 0; i < d.cert.nodes.size(); ++i) {
                    const CertNode& n = d.cert.nodes[i];
                    const int v = bf.pits_value(ref::from_board(n.pos));
                    INFO(rule_name(rule), " node ", i, " v ", v, " ", claim_text(n.claim));
                    if (!leaf_in_database(d.cert, int(i), o)) {
                        CHECK(n.pos.seeds_in_pits() > k);
                        if (!n.leaf() || searched == 6) continue;
                        ++searched;  // a leaf above the database: searched, as without one
                        const LeafCheck s = reprove_leaf(d.cert, int(i), o);
                        CHECK(s.outcome == LeafCheck::Outcome::Proved);
                        CHECK(s.nodes > 0);
                        continue;
                    }
                    ++held;  // any node's claim, leaf or not: the probe path is the same
                    // Each claim at and beside the true value, both senses: the edge of
                    // every test ("v <= b" is "not v >= b + 1").
                    const std::pair<CertClaim, bool> claims[] = {
                        {{true, v}, true},       {{false, v}, true},    {{true, v + 1}, false},
                        {{false, v - 1}, false}, {{true, v - 1}, true}, {{false, v + 1}, true}};
                    for (const auto& [claim, holds] : claims) {
                        Certificate c = d.cert;
                        c.nodes[i].claim = claim;
                        INFO("claim ", claim_text(claim));
                        const LeafCheck r = reprove_leaf(c, int(i), o);
                        CHECK(r.outcome ==
                              (holds ? LeafCheck::Outcome::Proved : LeafCheck::Outcome::Refuted));
                        CHECK(r.nodes == 0);  // a probe, no search
                    }
                }
            }
            CHECK(held > 0);
            CHECK(searched > 0);
        }
    }

    TEST_CASE("certificate: the leaf journal resumes, drops a torn tail, refuses another's") {
        BruteForce& bf = brute(3, Rule::Standard);
        const Drawn d = draw(3, 3, Rule::Standard, 2, bf);
        Certificate c = parse_certificate(format_certificate(d.cert));
        TempDir dir("leafj");
        const std::string path = (dir.path / "leaves.klj").string();
        std::vector<int> leaves;
        for (size_t i = 0; i < c.nodes.size(); ++i)
            if (c.nodes[i].leaf()) leaves.push_back(int(i));
        REQUIRE(leaves.size() >= 2);
        {
            std::string damage;
            LeafJournal j = LeafJournal::open(path, c, damage);
            CHECK(damage.empty());
            CHECK(j.checks().empty());
            j.append({leaves[0], LeafCheck::Outcome::Proved, 123, 0.5});
            j.append({leaves[1], LeafCheck::Outcome::OverBudget, 7, 0.25});
        }
        {
            std::string damage;
            LeafJournal j = LeafJournal::open(path, c, damage);
            CHECK(damage.empty());
            REQUIRE(j.checks().size() == 2);
            CHECK(j.checks().at(leaves[0]).nodes == 123);
            CHECK(j.checks().at(leaves[1]).outcome == LeafCheck::Outcome::OverBudget);
        }
        // A torn line at the end (a kill mid-write), then a flipped byte in a whole line.
        {
            std::ofstream(path, std::ios::app) << "leaf " << leaves[0] << " prov";
            std::string damage;
            LeafJournal j = LeafJournal::open(path, c, damage);
            CHECK(damage.find("torn") != std::string::npos);
            CHECK(j.checks().size() == 2);
        }
        {
            std::string text = slurp_file(path);
            const size_t at = text.find(" 123 ");
            text[at + 1] = '9';
            std::ofstream(path, std::ios::trunc) << text;
            std::string damage;
            LeafJournal j = LeafJournal::open(path, c, damage);
            CHECK(!damage.empty());
            CHECK(j.checks().empty());  // the first line is damaged: nothing after it is used
        }
        // A journal of another certificate.
        {
            Certificate other = c;
            other.crc ^= 1;
            std::string damage;
            CHECK_THROWS_AS(LeafJournal::open(path, other, damage), LeafJournalError);
        }
    }

    TEST_CASE("certificate: proved leaves carry over to another certificate's leaves") {
        BruteForce& bf = brute(4, Rule::Standard);
        const Drawn d = draw(4, 3, Rule::Standard, 3, bf);
        const Certificate& c = d.cert;
        std::vector<int> leaves;
        std::map<int, LeafCheck> checks;
        for (size_t i = 0; i < c.nodes.size(); ++i)
            if (c.nodes[i].leaf()) {
                leaves.push_back(int(i));
                checks[int(i)] = {int(i), LeafCheck::Outcome::Proved, 1000 + i, 0.5};
            }
        REQUIRE(leaves.size() >= 3);
        // The first leaf refuted, the second over the budget: neither is a proof to carry.
        checks[leaves[0]].outcome = LeafCheck::Outcome::Refuted;
        checks[leaves[1]].outcome = LeafCheck::Outcome::OverBudget;
        ProvedLeaves proved(4, Rule::Standard);
        CHECK(!proved.find(c, leaves[2]));  // nothing added yet
        proved.add(c, checks);
        CHECK(proved.size() == leaves.size() - 2);
        for (const int id : leaves) {
            const auto k = proved.find(c, id);
            CHECK(bool(k) == (id != leaves[0] && id != leaves[1]));
            if (k) {
                CHECK(k->node == id);
                CHECK(k->nodes == 1000 + uint64_t(id));
            }
        }
        // Another certificate (a copy, its leaves renumbered by a node put first): a leaf's
        // claim one parity step weaker is implied, one step stronger or the other sense is
        // not, nor the same claim at another position.
        for (const int id : {leaves[2], leaves.back()}) {
            const CertClaim claim = c.nodes[id].claim;
            const int weaker = claim.lower ? claim.bound - 2 : claim.bound + 2;
            const int stronger = claim.lower ? claim.bound + 2 : claim.bound - 2;
            const std::pair<CertClaim, bool> cases[] = {{claim, true},
                                                        {{claim.lower, weaker}, true},
                                                        {{claim.lower, stronger}, false},
                                                        {{!claim.lower, claim.bound}, false}};
            for (const auto& [asked, implied] : cases) {
                Certificate other = c;
                other.nodes[id].claim = asked;
                INFO("leaf ", id, " ", claim_text(claim), " asked ", claim_text(asked));
                CHECK(bool(proved.find(other, id)) == implied);
            }
            // One seed moved from one of the mover's pits to the next: another position.
            const Board& b = c.nodes[id].pos;
            int own[4], opp[4], from = -1;
            for (int p = 0; p < 4; ++p) {
                own[p] = b.own_pit(p);
                opp[p] = b.opp_pit(p);
                if (own[p] > 0 && from < 0) from = p;
            }
            REQUIRE(from >= 0);
            --own[from];
            ++own[(from + 1) % 4];
            Certificate moved = c;
            moved.nodes[id].pos = Board::from_rows(4, own, opp, 0, 0, Side::South);
            REQUIRE(moved.nodes[id].pos.pits_key() != b.pits_key());
            CHECK(!proved.find(moved, id));
        }
        // A certificate of another rule or board: refused, not answered.
        Certificate other_rule = c;
        other_rule.params.rule = Rule::EmptyCapture;
        CHECK_THROWS_AS(proved.find(other_rule, leaves[2]), std::invalid_argument);
        CHECK_THROWS_AS(proved.add(other_rule, checks), std::invalid_argument);
        Certificate other_board = c;
        other_board.params.m = 5;
        CHECK_THROWS_AS(proved.find(other_board, leaves[2]), std::invalid_argument);
        ProvedLeaves empty_capture(4, Rule::EmptyCapture);
        CHECK_THROWS_AS(empty_capture.find(c, leaves[2]), std::invalid_argument);
        CHECK_THROWS_AS(empty_capture.add(c, checks), std::invalid_argument);
        // The journal read without changing it; a missing one is an error, not empty.
        TempDir dir("reuse");
        const std::string path = (dir.path / "leaves.klj").string();
        std::string damage;
        CHECK_THROWS_AS(read_leaf_journal(path, c, damage), LeafJournalError);
        {
            LeafJournal j = LeafJournal::open(path, c, damage);
            j.append({leaves[2], LeafCheck::Outcome::Proved, 77, 0.25});
        }
        std::ofstream(path, std::ios::app) << "leaf " << leaves[3 % leaves.size()] << " pro";
        const std::string before = slurp_file(path);
        const auto read = read_leaf_journal(path, c, damage);
        CHECK(read.size() == 1);
        CHECK(read.at(leaves[2]).nodes == 77);
        CHECK(damage.find("torn") != std::string::npos);
        CHECK(slurp_file(path) == before);  // the torn tail is left where it is
    }

    TEST_CASE("proof-grade jobs: a fresh table per job searches a repeated job in full") {
        SolverOptions o;
        o.tt_mb = 16;
        o.threads = 1;
        o.node_limit = 0;
        Job job;
        job.pos = Board::start(4, 4);
        job.beta = 2;
        for (const bool fresh : {false, true}) {
            LocalWorkers w(4, Rule::Standard, o);
            w.set_fresh_table(fresh);
            w.submit(job);
            const JobRecord a = w.wait();
            w.submit(job);
            const JobRecord b = w.wait();
            CHECK(a.result == b.result);
            CHECK(a.nodes > 1000);
            // Carried over, the table answers the second at once; fresh, it is searched again
            // node for node (one thread: the same search).
            if (fresh)
                CHECK(b.nodes == a.nodes);
            else
                CHECK(b.nodes < a.nodes / 10);
        }
        // The option through the CLI: the same value.
        TempDir dir("fresh");
        const CliResult r =
            run_kalah("campaign --pits 4 --seeds 3 --dir " + dir.path.string() +
                      " --job-nodes 1000 --db /nonexistent --quiet --json --fresh-table");
        CHECK(r.status == 0);
        CHECK(nlohmann::json::parse(r.out)["value"] ==
              brute(4, Rule::Standard).pits_value(ref::from_board(Board::start(4, 3))));
    }

    TEST_CASE("kalah campaign --certificate and verify-certificate, end to end") {
        TempDir dir("certcli");
        const std::string d = dir.path.string();
        const std::string cert = (dir.path / "c.kcert").string();
        const std::string lj = (dir.path / "leaves.klj").string();
        const CliResult run = run_kalah("campaign --pits 4 --seeds 3 --dir " + d +
                                        " --job-nodes 1000 --db /nonexistent --quiet");
        REQUIRE(run.status == 0);
        CliResult w =
            run_kalah("campaign --certificate " + cert + " --dir " + d + " --db /nonexistent");
        REQUIRE(w.status == 0);
        CHECK(w.out.find("leaves") != std::string::npos);
        const std::string text = slurp_file(cert);
        CHECK(text.find("root 0 >=") != std::string::npos);
        CHECK(text.find(" <=", text.find("\nroot ", text.find("root 0 >="))) <
              text.find("\nnode 0 "));  // the second root line: the upper bound
        CliResult v = run_kalah("verify-certificate --certificate " + cert + " --journal " + lj +
                                " --db /nonexistent --tt-mb 16 --json");
        CHECK(v.status == 0);
        const auto j = nlohmann::json::parse(v.out);
        CHECK(j["refuted"] == 0);
        CHECK(j["over_budget"] == 0);
        CHECK(j["proved"] == j["leaves"]);
        CHECK(j["from_journal"] == 0);
        // Resumed: every leaf from the journal, none re-run.
        v = run_kalah("verify-certificate --certificate " + cert + " --journal " + lj +
                      " --db /nonexistent --tt-mb 16 --json");
        CHECK(v.status == 0);
        CHECK(nlohmann::json::parse(v.out)["from_journal"] == j["leaves"]);
        // Another certificate's proofs reused: every leaf of the same certificate, nothing
        // re-run, nothing written to a new journal; the figures are the first run's.
        const std::string lj2 = (dir.path / "leaves2.klj").string();
        v = run_kalah("verify-certificate --certificate " + cert + " --reuse " + cert + " " + lj +
                      " --journal " + lj2 + " --db /nonexistent --tt-mb 16 --json");
        CHECK(v.status == 0);
        {
            const auto r = nlohmann::json::parse(v.out);
            CHECK(r["reused"] == j["leaves"]);
            CHECK(r["proved"] == j["leaves"]);
            CHECK(r["from_journal"] == 0);
            CHECK(r["leaf_nodes"] == j["leaf_nodes"]);
            for (const auto& leaf : r["per_leaf"]) CHECK(leaf["reused"] == true);
        }
        CHECK(std::count_if(std::istreambuf_iterator<char>(std::ifstream(lj2).rdbuf()), {},
                            [](char ch) { return ch == '\n'; }) == 1);  // its header alone
        // Bad --reuse: exit 2, one line.
        for (const std::string& bad :
             {" --reuse " + cert, " --reuse " + cert + " " + d + "/missing.klj",
              " --reuse " + d + "/missing.kcert " + lj, " --reuse " + cert + " " + cert}) {
            INFO(bad);
            const CliResult b = run_kalah("verify-certificate --certificate " + cert + bad +
                                          " --db /nonexistent --tt-mb 16");
            CHECK(b.status == 2);
            CHECK(std::count(b.err.begin(), b.err.end(), '\n') == 1);
        }
        // --reuse of a certificate of another board: exit 2, one line naming both boards.
        {
            const std::string d3 = (dir.path / "three").string();
            const std::string c3 = (dir.path / "c3.kcert").string();
            const std::string lj3 = (dir.path / "leaves3.klj").string();
            REQUIRE(run_kalah("campaign --pits 3 --seeds 2 --dir " + d3 +
                              " --job-nodes 1000 --db /nonexistent --quiet")
                        .status == 0);
            REQUIRE(
                run_kalah("campaign --certificate " + c3 + " --dir " + d3 + " --db /nonexistent")
                    .status == 0);
            REQUIRE(run_kalah("verify-certificate --certificate " + c3 + " --journal " + lj3 +
                              " --db /nonexistent --tt-mb 16")
                        .status == 0);
            const CliResult b = run_kalah("verify-certificate --certificate " + cert + " --reuse " +
                                          c3 + " " + lj3 + " --db /nonexistent --tt-mb 16");
            CHECK(b.status == 2);
            CHECK(std::count(b.err.begin(), b.err.end(), '\n') == 1);
            CHECK(b.err.find("3 pits") != std::string::npos);
            CHECK(b.err.find("not of 4 pits") != std::string::npos);
        }
        // A damaged certificate: exit 1, one line naming the file.
        std::string bad = text;
        bad[bad.find("node 1 ") + 5] = '2';
        std::ofstream(cert, std::ios::trunc) << bad;
        v = run_kalah("verify-certificate --certificate " + cert + " --db /nonexistent");
        CHECK(v.status == 1);
        CHECK(v.err.find("crc32") != std::string::npos);
        CHECK(std::count(v.err.begin(), v.err.end(), '\n') == 1);
        // Bad input: exit 2.
        CHECK(run_kalah("verify-certificate --certificate " + d + "/missing").status == 2);
        CHECK(run_kalah("verify-certificate --leaf-nodes 5").status == 2);
        // A question the journal does not settle: nothing certified, exit 1, no file.
        const std::filesystem::path d2 = dir.path / "empty";
        std::filesystem::create_directories(d2);
        std::ofstream(d2 / kJournalName) << journal_header(CampaignParams{4, 3, Rule::Standard});
        w = run_kalah("campaign --certificate " + d2.string() + "/c.kcert --dir " + d2.string() +
                      " --prove win --db /nonexistent");
        CHECK(w.status == 1);
        CHECK(!std::filesystem::exists(d2 / "c.kcert"));
    }
}
