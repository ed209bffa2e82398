// Journal of a proof campaign: record encoding, checked reading, durable appends.
#include "campaign/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/le.h"
#include "core/notation.h"
#include "core/regular_file.h"
#include "db/format.h"

namespace kalah::campaign {
namespace {

std::string errno_text() { return std::strerror(errno); }

// Checks the 64 header bytes; returns the empty string or the problem.
std::string check_header(const unsigned char* h, CampaignParams& p, uint64_t& checksum) {
    if (std::memcmp(h, kJournalMagic, 8) != 0) return "not a campaign journal (bad magic)";
    if (get_u64(h + 56) != db::kh64(h, 56)) return "header checksum mismatch (damaged)";
    if (const uint32_t v = get_u32(h + 8); v != kJournalVersion)
        return "format version " + std::to_string(v) + " (this kalah reads version " +
               std::to_string(kJournalVersion) + ")";
    p.m = h[12];
    p.n = h[13];
    if (p.m < 1 || p.m > kMaxPits || p.n < 1 || 2 * p.m * p.n > kMaxSeeds)
        return "bad board in header (m " + std::to_string(p.m) + ", n " + std::to_string(p.n) + ")";
    if (h[14] > 1) return "bad rule " + std::to_string(h[14]) + " in header";
    p.rule = h[14] == 0 ? Rule::Standard : Rule::EmptyCapture;
    if (get_u32(h + 16) != kRecordBytes) return "bad record size in header";
    if (h[15] != 0) return "reserved header bytes not zero";
    const int plies = h[20];
    if (plies > kMaxLine) return "bad line length " + std::to_string(plies) + " in header";
    p.line.assign(h + 21, h + 21 + plies);
    for (int i = 21 + plies; i < 56; ++i)
        if (h[i] != 0) return "reserved header bytes not zero";
    if (const std::string bad = check_line(p); !bad.empty()) return "bad line in header: " + bad;
    checksum = get_u64(h + 56);
    return "";
}

}  // namespace

std::string journal_header(const CampaignParams& p) {
    unsigned char h[kJournalHeaderBytes] = {};
    std::memcpy(h, kJournalMagic, 8);
    put_u32(h + 8, kJournalVersion);
    h[12] = static_cast<unsigned char>(p.m);
    h[13] = static_cast<unsigned char>(p.n);
    h[14] = p.rule == Rule::Standard ? 0 : 1;
    put_u32(h + 16, kRecordBytes);
    if (p.line.size() > size_t(kMaxLine)) throw std::invalid_argument("campaign line too long");
    h[20] = static_cast<unsigned char>(p.line.size());
    std::copy(p.line.begin(), p.line.end(), h + 21);
    put_u64(h + 56, db::kh64(h, 56));
    return std::string(reinterpret_cast<const char*>(h), sizeof h);
}

std::string params_text(const CampaignParams& p) {
    const std::string line = line_text(p);
    return "Kalah(" + std::to_string(p.m) + "," + std::to_string(p.n) + "), rule " +
           rule_name(p.rule) + (line.empty() ? "" : ", after " + line);
}

void encode_record(const JobRecord& r, uint64_t header_checksum, uint64_t index,
                   unsigned char out[kRecordBytes]) {
    std::memset(out, 0, kRecordBytes);
    out[0] = static_cast<unsigned char>(r.kind);
    put_u16(out + 2, static_cast<uint16_t>(static_cast<int16_t>(r.beta)));
    put_u16(out + 4, static_cast<uint16_t>(static_cast<int16_t>(r.result)));
    put_u64(out + 8, static_cast<uint64_t>(r.key));
    put_u64(out + 16, static_cast<uint64_t>(r.key >> 64));
    put_u64(out + 24, r.nodes);
    uint64_t secs;
    std::memcpy(&secs, &r.seconds, 8);
    put_u64(out + 32, secs);
    put_u64(out + 40, db::kh64(out, 40, header_checksum + index));
}

std::string decode_record(const unsigned char in[kRecordBytes], uint64_t header_checksum,
                          uint64_t index, const CampaignParams& p, JobRecord& r) {
    if (get_u64(in + 40) != db::kh64(in, 40, header_checksum + index)) return "checksum mismatch";
    if (in[0] != 1 && in[0] != 2) return "bad kind " + std::to_string(in[0]);
    if (in[1] != 0 || in[6] != 0 || in[7] != 0) return "reserved bytes not zero";
    r.kind = static_cast<JobRecord::Kind>(in[0]);
    r.beta = static_cast<int16_t>(get_u16(in + 2));
    r.result = static_cast<int16_t>(get_u16(in + 4));
    r.key = (static_cast<Cells>(get_u64(in + 16)) << 64) | get_u64(in + 8);
    r.nodes = get_u64(in + 24);
    const uint64_t secs = get_u64(in + 32);
    std::memcpy(&r.seconds, &secs, 8);
    // The position: m pits a row in slots 0..m-1 and m+1..2m, every other byte zero.
    int s = 0;
    for (int i = 0; i < 16; ++i) {
        const int v = static_cast<int>(static_cast<uint64_t>(r.key >> (8 * i)) & 0xff);
        const bool pit = i < p.m || (i > p.m && i <= 2 * p.m);
        if (!pit && v != 0) return "bad position (a store or unused byte not zero)";
        s += v;
    }
    if (s > 2 * p.m * p.n) return "bad position (" + std::to_string(s) + " seeds)";
    if (r.beta < -s - 2 || r.beta > s + 2) return "beta out of range";
    if (r.kind == JobRecord::Kind::Bound && (r.result < -s || r.result > s))
        return "result out of range";
    if (r.kind == JobRecord::Kind::Split && r.result != 0) return "split with a result";
    if (!(r.seconds >= 0 && r.seconds < 1e9)) return "bad seconds";
    return "";
}

Board board_of_key(int m, Cells key) {
    int own[kMaxPits], opp[kMaxPits];
    for (int i = 0; i < m; ++i) {
        own[i] = static_cast<int>(static_cast<uint64_t>(key >> (8 * i)) & 0xff);
        opp[i] = static_cast<int>(static_cast<uint64_t>(key >> (8 * (m + 1 + i))) & 0xff);
    }
    return Board::from_rows(m, own, opp, 0, 0, Side::South);
}

JournalContents read_journal(const std::string& path) {
    JournalContents c;
    std::string why;
    const int fd = open_regular_file(path, O_RDONLY, &why);
    if (fd < 0) throw JournalError(path + ": " + why);
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw JournalError(path + ": cannot stat: " + errno_text());
    // Read is bounded by the size fstat gave (a journal growing meanwhile is read as it
    // was), and the records a chunk at a time, stopping at the first damaged one: a huge
    // sparse file is not read to its end.
    c.file_bytes = static_cast<uint64_t>(st.st_size);
    // Reads up to len bytes at offset; how many it got (fewer at the end of the file).
    auto read_at = [&](unsigned char* out, size_t len, uint64_t at) {
        size_t got = 0;
        while (got < len) {
            const ssize_t k = ::pread(fd, out + got, len - got, static_cast<off_t>(at + got));
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) throw JournalError(path + ": read failed: " + errno_text());
            if (k == 0) break;
            got += static_cast<size_t>(k);
        }
        return got;
    };
    unsigned char head[kJournalHeaderBytes];
    if (c.file_bytes < kJournalHeaderBytes ||
        read_at(head, kJournalHeaderBytes, 0) < kJournalHeaderBytes)
        throw JournalError(path + ": too short for a campaign journal (" +
                           std::to_string(c.file_bytes) + " bytes)");
    if (const std::string bad = check_header(head, c.params, c.header_checksum); !bad.empty())
        throw JournalError(path + ": " + bad);
    const uint64_t checksum = c.header_checksum;
    const uint64_t whole = (c.file_bytes - kJournalHeaderBytes) / kRecordBytes;
    constexpr uint64_t kChunk = 4096;  // records read at once
    std::vector<unsigned char> buf(kRecordBytes * std::min<uint64_t>(whole, kChunk));
    for (uint64_t i0 = 0; i0 < whole && c.damage.empty(); i0 += kChunk) {
        const uint64_t count = std::min<uint64_t>(kChunk, whole - i0);
        const size_t got =
            read_at(buf.data(), count * kRecordBytes, kJournalHeaderBytes + i0 * kRecordBytes);
        for (uint64_t i = i0; i < i0 + count; ++i) {
            if ((i - i0 + 1) * kRecordBytes > got) {
                c.damage = "shorter than when it was opened (" + std::to_string(whole) +
                           " records expected)";
                break;
            }
            JobRecord r;
            const std::string bad =
                decode_record(buf.data() + (i - i0) * kRecordBytes, checksum, i, c.params, r);
            if (!bad.empty()) {
                c.damage = "record " + std::to_string(i + 1) + " of " + std::to_string(whole) +
                           " is damaged (" + bad + ")";
                break;
            }
            c.records.push_back(r);
        }
    }
    c.good_bytes = kJournalHeaderBytes + c.records.size() * kRecordBytes;
    if (c.damage.empty() && c.good_bytes != c.file_bytes)
        c.damage =
            "torn record at the end (" + std::to_string(c.file_bytes - c.good_bytes) + " bytes)";
    return c;
}

Journal::Journal(Journal&& o) noexcept
    : fd_(o.fd_),
      path_(std::move(o.path_)),
      params_(o.params_),
      header_checksum_(o.header_checksum_),
      records_(std::move(o.records_)) {
    o.fd_ = -1;
}

Journal::~Journal() {
    if (fd_ >= 0) ::close(fd_);
}

Journal Journal::open(const std::string& dir, const CampaignParams& p, std::string& damage,
                      const std::vector<JobRecord>& seed) {
    damage.clear();
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw JournalError(dir + ": cannot create the campaign directory: " + ec.message());
    Journal j;
    j.path_ = (fs::path(dir) / kJournalName).string();
    if (!fs::exists(fs::symlink_status(j.path_, ec))) {
        // The header, then the seed's records encoded for this journal (their checksums
        // name this header and their new places), each checked as a read would.
        std::string h = journal_header(p);
        const uint64_t checksum = get_u64(reinterpret_cast<const unsigned char*>(h.data()) + 56);
        for (size_t i = 0; i < seed.size(); ++i) {
            unsigned char buf[kRecordBytes];
            encode_record(seed[i], checksum, i, buf);
            JobRecord check;
            if (const std::string why = decode_record(buf, checksum, i, p, check); !why.empty())
                throw JournalError("record " + std::to_string(i + 1) + " to import: " + why);
            h.append(reinterpret_cast<const char*>(buf), kRecordBytes);
        }
        try {
            db::write_file_durably(j.path_, {{h.data(), h.size()}});
        } catch (const std::exception& e) {
            throw JournalError(j.path_ + ": " + e.what());
        }
    }
    std::string why;
    j.fd_ = open_regular_file(j.path_, O_RDWR, &why);
    if (j.fd_ < 0) throw JournalError(j.path_ + ": " + why);
    // Held until the descriptor closes (also at a kill): one manager per directory.
    if (::flock(j.fd_, LOCK_EX | LOCK_NB) != 0)
        throw JournalError(j.path_ + ": locked: another campaign is running in " + dir);
    JournalContents c = read_journal(j.path_);
    if (!(c.params == p))
        throw JournalMismatch(j.path_ + " is a campaign of " + params_text(c.params) + ", not " +
                              params_text(p));
    if (!c.damage.empty()) {
        // Never trusted: cut off, durably, before anything is appended after it.
        if (::ftruncate(j.fd_, static_cast<off_t>(c.good_bytes)) != 0 || ::fsync(j.fd_) != 0)
            throw JournalError(j.path_ + ": cannot truncate the damaged tail: " + errno_text());
        damage = j.path_ + ": " + c.damage + "; truncated to " + std::to_string(c.records.size()) +
                 " good records";
    }
    if (::lseek(j.fd_, static_cast<off_t>(c.good_bytes), SEEK_SET) < 0)
        throw JournalError(j.path_ + ": seek failed: " + errno_text());
    j.params_ = c.params;
    j.records_ = std::move(c.records);
    j.header_checksum_ = c.header_checksum;
    return j;
}

void Journal::append(const JobRecord& r) {
    unsigned char buf[kRecordBytes];
    encode_record(r, header_checksum_, records_.size(), buf);
    JobRecord check;
    if (const std::string why =
            decode_record(buf, header_checksum_, records_.size(), params_, check);
        !why.empty())
        throw std::logic_error("campaign journal: refusing to write a bad record (" + why + ")");
    size_t done = 0;
    while (done < kRecordBytes) {
        const ssize_t k = ::write(fd_, buf + done, kRecordBytes - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) throw JournalError(path_ + ": write failed: " + errno_text());
        done += static_cast<size_t>(k);
    }
    if (::fdatasync(fd_) != 0) throw JournalError(path_ + ": fsync failed: " + errno_text());
    records_.push_back(r);
}

}  // namespace kalah::campaign
