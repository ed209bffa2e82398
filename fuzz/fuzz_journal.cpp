// libFuzzer target: the campaign journal's reader (campaign/journal.h) and the replay of its
// records into the manager's tree (campaign/tree.h). The input is the journal's bytes. Each
// input is tried twice: as it is, and with its header and record checksums recomputed (as a
// crafted file would have them), so that mutated fields get past the checksums to the
// checks behind them. campaign::JournalError (an unusable file) and ContradictionError
// (records that cannot all be true) are the only acceptable failures; a damaged tail must
// be reported, never used. A crash, a sanitizer report, a hang or another exception is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "campaign/journal.h"
#include "campaign/tree.h"
#include "db/format.h"
#include "fuzz/bytes.h"

namespace {

using namespace kalah;
using namespace kalah::campaign;
namespace fs = std::filesystem;

const fs::path& file() {
    static const fs::path f =
        fs::temp_directory_path() / ("kalah_fuzz_journal_" + std::to_string(::getpid()) + ".kcj");
    return f;
}

void check(const std::vector<uint8_t>& bytes) {
    fuzz_bytes::write_file(file(), bytes);
    JournalContents c;
    try {
        c = read_journal(file().string());
    } catch (const JournalError&) {
        return;
    }
    if (c.good_bytes > c.file_bytes || (c.damage.empty() && c.good_bytes != c.file_bytes))
        __builtin_trap();
    // Small boards only: the tree of a big one grows with every split record.
    if (c.params.m > 4 || c.params.n > 4) return;
    try {
        ProofTree tree(c.params, nullptr);
        for (const JobRecord& r : c.records) tree.apply(r);
        if (tree.root_lo() > tree.root_hi()) __builtin_trap();
        for (int beta = -2; beta <= 2; ++beta) (void)tree.select(beta);
    } catch (const ContradictionError&) {
    }
}

// The bytes with the header checksum and every whole record's checksum made valid.
std::vector<uint8_t> with_checksums(std::vector<uint8_t> b) {
    if (b.size() < kJournalHeaderBytes) return b;
    const uint64_t h = db::kh64(b.data(), 56);
    fuzz_bytes::put_u64(b.data() + 56, h);
    for (size_t at = kJournalHeaderBytes, i = 0; at + kRecordBytes <= b.size();
         at += kRecordBytes, ++i)
        fuzz_bytes::put_u64(b.data() + at + 40, db::kh64(b.data() + at, 40, h + i));
    return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);
    check(bytes);
    const std::vector<uint8_t> fixed = with_checksums(bytes);
    if (fixed != bytes) check(fixed);
    return 0;
}
