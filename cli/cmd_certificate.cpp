// `kalah verify-certificate`: a proof certificate (campaign/certificate.h) checked, its
// moves replayed and every leaf re-proved by a fresh solver (campaign/verify.h), resumably.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <iostream>
#include <map>

#include "analysis/json.h"
#include "analysis/text.h"
#include "campaign/certificate.h"
#include "campaign/verify.h"
#include "cli/command.h"
#include "core/notation.h"
#include "core/regular_file.h"
#include "db/database.h"
#include "mpi/ranks.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace {
namespace po = boost::program_options;
using namespace kalah::campaign;

// A certificate larger than this is not one of ours (Kalah(6,6)'s are a few hundred KB).
constexpr size_t kMaxCertificateBytes = size_t(256) << 20;

std::string read_certificate_text(const std::string& path) {
    std::string why;
    const int fd = open_regular_file(path, O_RDONLY, &why);
    if (fd < 0) throw InputError(path + ": " + why);
    std::string text;
    char buf[1 << 16];
    for (;;) {
        const ssize_t got = ::read(fd, buf, sizeof buf);
        if (got < 0) {
            const std::string e = std::strerror(errno);
            ::close(fd);
            throw std::runtime_error(path + ": cannot read: " + e);
        }
        if (got == 0) break;
        text.append(buf, size_t(got));
        if (text.size() > kMaxCertificateBytes) {
            ::close(fd);
            throw std::runtime_error(path + ": larger than 256 MiB: not a certificate");
        }
    }
    ::close(fd);
    return text;
}

// The certificate at path, parsed and checked (its moves replayed, its bounds composed):
// throws CertificateError naming what is wrong.
Certificate load_checked_certificate(const std::string& path) {
    Certificate c = parse_certificate(read_certificate_text(path));
    if (const std::string why = check_certificate(c); !why.empty()) throw CertificateError(why);
    return c;
}

// Re-proves the leaves `todo` of c, calling done(check) as each finishes: in this process
// one fresh solver a leaf in their order (reprove_leaf), or, with `pool` (MPI worker
// ranks, each leaf on a worker's solver with its table emptied first), every leaf the
// database does not answer handed to the workers, up to one a worker at once, in the
// order they finish.
void reprove_leaves(const Certificate& c, const std::vector<int>& todo, const SolverOptions& o,
                    WorkerPool* pool, const std::function<void(const LeafCheck&)>& done) {
    if (!pool) {
        for (const int id : todo) done(reprove_leaf(c, id, o));
        return;
    }
    // The leaves out on workers, by their test (the same test twice is answered twice).
    std::map<std::pair<Cells, int>, std::deque<int>> out;
    size_t next = 0;
    int in_flight = 0;
    while (next < todo.size() || in_flight > 0) {
        while (next < todo.size() && in_flight < pool->capacity()) {
            const int id = todo[next++];
            if (leaf_in_database(c, id, o)) {
                done(reprove_leaf(c, id, o));
                continue;
            }
            const Job job = leaf_job(c, id);
            out[{job.pos.pits_key(), job.beta}].push_back(id);
            pool->submit(job);
            ++in_flight;
        }
        if (in_flight == 0) break;
        const JobRecord r = pool->wait();
        --in_flight;
        const auto it = out.find({r.key, r.beta});
        if (it == out.end()) throw std::runtime_error("a worker answered a leaf never sent");
        const int id = it->second.front();
        it->second.pop_front();
        if (it->second.empty()) out.erase(it);
        done(leaf_check_of(c, id, r));
    }
}

int run_verify_certificate(const std::vector<std::string>& args) {
    po::options_description opts("verify-certificate options");
    po::options_description expert("expert options");
    // clang-format off
    opts.add_options()
        ("certificate", po::value<std::string>(), "the certificate file (docs/certificate.md)")
        ("journal", po::value<std::string>(),
         "the leaf journal: leaves checked are appended (fsync'd), and a run with the same "
         "journal re-proves only the leaves it does not hold as proved (default: none, every "
         "leaf re-proved)")
        ("leaf-nodes", po::value<uint64_t>()->default_value(0),
         "node budget of one leaf's re-proof (0: none); a leaf over it is 'over-budget', "
         "re-tried by a later run")
        ("leaf-seconds", po::value<double>()->default_value(0),
         "time budget of one leaf's re-proof in seconds (0: none)")
        ("reuse", po::value<std::vector<std::string>>()->multitoken(),
         "CERT JOURNAL: take the proofs of another certificate's leaves (its leaf journal's "
         "proved ones, same pits and rule): a leaf whose claim one of them implies (the same "
         "position) is not re-proved; it is counted as reused, not written to --journal; "
         "repeatable")
        ("moves-only", "replay the moves and check the bounds, re-prove no leaf");
    // clang-format on
    add_solver_options(opts, expert);
    add_output_options(opts);
    po::variables_map vm;
    if (!parse_options("verify-certificate",
                       "--certificate FILE [--journal J] [--reuse CERT J] [--db DIR] [--leaf-nodes "
                       "N] [options]",
                       opts, args, vm, &expert, true))
        return 0;
    if (!vm.count("certificate")) throw InputError("--certificate is required");
    const std::string path = vm["certificate"].as<std::string>();
    std::vector<std::pair<std::string, std::string>> reuse;  // (certificate, leaf journal)
    if (vm.count("reuse")) {
        const auto& r = vm["reuse"].as<std::vector<std::string>>();
        if (r.size() % 2 != 0)
            throw InputError(
                "--reuse takes two files each time: a certificate and its leaf journal");
        for (size_t i = 0; i < r.size(); i += 2) reuse.emplace_back(r[i], r[i + 1]);
    }
    const double leaf_seconds = vm["leaf-seconds"].as<double>();
    if (!(leaf_seconds >= 0 && leaf_seconds <= 1e9))
        throw InputError("--leaf-seconds must be between 0 and 1e9");
    Certificate cert;
    try {
        cert = load_checked_certificate(path);
    } catch (const CertificateError& e) {
        std::cerr << "kalah verify-certificate: " << path << ": " << e.what() << "\n";
        return 1;
    }
    const int m = cert.params.m;
    const Rule rule = cert.params.rule;
    std::vector<int> leaves;
    int most_seeds = 0;
    for (size_t i = 0; i < cert.nodes.size(); ++i)
        if (cert.nodes[i].leaf()) {
            leaves.push_back(static_cast<int>(i));
            most_seeds = std::max(most_seeds, cert.nodes[i].pos.seeds_in_pits());
        }
    // The root claims as South's margin (after the certificate's line, if any).
    std::string claims;
    for (const auto& r : cert.roots)
        claims += (claims.empty() ? "" : ", ") +
                  margin_claim_text(cert.params, r.claim.lower, r.claim.bound);
    const bool json = vm.count("json") > 0;
    const bool show = !quiet(vm) && !json;
    if (vm.count("moves-only")) {
        if (mpi::rank() > 0) return 0;  // nothing to hand out
        if (json)
            std::cout << json_line({{"certificate", path},
                                    {"nodes", cert.nodes.size()},
                                    {"leaves", leaves.size()},
                                    {"moves", "ok"}});
        else
            std::cout << path << ": Kalah(" << m << "," << cert.params.n << "), rule "
                      << rule_name(rule) << ", " << claims << ": " << cert.nodes.size()
                      << " nodes, moves and bounds ok; " << leaves.size()
                      << " leaves not re-proved\n";
        return 0;
    }
    // Under mpirun every rank runs this command: rank 0 re-proves (or hands out) the leaves
    // and keeps the journal, every other rank is a worker until rank 0 is done.
    const uint64_t leaf_nodes = vm["leaf-nodes"].as<uint64_t>();
    if (mpi::ranks() > 1 && leaf_seconds > 0)
        throw InputError(
            "--leaf-seconds does not reach MPI worker ranks: give a node budget (--leaf-nodes)");
    // The journals first (rank 0's), so that a bad one is reported before a database opens.
    ProvedLeaves reused_proofs(m, rule);
    if (mpi::rank() == 0)
        for (const auto& [rc, rj] : reuse) {
            Certificate other;
            std::string damage;
            try {
                other = load_checked_certificate(rc);
                reused_proofs.add(other, read_leaf_journal(rj, other, damage));
            } catch (const CertificateError& e) {
                throw InputError("--reuse " + rc + ": " + e.what());
            } catch (const std::invalid_argument& e) {
                throw InputError("--reuse " + rc + ": " + e.what());
            } catch (const LeafJournalError& e) {
                throw InputError(std::string("--reuse: ") + e.what());
            }
            if (!damage.empty()) std::cerr << "kalah verify-certificate: " << damage << "\n";
        }
    std::optional<LeafJournal> journal;
    if (vm.count("journal") && mpi::rank() == 0) {
        std::string damage;
        try {
            journal.emplace(LeafJournal::open(vm["journal"].as<std::string>(), cert, damage));
        } catch (const LeafJournalError& e) {
            throw std::runtime_error(e.what());
        }
        if (!damage.empty()) std::cerr << "kalah verify-certificate: " << damage << "\n";
    }
    std::unique_ptr<db::Database> db;
    SolverOptions o = solver_options(vm, "verify-certificate", m, rule, most_seeds, db, false);
    o.heartbeat = {};
    o.node_limit = leaf_nodes;
    o.time_limit_seconds = leaf_seconds;
    o.book = nullptr;
    const mpi::RankDatabase rdb{vm["db"].as<std::string>(), m, rule, db ? db->max_seeds() : -1};
    if (mpi::rank() > 0) {
        Solver solver(m, rule, o);
        mpi::run_worker(rdb, solver, leaf_nodes, /*fresh_table=*/true, 0);
        return 0;
    }
    std::unique_ptr<WorkerPool> pool = mpi::make_workers(rdb, {});
    // Each leaf's check: from the journal (proved or refuted there), else from a reused
    // certificate's proof, else re-proved now.
    std::map<int, LeafCheck> checks;
    std::vector<int> todo;
    std::vector<bool> journaled(cert.nodes.size()), reused(cert.nodes.size());
    size_t skipped = 0, from_reuse = 0;
    for (const int id : leaves) {
        if (journal) {
            const auto it = journal->checks().find(id);
            if (it != journal->checks().end() &&
                it->second.outcome != LeafCheck::Outcome::OverBudget) {
                checks[id] = it->second;
                journaled[id] = true;
                ++skipped;
                continue;
            }
        }
        if (const auto k = reused_proofs.find(cert, id)) {
            checks[id] = *k;
            reused[id] = true;
            ++from_reuse;
            continue;
        }
        todo.push_back(id);
    }
    auto describe = [&](const LeafCheck& k, bool ran) {
        const CertNode& leaf = cert.nodes[k.node];
        std::cerr << "leaf " << k.node << " (" << format_position(leaf.pos) << ", "
                  << leaf.pos.seeds_in_pits() << " seeds) v " << claim_text(leaf.claim) << ": "
                  << outcome_name(k.outcome)
                  << (ran              ? ""
                      : reused[k.node] ? " (reused)"
                                       : " (journal)")
                  << ", " << k.nodes << " nodes, " << k.seconds << " s\n";
    };
    if (show)
        for (const auto& [id, k] : checks) describe(k, false);
    reprove_leaves(cert, todo, o, pool.get(), [&](const LeafCheck& k) {
        if (journal) journal->append(k);
        checks[k.node] = k;
        if (show) describe(k, true);
    });
    // Every worker told to stop: the exit status below is the verification's answer.
    pool.reset();
    mpi::released_workers();
    size_t proved = 0, over = 0;
    uint64_t nodes = 0;
    double seconds = 0;
    std::vector<LeafCheck> refuted;
    Json per_leaf = Json::array();
    for (const int id : leaves) {
        const CertNode& leaf = cert.nodes[id];
        const LeafCheck& k = checks.at(id);
        nodes += k.nodes;
        seconds += k.seconds;
        if (k.outcome == LeafCheck::Outcome::Proved) ++proved;
        if (k.outcome == LeafCheck::Outcome::OverBudget) ++over;
        if (k.outcome == LeafCheck::Outcome::Refuted) refuted.push_back(k);
        if (json)
            per_leaf.push_back({{"node", id},
                                {"position", format_position(leaf.pos)},
                                {"seeds", leaf.pos.seeds_in_pits()},
                                {"claim", claim_text(leaf.claim)},
                                {"outcome", outcome_name(k.outcome)},
                                {"nodes", k.nodes},
                                {"seconds", k.seconds},
                                {"from_journal", bool(journaled[id])},
                                {"reused", bool(reused[id])}});
    }
    for (const LeafCheck& k : refuted)
        std::cerr << "kalah verify-certificate: leaf " << k.node << " ("
                  << format_position(cert.nodes[k.node].pos) << ") claims v "
                  << claim_text(cert.nodes[k.node].claim) << ": the re-proof refutes it\n";
    if (json) {
        std::cout << json_line({{"certificate", path},
                                {"pits", m},
                                {"seeds", cert.params.n},
                                {"rule", rule_name(rule)},
                                {"nodes", cert.nodes.size()},
                                {"leaves", leaves.size()},
                                {"proved", proved},
                                {"refuted", refuted.size()},
                                {"over_budget", over},
                                {"from_journal", skipped},
                                {"reused", from_reuse},
                                {"leaf_nodes", nodes},
                                {"leaf_seconds", seconds},
                                {"db_max_seeds", db ? db->max_seeds() : -1},
                                {"ranks", mpi::ranks()},
                                {"per_leaf", per_leaf}});
    } else {
        std::cout << path << ": Kalah(" << m << "," << cert.params.n << "), rule "
                  << rule_name(rule) << ", " << claims << ": " << cert.nodes.size()
                  << " nodes, moves and bounds ok; leaves: " << proved << " of " << leaves.size()
                  << " re-proved (" << skipped << " from the journal"
                  << (reuse.empty() ? std::string() : ", " + std::to_string(from_reuse) + " reused")
                  << "), " << refuted.size() << " refuted, " << over << " over the budget; "
                  << nodes << " nodes, " << seconds << " s\n";
    }
    if (!refuted.empty()) return 1;
    return over ? kExitStopped : 0;
}

int guarded_verify_certificate(const std::vector<std::string>& args) {
    return mpi::run_ranked(
        [&] { return guarded("verify-certificate", run_verify_certificate, args); });
}
const RegisterCommand reg_verify_certificate(
    {"verify-certificate", "check a proof certificate and re-prove each of its leaves",
     guarded_verify_certificate});

}  // namespace
}  // namespace kalah::cli
