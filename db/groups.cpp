// Group files of a top layer and the streams that read a layer in rank order.
#include "db/groups.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/le.h"
#include "core/notation.h"
#include "core/regular_file.h"
#include "db/index.h"

namespace kalah::db {
namespace {

constexpr char kGroupMagic[8] = {'K', 'A', 'L', 'A', 'H', 'K', 'G', 'R'};
constexpr uint32_t kGroupVersion = 2;
constexpr size_t kGroupHeader = 48;
// Values a chunk (one zstd frame), and the chunks compressed at once (in parallel).
constexpr uint64_t kChunk = uint64_t(1) << 22;
constexpr uint64_t kChunksAtOnce = 16;

std::string base_name(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

std::vector<uint8_t> group_header(int m, Rule rule, int s, int a, uint64_t n, uint64_t payload,
                                  uint64_t stored) {
    std::vector<uint8_t> h(kGroupHeader, 0);
    std::memcpy(h.data(), kGroupMagic, 8);
    put_u32(&h[8], kGroupVersion);
    h[12] = static_cast<uint8_t>(m);
    h[13] = static_cast<uint8_t>(rule == Rule::Standard ? 0 : 1);
    h[14] = static_cast<uint8_t>(s);
    h[15] = static_cast<uint8_t>(a);
    put_u64(&h[16], n);
    put_u64(&h[24], payload);
    put_u64(&h[32], stored);
    put_u64(&h[40], kh64(h.data(), 40));
    return h;
}

// Reads exactly len bytes from fd's current offset; false on a short read or an error.
bool read_exactly(int fd, void* buf, size_t len) {
    auto* p = static_cast<uint8_t*>(buf);
    while (len > 0) {
        const ssize_t got = ::read(fd, p, len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        p += got;
        len -= static_cast<size_t>(got);
    }
    return true;
}

// A group file opened for reading front to back: the header checked against (m, rule, s,
// a) and the file's size; the payload hashed as it is read, checked by finish().
class GroupReader {
  public:
    GroupReader(const std::string& path, int m, Rule rule, int s, int a)
        : name_(base_name(path)), n_(group_size(m, s, a)), sum_(n_) {
        std::string why;
        fd_ = open_regular_file(path, O_RDONLY, &why);
        if (fd_ < 0) throw FormatError(name_ + ": " + why);
        uint8_t head[kGroupHeader];
        if (!read_exactly(fd_, head, kGroupHeader))
            throw bad("truncated (shorter than the header)");
        std::vector<uint8_t> want =
            group_header(m, rule, s, a, n_, get_u64(head + 24), get_u64(head + 32));
        if (std::memcmp(head, want.data(), kGroupHeader) != 0)
            throw bad("not group " + std::to_string(a) + " of this layer (bad header)");
        payload_ = get_u64(head + 24);
        stored_ = get_u64(head + 32);
        const off_t size = ::lseek(fd_, 0, SEEK_END);
        if (size < 0 || static_cast<uint64_t>(size) != kGroupHeader + stored_)
            throw bad("size " + std::to_string(size) + ", not " +
                      std::to_string(kGroupHeader + stored_));
        ::lseek(fd_, kGroupHeader, SEEK_SET);
    }
    ~GroupReader() {
        if (fd_ >= 0) ::close(fd_);
    }
    GroupReader(const GroupReader&) = delete;
    GroupReader& operator=(const GroupReader&) = delete;

    void read(int8_t* out, uint64_t count) {
        if (count > n_ - done_) throw bad("read past its end");
        while (count > 0) {
            if (at_ == buf_.size()) refill();
            const uint64_t take = std::min<uint64_t>(count, buf_.size() - at_);
            std::memcpy(out, buf_.data() + at_, take);
            at_ += take;
            out += take;
            count -= take;
            done_ += take;
        }
    }
    void finish() {
        if (done_ != n_) throw bad("not read to its end");
        if (sum_.finish() != payload_) throw bad("payload checksum mismatch");
    }
    FormatError bad(const std::string& what) const { return FormatError(name_ + ": " + what); }

  private:
    // The next chunk: its frame's length (u32), the frame, decoded to exactly the chunk's
    // values; every length checked against what is left of the file first.
    void refill() {
        const uint64_t want = std::min<uint64_t>(n_ - read_, kChunk);
        uint8_t len_bytes[4];
        if (stored_ - taken_ < 4 || !read_exactly(fd_, len_bytes, 4)) throw bad("short read");
        const uint32_t len = get_u32(len_bytes);
        taken_ += 4;
        if (len == 0 || len > ZSTD_compressBound(want) || len > stored_ - taken_)
            throw bad("bad chunk length " + std::to_string(len));
        frame_.resize(len);
        if (!read_exactly(fd_, frame_.data(), len)) throw bad("short read");
        taken_ += len;
        buf_.resize(static_cast<size_t>(want));
        const size_t got = ZSTD_decompress(buf_.data(), buf_.size(), frame_.data(), len);
        if (ZSTD_isError(got) || got != want) throw bad("damaged chunk (zstd)");
        sum_.update(buf_.data(), buf_.size());
        read_ += want;
        at_ = 0;
        if (read_ == n_ && taken_ != stored_) throw bad("bytes after the last chunk");
    }
    std::string name_;
    int fd_ = -1;
    uint64_t n_;
    uint64_t payload_ = 0, stored_ = 0;
    Kh64Stream sum_;
    std::vector<int8_t> buf_;
    std::vector<uint8_t> frame_;
    size_t at_ = 0;
    uint64_t read_ = 0;   // values of the payload decoded
    uint64_t taken_ = 0;  // bytes of the file after the header read
    uint64_t done_ = 0;   // values handed out
};

class GroupMerge final : public LayerStream {
  public:
    GroupMerge(const std::string& dir, int m, Rule rule, int s) : m_(m), s_(s) {
        for (int a = 0; a <= s; ++a)
            groups_.push_back(std::make_unique<GroupReader>(
                (std::filesystem::path(dir) / group_file_name(m, rule, s, a)).string(), m, rule, s,
                a));
        // The first run: rank 0 of the (m + 1)-pit configurations holds every seed in c[0].
        c_[0] = static_cast<uint8_t>(s);
        left_ = layer_size(m, c_[m]);
    }
    void read(int8_t* out, uint64_t count) override {
        while (count > 0) {
            if (left_ == 0) {
                if (!next_configuration(c_, m_ + 1))
                    throw FormatError("group files: more values asked than the layer holds");
                left_ = layer_size(m_, c_[m_]);
            }
            const uint64_t take = std::min(count, left_);
            groups_[s_ - c_[m_]]->read(out, take);
            out += take;
            count -= take;
            left_ -= take;
        }
    }
    void finish() override {
        if (left_ != 0 || next_configuration(c_, m_ + 1))
            throw FormatError("group files: the layer was not read to its end");
        for (auto& g : groups_) g->finish();
    }

  private:
    int m_, s_;
    uint8_t c_[kMaxPits + 1] = {};  // (mover's row, opponent's total) of the current run
    uint64_t left_ = 0;             // values left in the current run
    std::vector<std::unique_ptr<GroupReader>> groups_;
};

class FileStream final : public LayerStream {
  public:
    explicit FileStream(const LayerFile& f) : f_(f) {}
    void read(int8_t* out, uint64_t count) override {
        while (count > 0) {
            if (at_ == buf_.size()) {
                if (next_ >= f_.header().block_count)
                    throw FormatError(f_.name() + ": read past the last block");
                buf_.resize(f_.block_entries(next_));
                f_.read_block(next_++, buf_.data());
                at_ = 0;
            }
            const uint64_t take = std::min<uint64_t>(count, buf_.size() - at_);
            std::memcpy(out, buf_.data() + at_, take);
            at_ += take;
            out += take;
            count -= take;
        }
    }

  private:
    const LayerFile& f_;
    std::vector<int8_t> buf_;
    size_t at_ = 0;
    uint32_t next_ = 0;
};

}  // namespace

uint64_t group_size(int m, int s, int a) { return layer_size(m, a) * layer_size(m, s - a); }

uint64_t largest_pair(int m, int s) {
    uint64_t most = 0;
    for (int a = 0; 2 * a <= s; ++a)
        most = std::max(most, group_size(m, s, a) + (2 * a == s ? 0 : group_size(m, s, s - a)));
    return most;
}

std::string group_file_name(int m, Rule rule, int s, int a) {
    return "kalah-m" + std::to_string(m) + "-" + rule_name(rule) + "-s" + std::to_string(s) + "-g" +
           std::to_string(a) + ".kgr";
}

void write_group_file(const std::string& path, int m, Rule rule, int s, int a,
                      const int8_t* values) {
    const uint64_t n = group_size(m, s, a);
    DurableWriter w(path);
    std::vector<uint8_t> head(kGroupHeader, 0);
    w.write(head.data(), head.size());  // a placeholder until the chunks' bytes are known
    uint64_t stored = 0;
    const uint64_t chunks = (n + kChunk - 1) / kChunk;
    std::vector<std::vector<uint8_t>> frames(kChunksAtOnce);
    for (uint64_t c0 = 0; c0 < chunks; c0 += kChunksAtOnce) {
        const int batch = static_cast<int>(std::min(kChunksAtOnce, chunks - c0));
        std::string failure;
#pragma omp parallel for schedule(dynamic)
        for (int k = 0; k < batch; ++k) {
            const uint64_t at = (c0 + k) * kChunk, len = std::min(kChunk, n - at);
            std::vector<uint8_t>& f = frames[k];
            f.resize(4 + ZSTD_compressBound(len));
            const size_t got =
                ZSTD_compress(f.data() + 4, f.size() - 4, values + at, len, kGroupZstdLevel);
            if (ZSTD_isError(got)) {
#pragma omp critical
                failure = ZSTD_getErrorName(got);
                continue;
            }
            put_u32(f.data(), static_cast<uint32_t>(got));
            f.resize(4 + got);
        }
        if (!failure.empty()) throw std::runtime_error("zstd compression failed: " + failure);
        for (int k = 0; k < batch; ++k) {
            w.write(frames[k].data(), frames[k].size());
            stored += frames[k].size();
        }
    }
    head = group_header(m, rule, s, a, n, kh64(values, n), stored);
    w.write_at(head.data(), head.size(), 0);
    w.commit();
}

bool group_file_ok(const std::string& path, int m, Rule rule, int s, int a) {
    try {
        GroupReader g(path, m, rule, s, a);
        std::vector<int8_t> buf(4u << 20);
        for (uint64_t left = group_size(m, s, a); left > 0;) {
            const uint64_t take = std::min<uint64_t>(left, buf.size());
            g.read(buf.data(), take);
            left -= take;
        }
        g.finish();
        return true;
    } catch (const FormatError&) {
        return false;
    }
}

std::unique_ptr<LayerStream> merge_groups(const std::string& dir, int m, Rule rule, int s) {
    return std::make_unique<GroupMerge>(dir, m, rule, s);
}

std::unique_ptr<LayerStream> layer_file_stream(const LayerFile& f) {
    return std::make_unique<FileStream>(f);
}

}  // namespace kalah::db
