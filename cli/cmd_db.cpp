// `kalah build-db` and `kalah verify-db`: build endgame database layers, check them.
#include <omp.h>

#include <cmath>
#include <iostream>

#include "cli/command.h"
#include "db/builder.h"
#include "db/verify.h"

namespace kalah::cli {
namespace {
namespace po = boost::program_options;

// --threads: 0 (OpenMP default) .. 4 per core; more is a typo, not a request.
int threads_option(const po::variables_map& vm) {
    const int t = vm["threads"].as<int>();
    const int most = 4 * omp_get_num_procs();
    if (t < 0 || t > most)
        throw InputError("--threads must be 0.." + std::to_string(most) + " (0: all cores)");
    return t;
}

int run_build(const std::vector<std::string>& args) {
    po::options_description opts("build-db options");
    opts.add_options()
        ("pits", po::value<int>()->required(), "pits per side m (1..6)")
        ("rule", po::value<std::string>()->default_value("standard"), "standard or empty-capture")
        ("max-seeds", po::value<int>()->required(), "K: build the layers of 0..K seeds in the pits")
        ("dir", po::value<std::string>()->default_value("kalah-db"), "database directory")
        ("threads", po::value<int>()->default_value(0), "OpenMP threads (0: all cores)")
        ("memory-gb", po::value<double>()->default_value(16.0), "memory bound for the layers")
        ("block-entries", po::value<uint32_t>()->default_value(db::kDefaultBlockSize),
         "entries per compressed block: larger compresses better, smaller makes a probe "
         "of a layer not held in memory cheaper (it decodes one block)")
        ("zstd-level", po::value<int>()->default_value(db::kDefaultZstdLevel),
         "zstd compression level 1..19 (higher: smaller files, slower build)");
    po::variables_map vm;
    if (!parse_options("build-db", "--pits M --max-seeds K [--rule R] [--dir D] [--threads T] "
                                   "[--memory-gb G] [--block-entries B] [--zstd-level L]", opts, args, vm))
        return 0;
    db::BuildOptions o;
    o.m = vm["pits"].as<int>();
    o.rule = parse_rule(vm["rule"].as<std::string>());
    o.max_seeds = vm["max-seeds"].as<int>();
    o.dir = vm["dir"].as<std::string>();
    o.threads = threads_option(vm);
    o.memory_gb = vm["memory-gb"].as<double>();
    if (!std::isfinite(o.memory_gb) || !(o.memory_gb > 0))
        throw InputError("--memory-gb must be a positive number");
    o.block_size = vm["block-entries"].as<uint32_t>();
    o.level = vm["zstd-level"].as<int>();
    o.log = &std::cerr;
    auto stats = db::build_database(o);
    uint64_t entries = 0, bytes = 0;
    double seconds = 0;
    for (const auto& s : stats) {
        entries += s.entries;
        bytes += s.compressed_bytes;
        seconds += s.seconds;
    }
    std::cout << "database m=" << o.m << " " << rule_name(o.rule) << " layers 0.." << o.max_seeds
              << " in " << o.dir << ": " << entries << " entries, " << bytes << " bytes ("
              << seconds << " s building)\n";
    return 0;
}

int run_verify(const std::vector<std::string>& args) {
    po::options_description opts("verify-db options");
    opts.add_options()
        ("dir", po::value<std::string>()->default_value("kalah-db"), "database directory")
        ("pits", po::value<int>(), "check only this m")
        ("rule", po::value<std::string>(), "check only this rule")
        ("threads", po::value<int>()->default_value(0), "OpenMP threads (0: all cores)");
    po::variables_map vm;
    if (!parse_options("verify-db", "--dir D [--pits M] [--rule R] [--threads T]", opts, args, vm))
        return 0;
    db::VerifyOptions o;
    o.dir = vm["dir"].as<std::string>();
    if (vm.count("pits")) {
        o.m = vm["pits"].as<int>();
        if (o.m < 1 || o.m > kMaxPits) throw InputError("--pits must be 1..6");
    }
    if (vm.count("rule")) o.rule = parse_rule(vm["rule"].as<std::string>());
    o.threads = threads_option(vm);
    o.log = &std::cerr;
    const auto res = db::verify_database(o);
    for (const auto& p : res.problems) std::cerr << "kalah verify-db: " << p << "\n";
    std::cout << (res.ok() ? "OK" : "FAILED") << ": " << res.files << " layer files, "
              << res.entries << " entries re-derived, " << res.problems.size() << " problems\n";
    return res.ok() ? 0 : 1;
}

int guarded_build(const std::vector<std::string>& args) {
    return guarded("build-db", run_build, args);
}
int guarded_verify(const std::vector<std::string>& args) {
    return guarded("verify-db", run_verify, args);
}
const RegisterCommand reg_build({"build-db", "build endgame database layers", guarded_build});
const RegisterCommand reg_verify({"verify-db", "check endgame database files", guarded_verify});

}  // namespace
}  // namespace kalah::cli
