// libFuzzer target: the packed-twin reader of db/packed.h (PackedLayer::read_file) on a
// damaged or crafted file. The input is the file's bytes; it is read as layer s of
// (m, rule) taken from header bytes 12..14 when they are in range (m = 1..4, s <= 12; else
// m = 2, standard, s = 0), bound to the source checksum in its bytes 40..47, so a valid
// file of the corpus reads and a mutated one is checked field by field. Each input is
// tried as it is and with its piece table and header checksum recomputed (as a crafted
// file would have them), so that mutated headers and data get past the checksums to the
// checks behind them. A layer that reads (copied or mapped) must give every entry inside
// [-s, s] through get() and unpack(). db::FormatError is the only acceptable failure.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "db/format.h"
#include "db/packed.h"
#include "fuzz/bytes.h"
#include "fuzz/packed_bytes.h"

namespace {

using namespace kalah;
namespace fs = std::filesystem;

using fuzz_bytes::get_u64;
using fuzz_bytes::with_checksums;

void check(const std::vector<uint8_t>& bytes, int m, Rule rule, int s) {
    const fs::path file =
        fs::temp_directory_path() / ("kalah_fuzz_packed_" + std::to_string(::getpid()) + ".kpk");
    fuzz_bytes::write_file(file, bytes);
    const uint64_t source = bytes.size() >= 48 ? get_u64(&bytes[40]) : 0;
    for (const auto load : {db::PackedLayer::Load::Copy, db::PackedLayer::Load::Mapped}) {
        try {
            const db::PackedLayer p =
                db::PackedLayer::read_file(file.string(), m, rule, s, source, load);
            std::vector<int8_t> all(p.size());
            p.unpack(all.data());
            for (uint64_t r = 0; r < p.size(); ++r) {
                const int v = p.get(r);
                if (v < -s || v > s) __builtin_trap();  // a value outside the layer's range
            }
        } catch (const db::FormatError&) {
        }
    }
    fs::remove(file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    int m = 2, s = 0;
    Rule rule = Rule::Standard;
    if (size >= 15 && data[12] >= 1 && data[12] <= 4 && data[13] <= 1 && data[14] <= 12) {
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
