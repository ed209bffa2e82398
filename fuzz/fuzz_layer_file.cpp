// libFuzzer target: the layer-file reader of db/format.h and Database::open and probe of
// db/database.h on a damaged or crafted layer file. The input is the file's bytes; it is
// opened as layer s of (m, rule), taken from header bytes 12..14 when they are in range
// (m = 1..3, s <= kMaxLayer; else m = 2, standard, s = 0), so a valid file of the corpus
// opens and a mutated one is checked field by field. Each input is tried twice: as it is,
// and with its checksums recomputed (as a crafted file would have them), so that mutated
// block indexes and blocks get past the checksums to the checks behind them.
// db::FormatError is the only
// acceptable failure; a crash, a sanitizer report, a hang or another exception is a bug.
#include <omp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/notation.h"
#include "db/builder.h"
#include "db/database.h"
#include "db/format.h"
#include "fuzz/bytes.h"

namespace {

using namespace kalah;
namespace fs = std::filesystem;

constexpr int kMaxLayer = 8;  // C(13, 5) = 1287 entries at m = 3: two blocks of 1 Ki

const fs::path& root() {
    static const fs::path dir =
        fs::temp_directory_path() / ("kalah_fuzz_layer_" + std::to_string(::getpid()));
    return dir;
}

// A directory holding valid layers 0..s-1 of (m, rule), written by the builder the first
// time it is asked for.
fs::path lower_layers(int m, Rule rule, int s) {
    static std::map<std::tuple<int, Rule, int>, fs::path> dirs;
    auto it = dirs.find({m, rule, s});
    if (it != dirs.end()) return it->second;
    const fs::path dir =
        root() / ("m" + std::to_string(m) + "-" + rule_name(rule) + "-s" + std::to_string(s));
    fs::create_directories(dir);
    db::LayerSet lower;
    for (int k = 0; k < s; ++k) {
        lower.add(db::build_layer(m, rule, k, lower));
        db::write_layer((dir / db::layer_file_name(m, rule, k)).string(), m, rule, k,
                        lower.raw(k).data(), lower.raw(k).size(), db::kMinBlockSize, 1);
    }
    return dirs[{m, rule, s}] = dir;
}

// A few positions of layer t (t seeds in the pits), spread by a small generator.
std::vector<Board> positions(int m, int t, uint64_t seed) {
    std::vector<Board> out;
    for (int i = 0; i < 16; ++i) {
        int rows[2][kMaxPits] = {};
        for (int k = 0; k < t; ++k) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            const int pit = static_cast<int>((seed >> 33) % (2 * m));
            ++rows[pit / m][pit % m];
        }
        out.push_back(
            Board::from_rows(m, rows[0], rows[1], 0, 0, i % 2 ? Side::North : Side::South));
    }
    return out;
}

void read_blocks(const db::LayerFile& f) {
    for (uint32_t b = 0; b < f.header().block_count; ++b) {
        std::vector<int8_t> out(f.block_entries(b));
        try {
            f.read_block(b, out.data());
        } catch (const db::FormatError&) {
        }
    }
    try {
        (void)f.read_all();
    } catch (const db::FormatError&) {
    }
}

// Opens the database of dir with `memory` bytes (0: every layer through the block cache)
// and probes positions of its top layer and the one below.
void probe_database(const fs::path& dir, int m, Rule rule, size_t memory, uint64_t seed) {
    std::string why;
    const auto database = db::Database::open(dir.string(), m, rule, memory, &why);
    if (!database) return;
    for (int t = std::max(0, database->max_seeds() - 1); t <= database->max_seeds(); ++t) {
        const std::vector<Board> boards = positions(m, t, seed);
        for (const Board& b : boards) {
            try {
                (void)database->probe(b);
            } catch (const db::FormatError&) {
            }
        }
        std::vector<const Board*> ptrs;
        for (const Board& b : boards) ptrs.push_back(&b);
        std::vector<int> values(ptrs.size());
        try {
            database->probe_many(ptrs.data(), static_cast<int>(ptrs.size()), values.data());
        } catch (const db::FormatError&) {
        }
    }
}

using fuzz_bytes::get_u64;
using fuzz_bytes::put_u64;

// The file with every checksum db/format.h defines made to match its bytes: the block
// checksums of the index records whose block lies inside the file, then the header and
// the file checksum.
std::vector<uint8_t> with_checksums(std::vector<uint8_t> f) {
    if (f.size() < db::kHeaderBytes) return f;
    const uint64_t blocks = f[28] | f[29] << 8 | f[30] << 16 | uint64_t{f[31]} << 24;
    const uint64_t index_bytes =
        std::min<uint64_t>(blocks * db::kIndexRecordBytes, f.size() - db::kHeaderBytes);
    uint8_t* index = f.data() + db::kHeaderBytes;
    for (uint64_t r = 0; r + db::kIndexRecordBytes <= index_bytes; r += db::kIndexRecordBytes) {
        const uint64_t offset = get_u64(index + r), size = get_u64(index + r + 8);
        if (offset <= f.size() && size <= f.size() - offset)
            put_u64(index + r + 16, db::kh64(f.data() + offset, size));
    }
    const uint64_t head = db::kh64(f.data(), 40);
    put_u64(f.data() + 40, db::kh64(index, index_bytes, head));
    put_u64(f.data() + 48, db::kh64(f.data() + 56, f.size() - 56, head));
    return f;
}

// Opens `bytes` as layer s of (m, rule), reads its blocks, and opens and probes the
// database of its directory (layers 0..s-1 valid).
void check(const std::vector<uint8_t>& bytes, int m, Rule rule, int s) {
    const fs::path dir = lower_layers(m, rule, s);
    const fs::path file = dir / db::layer_file_name(m, rule, s);
    fuzz_bytes::write_file(file, bytes);
    try {
        const auto f = db::LayerFile::open(file.string(), m, rule, s);
        read_blocks(*f);
    } catch (const db::FormatError&) {
    }
    const uint64_t seed = db::kh64(bytes.data(), bytes.size());
    probe_database(dir, m, rule, size_t(1) << 30, seed);
    probe_database(dir, m, rule, 0, seed);
    fs::remove(file);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    omp_set_num_threads(1);  // one input at a time, reproducibly
    // libFuzzer ends with _Exit (no atexit handlers, no destructors), so every run leaves
    // its directory behind: remove those of runs whose process is gone.
    const std::string prefix = "kalah_fuzz_layer_";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        const std::string pid = name.substr(prefix.size());
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH)
            fs::remove_all(e.path(), ec);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    int m = 2, s = 0;
    Rule rule = Rule::Standard;
    if (size >= 15 && data[12] >= 1 && data[12] <= 3 && data[13] <= 1 && data[14] <= kMaxLayer) {
        m = data[12];
        rule = data[13] == 0 ? Rule::Standard : Rule::EmptyCapture;
        s = data[14];
    }
    const std::vector<uint8_t> bytes(data, data + size);
    check(bytes, m, rule, s);
    const std::vector<uint8_t> fixed = with_checksums(bytes);
    if (fixed != bytes) check(fixed, m, rule, s);
    return 0;
}
