// `kalah build-db` and `kalah verify-db`: build endgame database layers, check them.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "analysis/json.h"
#include "cli/command.h"
#include "db/builder.h"
#include "db/manifest.h"
#include "db/verify.h"

namespace kalah::cli {
using namespace kalah::analysis;
namespace {
namespace po = boost::program_options;

// A 64-bit hash as 16 hex digits (a JSON number would lose bits in many readers).
std::string hex16(uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

// --db DIR, or its older name --dir (kept for scripts; listed by --help-expert).
std::string db_dir(const po::variables_map& vm) {
    if (vm.count("dir") && !vm["dir"].defaulted()) {
        if (!vm["db"].defaulted())
            throw InputError("give --db or --dir (its older name), not both");
        check_db_dir(vm["dir"].as<std::string>());
        return vm["dir"].as<std::string>();
    }
    check_db_dir(vm["db"].as<std::string>());
    return vm["db"].as<std::string>();
}

void add_dir_options(po::options_description& opts, po::options_description& expert) {
    opts.add_options()("db", po::value<std::string>()->default_value(kDefaultDbDir),
                       "database directory");
    expert.add_options()("dir", po::value<std::string>()->default_value(kDefaultDbDir),
                         "older name of --db");
}

int run_build(const std::vector<std::string>& args) {
    po::options_description opts("build-db options");
    po::options_description expert("expert options");
    // clang-format off
    opts.add_options()
        ("pits", po::value<int>()->required(), "pits per side m (1..6)")
        ("rule", po::value<std::string>()->default_value("standard"), "standard or empty-capture")
        ("max-seeds", po::value<int>()->required(), "K: build the layers of 0..K seeds in the pits")
        ("memory-gb", po::value<double>()->default_value(16.0),
         "memory bound of the build in GiB (checked before it starts)");
    add_dir_options(opts, expert);
    add_threads_option(opts);
    add_output_options(opts);
    expert.add_options()
        ("block-entries", po::value<uint32_t>()->default_value(db::kDefaultBlockSize),
         "entries per compressed block: larger compresses better, smaller makes a probe "
         "of a layer not held in memory cheaper (it decodes one block)")
        ("zstd-level", po::value<int>()->default_value(db::kDefaultZstdLevel),
         "zstd compression level 1..19 (higher: smaller files, slower build)")
        ("lower-layers", po::value<std::string>()->default_value("auto"),
         "how finished layers are held while higher ones are built: raw (one byte an "
         "entry), packed (~0.45 bytes), mapped (their packed twins mapped: page cache the "
         "kernel may drop while the top layer is written), or auto (the first of these "
         "three whose build fits in --memory-gb)")
        ("top-layer", po::value<std::string>()->default_value("auto"),
         "how the top layer is solved: whole (in memory, a byte an entry), groups (one pair "
         "of row-total groups at a time, through group files on disk: the memory of the "
         "largest pair; resumable pair by pair), or auto (whole when it fits in --memory-gb)")
        ("no-packed-twins", "write no packed twin (.kpk) beside each layer file (searches "
         "then decode the layer files when they open the database)");
    // clang-format on
    po::variables_map vm;
    if (!parse_options("build-db", "--pits M --max-seeds K [--rule R] [--db D] [options]", opts,
                       args, vm, &expert, true))
        return 0;
    db::BuildOptions o;
    o.m = vm["pits"].as<int>();
    o.rule = parse_rule(vm["rule"].as<std::string>());
    o.max_seeds = vm["max-seeds"].as<int>();
    o.dir = db_dir(vm);
    o.threads = threads_option(vm);
    o.memory_gb = vm["memory-gb"].as<double>();
    if (!std::isfinite(o.memory_gb) || !(o.memory_gb > 0))
        throw InputError("--memory-gb must be a positive number");
    o.block_size = vm["block-entries"].as<uint32_t>();
    o.level = vm["zstd-level"].as<int>();
    o.twins = vm.count("no-packed-twins") == 0;
    const std::string lower = vm["lower-layers"].as<std::string>();
    if (lower == "raw")
        o.lower = db::BuildOptions::Lower::Raw;
    else if (lower == "packed")
        o.lower = db::BuildOptions::Lower::Packed;
    else if (lower == "mapped")
        o.lower = db::BuildOptions::Lower::Mapped;
    else if (lower != "auto")
        throw InputError("--lower-layers must be raw, packed, mapped or auto, not '" + lower + "'");
    const std::string top = vm["top-layer"].as<std::string>();
    if (top == "whole")
        o.top = db::BuildOptions::Top::Whole;
    else if (top == "groups")
        o.top = db::BuildOptions::Top::Groups;
    else if (top != "auto")
        throw InputError("--top-layer must be whole, groups or auto, not '" + top + "'");
    const bool json = vm.count("json") > 0;
    if (!quiet(vm)) o.log = &std::cerr;
    auto stats = db::build_database(o);
    uint64_t entries = 0, bytes = 0;
    double seconds = 0;
    for (const auto& s : stats) {
        entries += s.entries;
        bytes += s.compressed_bytes;
        seconds += s.seconds;
    }
    if (json) {
        Json layers = Json::array();
        for (const auto& st : stats)
            layers.push_back({{"seeds", st.s},
                              {"entries", st.entries},
                              {"bytes", st.compressed_bytes},
                              {"seconds", st.seconds},
                              {"cpu_seconds", st.cpu_seconds},
                              {"reused", st.reused},
                              {"value_hash", hex16(st.value_hash)}});
        std::cout << json_line({{"pits", o.m},
                                {"rule", rule_name(o.rule)},
                                {"db", o.dir},
                                {"max_seeds", o.max_seeds},
                                {"layers", layers},
                                {"entries", entries},
                                {"bytes", bytes},
                                {"seconds", seconds}});
        return 0;
    }
    std::cout << "database m=" << o.m << " " << rule_name(o.rule) << " layers 0.." << o.max_seeds
              << " in " << o.dir << ": " << entries << " entries, " << bytes << " bytes ("
              << seconds << " s building)\n";
    return 0;
}

// verify-db --manifest: every layer of the manifest found in the directory must have the
// manifest's value hash; a directory holding none of them fails too.
int verify_manifest(const po::variables_map& vm, const db::VerifyOptions& o) {
    const std::string file = vm["manifest"].as<std::string>();
    const auto manifest = db::read_manifest(file);
    auto res = db::check_manifest(o.dir, manifest, o.m, o.rule);
    if (res.checked == 0) res.problems.push_back(o.dir + ": holds no layer listed in " + file);
    for (const auto& p : res.problems) std::cerr << "kalah verify-db: " << p << "\n";
    const bool ok = res.problems.empty();
    if (vm.count("json")) {
        std::cout << json_line({{"db", o.dir},
                                {"manifest", file},
                                {"ok", ok},
                                {"checked", res.checked},
                                {"missing", res.missing},
                                {"problems", res.problems}});
    } else {
        std::cout << (ok ? "OK" : "FAILED") << ": " << res.checked
                  << " layers compared with the manifest, " << res.missing
                  << " listed layers not in the directory, " << res.problems.size()
                  << " problems\n";
    }
    return ok ? 0 : 1;
}

int run_verify(const std::vector<std::string>& args) {
    po::options_description opts("verify-db options");
    po::options_description expert("expert options");
    add_dir_options(opts, expert);
    // clang-format off
    opts.add_options()
        ("pits", po::value<int>(), "check only this m")
        ("rule", po::value<std::string>(), "check only this rule")
        ("sample", po::value<uint64_t>()->default_value(0),
         "re-derive N entries a layer, drawn at random (0: every entry)")
        ("memory-gb", po::value<double>()->default_value(16),
         "bound on the layers held one byte an entry in GiB: the layer checked, and the "
         "lower ones without a good packed twin (those with one are read in it, mapped); a "
         "layer that does not fit is checked block by block against its twin and re-derived "
         "through it")
        ("manifest", po::value<std::string>(),
         "instead: compare each layer's value hash with the manifest FILE (results/value-hashes.txt)");
    // clang-format on
    add_threads_option(opts);
    add_output_options(opts);
    po::variables_map vm;
    if (!parse_options("verify-db",
                       "[--db D] [--pits M] [--rule R] [--sample N | --manifest FILE] [options]",
                       opts, args, vm, &expert))
        return 0;
    db::VerifyOptions o;
    o.dir = db_dir(vm);
    if (vm.count("pits")) {
        o.m = vm["pits"].as<int>();
        if (o.m < 1 || o.m > kMaxPits) throw InputError("--pits must be 1..6");
    }
    if (vm.count("rule")) o.rule = parse_rule(vm["rule"].as<std::string>());
    o.threads = threads_option(vm);
    o.sample = vm["sample"].as<uint64_t>();
    o.memory_gb = vm["memory-gb"].as<double>();
    if (!(o.memory_gb > 0) || !std::isfinite(o.memory_gb))
        throw InputError("--memory-gb must be a positive number");
    if (!quiet(vm)) o.log = &std::cerr;
    if (vm.count("manifest")) return verify_manifest(vm, o);
    const auto res = db::verify_database(o);
    for (const auto& p : res.problems) std::cerr << "kalah verify-db: " << p << "\n";
    if (vm.count("json")) {
        std::cout << json_line({{"db", o.dir},
                                {"ok", res.ok()},
                                {"files", res.files},
                                {"twins", res.twins},
                                {"entries", res.entries},
                                {"problems", res.problems}});
    } else {
        std::cout << (res.ok() ? "OK" : "FAILED") << ": " << res.files << " layer files, "
                  << res.twins << " packed twins, " << res.entries << " entries re-derived, "
                  << res.problems.size() << " problems\n";
    }
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
