// Layer file writer and reader, kh64 checksums (format in format.h).
#include "db/format.h"

#include <fcntl.h>
#include <omp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/le.h"
#include "core/notation.h"
#include "core/regular_file.h"
#include "db/index.h"

namespace kalah::db {
namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ull;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

std::string base_name(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

// Reads exactly len bytes at offset, false on a short read or error.
bool pread_all(int fd, void* buf, size_t len, uint64_t offset) {
    auto* p = static_cast<uint8_t*>(buf);
    while (len > 0) {
        ssize_t got = ::pread(fd, p, len, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        p += got;
        len -= static_cast<size_t>(got);
        offset += static_cast<uint64_t>(got);
    }
    return true;
}

// Writes exactly len bytes, false (errno set) on an error.
bool write_all(int fd, const void* buf, size_t len) {
    const auto* p = static_cast<const uint8_t*>(buf);
    while (len > 0) {
        ssize_t put = ::write(fd, p, len);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) {
            if (put == 0) errno = EIO;
            return false;
        }
        p += put;
        len -= static_cast<size_t>(put);
    }
    return true;
}

uint64_t header_checksum(const uint8_t* header, const uint8_t* index, size_t index_bytes) {
    return kh64(index, index_bytes, kh64(header, 40));
}

}  // namespace

namespace {

// kh64's step for one whole 8-byte word.
inline uint64_t kh64_word(uint64_t h, uint64_t w) {
    h ^= rotl(w * kP2, 31) * kP1;
    return rotl(h, 27) * kP1 + kP4;
}

// kh64's end: the n < 8 bytes after the last whole word, then the finaliser.
uint64_t kh64_end(uint64_t h, const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i] * kP5;
        h = rotl(h, 11) * kP1;
    }
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
}

}  // namespace

uint64_t kh64(const void* data, size_t len, uint64_t seed) {
    const auto* p = static_cast<const uint8_t*>(data);
    uint64_t h = seed ^ (static_cast<uint64_t>(len) * kP1);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);  // little-endian machines only (checked in format.cpp)
        h = kh64_word(h, w);
    }
    return kh64_end(h, p + i, len - i);
}

uint64_t kh64w(const void* data, size_t len, uint64_t seed) {
    const auto* p = static_cast<const uint8_t*>(data);
    uint64_t v[8];
    for (int k = 0; k < 8; ++k) v[k] = seed + static_cast<uint64_t>(k) * kP3;
    size_t i = 0;
    for (; i + 64 <= len; i += 64)
        for (int k = 0; k < 8; ++k) {
            uint64_t w;
            std::memcpy(&w, p + i + 8 * k, 8);
            v[k] = rotl((v[k] ^ w) * kP1, 31);
        }
    const uint64_t h = kh64(v, sizeof v, kh64(nullptr, 0, seed ^ static_cast<uint64_t>(len)));
    return kh64(p + i, len - i, h);
}

Kh64Stream::Kh64Stream(uint64_t len, uint64_t seed) : h_(seed ^ (len * kP1)), len_(len) {}

void Kh64Stream::word(uint64_t w) { h_ = kh64_word(h_, w); }

void Kh64Stream::update(const void* data, size_t len) {
    const auto* p = static_cast<const uint8_t*>(data);
    seen_ += len;
    while (len > 0 && held_count_ > 0) {  // complete the word begun by an earlier piece
        held_[held_count_++] = *p++;
        --len;
        if (held_count_ == 8) {
            uint64_t w;
            std::memcpy(&w, held_, 8);
            word(w);
            held_count_ = 0;
        }
    }
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        word(w);
    }
    for (; i < len; ++i) held_[held_count_++] = p[i];
}

uint64_t Kh64Stream::finish() {
    if (seen_ != len_)
        throw std::logic_error("kh64 stream given " + std::to_string(seen_) + " bytes of " +
                               std::to_string(len_));
    return kh64_end(h_, held_, static_cast<size_t>(held_count_));
}

static_assert(std::endian::native == std::endian::little, "layer files assume little-endian");

std::string layer_file_name(int m, Rule rule, int s) {
    return "kalah-m" + std::to_string(m) + "-" + rule_name(rule) + "-s" + std::to_string(s) +
           ".kdb";
}

std::string temp_layer_path(const std::string& path, long pid) {
    return path + "." + std::to_string(pid) + ".tmp";
}

std::vector<std::string> remove_stale_temporaries(const std::string& dir, int m, Rule rule) {
    namespace fs = std::filesystem;
    const std::string prefix = "kalah-m" + std::to_string(m) + "-" + rule_name(rule) + "-s";
    std::vector<std::string> removed;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        // <prefix><s>.kdb.<pid>.tmp (or .kpk, a packed twin; or -g<a>.kgr, a group file of
        // a top layer solved in groups: db/groups.h), s, a and pid in decimal digits.
        if (name.rfind(prefix, 0) != 0 || name.size() < prefix.size() + 10 ||
            name.compare(name.size() - 4, 4, ".tmp") != 0)
            continue;
        const std::string stem = name.substr(0, name.size() - 4);
        const size_t dot = stem.rfind('.');
        if (dot == std::string::npos || dot < prefix.size() + 5) continue;
        const std::string pid_text = stem.substr(dot + 1);
        const std::string layer = stem.substr(0, dot);  // <prefix><s>.kdb
        const bool group = layer.compare(layer.size() - 4, 4, ".kgr") == 0;
        if (layer.compare(layer.size() - 4, 4, ".kdb") != 0 &&
            layer.compare(layer.size() - 4, 4, ".kpk") != 0 && !group)
            continue;
        std::string s_text = layer.substr(prefix.size(), layer.size() - prefix.size() - 4);
        auto digits = [](const std::string& t) {
            return !t.empty() && t.size() <= 9 &&
                   t.find_first_not_of("0123456789") == std::string::npos;
        };
        if (group) {
            const size_t g = s_text.find("-g");
            if (g == std::string::npos || !digits(s_text.substr(g + 2))) continue;
            s_text.resize(g);
        }
        if (!digits(pid_text) || !digits(s_text)) continue;
        const long pid = std::stol(pid_text);
        // kill(pid, 0) fails with ESRCH when no such process exists: its writer is gone.
        const bool mine = pid == static_cast<long>(::getpid());
        if (!mine && (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH))
            continue;
        if (fs::remove(it->path(), ec)) removed.push_back(name);
        ec.clear();
    }
    return removed;
}

namespace {

// Compresses len values into out (one zstd frame). No exception leaves it: it runs inside
// parallel loops, where one would terminate the process; a failure is written to *failure.
void compress_block(const int8_t* values, uint64_t len, int level, std::string& out,
                    std::string* failure) {
    try {
        out.resize(ZSTD_compressBound(len));
        size_t got = ZSTD_compress(out.data(), out.size(), values, len, level);
        if (ZSTD_isError(got)) {
#pragma omp critical
            *failure = ZSTD_getErrorName(got);
            got = 0;
        }
        out.resize(got);
    } catch (const std::bad_alloc&) {
#pragma omp critical
        *failure = "out of memory";
    }
}

// The header's first 40 bytes (the checksums after them are filled in by the caller).
std::vector<uint8_t> layer_head(int m, Rule rule, int s, uint64_t n, uint32_t block_size,
                                uint32_t block_count, int level) {
    std::vector<uint8_t> head(kHeaderBytes, 0);
    std::memcpy(head.data(), kMagic, 8);
    put_u32(&head[8], kFormatVersion);
    head[12] = static_cast<uint8_t>(m);
    head[13] = static_cast<uint8_t>(rule == Rule::Standard ? 0 : 1);
    head[14] = static_cast<uint8_t>(s);
    head[15] = 0;
    put_u64(&head[16], n);
    put_u32(&head[24], block_size);
    put_u32(&head[28], block_count);
    put_u32(&head[32], static_cast<uint32_t>(level));
    return head;
}

std::vector<uint8_t> index_bytes(const std::vector<BlockRef>& blocks) {
    std::vector<uint8_t> index(kIndexRecordBytes * blocks.size());
    for (size_t b = 0; b < blocks.size(); ++b) {
        uint8_t* rec = &index[kIndexRecordBytes * b];
        put_u64(rec, blocks[b].offset);
        put_u64(rec + 8, blocks[b].size);
        put_u64(rec + 16, blocks[b].checksum);
    }
    return index;
}

uint32_t block_count_of(uint64_t n, uint32_t block_size) {
    return static_cast<uint32_t>((n + block_size - 1) / block_size);
}

// fsync and close fd (the temp file tmp), rename it to path and make the rename durable.
// On a failure the temp file is removed and std::runtime_error thrown.
void commit_durably(int fd, const std::string& tmp, const std::string& path) {
    auto give_up = [&](const std::string& what, int err) {
        ::unlink(tmp.c_str());
        return std::runtime_error(what + " " + tmp + ": " + std::strerror(err));
    };
    if (::fsync(fd) != 0) {
        const int err = errno;
        ::close(fd);
        throw give_up("fsync failed:", err);
    }
    if (::close(fd) != 0) throw give_up("close failed:", errno);
    if (::rename(tmp.c_str(), path.c_str()) != 0) throw give_up("cannot rename", errno);
    // Make the rename itself durable; best effort (some file systems refuse a directory fsync).
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = std::filesystem::path(".");
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

}  // namespace

void write_layer(const std::string& path, int m, Rule rule, int s, const int8_t* values, uint64_t n,
                 uint32_t block_size, int level) {
    const uint32_t block_count = block_count_of(n, block_size);
    std::vector<std::string> frames(block_count);
    std::string failure;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = 0; b < static_cast<int64_t>(block_count); ++b) {
        const uint64_t begin = static_cast<uint64_t>(b) * block_size;
        compress_block(values + begin, std::min<uint64_t>(block_size, n - begin), level, frames[b],
                       &failure);
    }
    if (!failure.empty()) throw std::runtime_error("zstd compression failed: " + failure);

    std::vector<uint8_t> head = layer_head(m, rule, s, n, block_size, block_count, level);
    std::vector<BlockRef> blocks(block_count);
    uint64_t offset = kHeaderBytes + kIndexRecordBytes * uint64_t(block_count);
    for (uint32_t b = 0; b < block_count; ++b) {
        blocks[b] = {offset, frames[b].size(), kh64(frames[b].data(), frames[b].size())};
        offset += frames[b].size();
    }
    const std::vector<uint8_t> index = index_bytes(blocks);
    put_u64(&head[40], header_checksum(head.data(), index.data(), index.size()));
    // The file checksum over bytes 56..end, the file assembled in memory (LayerWriter
    // writes the same bytes without holding the layer).
    std::string body;
    body.reserve(offset - 56);
    body.append(reinterpret_cast<const char*>(&head[56]), 8);
    body.append(reinterpret_cast<const char*>(index.data()), index.size());
    for (auto& f : frames) {
        body += f;
        std::string().swap(f);
    }
    put_u64(&head[48], kh64(body.data(), body.size(), kh64(head.data(), 40)));

    write_file_durably(path, {{head.data(), 56}, {body.data(), body.size()}});
}

LayerWriter::LayerWriter(const std::string& path, int m, Rule rule, int s, uint64_t n,
                         uint32_t block_size, int level)
    : path_(path),
      tmp_(temp_layer_path(path, ::getpid())),
      m_(m),
      s_(s),
      level_(level),
      rule_(rule),
      n_(n),
      block_size_(block_size),
      block_count_(block_count_of(n, block_size)) {
    // A batch of blocks a thread or more, at least 64 MiB of values (fewer for small layers).
    const uint64_t want = std::max<uint64_t>(4 * static_cast<uint64_t>(omp_get_max_threads()),
                                             (uint64_t(64) << 20) / block_size);
    batch_blocks_ = static_cast<uint32_t>(std::min<uint64_t>(want, std::max(block_count_, 1u)));
    fd_ = ::open(tmp_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot write " + tmp_ + ": " + std::strerror(errno));
    // The frames are written in order after the room left for the header and the index.
    offset_ = kHeaderBytes + kIndexRecordBytes * uint64_t(block_count_);
    if (::lseek(fd_, static_cast<off_t>(offset_), SEEK_SET) < 0)
        throw std::runtime_error("cannot seek in " + tmp_ + ": " + std::strerror(errno));
    index_.reserve(block_count_);
}

LayerWriter::~LayerWriter() {
    if (fd_ >= 0) {
        ::close(fd_);
        ::unlink(tmp_.c_str());
    }
}

void LayerWriter::append(const int8_t* values, uint64_t count) {
    if (count > n_ - given_)
        throw std::runtime_error("layer writer given more than " + std::to_string(n_) + " values");
    given_ += count;
    const uint64_t batch = uint64_t(batch_blocks_) * block_size_;
    while (count > 0) {
        const uint64_t take = std::min<uint64_t>(count, batch - pending_.size());
        pending_.insert(pending_.end(), values, values + take);
        values += take;
        count -= take;
        if (pending_.size() == batch) flush_batch();
    }
}

void LayerWriter::flush_batch() {
    const uint64_t len = pending_.size();
    const auto blocks = static_cast<int64_t>((len + block_size_ - 1) / block_size_);
    std::vector<std::string> frames(static_cast<size_t>(blocks));
    std::string failure;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = 0; b < blocks; ++b) {
        const uint64_t begin = static_cast<uint64_t>(b) * block_size_;
        compress_block(pending_.data() + begin, std::min<uint64_t>(block_size_, len - begin),
                       level_, frames[b], &failure);
    }
    if (!failure.empty()) throw std::runtime_error("zstd compression failed: " + failure);
    for (const std::string& f : frames) {
        if (!write_all(fd_, f.data(), f.size()))
            throw std::runtime_error("write failed: " + tmp_ + ": " + std::strerror(errno));
        index_.push_back({offset_, f.size(), kh64(f.data(), f.size())});
        offset_ += f.size();
    }
    pending_.clear();
}

uint64_t LayerWriter::finish() {
    if (given_ != n_)
        throw std::runtime_error("layer writer given " + std::to_string(given_) + " values of " +
                                 std::to_string(n_));
    if (!pending_.empty()) flush_batch();
    std::vector<uint8_t> head = layer_head(m_, rule_, s_, n_, block_size_, block_count_, level_);
    const std::vector<uint8_t> index = index_bytes(index_);
    put_u64(&head[40], header_checksum(head.data(), index.data(), index.size()));
    const uint64_t frames_begin = kHeaderBytes + index.size();
    // The file checksum over bytes 56..end: the reserved field, the index, the frames read
    // back from the file in order.
    Kh64Stream sum(offset_ - 56, kh64(head.data(), 40));
    sum.update(&head[56], 8);
    sum.update(index.data(), index.size());
    std::vector<uint8_t> buf(16u << 20);
    for (uint64_t at = frames_begin; at < offset_;) {
        const size_t len = static_cast<size_t>(std::min<uint64_t>(buf.size(), offset_ - at));
        if (!pread_all(fd_, buf.data(), len, at))
            throw std::runtime_error("cannot read back " + tmp_ + ": " + std::strerror(errno));
        sum.update(buf.data(), len);
        at += len;
    }
    const uint64_t checksum = sum.finish();
    put_u64(&head[48], checksum);
    if (::lseek(fd_, 0, SEEK_SET) != 0 || !write_all(fd_, head.data(), head.size()) ||
        !write_all(fd_, index.data(), index.size()))
        throw std::runtime_error("write failed: " + tmp_ + ": " + std::strerror(errno));
    const int fd = fd_;
    fd_ = -1;  // commit_durably closes it, and removes the temp file on a failure
    commit_durably(fd, tmp_, path_);
    return checksum;
}

DurableWriter::DurableWriter(const std::string& path)
    : path_(path), tmp_(temp_layer_path(path, ::getpid())) {
    // Temp name unique per process, so two builders writing into one directory never write
    // into each other's temp file.
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot write " + tmp_ + ": " + std::strerror(errno));
}

DurableWriter::~DurableWriter() {
    if (fd_ >= 0) {
        ::close(fd_);
        ::unlink(tmp_.c_str());
    }
}

void DurableWriter::fail(const std::string& what, int err) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(tmp_.c_str());
    throw std::runtime_error(what + " " + tmp_ + ": " + std::strerror(err));
}

void DurableWriter::write(const void* data, size_t len) {
    if (!write_all(fd_, data, len)) fail("write failed:", errno);
}

void DurableWriter::write_at(const void* data, size_t len, uint64_t at) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (len > 0) {
        const ssize_t k = ::pwrite(fd_, p, len, static_cast<off_t>(at));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) fail("write failed:", k < 0 ? errno : EIO);
        p += k;
        len -= static_cast<size_t>(k);
        at += static_cast<uint64_t>(k);
    }
}

void DurableWriter::commit() {
    const int fd = fd_;
    fd_ = -1;  // commit_durably closes it (and removes the temp file on a failure)
    commit_durably(fd, tmp_, path_);
}

void write_file_durably(const std::string& path,
                        const std::vector<std::pair<const void*, size_t>>& pieces) {
    // The data is on disk (fsync) before the rename makes it visible, and a failed write
    // leaves no temp file behind.
    DurableWriter w(path);
    for (const auto& [data, len] : pieces) w.write(data, len);
    w.commit();
}

std::unique_ptr<LayerFile> LayerFile::open(const std::string& path, int m, Rule rule, int s) {
    const std::string name = base_name(path);
    auto bad = [&](const std::string& what) { return FormatError(name + ": " + what); };
    std::unique_ptr<LayerFile> f(new LayerFile());
    f->path_ = path;
    std::string why;
    f->fd_ = open_regular_file(path, O_RDONLY, &why);
    if (f->fd_ < 0) throw bad(why);
    struct stat st;
    if (::fstat(f->fd_, &st) != 0) throw bad("cannot stat");
    f->file_size_ = static_cast<uint64_t>(st.st_size);
    uint8_t head[kHeaderBytes];
    if (f->file_size_ < kHeaderBytes || !pread_all(f->fd_, head, kHeaderBytes, 0))
        throw bad("truncated (shorter than the header)");
    if (std::memcmp(head, kMagic, 8) != 0) throw bad("not a kalah database layer (bad magic)");
    LayerHeader& h = f->header_;
    h.version = get_u32(head + 8);
    if (h.version != kFormatVersion)
        throw bad("format version " + std::to_string(h.version) + ", this program reads " +
                  std::to_string(kFormatVersion));
    h.m = head[12];
    if (head[13] > 1) throw bad("unknown rule code " + std::to_string(head[13]));
    h.rule = head[13] == 0 ? Rule::Standard : Rule::EmptyCapture;
    h.s = head[14];
    h.encoding = head[15];
    h.entries = get_u64(head + 16);
    h.block_size = get_u32(head + 24);
    h.block_count = get_u32(head + 28);
    h.level = static_cast<int>(get_u32(head + 32));
    h.header_checksum = get_u64(head + 40);
    h.file_checksum = get_u64(head + 48);
    if (h.m != m || h.rule != rule || h.s != s)
        throw bad("holds m=" + std::to_string(h.m) + " " + rule_name(h.rule) +
                  " s=" + std::to_string(h.s) + ", expected m=" + std::to_string(m) + " " +
                  rule_name(rule) + " s=" + std::to_string(s));
    if (h.encoding != 0) throw bad("unknown entry encoding " + std::to_string(h.encoding));
    if (h.entries != layer_size(2 * m, s)) throw bad("wrong entry count");
    if (h.block_size > kMaxBlockSize)
        throw bad("block size " + std::to_string(h.block_size) + " above the maximum " +
                  std::to_string(kMaxBlockSize));
    if (h.block_size == 0 || h.block_count != (h.entries + h.block_size - 1) / h.block_size)
        throw bad("inconsistent block size/count");
    // block_count < 2^32 and records are 24 bytes: no overflow in 64 bits.
    const uint64_t index_bytes = uint64_t{kIndexRecordBytes} * h.block_count;
    if (f->file_size_ < kHeaderBytes + index_bytes) throw bad("truncated (block index)");
    // The builder writes blocks of at least kMinBlockSize entries, which bounds the index
    // by the entry count: a sparse file claiming tiny blocks is refused before its index
    // is allocated and read (the header checksum covers the index, so cannot come first).
    if (h.block_size < kMinBlockSize && h.block_count > 1)
        throw bad("block size " + std::to_string(h.block_size) + " below the minimum " +
                  std::to_string(kMinBlockSize));
    std::vector<uint8_t> index(index_bytes);
    if (!pread_all(f->fd_, index.data(), index_bytes, kHeaderBytes))
        throw bad("cannot read the block index");
    if (header_checksum(head, index.data(), index_bytes) != h.header_checksum)
        throw bad("header checksum mismatch (damaged header or block index)");
    // Every offset and size is untrusted: a block must start where the previous one ended,
    // lie inside the file (checked without overflow: expect <= file_size_ holds throughout)
    // and be no larger than zstd's bound for its entries.
    f->blocks_.resize(h.block_count);
    uint64_t expect = kHeaderBytes + index_bytes;
    for (uint32_t b = 0; b < h.block_count; ++b) {
        BlockRef& r = f->blocks_[b];
        r.offset = get_u64(&index[kIndexRecordBytes * b]);
        r.size = get_u64(&index[kIndexRecordBytes * b + 8]);
        r.checksum = get_u64(&index[kIndexRecordBytes * b + 16]);
        if (r.offset != expect) throw bad("block index out of order at block " + std::to_string(b));
        if (r.size == 0 || r.size > ZSTD_compressBound(f->block_entries(b)))
            throw bad("block " + std::to_string(b) + " has an impossible size " +
                      std::to_string(r.size));
        if (r.size > f->file_size_ - expect) throw bad("truncated (file shorter than its blocks)");
        expect += r.size;
    }
    if (f->file_size_ != expect) throw bad("trailing bytes after the last block");
    return f;
}

LayerFile::~LayerFile() {
    if (fd_ >= 0) ::close(fd_);
}

std::string LayerFile::name() const { return base_name(path_); }

uint64_t LayerFile::block_entries(uint32_t b) const {
    const uint64_t begin = static_cast<uint64_t>(b) * header_.block_size;
    return std::min<uint64_t>(header_.block_size, header_.entries - begin);
}

namespace {
// Decodes block b (its first entry `first`) of a layer of s seeds into out. Every value
// is checked against the value convention (rules.md: v in [-s, s], and v has the parity
// of s, since v = own pits - opponent's pits at the end): a file with valid checksums
// may still hold values no position has, and a search must never see one.
void decode_block(const std::string& name, uint32_t b, const BlockRef& r, const uint8_t* data,
                  uint64_t first, uint64_t entries, int s, int8_t* out) {
    if (kh64(data, r.size) != r.checksum)
        throw FormatError(name + ": block " + std::to_string(b) + " checksum mismatch (damaged)");
    size_t got = ZSTD_decompress(out, entries, data, r.size);
    if (ZSTD_isError(got) || got != entries)
        throw FormatError(name + ": block " + std::to_string(b) + " does not decode");
    if (const uint64_t i = first_non_value(out, entries, s); i < entries)
        throw FormatError(name + ": entry " + std::to_string(first + i) + " holds " +
                          std::to_string(int(out[i])) + ", not a value of " + std::to_string(s) +
                          " seeds (in [-" + std::to_string(s) + ", " + std::to_string(s) +
                          "], of its parity): damaged");
}
}  // namespace

uint64_t first_non_value(const int8_t* values, uint64_t n, int s) {
    // v + s in 0..2s and even, tested for all entries at once (branch-free, vectorised).
    const unsigned span = 2 * static_cast<unsigned>(s);
    unsigned odd = 0, high = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const unsigned u = static_cast<unsigned>(values[i] + s);
        odd |= u & 1;
        high |= u > span;
    }
    if (!(odd | high)) return n;
    uint64_t i = 0;
    while (values[i] >= -s && values[i] <= s && ((values[i] + s) & 1) == 0) ++i;
    return i;
}

void LayerFile::read_block(uint32_t b, int8_t* out) const {
    const BlockRef& r = blocks_[b];
    std::vector<uint8_t> buf(r.size);
    if (!pread_all(fd_, buf.data(), r.size, r.offset))
        throw FormatError(name() + ": cannot read block " + std::to_string(b));
    decode_block(name(), b, r, buf.data(), uint64_t(b) * header_.block_size, block_entries(b),
                 header_.s, out);
}

std::vector<int8_t> LayerFile::read_all() const {
    std::vector<int8_t> values(header_.entries);
    read_all_into(values.data());
    return values;
}

void LayerFile::read_all_into(int8_t* out) const {
    std::vector<uint8_t> file(file_size_);
    if (!pread_all(fd_, file.data(), file_size_, 0)) throw FormatError(name() + ": read failed");
    // Blocks first, so that damage is reported with the first bad block's number.
    int64_t first_bad = -1;
    std::string failure;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = 0; b < static_cast<int64_t>(header_.block_count); ++b) {
        const BlockRef& r = blocks_[b];
        try {
            decode_block(name(), static_cast<uint32_t>(b), r, file.data() + r.offset,
                         static_cast<uint64_t>(b) * header_.block_size,
                         block_entries(static_cast<uint32_t>(b)), header_.s,
                         out + static_cast<uint64_t>(b) * header_.block_size);
        } catch (const FormatError& e) {
#pragma omp critical
            if (first_bad < 0 || b < first_bad) {
                first_bad = b;
                failure = e.what();
            }
        }
    }
    if (!failure.empty()) throw FormatError(failure);
    if (kh64(file.data() + 56, file_size_ - 56, kh64(file.data(), 40)) != header_.file_checksum)
        throw FormatError(name() + ": file checksum mismatch (damaged)");
}

void LayerFile::check_file_checksum() const {
    // kh64 of bytes 56.. seeded with kh64 of bytes 0..39, as read_all_into checks it.
    uint8_t head[40];
    if (!pread_all(fd_, head, sizeof head, 0)) throw FormatError(name() + ": read failed");
    Kh64Stream sum(file_size_ - 56, kh64(head, sizeof head));
    std::vector<uint8_t> buf(std::min<uint64_t>(file_size_ - 56, uint64_t(16) << 20));
    for (uint64_t at = 56; at < file_size_;) {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(buf.size(), file_size_ - at));
        if (!pread_all(fd_, buf.data(), take, at)) throw FormatError(name() + ": read failed");
        sum.update(buf.data(), take);
        at += take;
    }
    if (sum.finish() != header_.file_checksum)
        throw FormatError(name() + ": file checksum mismatch (damaged)");
}

}  // namespace kalah::db
