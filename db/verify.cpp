// verify_database: file checks and per-entry re-derivation from the successors.
#include "db/verify.h"

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <stdexcept>

#include "core/notation.h"
#include "db/builder.h"
#include "db/format.h"
#include "db/index.h"
#include "db/packed.h"

namespace kalah::db {
namespace {

namespace fs = std::filesystem;

// Value of b (stores zero) recomputed from the stored values of its successors.
// The layers a re-derivation reads (the builder's LayerSet, as storage only): each one
// byte an entry, or, once its packed twin has been found equal to its layer file entry
// for entry, probed in that twin mapped (the page cache's memory, not the process's). So
// a deep database is checked in the memory of one raw layer plus the lower layers that
// have no good twin.
int rederive(const Board& b, Rule rule, const LayerSet& layers) {
    if (b.over()) return b.seeds_in_row_own() - b.seeds_in_row_opp();
    const Side me = b.to_move();
    int best = -1000;
    for (int pit = 0; pit < b.pits(); ++pit) {
        if (b.own_pit(pit) == 0) continue;
        Board c = b;
        c.play(pit, rule);
        int v = c.store(me) - c.store(other(me));
        if (!c.over()) {
            const int child = layers.get(c.seeds_in_pits(), rank_board(c));
            v += c.to_move() == me ? child : -child;
        }
        best = std::max(best, v);
    }
    return best;
}

// Layer by layer, from 0 up: the file read and checked (blocks and file checksum), its
// twin compared entry for entry, every (or the sampled) entry re-derived; then the layer
// is held for the layers above it through its twin when the twin was found equal, else
// raw. A damaged or missing layer file ends the set (the layers above it are not checked).
void verify_set(int m, Rule rule, const std::map<int, fs::path>& found, const VerifyOptions& opts,
                VerifyResult& res) {
    LayerSet layers;
    auto raw_bytes = [&layers] {
        uint64_t b = 0;
        for (int i = 0; i < layers.size(); ++i) b += layers.raw(i).size();
        return b;
    };
    const int top = found.rbegin()->first;
    const double budget = opts.memory_gb * double(1ull << 30);
    for (int s = 0; s <= top; ++s) {
        auto it = found.find(s);
        if (it == found.end()) {
            res.problems.push_back(layer_file_name(m, rule, s) + ": missing (layers run 0.." +
                                   std::to_string(top) + " with a gap)");
            return;
        }
        std::string name;
        uint64_t checksum = 0;
        const uint64_t n = layer_size(2 * m, s);
        const fs::path twin = it->second.parent_path() / PackedLayer::file_name(m, rule, s);
        std::error_code ec;
        // Any entry of the twin's name is checked (a symbolic link loop or a FIFO too).
        const bool has_twin = fs::exists(fs::symlink_status(twin, ec));
        // A layer that does not fit raw beside the lower ones held raw is checked through
        // its twin: the file block by block against the twin, then re-derived reading the
        // layer in the twin (mapped): the process holds a block at a time, not the layer.
        const bool through_twin = static_cast<double>(raw_bytes() + n) > budget;
        if (through_twin && !has_twin) {
            res.problems.push_back(layer_file_name(m, rule, s) + ": not checked: with the " +
                                   std::to_string(raw_bytes() >> 20) +
                                   " MiB of lower layers held raw (no good twin) it needs more " +
                                   "than --memory-gb, and it has no packed twin to check it "
                                   "through");
            return;
        }
        std::unique_ptr<LayerFile> f;
        try {
            f = LayerFile::open(it->second.string(), m, rule, s);
            name = f->name();
            checksum = f->header().file_checksum;
            if (through_twin) {
                layers.add({});  // read below, block by block, against the twin
            } else {
                layers.add(f->read_all());
            }
        } catch (const FormatError& e) {
            res.problems.push_back(e.what());
            return;
        }
        // Its packed twin: every check of read_file, then every entry equal to the file's.
        std::optional<PackedLayer> good_twin;
        if (has_twin) {
            try {
                PackedLayer p = PackedLayer::read_file(twin.string(), m, rule, s, checksum,
                                                       PackedLayer::Load::Mapped);
                uint64_t first_diff = n;
                int first_diff_value = 0;
                if (through_twin) {
                    // Block by block (each decoded and checked), in parallel.
                    const uint32_t blocks = f->header().block_count;
                    const uint64_t size = f->header().block_size;
                    std::string failure;
                    int64_t failed_block = -1;
#pragma omp parallel
                    {
                        std::vector<int8_t> buf(size);
                        uint64_t local = n;
                        int local_value = 0;
#pragma omp for schedule(dynamic, 1)
                        for (int64_t b = 0; b < static_cast<int64_t>(blocks); ++b) {
                            const uint64_t first = static_cast<uint64_t>(b) * size;
                            const uint64_t count = f->block_entries(static_cast<uint32_t>(b));
                            try {
                                f->read_block(static_cast<uint32_t>(b), buf.data());
                            } catch (const FormatError& e) {
#pragma omp critical
                                if (failed_block < 0 || b < failed_block) {
                                    failed_block = b;
                                    failure = e.what();
                                }
                                continue;
                            }
                            for (uint64_t i = 0; i < count && first + i < local; ++i)
                                if (p.get(first + i) != buf[i]) {
                                    local = first + i;
                                    local_value = buf[i];
                                }
                        }
#pragma omp critical
                        if (local < first_diff) {
                            first_diff = local;
                            first_diff_value = local_value;
                        }
                    }
                    try {
                        // Blocks first, so that damage is named by its first bad block.
                        if (!failure.empty()) throw FormatError(failure);
                        f->check_file_checksum();
                    } catch (const FormatError& e) {
                        // The layer file itself is damaged: the layers above are not checked.
                        res.problems.push_back(e.what());
                        return;
                    }
                } else {
                    const std::vector<int8_t>& values = layers.raw(s);
#pragma omp parallel for schedule(static) reduction(min : first_diff)
                    for (int64_t r = 0; r < static_cast<int64_t>(n); ++r)
                        if (p.get(static_cast<uint64_t>(r)) != values[r])
                            first_diff = std::min(first_diff, static_cast<uint64_t>(r));
                    if (first_diff < n) first_diff_value = values[first_diff];
                }
                if (p.faulted())
                    throw FormatError(twin.filename().string() + ": truncated while mapped");
                if (first_diff < n)
                    res.problems.push_back(twin.filename().string() + ": entry " +
                                           std::to_string(first_diff) + " holds " +
                                           std::to_string(p.get(first_diff)) + ", its layer file " +
                                           std::to_string(first_diff_value));
                else {
                    good_twin.emplace(std::move(p));
                    res.twins++;
                }
            } catch (const FormatError& e) {
                res.problems.push_back(e.what());
            }
        }
        if (through_twin) {
            // Without a good twin the layer cannot be read here: nothing above it either.
            if (!good_twin) return;
            layers.hold(s, std::move(*good_twin));
            good_twin.reset();
        }
        const auto t0 = std::chrono::steady_clock::now();
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
                if (rederive(b, rule, layers) != layers.get(s, r))
                    local_bad = std::min(local_bad, r);
            }
#pragma omp critical
            first_bad = std::min(first_bad, local_bad);
        }
        // A lower layer's twin cut while mapped was read as zeros: nothing re-derived from
        // it counts.
        if (const int cut = layers.faulted_layer(); cut >= 0) {
            res.problems.push_back(PackedLayer::file_name(m, rule, cut) +
                                   ": truncated while mapped");
            return;
        }
        res.entries += count;
        const double sec =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (first_bad < n) {
            uint8_t c[kMaxIndexPits];
            unrank(first_bad, s, 2 * m, c);
            const Board b = board_from_configuration(c, m);
            res.problems.push_back(name + ": entry " + std::to_string(first_bad) + " (" +
                                   format_position(b) + ") holds " +
                                   std::to_string(layers.get(s, first_bad)) + ", re-derived " +
                                   std::to_string(rederive(b, rule, layers)));
        } else {
            res.files++;
        }
        if (opts.log) {
            char buf[200];
            std::snprintf(buf, sizeof buf, "%s: %llu %sentries %s (%.1fs)\n", name.c_str(),
                          (unsigned long long)count, sampled ? "sampled " : "",
                          first_bad < n ? "BAD" : "ok", sec);
            *opts.log << buf << std::flush;
        }
        if (good_twin) layers.hold(s, std::move(*good_twin));
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
