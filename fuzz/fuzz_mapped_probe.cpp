// libFuzzer target: the mapped twin probe path (db::Database with Layout::Mapped, its
// SIGBUS guard in core/huge_pages.cpp). A database of Kalah(2) standard, layers 0..kTop
// with their twins, is built once in a temporary directory. Each input replaces the twin
// of one layer: byte 0 chooses the layer (mod kTop + 1), byte 1 how much of the twin is
// cut off after it is mapped (0: nothing, else it is truncated to (byte1 - 1) / 256 of
// its size), the rest is the twin's bytes. The twin is tried as it is and bound to its .kdb
// with its piece table and header checksum recomputed (a crafted twin), so mutated data
// gets past open to the probes. Each opened database probes every position of the layer
// (probe and probe_many), before and after the cut. The documented outcomes only: open
// returns no database (with a reason), or a probe throws db::FormatError, or it gives a
// value inside [-s, s]. Anything else (a crash, SIGBUS, another exception) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "db/builder.h"
#include "db/database.h"
#include "db/format.h"
#include "db/index.h"
#include "db/packed.h"
#include "fuzz/bytes.h"
#include "fuzz/packed_bytes.h"

namespace {

using namespace kalah;
namespace fs = std::filesystem;

constexpr int kPits = 2, kTop = 8;
constexpr Rule kRule = Rule::Standard;

fs::path g_dir;
std::vector<std::vector<uint8_t>> g_twins;  // the honest twin of each layer
std::vector<uint64_t> g_sources;            // each .kdb's file checksum

void remove_dir() { fs::remove_all(g_dir); }

std::vector<uint8_t> read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path twin_path(int s) { return g_dir / db::PackedLayer::file_name(kPits, kRule, s); }

void build_once() {
    if (!g_dir.empty()) return;
    g_dir = fs::temp_directory_path() / ("kalah_fuzz_mapped_" + std::to_string(::getpid()));
    fs::remove_all(g_dir);
    fs::create_directories(g_dir);
    std::atexit(remove_dir);
    db::BuildOptions o;
    o.dir = g_dir.string();
    o.m = kPits;
    o.rule = kRule;
    o.max_seeds = kTop;
    o.threads = 1;
    o.memory_gb = 0.25;
    db::build_database(o);
    for (int s = 0; s <= kTop; ++s) {
        g_twins.push_back(read_all(twin_path(s)));
        const std::string kdb = (g_dir / db::layer_file_name(kPits, kRule, s)).string();
        g_sources.push_back(db::LayerFile::open(kdb, kPits, kRule, s)->header().file_checksum);
    }
}

// Every position of layer s through probe() and probe_many(): a value in [-s, s] or
// FormatError.
void probe_layer(const db::Database& d, int s) {
    const int n_pits = 2 * kPits;
    uint8_t c[2 * kPits];
    for (uint64_t r = 0; r < db::layer_size(n_pits, s); ++r) {
        db::unrank(r, s, n_pits, c);
        const Board b = db::board_from_configuration(c, kPits);
        try {
            const int v = d.probe(b);
            if (v < -s || v > s) __builtin_trap();
        } catch (const db::FormatError&) {
        }
        try {
            const Board* bs[1] = {&b};
            int out[1] = {0};
            d.probe_many(bs, 1, out);
            if (out[0] < -s || out[0] > s) __builtin_trap();
        } catch (const db::FormatError&) {
        }
    }
}

void check(const std::vector<uint8_t>& twin, int s, unsigned cut) {
    fuzz_bytes::write_file(twin_path(s), twin);
    {
        std::string why, damage;
        const std::unique_ptr<db::Database> d =
            db::Database::open(g_dir.string(), kPits, kRule, size_t(1) << 26, &why, &damage,
                               db::Database::Layout::Mapped);
        if (d && d->max_seeds() >= s) {
            probe_layer(*d, s);
            if (cut != 0) {
                const auto size = static_cast<off_t>(twin.size() * (cut - 1) / 256);
                if (::truncate(twin_path(s).c_str(), size) != 0) __builtin_trap();
                probe_layer(*d, s);
            }
        }
    }
    fuzz_bytes::write_file(twin_path(s), g_twins[static_cast<size_t>(s)]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    build_once();
    if (size < 2) return 0;
    const int s = data[0] % (kTop + 1);
    const unsigned cut = data[1];
    const std::vector<uint8_t> bytes(data + 2, data + size);
    check(bytes, s, cut);
    std::vector<uint8_t> bound = bytes;
    if (bound.size() >= 48) fuzz_bytes::put_u64(&bound[40], g_sources[static_cast<size_t>(s)]);
    bound = fuzz_bytes::with_checksums(bound);
    if (bound != bytes) check(bound, s, cut);
    return 0;
}
