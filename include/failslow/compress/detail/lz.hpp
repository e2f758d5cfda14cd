// Internal: a small LZ77 for the codec's name dictionary. Kernel names are C++ template
// signatures of 100-300 characters that repeat long substrings (namespaces, template
// arguments), not just prefixes: on the real traces the dictionary shrinks about 10x (front
// coding: 1.1-1.2x), and without a dependency (zlib would add ~25 % more).
//   stream := token*     token := varint t; t even: t/2 literal bytes follow;
//                                  t odd: a match of length t >> 1 (>= 4) at the varint
//                                  distance that follows (1 .. bytes produced so far)
// Encoding: greedy, hash chains over 4-byte sequences (at most 16 candidates), O(n * 16).
// Decoding validates every length and distance against the declared size (at most 64 MiB)
// and the input, and never reads or writes out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "failslow/compress/detail/bytes.hpp"
#include "failslow/core/compile_mode.hpp"

namespace failslow::compress::detail {

inline constexpr std::size_t lz_min_match = 4;
inline constexpr std::uint64_t lz_max_size = std::uint64_t{1} << 26;  ///< decoded bytes per stream

/// Appends the LZ tokens of `in` to `out` (the caller stores in.size() to decode).
FAILSLOW_FUNC void lz_compress(std::string_view in, std::string& out);

/// Decodes exactly `size` bytes from r into `out`; false on any inconsistency.
FAILSLOW_FUNC bool lz_decompress(byte_reader& r, std::uint64_t size, std::string& out);

}  // namespace failslow::compress::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/compress/detail/impl/lz.ipp"
#endif
