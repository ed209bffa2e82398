// Little-endian fields (core/le.h) and whole-file writes for the file-reader fuzz targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/le.h"

namespace fuzz_bytes {

// The fields: the product's one codec (core/le.h).
using kalah::get_u64;
using kalah::put_u64;

inline void write_file(const std::filesystem::path& file, const std::vector<uint8_t>& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

}  // namespace fuzz_bytes
