// A packed twin's (db/packed.h) piece table and header checksum recomputed from its bytes,
// for the fuzz targets that read twins: a crafted file has them right, so mutated headers
// and data get past the checksums to the checks behind them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "db/format.h"
#include "db/packed.h"
#include "fuzz/bytes.h"

namespace fuzz_bytes {

// The file with its piece table and header checksum made to match its bytes, where the
// sizes in its header leave room for them.
inline std::vector<uint8_t> with_checksums(std::vector<uint8_t> f) {
    if (f.size() < 64) return f;
    const uint64_t header_bytes = get_u64(&f[24]), data_bytes = get_u64(&f[32]);
    const uint64_t pieces = get_u64(&f[56]);
    const uint64_t piece = kalah::db::PackedLayer::kPiece;
    if (pieces > (f.size() - 64) / 8) return f;
    const uint64_t start = (64 + 8 * pieces + 4095) / 4096 * 4096;
    std::vector<uint64_t> table;
    auto region = [&](uint64_t at, uint64_t bytes) {
        for (uint64_t p = 0; p < bytes; p += piece)
            table.push_back(kalah::db::kh64w(f.data() + at + p, std::min(piece, bytes - p)));
    };
    if (start <= f.size() && header_bytes <= f.size() - start &&
        data_bytes <= f.size() - start - header_bytes) {
        region(start, header_bytes);
        region(start + header_bytes, data_bytes);
    }
    for (uint64_t i = 0; i < pieces && i < table.size(); ++i) put_u64(&f[64 + 8 * i], table[i]);
    uint8_t head[64];
    std::memcpy(head, f.data(), 64);
    put_u64(head + 48, 0);
    put_u64(&f[48], kalah::db::kh64(f.data() + 64, 8 * pieces, kalah::db::kh64(head, 64)));
    return f;
}

}  // namespace fuzz_bytes
