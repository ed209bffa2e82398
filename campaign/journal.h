// The journal of a proof campaign: one checksummed record per finished job, append-only.
#pragma once

// A campaign directory D holds `journal.kcj`. The manager's whole state is rebuilt from it
// (campaign/tree.h): a record is either a proven bound on a position or the decision to
// split a position into its moves, and nothing else is kept between runs (the logs beside
// it, progress.csv and trace.csv (campaign/trace.h), are never read back by a run).
//
// File layout (all integers little-endian):
//
//   header, 64 bytes
//   offset  size  field
//   0       8     magic "KALAHCJN"
//   8       4     format version (kJournalVersion)
//   12      1     m, pits per side (1..6)
//   13      1     n, seeds per pit at the start (2 m n <= kMaxSeeds)
//   14      1     rule: 0 = standard, 1 = empty-capture
//   15      1     reserved, 0
//   16      4     record size in bytes (kRecordBytes)
//   20      1     L, the plies of the campaign's line (0..kMaxLine; 0: rooted at the start)
//   21      L     the line: each ply's pit, 0-based in the mover's own numbering, played
//                 from the start (campaign/line.h); the campaign is rooted after it
//   21+L    35-L  reserved, 0
//   56      8     header checksum = kh64(bytes 0..55, seed 0) (db/format.h)
//
//   then records, kRecordBytes each, in the order the jobs finished
//   offset  size  field
//   0       1     kind: 1 = bound (the job test(position, beta) returned `result`),
//                 2 = split (the job exceeded its node budget; the position is expanded)
//   1       1     reserved, 0
//   2       2     beta (int16): the job's test was "v >= beta?"
//   4       2     result (int16): kind 1: v >= result if result >= beta, else v <= result;
//                 kind 2: 0
//   6       2     reserved, 0
//   8       16    the position: Board::pits_key() (mover's view, stores zero; 128 bits)
//   24      8     nodes the job searched
//   32      8     seconds the job took (IEEE double)
//   40      8     checksum = kh64(bytes 0..39, seed header checksum + record index), so a
//                 record copied to another place or another journal does not check out
//
// Reading checks everything: the header field by field, each record's checksum, kind,
// reserved bytes, position (pits of the campaign's m, stores zero, at most 2 m n seeds)
// and its beta and result against the position's seed count. The first record that fails
// (or a torn record at the end) ends the good part; what follows is never used.
//
// Version history:
//   1 first format; the line (bytes 20..52) was added later in bytes that were reserved:
//     a journal rooted at the start is unchanged, and a reader from before refuses one
//     with a line (reserved bytes not zero).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "campaign/line.h"
#include "core/board.h"

namespace kalah::campaign {

constexpr char kJournalMagic[8] = {'K', 'A', 'L', 'A', 'H', 'C', 'J', 'N'};
constexpr uint32_t kJournalVersion = 1;
constexpr size_t kJournalHeaderBytes = 64;
constexpr size_t kRecordBytes = 48;
constexpr const char* kJournalName = "journal.kcj";

// A journal that cannot be used (bad header, wrong campaign, unreadable); what() is one line
// naming the file and the problem.
struct JournalError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The campaign parameters asked for are not the ones the directory records.
struct JournalMismatch : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct CampaignParams {
    CampaignParams() = default;
    CampaignParams(int pits, int seeds, Rule r, std::vector<uint8_t> plies = {})
        : m(pits), n(seeds), rule(r), line(std::move(plies)) {}
    int m = 0;
    int n = 0;
    Rule rule = Rule::Standard;
    std::vector<uint8_t> line;  // the root: the position after these plies (campaign/line.h)
    bool operator==(const CampaignParams&) const = default;
};
// "Kalah(6,6), rule standard", then ", after A1+ A3" for a line.
std::string params_text(const CampaignParams& p);

struct JobRecord {
    enum class Kind : uint8_t { Bound = 1, Split = 2 };
    Kind kind = Kind::Bound;
    int beta = 0;
    int result = 0;
    Cells key = 0;  // Board::pits_key() of the position
    uint64_t nodes = 0;
    double seconds = 0;
};

// Encoding and decoding of one record (index = its place in the journal, from 0). decode
// returns an empty string when the bytes are a valid record of the campaign, else what is
// wrong with them.
void encode_record(const JobRecord& r, uint64_t header_checksum, uint64_t index,
                   unsigned char out[kRecordBytes]);
std::string decode_record(const unsigned char in[kRecordBytes], uint64_t header_checksum,
                          uint64_t index, const CampaignParams& p, JobRecord& r);

// The position a record's key names (South to move, stores zero).
Board board_of_key(int m, Cells key);

// What reading a journal found.
struct JournalContents {
    CampaignParams params;
    uint64_t header_checksum = 0;
    std::vector<JobRecord> records;  // the good records, in order
    uint64_t good_bytes = 0;         // header + good records
    uint64_t file_bytes = 0;
    std::string damage;  // empty, or one line: what ended the good part
};

// Reads and checks path. Throws JournalError for a file that is not a journal (missing,
// short or bad header). A damaged tail is not an error: see JournalContents::damage.
JournalContents read_journal(const std::string& path);

// The open journal of a running campaign: exclusive (flock) against a second manager on
// the same directory.
class Journal {
  public:
    // Opens dir/journal.kcj, or creates it (and dir) for p when there is none, holding
    // `seed`'s records from the start (one durable write: another campaign's records,
    // which are facts whatever the root; ignored when the journal exists). Throws
    // JournalMismatch when the journal records other parameters, JournalError when it is
    // unusable or locked by another running campaign. A damaged tail is cut off (truncate +
    // fsync) and described in `damage`.
    static Journal open(const std::string& dir, const CampaignParams& p, std::string& damage,
                        const std::vector<JobRecord>& seed = {});
    Journal(Journal&&) noexcept;
    ~Journal();
    Journal(const Journal&) = delete;
    Journal& operator=(const Journal&) = delete;
    Journal& operator=(Journal&&) = delete;

    const std::vector<JobRecord>& records() const { return records_; }
    const CampaignParams& params() const { return params_; }
    // Appends r and fsyncs before returning (the job is then never run again). Throws
    // JournalError when the write fails.
    void append(const JobRecord& r);

  private:
    Journal() = default;
    int fd_ = -1;
    std::string path_;
    CampaignParams params_;
    uint64_t header_checksum_ = 0;
    std::vector<JobRecord> records_;
};

// The 64 header bytes of a journal of p.
std::string journal_header(const CampaignParams& p);

}  // namespace kalah::campaign
