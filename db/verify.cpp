// verify_database: file checks and per-entry re-derivation from the successors.
#include "db/verify.h"

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <ostream>
#include <regex>
#include <stdexcept>

#include "core/notation.h"
#include "db/format.h"
#include "db/index.h"
#include "db/packed.h"

namespace kalah::db {
namespace {

namespace fs = std::filesystem;

// Value of b (stores zero) recomputed from the stored values of its successors.
int rederive(const Board& b, Rule rule, const std::vector<std::vector<int8_t>>& layers) {
    if (b.over()) return b.seeds_in_row_own() - b.seeds_in_row_opp();
    const Side me = b.to_move();
    int best = -1000;
    for (int pit = 0; pit < b.pits(); ++pit) {
        if (b.own_pit(pit) == 0) continue;
        Board c = b;
        c.play(pit, rule);
        int v = c.store(me) - c.store(other(me));
        if (!c.over()) {
            const int child = layers[c.seeds_in_pits()][rank_board(c)];
            v += c.to_move() == me ? child : -child;
        }
        best = std::max(best, v);
    }
    return best;
}

void verify_set(int m, Rule rule, const std::map<int, fs::path>& found, const VerifyOptions& opts,
                VerifyResult& res) {
    std::vector<std::vector<int8_t>> layers;
    std::vector<std::string> names;
    std::vector<uint64_t> checksums;  // each layer file's checksum, which its twin names
    const int top = found.rbegin()->first;
    for (int s = 0; s <= top; ++s) {
        auto it = found.find(s);
        if (it == found.end()) {
            res.problems.push_back(layer_file_name(m, rule, s) + ": missing (layers run 0.." +
                                   std::to_string(top) + " with a gap)");
            break;
        }
        try {
            auto f = LayerFile::open(it->second.string(), m, rule, s);
            layers.push_back(f->read_all());
            names.push_back(f->name());
            checksums.push_back(f->header().file_checksum);
        } catch (const FormatError& e) {
            res.problems.push_back(e.what());
            break;
        }
    }
    // Packed twins: every check of read_file, then every entry equal to the layer file's.
    for (int s = 0; s < static_cast<int>(layers.size()); ++s) {
        const fs::path twin = found.at(s).parent_path() / PackedLayer::file_name(m, rule, s);
        std::error_code ec;
        // Any entry of the twin's name is checked (a symbolic link loop or a FIFO too).
        if (!fs::exists(fs::symlink_status(twin, ec))) continue;
        try {
            const PackedLayer p = PackedLayer::read_file(twin.string(), m, rule, s, checksums[s]);
            std::vector<int8_t> values(p.size());
            p.unpack(values.data());
            uint64_t r = 0;
            while (r < values.size() && values[r] == layers[s][r]) ++r;
            if (r < values.size())
                res.problems.push_back(twin.filename().string() + ": entry " + std::to_string(r) +
                                       " holds " + std::to_string(values[r]) + ", its layer file " +
                                       std::to_string(layers[s][r]));
            else
                res.twins++;
        } catch (const FormatError& e) {
            res.problems.push_back(e.what());
        }
    }
    for (int s = 0; s < static_cast<int>(layers.size()); ++s) {
        const auto t0 = std::chrono::steady_clock::now();
        const uint64_t n = layers[s].size();
        // Every rank, or opts.sample of them drawn by splitmix64 from a seed of (m, rule, s).
        const bool sampled = opts.sample > 0 && opts.sample < n;
        const uint64_t count = sampled ? opts.sample : n;
        const uint64_t seed =
            (uint64_t(m) << 16 | uint64_t(rule) << 8 | uint64_t(s)) * 0x9E3779B97F4A7C15ull;
        auto rank_of = [&](uint64_t i) {
            if (!sampled) return i;
            uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            return (z ^ (z >> 31)) % n;
        };
        uint64_t first_bad = n;
#pragma omp parallel
        {
            uint64_t local_bad = n;
#pragma omp for schedule(dynamic, 4096)
            for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) {
                const uint64_t r = rank_of(static_cast<uint64_t>(i));
                if (!sampled && r > local_bad) continue;
                uint8_t c[kMaxIndexPits];
                unrank(r, s, 2 * m, c);
                const Board b = board_from_configuration(c, m);
                if (rederive(b, rule, layers) != layers[s][r]) local_bad = std::min(local_bad, r);
            }
#pragma omp critical
            first_bad = std::min(first_bad, local_bad);
        }
        res.entries += count;
        const double sec =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (first_bad < n) {
            uint8_t c[kMaxIndexPits];
            unrank(first_bad, s, 2 * m, c);
            const Board b = board_from_configuration(c, m);
            res.problems.push_back(names[s] + ": entry " + std::to_string(first_bad) + " (" +
                                   format_position(b) + ") holds " +
                                   std::to_string(layers[s][first_bad]) + ", re-derived " +
                                   std::to_string(rederive(b, rule, layers)));
        } else {
            res.files++;
        }
        if (opts.log) {
            char buf[200];
            std::snprintf(buf, sizeof buf, "%s: %llu %sentries %s (%.1fs)\n", names[s].c_str(),
                          (unsigned long long)count, sampled ? "sampled " : "",
                          first_bad < n ? "BAD" : "ok", sec);
            *opts.log << buf << std::flush;
        }
    }
}

}  // namespace

VerifyResult verify_database(const VerifyOptions& opts) {
    std::error_code ec;
    if (!fs::is_directory(opts.dir, ec))
        throw std::invalid_argument("no such database directory: " + opts.dir);
    if (opts.threads > 0) omp_set_num_threads(opts.threads);
    VerifyResult res;
    // At most 3 digits each, so stoi cannot overflow; the name must then be exactly the
    // canonical one (no leading zeros), so that no two files claim the same layer.
    static const std::regex kName(
        R"(kalah-m([0-9]{1,3})-(standard|empty-capture)-s([0-9]{1,3})\.kdb)");
    std::map<std::pair<int, int>, std::map<int, fs::path>> sets;
    for (const auto& e : fs::directory_iterator(opts.dir, ec)) {
        const std::string name = e.path().filename().string();
        if (e.path().extension() != ".kdb") continue;
        std::smatch mt;
        const bool matched = std::regex_match(name, mt, kName);
        const int m = matched ? std::stoi(mt[1]) : 0;
        const Rule rule = matched ? parse_rule(mt[2]) : Rule::Standard;
        const int s = matched ? std::stoi(mt[3]) : 0;
        if (!matched || name != layer_file_name(m, rule, s)) {
            res.problems.push_back(name +
                                   ": unrecognised file name, not checked (layer files are "
                                   "named kalah-m<M>-<rule>-s<S>.kdb, no leading zeros)");
            continue;
        }
        if (opts.m != 0 && m != opts.m) continue;
        if (opts.rule && rule != *opts.rule) continue;
        if (m < 1 || m > kMaxPits || s > kMaxSeeds) {
            res.problems.push_back(name + ": m or s out of range");
            continue;
        }
        sets[{m, static_cast<int>(rule)}][s] = e.path();
    }
    if (sets.empty()) {
        std::string what = "no layer files";
        if (opts.m) what += " for m=" + std::to_string(opts.m);
        if (opts.rule) what += " " + rule_name(*opts.rule);
        res.problems.push_back(what + " in " + opts.dir);
    }
    for (const auto& [key, files] : sets)
        verify_set(key.first, static_cast<Rule>(key.second), files, opts, res);
    return res;
}

}  // namespace kalah::db
