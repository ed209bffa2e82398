// Little-endian integers in byte buffers: the one codec of the binary file formats (layer
// files db/format, packed twins db/packed, campaign journals campaign/journal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace kalah {

// Byte by byte, so the bytes are the same on any host; compilers merge each into one load
// or store on a little-endian one.
template <typename T>
inline void store_le(unsigned char* p, T v) {
    static_assert(std::is_unsigned_v<T>, "store_le takes an unsigned integer");
    for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

template <typename T>
inline T load_le(const unsigned char* p) {
    static_assert(std::is_unsigned_v<T>, "load_le gives an unsigned integer");
    T v = 0;
    for (size_t i = 0; i < sizeof(T); ++i)
        v = static_cast<T>(v | static_cast<T>(T(p[i]) << (8 * i)));
    return v;
}

inline void put_u16(unsigned char* p, uint16_t v) { store_le(p, v); }
inline void put_u32(unsigned char* p, uint32_t v) { store_le(p, v); }
inline void put_u64(unsigned char* p, uint64_t v) { store_le(p, v); }
inline uint16_t get_u16(const unsigned char* p) { return load_le<uint16_t>(p); }
inline uint32_t get_u32(const unsigned char* p) { return load_le<uint32_t>(p); }
inline uint64_t get_u64(const unsigned char* p) { return load_le<uint64_t>(p); }

}  // namespace kalah
