// `kalah campaign`: the exact value of Kalah(m,n) through a resumable proof campaign of
// node-budgeted jobs (campaign/campaign.h), journaled in a directory; --status reads one.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>

#include "analysis/campaign_report.h"
#include "analysis/json.h"
#include "analysis/reports.h"
#include "analysis/text.h"
#include "campaign/audit.h"
#include "campaign/campaign.h"
#include "campaign/certificate.h"
#include "cli/command.h"
#include "core/regular_file.h"
#include "db/database.h"
#include "db/format.h"
#include "mpi/ranks.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace {
namespace po = boost::program_options;
using namespace kalah::campaign;

// Default node budget of a job: 100 M nodes, tens of seconds of a core, so that the
// journal's fsync per job costs nothing (results/campaign.md).
constexpr uint64_t kDefaultJobNodes = 100'000'000;
constexpr const char* kProgressCsv = "progress.csv";

// Opens a CSV log of the directory for appending: a file of another header is moved aside.
// False (said on stderr) when it cannot be used: the run continues without it.
bool prepare_log(const std::string& dir, const char* name, const std::string& header) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    const std::string why = prepare_csv_log(path, header);
    if (!why.empty()) std::cerr << "kalah campaign: " << why << " (continuing without it)\n";
    return why.empty();
}

// Appends a row to progress.csv (a regular file only: never blocks on a FIFO put there).
void append_csv(const std::string& dir, const Progress& p) {
    const std::string path = (std::filesystem::path(dir) / kProgressCsv).string();
    std::string why;
    const int fd = open_regular_file(path, O_WRONLY | O_APPEND | O_CREAT, &why);
    if (fd < 0) return;
    struct stat st {};
    std::string text = ::fstat(fd, &st) == 0 && st.st_size == 0 ? progress_csv_header() : "";
    text += progress_csv_row(p);
    // One write: a row is never interleaved or torn but by a kill.
    const ssize_t put = ::write(fd, text.data(), text.size());
    (void)put;  // a log: a failed row is not worth stopping the campaign for
    ::close(fd);
}

int run_status(const po::variables_map& vm, const std::string& dir) {
    const std::string path = (std::filesystem::path(dir) / kJournalName).string();
    JournalContents c = read_journal(path);
    guess_option(vm, c.params.m, c.params.n, 0);  // bad input whether or not it is used
    if (!c.damage.empty())
        std::cerr << "kalah campaign: " << path << ": " << c.damage
                  << " (a run truncates it to the " << c.records.size() << " good records)\n";
    std::unique_ptr<db::Database> db =
        open_database(vm, "campaign", c.params.m, c.params.rule, "bounds from the journal only");
    // A read-only replay: the journal is not locked, truncated or written.
    struct Replay {
        ProofTree tree;
        Progress p;
    } r{ProofTree(c.params, db.get()), {}};
    const RootFrame& frame = r.tree.frame();
    r.p.frame = frame;
    for (const JobRecord& rec : c.records) {
        r.tree.apply(rec);
        ++r.p.jobs;
        r.p.splits += rec.kind == JobRecord::Kind::Split;
        r.p.nodes += rec.nodes;
        r.p.job_seconds += rec.seconds;
    }
    std::tie(r.p.root_lo, r.p.root_hi) = frame.margins(r.tree.root_lo(), r.tree.root_hi());
    r.p.tree_positions = r.tree.size();
    r.p.expanded = r.tree.expanded();
    r.p.open_jobs = r.tree.open_positions();
    const bool exact = r.p.root_lo == r.p.root_hi;
    const std::optional<Question> q = question_option(vm);
    // The question on the root's pits value (the start's: South's margin itself).
    const std::optional<Question> qv = q ? std::optional(frame.question(*q)) : std::nullopt;
    const int seeds = r.tree.root().seeds_in_pits();
    const bool q_decided = qv && r.tree.decided(qv->beta(seeds));
    const bool q_proved = qv && qv->proved_by(r.tree.root_lo() >= qv->beta(seeds));
    // The ETA of the pass a run would ask now (the same guess as the run's: --guess or the
    // depth-10 estimate, which uses no table or database; with --prove, its one pass), for
    // one worker.
    int pass_beta = 0;
    JobSizes sizes;
    for (const JobRecord& rec : c.records) sizes.add(rec.seconds);
    if (exact || q_decided) {
        r.p.eta.known = true;
    } else if (qv) {
        pass_beta = qv->beta(seeds);
        r.p.eta = pass_eta(r.tree, pass_beta, sizes, 1);
    } else {
        SolverOptions small;
        small.tt_mb = 1;
        const int guess =
            vm.count("guess")
                ? guess_option(vm, c.params.m, c.params.n, 0)
                : frame.margin(Solver(c.params.m, c.params.rule, small).estimate(r.tree.root()));
        pass_beta = r.tree.next_beta(frame.value(guess));
        r.p.eta = pass_eta(r.tree, pass_beta, sizes, 1);
    }
    CampaignStatus st{c.params, dir, &r.tree, r.p, q, q_decided, q_proved, pass_beta};
    std::cout << (vm.count("json") ? campaign_status_json(st) : campaign_status_text(st));
    return 0;
}

// The journal in dir, read-only; a damaged tail is said on stderr ("<verb> the N good
// records") and left out.
JournalContents read_good_records(const std::string& dir, const char* verb) {
    const std::string path = (std::filesystem::path(dir) / kJournalName).string();
    JournalContents c = read_journal(path);
    if (!c.damage.empty())
        std::cerr << "kalah campaign: " << path << ": " << c.damage << " (" << verb << " the "
                  << c.records.size() << " good records)\n";
    return c;
}

// --certificate FILE: the proof DAG of the root's proven bounds (with --prove, of the one
// that answers the question), drawn from the journal in dir and written to FILE
// (docs/certificate.md). Exit 1 when the journal proves nothing to certify.
int run_certificate(const po::variables_map& vm, const std::string& dir) {
    const JournalContents c = read_good_records(dir, "certifying");
    std::unique_ptr<db::Database> db =
        open_database(vm, "campaign", c.params.m, c.params.rule, "bounds from the journal only");
    ProofTree tree(c.params, db.get());
    for (const JobRecord& rec : c.records) tree.apply(rec);
    // Claims on the root's pits value (at the start: South's margin itself).
    const int seeds = tree.root().seeds_in_pits();
    const std::string where = c.params.line.empty() ? "the start" : "the root";
    std::vector<CertClaim> claims;
    if (const std::optional<Question> q = question_option(vm)) {
        const Question qv = tree.frame().question(*q);
        const int beta = qv.beta(seeds);
        if (!tree.decided(beta)) {
            const auto [lo, hi] = tree.frame().margins(tree.root_lo(), tree.root_hi());
            throw std::runtime_error("the journal does not settle v " + q->text() + " yet (" +
                                     where + " in [" + signed_value(lo) + ", " + signed_value(hi) +
                                     "]): nothing to certify");
        }
        claims.push_back(tree.root_lo() >= beta ? CertClaim{true, tree.root_lo()}
                                                : CertClaim{false, tree.root_hi()});
    } else {
        if (tree.root_lo() > -seeds) claims.push_back({true, tree.root_lo()});
        if (tree.root_hi() < seeds) claims.push_back({false, tree.root_hi()});
        if (claims.empty())
            throw std::runtime_error("the journal proves no bound on " + where +
                                     " yet: nothing to certify");
    }
    const Certificate cert = extract_certificate(tree, c.records, claims);
    const std::string text = format_certificate(cert);
    const std::string out = vm["certificate"].as<std::string>();
    db::write_file_durably(out, {{text.data(), text.size()}});
    // Each claim as South's margin ("v >= +2", "... after A1+ A3").
    std::string claim_list;
    for (const auto& r : cert.roots)
        claim_list += (claim_list.empty() ? "" : ", ") +
                      margin_claim_text(c.params, r.claim.lower, r.claim.bound);
    if (vm.count("json")) {
        Json roots = Json::array(), margins = Json::array();
        for (const auto& r : cert.roots) {
            roots.push_back(claim_text(r.claim));
            margins.push_back(margin_claim_text(c.params, r.claim.lower, r.claim.bound));
        }
        std::cout << json_line({{"certificate", out},
                                {"dir", dir},
                                {"line", line_text(c.params)},
                                {"margin_claims", margins},
                                {"records", c.records.size()},
                                {"claims", roots},
                                {"nodes", cert.nodes.size()},
                                {"leaves", cert.leaves()},
                                {"bytes", text.size()}});
    } else {
        std::cout << "certificate " << out << ": Kalah(" << c.params.m << "," << c.params.n
                  << "), rule " << rule_name(c.params.rule) << ", " << claim_list
                  << (c.params.line.empty() ? " at the start; " : "; ") << cert.nodes.size()
                  << " nodes, " << cert.leaves() << " leaves, " << text.size() << " bytes (from "
                  << c.records.size() << " records)\n";
    }
    return 0;
}

// --audit N: re-runs the journal's records near the root and N others at random, and
// compares each with its claim (campaign/audit.h). Exit 1 when one disagrees.
int run_audit(const po::variables_map& vm, const std::string& dir) {
    const std::string path = (std::filesystem::path(dir) / kJournalName).string();
    const JournalContents c = read_good_records(dir, "auditing");
    const int m = c.params.m;
    const Board start = Board::start(m, c.params.n);
    std::unique_ptr<db::Database> db;
    SolverOptions o =
        solver_options(vm, "campaign", m, c.params.rule, start.seeds_in_pits(), db, false);
    o.heartbeat = {};
    o.node_limit = vm["job-nodes"].as<uint64_t>() * 4;
    // The tree places records by depth; a contradiction in the replay is itself a finding.
    ProofTree tree(c.params, db.get());
    std::string contradiction;
    for (size_t i = 0; i < c.records.size() && contradiction.empty(); ++i) {
        try {
            tree.apply(c.records[i]);
        } catch (const ContradictionError& e) {
            contradiction = "record " + std::to_string(i) + ": " + e.what();
        }
    }
    const uint64_t seed =
        vm.count("audit-seed") ? vm["audit-seed"].as<uint64_t>() : std::random_device{}();
    const size_t sample = vm["audit"].as<size_t>();
    // Near the root: the bound records of the two least depths that hold any (above them
    // every position is split); see audit_choice.
    constexpr int kNear = 1;
    int cut = -1;
    const std::vector<size_t> chosen = audit_choice(c.records, tree, sample, seed, kNear, &cut);
    Solver solver(m, c.params.rule, o);
    size_t agree = 0, over = 0;
    std::vector<AuditCheck> bad;
    for (const size_t i : chosen) {
        const AuditCheck a = audit_record(solver, m, c.records, i);
        if (a.outcome == AuditCheck::Outcome::Agrees) ++agree;
        if (a.outcome == AuditCheck::Outcome::OverBudget) ++over;
        if (a.outcome == AuditCheck::Outcome::Disagrees) bad.push_back(a);
    }
    auto claim_text = [](const AuditCheck& a) { return bound_text(a.claimed_lower, a.claimed); };
    auto rerun_text = [](const AuditCheck& a) { return bound_text(!a.claimed_lower, a.got); };
    end_progress_line();
    if (vm.count("json")) {
        Json disagreements = Json::array();
        for (const AuditCheck& a : bad)
            disagreements.push_back({{"record", a.index},
                                     {"position", format_position(a.pos)},
                                     {"beta", a.beta},
                                     {"claimed", claim_text(a)},
                                     {"rerun", rerun_text(a)}});
        std::cout << json_line(
            {{"dir", dir},
             {"records", c.records.size()},
             {"audited", chosen.size()},
             {"seed", seed},
             {"near_root_depth", cut},
             {"agree", agree},
             {"disagree", bad.size()},
             {"over_budget", over},
             {"audit_nodes", solver.stats().nodes},
             {"contradiction", contradiction.empty() ? Json(nullptr) : Json(contradiction)},
             {"disagreements", disagreements}});
    } else {
        std::cout << "audit of " << path << ": " << chosen.size() << " of " << c.records.size()
                  << " records re-run (every bound record within " << cut << " moves of the root, "
                  << sample << " others at random, seed " << seed << "): " << agree << " agree, "
                  << bad.size() << " disagree, " << over << " over the budget of " << o.node_limit
                  << " nodes\n";
    }
    for (const AuditCheck& a : bad)
        std::cerr << "kalah campaign: audit: record " << a.index << " (" << format_position(a.pos)
                  << ") claims " << claim_text(a) << " but the re-run proved " << rerun_text(a)
                  << "\n";
    if (!contradiction.empty())
        std::cerr << "kalah campaign: audit: the journal contradicts itself at " << contradiction
                  << "\n";
    return bad.empty() && contradiction.empty() ? 0 : 1;
}

// The options of `kalah campaign` (expert: the tuning of the job choice and budgets).
void add_campaign_options(po::options_description& opts, po::options_description& expert) {
    add_start_options(opts, false);
    // clang-format off
    opts.add_options()
        ("dir", po::value<std::string>(), "campaign directory: its journal, progress.csv and trace.csv "
         "(created; a run with the same options resumes it)")
        ("moves", po::value<std::string>(),
         "root the campaign at the position after these moves from the start (a first turn: "
         "'A1 A3'; kept in the journal); --prove, --guess and every bound printed stay South's "
         "final margin")
        ("import", po::value<std::string>(),
         "when the journal is created: start it with the records of the campaign journal in "
         "this directory (the same game and rule, any root: its proven bounds and splits serve "
         "this campaign too)")
        ("job-nodes", po::value<uint64_t>()->default_value(kDefaultJobNodes),
         "node budget of a job; a job that exceeds it is split into its moves")
        ("status", "print the state of the campaign in --dir and exit (nothing is run)")
        ("audit", po::value<size_t>(),
         "re-run every bound record near the root (the records of the two least depths of the "
         "proof tree that hold any: the top-most finished jobs) and N others at random from the "
         "journal in --dir (budget: 4 x --job-nodes each), compare each with its claim, and "
         "exit (1 when one disagrees)")
        ("audit-seed", po::value<uint64_t>(), "the random choice of --audit (default: random)")
        ("certificate", po::value<std::string>(),
         "write the proof of the root's proven bounds (with --prove, of the answer to the "
         "question) drawn from the journal in --dir to this file, a certificate that "
         "checker/check_certificate.py and verify-certificate check (docs/certificate.md), "
         "and exit; --db: the database the campaign used, where the proof rests on it")
        ("cross-check", po::value<double>()->default_value(0),
         "MPI: re-run this fraction F (0..1) of each worker's bound records on another worker "
         "(at exactly what each claims) before journaling it; a disagreement is re-run by the "
         "manager and the worker it proves wrong is refused (named on stderr, its records "
         "dropped, no more jobs) while the others go on. Needs two workers or more (mpirun "
         "-np 3): refused otherwise")
        ("cross-check-seed", po::value<uint64_t>(),
         "the sample of --cross-check (default: random; a worker cannot tell which of its "
         "answers are checked)");
    // clang-format on
    add_question_option(opts, "the journal serves any later question or the exact value");
    add_solver_options(opts, expert);
    add_output_options(opts);
    expert.add_options()("leaf-growth", po::value<double>()->default_value(2),
                         "the choice weighs a job growth^(its seeds above the database) "
                         "(deep before wide; 1: every job weighs one, the choice before)");
    expert.add_options()("budget-growth", po::value<double>()->default_value(1),
                         "a job's budget is --job-nodes x growth^(its seeds above the "
                         "database): larger jobs towards the root, fewer splits (1: every "
                         "job gets --job-nodes)");
    expert.add_options()("stickiness", po::value<double>()->default_value(16),
                         "the choice stays in the move it worked in last while that move's "
                         "proof number is at most (1 + this) times the least (0: off, the "
                         "choice before)");
    expert.add_options()("pit-order",
                         "break the choice's ties by pit order (the choice before), not by "
                         "the solver's move order");
    expert.add_options()("split-above", po::value<int>(),
                         "a static first cut: split positions with more seeds in pits than "
                         "this without running a job (the top of a proof no job finishes)");
    expert.add_options()("fresh-table",
                         "proof-grade records: every job searches on an empty table, so "
                         "that each record is proved by its own job's search (slower: "
                         "nothing proved by earlier jobs is reused)");
    add_guess_option(expert,
                     "first threshold of the MTD(f) passes (South's margin; default: the "
                     "solver's depth-10 estimate, as solve)");
    expert.add_options()("test-lying-rank", po::value<int>()->default_value(0),
                         "test hook of the MPI tests: the worker of this rank reports the "
                         "opposite of every bound it proves (0: none), for --cross-check to "
                         "catch");
}

// The manager's campaign over the journal, tuned by the expert options.
void configure(Campaign& campaign, const po::variables_map& vm, uint64_t job_nodes) {
    const double growth = vm["leaf-growth"].as<double>();
    if (!(growth >= 1 && growth <= 16)) throw InputError("--leaf-growth must be between 1 and 16");
    campaign.set_leaf_growth(growth);
    const double stick = vm["stickiness"].as<double>();
    if (!(stick >= 0 && stick <= 1000)) throw InputError("--stickiness must be between 0 and 1000");
    campaign.set_stickiness(stick);
    campaign.set_engine_order(!vm.count("pit-order"));
    const double budget_growth = vm["budget-growth"].as<double>();
    if (!(budget_growth >= 1 && budget_growth <= 4))
        throw InputError("--budget-growth must be between 1 and 4");
    campaign.set_budget_growth(budget_growth, job_nodes);
    if (vm.count("split-above")) {
        const int cut = vm["split-above"].as<int>();
        if (cut < 0 || cut > kMaxSeeds) throw InputError("--split-above must be between 0 and 127");
        campaign.set_split_above(cut);
    }
}

// The checked --cross-check fraction and its sample's seed.
struct CrossCheckOptions {
    double fraction = 0;
    uint64_t seed = 0;
};
CrossCheckOptions cross_check_options(const po::variables_map& vm) {
    const double cross = vm["cross-check"].as<double>();
    if (!(cross >= 0 && cross <= 1)) throw InputError("--cross-check must be between 0 and 1");
    if (cross > 0 && mpi::ranks() < 3)
        throw InputError(
            "--cross-check needs two workers or more (mpirun -np 3 or more, and a "
            "build with KALAH_MPI): a record is checked on another worker than the "
            "one that ran it");
    const uint64_t seed = vm.count("cross-check-seed") ? vm["cross-check-seed"].as<uint64_t>()
                                                       : std::random_device{}();
    return {cross, seed};
}

// The campaign's workers: every other MPI rank under mpirun, else one solver in this
// process (`local` then points at it). The cross-check's arbiter is the manager's own
// solver, made at the first disagreement, with the audit's budget.
std::unique_ptr<WorkerPool> start_workers(const po::variables_map& vm, const mpi::RankDatabase& rdb,
                                          const SolverOptions& o, uint64_t job_nodes,
                                          const CrossCheckOptions& cross,
                                          const LocalWorkers*& local) {
    auto arbiter = std::make_shared<std::unique_ptr<Solver>>();
    mpi::CrossCheck check{cross.fraction, cross.seed, {}, vm["test-lying-rank"].as<int>()};
    check.arbiter = [arbiter, o, job_nodes, rdb](const Board& pos, int t) -> std::optional<bool> {
        if (!*arbiter) {
            SolverOptions a = o;
            a.node_limit = job_nodes * 4;
            *arbiter = std::make_unique<Solver>(rdb.m, rdb.rule, a);
        }
        try {
            return (*arbiter)->test(pos, t) >= t;
        } catch (const SearchStopped&) {
            return std::nullopt;
        }
    };
    local = nullptr;
    if (std::unique_ptr<WorkerPool> ranks = mpi::make_workers(rdb, std::move(check))) return ranks;
    auto w = std::make_unique<LocalWorkers>(rdb.m, rdb.rule, o);
    w->set_fresh_table(vm.count("fresh-table") > 0);
    local = w.get();
    return w;
}

// The figures of a run for its report: this run's nodes and time, the in-process
// worker's table and CPU time (none when the workers are other ranks), the ranks and the
// cross-check's account.
void add_run_figures(CampaignRun& r, const SolverOptions& o, const LocalWorkers* local,
                     const WorkerPool& pool, uint64_t job_nodes, const CrossCheckOptions& cross) {
    const SolverStats* stats = local ? &local->solver().stats() : nullptr;
    r.figures = {r.progress.run_nodes,
                 r.progress.run_seconds,
                 o.threads,
                 stats ? stats->cpu_seconds : 0,
                 stats ? double(stats->tt_bytes) / (1 << 20) : 0,
                 o.tt_mb};
    r.ranks = mpi::ranks();
    r.job_nodes = job_nodes;
    r.cross_check = cross.fraction;
    r.cross_check_seed = cross.seed;
    const mpi::CrossCheckAccount account = mpi::cross_check_account(pool);
    r.cross_checked = account.agreed;
    r.cross_check_unsettled = account.unsettled;
    r.refused_ranks = account.refused;
}

int run_campaign(const std::vector<std::string>& args) {
    po::options_description opts("campaign options");
    po::options_description expert("expert options");
    add_campaign_options(opts, expert);
    po::variables_map vm;
    if (!parse_options("campaign",
                       "--pits M --seeds N [--rule R] --dir D [--job-nodes B] [options]\n"
                       "       kalah campaign --status --dir D\n"
                       "       kalah campaign --audit N --dir D\n"
                       "       kalah campaign --certificate FILE --dir D [--prove Q]",
                       opts, args, vm, &expert, true))
        return 0;
    if (!vm.count("dir")) throw InputError("--dir is required (the campaign directory)");
    const std::string dir = vm["dir"].as<std::string>();
    if (dir.empty()) throw InputError("--dir must not be empty");
    const bool manager = mpi::rank() == 0;
    if (vm.count("status")) return manager ? run_status(vm, dir) : 0;
    if (vm.count("audit")) return manager ? run_audit(vm, dir) : 0;
    if (vm.count("certificate")) return manager ? run_certificate(vm, dir) : 0;
    if (!vm.count("pits") || !vm.count("seeds"))
        throw InputError("--pits and --seeds are required (or --status)");
    const Rule rule = parse_rule(vm["rule"].as<std::string>());
    const int m = vm["pits"].as<int>(), n = vm["seeds"].as<int>();
    const Board start = checked_start(m, n);
    CampaignParams params{m, n, rule, {}};
    if (vm.count("moves")) params.line = parse_line(m, n, rule, vm["moves"].as<std::string>());
    const RootFrame frame = root_frame(params);
    const std::optional<Question> question = question_option(vm);
    guess_option(vm, m, n, 0);  // a bad --guess is bad input before anything is opened
    const uint64_t job_nodes = vm["job-nodes"].as<uint64_t>();
    if (job_nodes < 1000 || job_nodes > uint64_t(1) << 50)
        throw InputError("--job-nodes must be between 1000 and 2^50");
    const CrossCheckOptions cross = cross_check_options(vm);

    // The solver options of every worker (the campaign's progress line, not heartbeats),
    // with the database it probes.
    std::unique_ptr<db::Database> db;
    auto worker_options = [&] {
        SolverOptions o = solver_options(vm, "campaign", m, rule, start.seeds_in_pits(), db, false);
        o.heartbeat = {};
        o.node_limit = job_nodes;
        return o;
    };
    auto rank_database = [&] {
        return mpi::RankDatabase{vm["db"].as<std::string>(), m, rule, db ? db->max_seeds() : -1};
    };
    if (!manager) {
        // A worker rank: jobs until the manager says stop; it never touches the directory.
        const SolverOptions o = worker_options();
        Solver solver(m, rule, o);
        mpi::run_worker(rank_database(), solver, job_nodes, vm.count("fresh-table") > 0,
                        vm["test-lying-rank"].as<int>());
        return 0;
    }
    // The directory: its journal checked (a damaged tail cut off) and locked, before
    // anything else is opened.
    std::string damage;
    std::optional<Journal> journal;
    std::vector<JobRecord> imported;
    const bool fresh = !std::filesystem::exists(std::filesystem::path(dir) / kJournalName);
    if (vm.count("import")) {
        const std::string from = vm["import"].as<std::string>();
        if (!fresh) {
            std::cerr << "kalah campaign: " << dir
                      << " has a journal: --import is used only when one is created\n";
        } else {
            JournalContents c = read_good_records(from, "importing");
            if (c.params.m != m || c.params.n != n || c.params.rule != rule)
                throw InputError("--import: " + from + " is a campaign of " +
                                 params_text(c.params) + ", not of Kalah(" + std::to_string(m) +
                                 "," + std::to_string(n) + "), rule " + rule_name(rule));
            imported = std::move(c.records);
        }
    }
    try {
        journal.emplace(Journal::open(dir, params, damage, imported));
    } catch (const JournalMismatch& e) {
        throw InputError(e.what());
    }
    if (!imported.empty())
        std::cerr << "kalah campaign: " << dir << ": started with " << imported.size()
                  << " records imported from " << vm["import"].as<std::string>() << "\n";
    if (!damage.empty()) std::cerr << "kalah campaign: " << damage << "\n";
    const SolverOptions o = worker_options();
    const mpi::RankDatabase rdb = rank_database();
    const LocalWorkers* local = nullptr;
    std::unique_ptr<WorkerPool> pool = start_workers(vm, rdb, o, job_nodes, cross, local);
    Campaign campaign(*journal, db.get());
    configure(campaign, vm, job_nodes);
    campaign.trace_to(dir);
    const bool progress_log = prepare_log(dir, kProgressCsv, progress_csv_header());

    // Run to the answer, a progress line on stderr and a row of progress.csv every few
    // seconds and after each pass. The first pass's threshold is solve's first MTD(f)
    // guess (only the number of passes depends on it).
    const bool show = !quiet(vm);
    auto report = [&](const Progress& p) {
        if (progress_log) append_csv(dir, p);
        if (show) std::cerr << progress_line(p) << "\n";
    };
    const double every = ::isatty(2) ? 2 : 10;
    CampaignRun r;
    r.question = question;
    if (question)
        r.proved = campaign.settle(*pool, *question, report, every);
    else
        r.value = campaign.run(
            *pool,
            vm.count("guess") ? guess_option(vm, m, n, 0)
                              : frame.margin(Solver(m, rule, o).estimate(campaign.tree().root())),
            report, every);
    r.progress = campaign.progress();
    if (progress_log) append_csv(dir, r.progress);
    if (const std::string why = campaign.trace_error(); !why.empty())
        std::cerr << "kalah campaign: the job trace is incomplete: " << why << "\n";

    r.start = start;
    r.rule = rule;
    r.dir = dir;
    r.tree = &campaign.tree();
    add_run_figures(r, o, local, *pool, job_nodes, cross);
    std::cout << (vm.count("json") ? campaign_run_json(r) : campaign_run_text(r));
    return 0;
}

int guarded_campaign(const std::vector<std::string>& args) {
    return mpi::run_ranked([&] { return guarded("campaign", run_campaign, args); });
}
const RegisterCommand reg_campaign({"campaign",
                                    "solve Kalah(m,n) by a resumable campaign of budgeted jobs",
                                    guarded_campaign});

}  // namespace
}  // namespace kalah::cli
