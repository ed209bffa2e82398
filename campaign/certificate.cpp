// Proof certificates (contract in campaign/certificate.h, format in docs/certificate.md).
#include "campaign/certificate.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <limits>
#include <map>
#include <unordered_map>

#include "core/notation.h"
#include "core/step.h"
#include "db/database.h"

namespace kalah::campaign {
namespace {

constexpr uint64_t kCostCap = uint64_t(1) << 60;

std::string pits_text(const Board& b) {
    char buf[64];
    int at = 0;
    for (int r = 0; r < 2; ++r)
        for (int i = 0; i < b.pits(); ++i)
            at += std::snprintf(buf + at, sizeof buf - size_t(at), "%s%d",
                                i   ? ","
                                : r ? "/"
                                    : "",
                                r ? b.opp_pit(i) : b.own_pit(i));
    return std::string(buf, size_t(at));
}

// What the worth of one move needs of its child: a claim on v(child), or nothing to ask
// (the move ends the game, or the child's seeds alone give the bound), and whether the
// worth's bound then holds.
struct EdgeNeed {
    bool ends = false;  // the move ends the game: holds = its gain meets the bound
    bool any = false;   // the child's seeds alone give the bound
    bool holds = true;  // for ends
    CertClaim child;
};

// At a node claiming `c`, the need of the move `step` (its child with child_seeds seeds).
EdgeNeed need_of(const MoveStep& step, int child_seeds, const CertClaim& c) {
    EdgeNeed e;
    if (step.over) {
        e.ends = true;
        e.holds = c.lower ? step.gain >= c.bound : step.gain <= c.bound;
        return e;
    }
    // ">= b": extra: v(q) >= b - g; else v(q) <= g - b. "<= b": the reverse.
    const bool child_lower = c.lower == step.extra;
    const int x = step.extra ? c.bound - step.gain : step.gain - c.bound;
    e.child.lower = child_lower;
    e.child.bound = child_lower ? round_up(child_seeds, x) : round_down(child_seeds, x);
    e.any = child_lower ? e.child.bound <= -child_seeds : e.child.bound >= child_seeds;
    return e;
}

// Does claim `have` (on a position of `seeds` seeds) give `want`? v has the parity of
// seeds, so "v >= c" with c of the other parity is "v >= c + 1" (and "v <= c" is "v <= c - 1").
bool implies(const CertClaim& have, const CertClaim& want, int seeds) {
    if (have.lower != want.lower) return false;
    if (have.lower) return round_up(seeds, have.bound) >= want.bound;
    return round_down(seeds, have.bound) <= want.bound;
}

class Extractor {
  public:
    Extractor(const ProofTree& tree, const std::vector<JobRecord>& records)
        : tree_(tree), records_(records) {
        for (size_t i = 0; i < records.size(); ++i)
            if (records[i].kind == JobRecord::Kind::Bound) by_key_[records[i].key].push_back(i);
    }

    // The temporary node proving `c` at tree node i (c normalised to i's parity).
    int build(int i, const CertClaim& c) {
        const auto memo_key = std::make_tuple(i, c.lower, c.bound);
        if (auto it = memo_.find(memo_key); it != memo_.end()) return it->second;
        const ProofTree::Node& n = tree_.node(i);
        CertNode out;
        out.pos = n.pos;
        out.claim = c;
        uint64_t cost = 1;
        if (c.lower ? n.job_lo >= c.bound : n.job_hi <= c.bound) {
            leaf(n, out);
        } else if (!n.expanded) {
            throw CertificateError("the tree does not prove " + claim_text(c) + " at " +
                                   pits_text(n.pos));
        } else if (c.lower) {
            // The move whose subproof has the fewest leaves.
            uint64_t best = std::numeric_limits<uint64_t>::max();
            for (const ProofTree::Edge& e : n.edges) {
                const int cs = e.step.over ? 0 : tree_.node(e.child).seeds;
                const EdgeNeed need = need_of(e.step, cs, c);
                int child = CertNode::kEnd;
                uint64_t ec = 0;
                if (need.ends) {
                    if (!need.holds) continue;
                } else if (need.any) {
                    child = CertNode::kAny;
                } else {
                    const ProofTree::Node& cn = tree_.node(e.child);
                    if (!(need.child.lower ? cn.lo >= need.child.bound : cn.hi <= need.child.bound))
                        continue;
                    child = build(e.child, need.child);
                    ec = cost_[child];
                }
                if (ec < best) {
                    best = ec;
                    out.kind = CertNode::Kind::Move;
                    out.pit = e.pit;
                    out.children = {child};
                }
            }
            if (out.kind != CertNode::Kind::Move)
                throw CertificateError("no move of " + pits_text(n.pos) + " proves " +
                                       claim_text(c));
            cost = best;
        } else {
            out.kind = CertNode::Kind::All;
            cost = 0;
            for (const ProofTree::Edge& e : n.edges) {
                const int cs = e.step.over ? 0 : tree_.node(e.child).seeds;
                const EdgeNeed need = need_of(e.step, cs, c);
                if (need.ends) {
                    if (!need.holds)
                        throw CertificateError("a move of " + pits_text(n.pos) +
                                               " ends the game "
                                               "above " +
                                               claim_text(c));
                    out.children.push_back(CertNode::kEnd);
                } else if (need.any) {
                    out.children.push_back(CertNode::kAny);
                } else {
                    const int child = build(e.child, need.child);
                    out.children.push_back(child);
                    cost = std::min(kCostCap, cost + cost_[child]);
                }
            }
        }
        const int id = static_cast<int>(nodes_.size());
        nodes_.push_back(std::move(out));
        cost_.push_back(cost);
        memo_.emplace(memo_key, id);
        return id;
    }

    std::vector<CertNode>& nodes() { return nodes_; }

  private:
    // A node whose own bounds (jobs, database) prove its claim: the record that does.
    void leaf(const ProofTree::Node& n, CertNode& out) {
        const int s = n.seeds;
        if (auto it = by_key_.find(n.pos.pits_key()); it != by_key_.end()) {
            for (const size_t r : it->second) {
                const JobRecord& rec = records_[r];
                const bool lower = rec.result >= rec.beta;
                if (lower != out.claim.lower) continue;
                if (!implies({lower, rec.result}, out.claim, s)) continue;
                out.kind = CertNode::Kind::Job;
                out.record = r;
                out.beta = rec.beta;
                out.result = rec.result;
                out.nodes = rec.nodes;
                return;
            }
        }
        const db::Database* db = tree_.database();
        if (db && s <= db->max_seeds()) {
            const int v = db->probe(n.pos);
            if (out.claim.lower ? v >= out.claim.bound : v <= out.claim.bound) {
                out.kind = CertNode::Kind::Db;
                out.db_value = v;
                return;
            }
        }
        throw CertificateError("no record proves " + claim_text(out.claim) + " at " +
                               pits_text(n.pos));
    }

    const ProofTree& tree_;
    const std::vector<JobRecord>& records_;
    struct KeyHash {
        size_t operator()(Cells k) const {
            const uint64_t h =
                (uint64_t(k) ^ (uint64_t(k >> 64) * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
            return size_t(h ^ (h >> 29));
        }
    };
    std::unordered_map<Cells, std::vector<size_t>, KeyHash> by_key_;
    std::map<std::tuple<int, bool, int>, int> memo_;
    std::vector<CertNode> nodes_;
    std::vector<uint64_t> cost_;
};

// Parsing helpers: a line split at single spaces, integers in full.
std::vector<std::string> fields(const std::string& line) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        const size_t sp = line.find(' ', start);
        out.push_back(line.substr(start, sp - start));
        if (sp == std::string::npos) break;
        start = sp + 1;
    }
    return out;
}
template <class T>
bool to_number(const std::string& s, T& out) {
    if (s.empty() || (s.size() > 1 && s[0] == '0') ||
        (s[0] == '-' && (s.size() == 1 || s[1] == '0')))
        return false;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}
bool parse_claim(const std::string& s, CertClaim& c) {
    if (s.size() < 3 || s[1] != '=' || (s[0] != '>' && s[0] != '<')) return false;
    c.lower = s[0] == '>';
    return to_number(s.substr(2), c.bound) && c.bound >= -kMaxSeeds - 1 && c.bound <= kMaxSeeds + 1;
}
bool parse_pits(const std::string& s, int m, Board& out) {
    const size_t slash = s.find('/');
    if (slash == std::string::npos) return false;
    int rows[2][kMaxPits];
    const std::string parts[2] = {s.substr(0, slash), s.substr(slash + 1)};
    int total = 0;
    for (int r = 0; r < 2; ++r) {
        const std::vector<std::string> v = [&] {
            std::vector<std::string> o;
            size_t a = 0;
            for (;;) {
                const size_t c = parts[r].find(',', a);
                o.push_back(parts[r].substr(a, c - a));
                if (c == std::string::npos) break;
                a = c + 1;
            }
            return o;
        }();
        if (static_cast<int>(v.size()) != m) return false;
        for (int i = 0; i < m; ++i) {
            if (!to_number(v[i], rows[r][i]) || rows[r][i] < 0 || rows[r][i] > kMaxSeeds)
                return false;
            total += rows[r][i];
        }
    }
    if (total > kMaxSeeds) return false;
    out = Board::from_rows(m, rows[0], rows[1], 0, 0, Side::South);
    return true;
}

}  // namespace

std::string claim_text(const CertClaim& c) {
    return std::string(c.lower ? ">=" : "<=") + std::to_string(c.bound);
}

size_t Certificate::leaves() const {
    return static_cast<size_t>(
        std::count_if(nodes.begin(), nodes.end(), [](const CertNode& n) { return n.leaf(); }));
}

uint32_t crc32(const void* data, size_t len, uint32_t crc) {
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    const auto* p = static_cast<const unsigned char*>(data);
    crc = ~crc;
    for (size_t i = 0; i < len; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

Certificate extract_certificate(const ProofTree& tree, const std::vector<JobRecord>& records,
                                const std::vector<CertClaim>& claims) {
    Extractor x(tree, records);
    const ProofTree::Node& root = tree.node(0);
    std::vector<std::pair<int, CertClaim>> roots;
    for (CertClaim c : claims) {
        c.bound = c.lower ? round_up(root.seeds, c.bound) : round_down(root.seeds, c.bound);
        if (!(c.lower ? root.lo >= c.bound : root.hi <= c.bound))
            throw CertificateError("the journal does not prove v " + claim_text(c) +
                                   " at the start (its bounds: [" + std::to_string(root.lo) + ", " +
                                   std::to_string(root.hi) + "])");
        roots.push_back({x.build(0, c), c});
    }
    // Reverse post-order from the roots: parents before children, unreachable nodes left out.
    std::vector<CertNode>& tmp = x.nodes();
    std::vector<int> order, state(tmp.size(), 0);
    std::vector<std::pair<int, size_t>> stack;
    // The roots' traversals in reverse, so that the first root gets ID 0.
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) {
        const int r = it->first;
        if (state[r]) continue;
        stack.push_back({r, 0});
        state[r] = 1;
        while (!stack.empty()) {
            auto& [v, next] = stack.back();
            if (next < tmp[v].children.size()) {
                const int ch = tmp[v].children[next++];
                if (ch >= 0 && !state[ch]) {
                    state[ch] = 1;
                    stack.push_back({ch, 0});
                }
                continue;
            }
            order.push_back(v);
            stack.pop_back();
        }
    }
    std::reverse(order.begin(), order.end());
    std::vector<int> id(tmp.size(), -1);
    for (size_t k = 0; k < order.size(); ++k) id[order[k]] = static_cast<int>(k);
    Certificate cert;
    cert.params = tree.params();
    for (const auto& [r, c] : roots) cert.roots.push_back({id[r], c});
    for (const int v : order) {
        CertNode n = tmp[v];
        for (int& ch : n.children)
            if (ch >= 0) ch = id[ch];
        cert.nodes.push_back(std::move(n));
    }
    return cert;
}

std::string format_certificate(const Certificate& c) {
    std::string out = std::string(kCertificateMagic) + " " + std::to_string(kCertificateVersion) +
                      "\nboard " + std::to_string(c.params.m) + " " + std::to_string(c.params.n) +
                      "\nrule " + rule_name(c.params.rule) + "\n" +
                      (c.params.line.empty() ? "" : "line " + plain_line_text(c.params) + "\n") +
                      "nodes " + std::to_string(c.nodes.size()) + "\nleaves " +
                      std::to_string(c.leaves()) + "\n";
    for (const auto& r : c.roots)
        out += "root " + std::to_string(r.node) + " " + claim_text(r.claim) + "\n";
    auto child_text = [](int ch) {
        return ch == CertNode::kEnd   ? std::string("end")
               : ch == CertNode::kAny ? std::string("any")
                                      : std::to_string(ch);
    };
    for (size_t i = 0; i < c.nodes.size(); ++i) {
        const CertNode& n = c.nodes[i];
        out += "node " + std::to_string(i) + " " + claim_text(n.claim) + " " + pits_text(n.pos);
        switch (n.kind) {
            case CertNode::Kind::Move:
                out += " move " + std::to_string(n.pit + 1) + " " + child_text(n.children[0]);
                break;
            case CertNode::Kind::All:
                out += " all";
                for (const int ch : n.children) out += " " + child_text(ch);
                break;
            case CertNode::Kind::Job:
                out += " job " + std::to_string(n.record) + " " + std::to_string(n.beta) + " " +
                       std::to_string(n.result) + " " + std::to_string(n.nodes);
                break;
            case CertNode::Kind::Db:
                out += " db " + std::to_string(n.db_value);
                break;
        }
        out += "\n";
    }
    char crc[16];
    std::snprintf(crc, sizeof crc, "%08x", crc32(out.data(), out.size()));
    return out + "crc32 " + crc + "\n";
}

Certificate parse_certificate(const std::string& text) {
    std::vector<std::string> lines;
    std::vector<size_t> offsets;  // where each line starts
    for (size_t a = 0; a < text.size();) {
        const size_t nl = text.find('\n', a);
        if (nl == std::string::npos)
            throw CertificateError("line " + std::to_string(lines.size() + 1) +
                                   ": no newline at the end (the file is cut)");
        offsets.push_back(a);
        lines.push_back(text.substr(a, nl - a));
        a = nl + 1;
    }
    size_t at = 0;
    auto fail = [&](const std::string& why) -> CertificateError {
        return CertificateError("line " + std::to_string(at + 1) + ": " + why);
    };
    auto next = [&](const char* what) -> std::vector<std::string> {
        if (at >= lines.size()) throw fail(std::string("missing ") + what + " (the file is cut)");
        return fields(lines[at]);
    };
    // The crc first: any damage is reported as damage, not as what it broke.
    if (lines.empty()) throw CertificateError("line 1: empty file");
    {
        const std::string& last = lines.back();
        const uint32_t crc = crc32(text.data(), offsets.back());
        char want[16];
        std::snprintf(want, sizeof want, "%08x", crc);
        if (last.rfind("crc32 ", 0) != 0)
            throw CertificateError("line " + std::to_string(lines.size()) +
                                   ": the last line is not 'crc32 XXXXXXXX' (the file is cut)");
        if (last.substr(6) != want)
            throw CertificateError("line " + std::to_string(lines.size()) + ": crc32 " +
                                   last.substr(6) + " does not match the content's " + want +
                                   " (damaged)");
    }
    Certificate c;
    c.crc = crc32(text.data(), offsets.back());
    std::vector<std::string> f = next("the magic line");
    if (f.size() != 2 || f[0] != kCertificateMagic)
        throw fail("not a kalah certificate (expected 'kalah-certificate 1')");
    if (f[1] != std::to_string(kCertificateVersion))
        throw fail("format version " + f[1] + " (this program reads " +
                   std::to_string(kCertificateVersion) + ")");
    ++at;
    f = next("board");
    if (f.size() != 3 || f[0] != "board" || !to_number(f[1], c.params.m) ||
        !to_number(f[2], c.params.n) || c.params.m < 1 || c.params.m > kMaxPits || c.params.n < 1 ||
        2 * c.params.m * c.params.n > kMaxSeeds)
        throw fail("expected 'board M N' (M 1..6, 2MN <= 127)");
    ++at;
    f = next("rule");
    if (f.size() != 2 || f[0] != "rule" || (f[1] != "standard" && f[1] != "empty-capture"))
        throw fail("expected 'rule standard' or 'rule empty-capture'");
    c.params.rule = f[1] == "standard" ? Rule::Standard : Rule::EmptyCapture;
    ++at;
    if (at < lines.size() && lines[at].rfind("line ", 0) == 0) {
        // The root's line: plies "A2 A1" (no suffixes), each the side to move's.
        f = fields(lines[at]);
        if (f.size() < 2 || f.size() > size_t(kMaxLine) + 1)
            throw fail("expected 'line PLY ...' (1 to " + std::to_string(kMaxLine) + " plies)");
        for (size_t k = 1; k < f.size(); ++k) {
            const std::string& ply = f[k];
            if (ply.size() != 2 || (ply[0] != 'A' && ply[0] != 'B') || ply[1] < '1' ||
                ply[1] > char('0' + c.params.m))
                throw fail("ply '" + ply + "' is not A1..A" + std::to_string(c.params.m) +
                           " or B1..B" + std::to_string(c.params.m));
            c.params.line.push_back(static_cast<uint8_t>(ply[1] - '1'));
        }
        // Each ply must be the side to move's: the sides the replay gives, compared.
        if (plain_line_text(c.params) != lines[at].substr(5) || !check_line(c.params).empty())
            throw fail("the line is not a game from the start (" +
                       (check_line(c.params).empty() ? std::string("a ply out of turn")
                                                     : check_line(c.params)) +
                       ")");
        ++at;
    }
    size_t count = 0, leaves = 0;
    f = next("nodes");
    if (f.size() != 2 || f[0] != "nodes" || !to_number(f[1], count) || count == 0 ||
        count > lines.size())
        throw fail("expected 'nodes K' (K >= 1, one node line each)");
    ++at;
    f = next("leaves");
    if (f.size() != 2 || f[0] != "leaves" || !to_number(f[1], leaves) || leaves > count)
        throw fail("expected 'leaves L' (L <= K)");
    ++at;
    while (at < lines.size() && lines[at].rfind("root ", 0) == 0) {
        f = fields(lines[at]);
        Certificate::Root r;
        if (f.size() != 3 || !to_number(f[1], r.node) || r.node < 0 ||
            static_cast<size_t>(r.node) >= count || !parse_claim(f[2], r.claim))
            throw fail("expected 'root ID CLAIM' with ID < " + std::to_string(count));
        c.roots.push_back(r);
        ++at;
    }
    if (c.roots.empty()) throw fail("expected a 'root ID CLAIM' line");
    for (size_t id = 0; id < count; ++id) {
        f = next("a node line");
        CertNode n;
        size_t got_id = 0;
        if (f.size() < 5 || f[0] != "node" || !to_number(f[1], got_id) || got_id != id)
            throw fail("expected 'node " + std::to_string(id) + " CLAIM POSITION ...'");
        if (!parse_claim(f[2], n.claim)) throw fail("bad claim '" + f[2] + "'");
        if (!parse_pits(f[3], c.params.m, n.pos))
            throw fail("bad position '" + f[3] + "' (" + std::to_string(c.params.m) +
                       " counts a row, at most 127 seeds)");
        auto child = [&](const std::string& s) {
            if (s == "end") return CertNode::kEnd;
            if (s == "any") return CertNode::kAny;
            int ch = 0;
            if (!to_number(s, ch) || ch <= static_cast<int>(id) || static_cast<size_t>(ch) >= count)
                throw fail("child '" + s + "' is not end, any or a node ID after " +
                           std::to_string(id) + " and below " + std::to_string(count));
            return ch;
        };
        const std::string& kind = f[4];
        if (kind == "move") {
            n.kind = CertNode::Kind::Move;
            if (f.size() != 7 || !to_number(f[5], n.pit) || n.pit < 1 || n.pit > c.params.m)
                throw fail("expected 'move P C' (P 1.." + std::to_string(c.params.m) + ")");
            --n.pit;
            n.children = {child(f[6])};
        } else if (kind == "all") {
            n.kind = CertNode::Kind::All;
            for (size_t k = 5; k < f.size(); ++k) n.children.push_back(child(f[k]));
            if (n.children.empty()) throw fail("'all' names no move");
        } else if (kind == "job") {
            n.kind = CertNode::Kind::Job;
            if (f.size() != 9 || !to_number(f[5], n.record) || !to_number(f[6], n.beta) ||
                !to_number(f[7], n.result) || !to_number(f[8], n.nodes))
                throw fail("expected 'job R BETA RESULT NODES'");
        } else if (kind == "db") {
            n.kind = CertNode::Kind::Db;
            if (f.size() != 6 || !to_number(f[5], n.db_value)) throw fail("expected 'db V'");
        } else {
            throw fail("unknown justification '" + kind + "' (move, all, job, db)");
        }
        if (n.claim.lower != (n.kind != CertNode::Kind::All) && !n.leaf())
            throw fail(std::string("'") + kind + "' justifies only a '" +
                       (n.kind == CertNode::Kind::Move ? ">=" : "<=") + "' claim");
        c.nodes.push_back(std::move(n));
        ++at;
    }
    if (at != lines.size() - 1) throw fail("unexpected line after the node lines");
    if (c.leaves() != leaves)
        throw CertificateError("line 5: 'leaves " + std::to_string(leaves) + "' but " +
                               std::to_string(c.leaves()) + " node lines are leaves");
    return c;
}

std::string check_certificate(const Certificate& c) {
    // The root: the start, or the position after the line, pits from its mover's view.
    const Board root = root_frame(c.params).board;
    for (const auto& r : c.roots) {
        if (c.nodes[r.node].pos.pits_key() != root.pits_key())
            return "root node " + std::to_string(r.node) +
                   (c.params.line.empty() ? std::string(" is not the start position")
                                          : " is not the position after " + line_text(c.params));
        if (!(c.nodes[r.node].claim == r.claim))
            return "root node " + std::to_string(r.node) + " claims " +
                   claim_text(c.nodes[r.node].claim) + ", not " + claim_text(r.claim);
    }
    std::vector<char> reached(c.nodes.size(), 0);
    for (const auto& r : c.roots) reached[r.node] = 1;
    for (size_t i = 0; i < c.nodes.size(); ++i) {
        const CertNode& n = c.nodes[i];
        const std::string where =
            "node " + std::to_string(i) + " (" + pits_text(n.pos) + " " + claim_text(n.claim) + ")";
        if (!reached[i]) return where + " is reached from no root";
        const int s = n.pos.seeds_in_pits();
        if (n.pos.over()) return where + ": a row is empty (the game is over)";
        if (n.claim.lower ? n.claim.bound > s : n.claim.bound < -s)
            return where + ": impossible claim for " + std::to_string(s) + " seeds";
        if (n.leaf()) {
            if (n.kind == CertNode::Kind::Db && !implies({true, n.db_value}, n.claim, s) &&
                !implies({false, n.db_value}, n.claim, s))
                return where + ": the database value " + std::to_string(n.db_value) +
                       " does not give the claim";
            continue;
        }
        const MoveList moves = n.pos.legal_moves();
        std::vector<int> pits(moves.begin(), moves.end());
        if (n.kind == CertNode::Kind::Move) {
            if (std::find(pits.begin(), pits.end(), n.pit) == pits.end())
                return where + ": move " + std::to_string(n.pit + 1) + " is not legal";
            pits = {n.pit};
        } else if (pits.size() != n.children.size()) {
            return where + ": 'all' lists " + std::to_string(n.children.size()) + " moves, " +
                   std::to_string(pits.size()) + " are legal";
        }
        for (size_t k = 0; k < pits.size(); ++k) {
            Board q = n.pos;
            const MoveStep step = play_step_from_pits(q, pits[k], c.params.rule);
            const int ch = n.children[k];
            const std::string mv = where + ": move " + std::to_string(pits[k] + 1);
            const EdgeNeed need = need_of(step, step.over ? 0 : q.seeds_in_pits(), n.claim);
            if (need.ends) {
                if (ch != CertNode::kEnd) return mv + " ends the game: its entry must be 'end'";
                if (!need.holds)
                    return mv + " ends the game with worth " + std::to_string(step.gain);
                continue;
            }
            if (ch == CertNode::kEnd) return mv + " does not end the game";
            if (ch == CertNode::kAny) {
                if (!need.any) return mv + ": 'any' but the child needs " + claim_text(need.child);
                continue;
            }
            const CertNode& cn = c.nodes[ch];
            reached[ch] = 1;
            if (cn.pos.pits_key() != q.without_stores().pits_key())
                return mv + " gives " + pits_text(q.without_stores()) + " but node " +
                       std::to_string(ch) + " holds " + pits_text(cn.pos);
            if (!implies(cn.claim, need.child, q.seeds_in_pits()))
                return mv + ": node " + std::to_string(ch) + " claims " + claim_text(cn.claim) +
                       ", the move needs " + claim_text(need.child);
        }
    }
    return "";
}

}  // namespace kalah::campaign
