// PackedLayer: packing a layer's values into 32-entry frame-of-reference blocks.
#include "db/packed.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "core/le.h"
#include "core/notation.h"
#include "core/regular_file.h"
#include "db/format.h"
#include "db/index.h"

namespace kalah::db {
namespace {

// Bits needed for 0..x.
unsigned width_of(unsigned x) { return x ? 32 - __builtin_clz(x) : 0; }

}  // namespace

PackedLayer PackedLayer::pack(const int8_t* values, uint64_t n, int s) {
    // Through a buffer of at most 64 Mi entries: a copy of a whole deep layer (GBs) would
    // be memory no bound counts.
    return pack_chunks(n, s, uint64_t(1) << 26,
                       [values](uint64_t first, uint64_t count, int8_t* out) {
                           std::memcpy(out, values + first, count);
                       });
}

PackedLayer PackedLayer::pack_chunks(
    uint64_t n, int s, uint64_t chunk,
    const std::function<void(uint64_t first, uint64_t count, int8_t* out)>& read) {
    if (s < 0 || s > 127) throw std::invalid_argument("PackedLayer: seeds must be 0..127");
    if (chunk == 0 || chunk % kGroup != 0)
        chunk = std::max<uint64_t>((chunk + kGroup - 1) / kGroup, 1) * kGroup;
    PackedLayer p;
    p.n_ = n;
    p.s_ = s;
    const uint64_t groups = (n + kGroup - 1) / kGroup;
    p.header_bytes_ = std::max<uint64_t>(groups, 1) * sizeof(Header);
    p.header_mem_ = HugePages(p.header_bytes_);
    Header* headers = static_cast<Header*>(p.header_mem_.data());
    // Data: at most 7 bits an entry plus the padding (a probe reads two bytes from the
    // entry's first one). The mapping is reserved, not touched: only what the packed data
    // fills is paid for.
    const uint64_t reserve = (groups * kGroup * 7 + 7) / 8 + 8;
    p.data_mem_ = HugePages(reserve);
    uint8_t* data = static_cast<uint8_t*>(p.data_mem_.data());
    p.headers_ = headers;
    p.data_ = data;
    std::vector<int8_t> buf(std::min(chunk, std::max<uint64_t>(n, 1)));
    uint64_t total = 0;  // data bytes so far
    for (uint64_t first = 0; first < n; first += chunk) {
        const uint64_t count = std::min(chunk, n - first);
        read(first, count, buf.data());
        const int8_t* values = buf.data();
        const int64_t g0 = static_cast<int64_t>(first / kGroup);
        const int64_t g1 = static_cast<int64_t>((first + count + kGroup - 1) / kGroup);
        int64_t bad = -1;  // an entry out of range or of the wrong parity, if any
        // Pass 1: each block's lo and width; the group's data size in `offset` for now.
#pragma omp parallel for schedule(static)
        for (int64_t g = g0; g < g1; ++g) {
            Header& h = headers[g];
            std::memset(&h, 0, sizeof h);
            uint64_t bits = 0;
            for (unsigned j = 0; j < 32; ++j) {
                const uint64_t b0 = uint64_t(g) * kGroup + uint64_t(j) * kBlock;
                if (b0 >= n) break;
                const uint64_t b1 = std::min<uint64_t>(b0 + kBlock, n);
                int lo = 127, hi = -128, odd = 0;
                for (uint64_t r = b0; r < b1; ++r) {
                    const int v = values[r - first];
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                    odd |= (v + s) & 1;
                }
                if (lo < -s || hi > s || odd) {
#pragma omp critical
                    if (bad < 0 || int64_t(b0) < bad) bad = int64_t(b0);
                    break;
                }
                const unsigned w = width_of(static_cast<unsigned>(hi - lo) / 2);
                for (int b = 0; b < 3; ++b) h.plane[b] |= uint32_t((w >> b) & 1) << j;
                const unsigned ulo = static_cast<unsigned>(lo + s) / 2;
                const unsigned bit = 7 * j;
                h.lo[bit / 8] |= static_cast<uint8_t>(ulo << (bit % 8));
                if (bit % 8 > 1) h.lo[bit / 8 + 1] |= static_cast<uint8_t>(ulo >> (8 - bit % 8));
                bits += uint64_t(kBlock) * w;
            }
            h.offset = bits / 8;  // 32 * w bits: whole bytes
        }
        if (bad >= 0)
            throw std::invalid_argument("PackedLayer: a value of layer " + std::to_string(s) +
                                        " in entries " + std::to_string(bad) + ".." +
                                        std::to_string(bad + kBlock - 1) +
                                        " is not in [-s, s] with the parity of s");
        for (int64_t g = g0; g < g1; ++g) {
            const uint64_t size = headers[g].offset;
            headers[g].offset = total;
            total += size;
        }
        // Pass 2: the data, a block (4 w bytes) at a time through a 64-bit accumulator.
#pragma omp parallel for schedule(static)
        for (int64_t g = g0; g < g1; ++g) {
            const Header& h = headers[g];
            uint8_t* out = data + h.offset;
            for (unsigned j = 0; j < 32; ++j) {
                const uint64_t b0 = uint64_t(g) * kGroup + uint64_t(j) * kBlock;
                if (b0 >= n) break;
                const unsigned w = ((h.plane[0] >> j) & 1) | (((h.plane[1] >> j) & 1) << 1) |
                                   (((h.plane[2] >> j) & 1) << 2);
                if (w == 0) continue;
                const int lo = 2 * static_cast<int>(lo_of(h, j)) - s;
                uint64_t acc = 0;
                unsigned held = 0;
                for (uint64_t r = b0; r < b0 + kBlock; ++r) {
                    // Past the layer's end the block is padded with lo (x = 0).
                    const uint64_t x =
                        r < n ? static_cast<uint64_t>(values[r - first] - lo) / 2 : 0;
                    acc |= x << held;
                    held += w;
                    while (held >= 8) {
                        *out++ = static_cast<uint8_t>(acc);
                        acc >>= 8;
                        held -= 8;
                    }
                }
            }
        }
    }
    p.data_bytes_ = total + 8;
    return p;
}

void PackedLayer::unpack(int8_t* out) const {
    // Written apart from get(): walks the groups and blocks in order with a running bit
    // position instead of the popcounts.
    for (uint64_t g = 0; g * kGroup < n_; ++g) {
        const Header& h = headers()[g];
        uint64_t bit = h.offset * 8;
        for (unsigned j = 0; j < 32 && g * kGroup + j * kBlock < n_; ++j) {
            unsigned w = 0;
            for (int b = 0; b < 3; ++b) w |= ((h.plane[b] >> j) & 1u) << b;
            unsigned lo = 0;
            for (unsigned k = 0; k < 7; ++k) {
                const unsigned at = 7 * j + k;
                lo |= ((h.lo[at / 8] >> (at % 8)) & 1u) << k;
            }
            for (unsigned i = 0; i < kBlock; ++i) {
                unsigned x = 0;
                for (unsigned k = 0; k < w; ++k, ++bit)
                    x |= ((data()[bit / 8] >> (bit % 8)) & 1u) << k;
                const uint64_t r = g * kGroup + j * kBlock + i;
                if (r < n_) out[r] = static_cast<int8_t>(2 * static_cast<int>(lo + x) - s_);
            }
        }
    }
}

void PackedLayer::unpack_range(uint64_t first, uint64_t count, int8_t* out) const {
    const uint64_t end = first + count;
    for (uint64_t b = first / kBlock; b * kBlock < end; ++b) {
        const Header& h = headers()[b / (kGroup / kBlock)];
        const unsigned j = static_cast<unsigned>(b % (kGroup / kBlock));
        const uint32_t below = (1u << j) - 1;
        const unsigned before = __builtin_popcount(h.plane[0] & below) +
                                2 * __builtin_popcount(h.plane[1] & below) +
                                4 * __builtin_popcount(h.plane[2] & below);
        const unsigned w = ((h.plane[0] >> j) & 1) | (((h.plane[1] >> j) & 1) << 1) |
                           (((h.plane[2] >> j) & 1) << 2);
        const unsigned lo = lo_of(h, j);
        // The block's 32 w bits start on a byte: 4 w bytes, at most 28.
        const uint8_t* p = data() + h.offset + 4 * uint64_t(before);
        const uint64_t r0 = std::max(b * kBlock, first), r1 = std::min((b + 1) * kBlock, end);
        const unsigned mask = (1u << w) - 1;
        uint64_t window = 0;
        unsigned held = 0, next = 0;  // bits in the window, bytes of the block taken
        for (uint64_t r = b * kBlock; r < r1; ++r) {
            while (held < w) {
                window |= uint64_t(p[next++]) << held;
                held += 8;
            }
            const unsigned u = std::min(lo + static_cast<unsigned>(window & mask), unsigned(s_));
            window >>= w;
            held -= w;
            if (r >= r0) out[r - first] = static_cast<int8_t>(2 * static_cast<int>(u) - s_);
        }
    }
}

}  // namespace kalah::db

namespace kalah::db {
namespace {

constexpr char kPackedMagic[8] = {'K', 'A', 'L', 'A', 'H', 'K', 'P', 'K'};
constexpr uint64_t kPackedHeaderBytes = 64;
constexpr uint64_t kAlign = 4096;

uint64_t pieces_of(uint64_t bytes) {
    return (bytes + PackedLayer::kPiece - 1) / PackedLayer::kPiece;
}

// Checksums of the kPiece-byte pieces of a region, appended to out (in parallel).
void piece_checksums(const uint8_t* region, uint64_t bytes, std::vector<uint64_t>& out) {
    const uint64_t first = out.size(), count = pieces_of(bytes);
    out.resize(first + count);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) {
        const uint64_t at = uint64_t(i) * PackedLayer::kPiece;
        out[first + i] = kh64w(region + at, std::min(PackedLayer::kPiece, bytes - at));
    }
}

uint64_t packed_header_checksum(const uint8_t* head, const std::vector<uint64_t>& table) {
    uint8_t copy[kPackedHeaderBytes];
    std::memcpy(copy, head, kPackedHeaderBytes);
    put_u64(copy + 48, 0);
    return kh64(table.data(), table.size() * 8, kh64(copy, kPackedHeaderBytes));
}

uint64_t table_end(uint64_t pieces) {
    return (kPackedHeaderBytes + 8 * pieces + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

std::string PackedLayer::file_name(int m, Rule rule, int s) {
    std::string name = layer_file_name(m, rule, s);
    return name.substr(0, name.size() - 4) + ".kpk";
}

void PackedLayer::write_file(const std::string& path, int m, Rule rule, uint64_t source) const {
    const uint8_t* hdr = reinterpret_cast<const uint8_t*>(headers_);
    std::vector<uint64_t> table;
    piece_checksums(hdr, header_bytes_, table);
    piece_checksums(data(), data_bytes_, table);
    std::vector<uint8_t> head(table_end(table.size()), 0);
    std::memcpy(head.data(), kPackedMagic, 8);
    put_u32(&head[8], kPackedVersion);
    head[12] = static_cast<uint8_t>(m);
    head[13] = static_cast<uint8_t>(rule == Rule::Standard ? 0 : 1);
    head[14] = static_cast<uint8_t>(s_);
    put_u64(&head[16], n_);
    put_u64(&head[24], header_bytes_);
    put_u64(&head[32], data_bytes_);
    put_u64(&head[40], source);
    put_u64(&head[56], table.size());
    std::memcpy(&head[kPackedHeaderBytes], table.data(), table.size() * 8);
    put_u64(&head[48], packed_header_checksum(head.data(), table));
    write_file_durably(path,
                       {{head.data(), head.size()}, {hdr, header_bytes_}, {data(), data_bytes_}});
}

bool PackedLayer::twin_matches(const std::string& path, int m, Rule rule, int s, uint64_t source) {
    std::string why;
    const int fd = open_regular_file(path, O_RDONLY, &why);
    if (fd < 0) return false;
    uint8_t head[kPackedHeaderBytes] = {};
    const bool got = ::pread(fd, head, kPackedHeaderBytes, 0) == ssize_t(kPackedHeaderBytes);
    ::close(fd);
    const uint32_t version = get_u32(head + 8);
    return got && std::memcmp(head, kPackedMagic, 8) == 0 && version == kPackedVersion &&
           head[12] == m && head[13] == (rule == Rule::Standard ? 0 : 1) && head[14] == s &&
           get_u64(head + 16) == layer_size(2 * m, s) && get_u64(head + 40) == source;
}

PackedLayer PackedLayer::read_file(const std::string& path, int m, Rule rule, int s,
                                   uint64_t source, Load load) {
    const std::string name = std::filesystem::path(path).filename().string();
    auto bad = [&](const std::string& what) { return FormatError(name + ": " + what); };
    std::string why;
    const int fd = open_regular_file(path, O_RDONLY, &why);
    if (fd < 0) throw bad(why);
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw bad("cannot stat");
    const uint64_t file_size = static_cast<uint64_t>(st.st_size);
    auto read_at = [&](void* out, uint64_t len, uint64_t at) {
        uint8_t* p = static_cast<uint8_t*>(out);
        while (len > 0) {
            const ssize_t got =
                ::pread(fd, p, std::min<uint64_t>(len, uint64_t(1) << 30), static_cast<off_t>(at));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) throw bad("read failed (truncated?)");
            p += got;
            at += static_cast<uint64_t>(got);
            len -= static_cast<uint64_t>(got);
        }
    };
    uint8_t head[kPackedHeaderBytes];
    if (file_size < kPackedHeaderBytes) throw bad("too short for a packed layer");
    read_at(head, kPackedHeaderBytes, 0);
    if (std::memcmp(head, kPackedMagic, 8) != 0) throw bad("not a packed layer (bad magic)");
    const uint32_t version = get_u32(head + 8);
    if (version != kPackedVersion)
        throw bad("unsupported packed version " + std::to_string(version));
    if (head[12] != m || head[13] != (rule == Rule::Standard ? 0 : 1) || head[14] != s ||
        head[15] != 0)
        throw bad("not layer " + std::to_string(s) + " of m=" + std::to_string(m) + " " +
                  rule_name(rule));
    const uint64_t n = layer_size(2 * m, s);
    const uint64_t groups = std::max<uint64_t>((n + kGroup - 1) / kGroup, 1);
    const uint64_t header_bytes = groups * sizeof(Header);
    const uint64_t data_bytes = get_u64(head + 32);
    if (get_u64(head + 16) != n || get_u64(head + 24) != header_bytes)
        throw bad("entry count or header size does not match the layer");
    // The data: at most 7 bits an entry plus the padding.
    if (data_bytes < 8 || data_bytes > groups * kGroup * 7 / 8 + 8)
        throw bad("data size out of range");
    if (get_u64(head + 40) != source) throw bad("stale (packed from another build of its .kdb)");
    const uint64_t pieces = get_u64(head + 56);
    if (pieces != pieces_of(header_bytes) + pieces_of(data_bytes)) throw bad("bad piece count");
    const uint64_t start = table_end(pieces);
    if (file_size != start + header_bytes + data_bytes)
        throw bad("file size does not match its header");
    std::vector<uint64_t> table(pieces);
    read_at(table.data(), 8 * pieces, kPackedHeaderBytes);
    if (packed_header_checksum(head, table) != get_u64(head + 48))
        throw bad("header checksum mismatch (damaged)");

    PackedLayer p;
    p.n_ = n;
    p.s_ = s;
    p.header_bytes_ = header_bytes;
    p.data_bytes_ = data_bytes;
    const uint8_t* hdr;
    const uint8_t* dat;
    if (load == Load::Mapped) {
        try {
            p.header_mem_ = HugePages::map_file(fd, file_size);
        } catch (const std::runtime_error& e) {
            throw bad(e.what());
        }
        hdr = static_cast<const uint8_t*>(p.header_mem_.data()) + start;
        dat = hdr + header_bytes;
    } else {
        p.header_mem_ = HugePages(header_bytes);
        p.data_mem_ = HugePages(data_bytes);
        uint8_t* h = static_cast<uint8_t*>(p.header_mem_.data());
        uint8_t* d = static_cast<uint8_t*>(p.data_mem_.data());
        read_at(h, header_bytes, start);
        read_at(d, data_bytes, start + header_bytes);
        hdr = h;
        dat = d;
    }
    p.headers_ = reinterpret_cast<const Header*>(hdr);
    p.data_ = dat;
    std::vector<uint64_t> got;
    piece_checksums(hdr, header_bytes, got);
    piece_checksums(dat, data_bytes, got);
    for (uint64_t i = 0; i < pieces; ++i)
        if (got[i] != table[i])
            throw bad("piece " + std::to_string(i) + " checksum mismatch (damaged)");
    // Every block inside the data, whatever the checksums say (a lo above s needs no check:
    // get() clamps every value to [-s, s]).
    int64_t bad_group = -1;
    const Header* hs = p.headers();
#pragma omp parallel for schedule(static) reduction(max : bad_group)
    for (int64_t g = 0; g < static_cast<int64_t>(groups); ++g) {
        const Header& h = hs[g];
        const uint64_t bits = 32 * (uint64_t(__builtin_popcount(h.plane[0])) +
                                    2 * uint64_t(__builtin_popcount(h.plane[1])) +
                                    4 * uint64_t(__builtin_popcount(h.plane[2])));
        const bool ok = h.offset <= data_bytes - 8 && bits / 8 <= data_bytes - 8 - h.offset;
        if (!ok) bad_group = std::max<int64_t>(bad_group, g);
    }
    if (bad_group >= 0) throw bad("group " + std::to_string(bad_group) + " out of range (damaged)");
    return p;
}

}  // namespace kalah::db
