// failslow/compress/detail/impl/lz.ipp -- the definitions of compress/detail/lz.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/compress/detail/lz.hpp"

namespace failslow::compress::detail {

FAILSLOW_FUNC_DEF void lz_compress(std::string_view in, std::string& out) {
  const std::size_t n = in.size();
  constexpr std::size_t hash_bits = 12, chain_limit = 16;
  std::vector<std::int64_t> head(std::size_t{1} << hash_bits, -1), prev(n, -1);
  auto hash = [&](std::size_t i) {
    std::uint32_t v;
    std::memcpy(&v, in.data() + i, 4);
    return (v * 2654435761u) >> (32 - hash_bits);
  };
  auto insert = [&](std::size_t i) {
    if (i + lz_min_match > n) return;
    const auto h = hash(i);
    prev[i] = head[h];
    head[h] = static_cast<std::int64_t>(i);
  };
  std::size_t literal_start = 0, i = 0;
  auto flush_literals = [&](std::size_t end) {
    if (end == literal_start) return;
    put_varint(out, (end - literal_start) << 1);
    out.append(in.data() + literal_start, end - literal_start);
  };
  while (i < n) {
    std::size_t best_len = 0, best_dist = 0;
    if (i + lz_min_match <= n) {
      std::int64_t j = head[hash(i)];
      for (std::size_t tries = 0; j >= 0 && tries < chain_limit; ++tries, j = prev[static_cast<std::size_t>(j)]) {
        const auto c = static_cast<std::size_t>(j);
        std::size_t len = 0;
        while (i + len < n && in[c + len] == in[i + len]) ++len;
        if (len > best_len) {
          best_len = len;
          best_dist = i - c;
        }
      }
    }
    if (best_len >= lz_min_match) {
      flush_literals(i);
      put_varint(out, (best_len << 1) | 1);
      put_varint(out, best_dist);
      for (std::size_t k = 0; k < best_len; ++k) insert(i + k);
      i += best_len;
      literal_start = i;
    } else {
      insert(i);
      ++i;
    }
  }
  flush_literals(n);
}

FAILSLOW_FUNC_DEF bool lz_decompress(byte_reader& r, std::uint64_t size, std::string& out) {
  out.clear();
  if (size > lz_max_size) return false;
  out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(size, r.remaining() * 16)));  // grows past a guess
  while (out.size() < size) {
    std::uint64_t t;
    if (!r.varint(t)) return false;
    const std::uint64_t len = t >> 1;
    if (len == 0 || len > size - out.size()) return false;
    if ((t & 1) == 0) {
      std::string_view lit;
      if (!r.bytes(static_cast<std::size_t>(len), lit)) return false;
      out.append(lit);
    } else {
      std::uint64_t dist;
      if (len < lz_min_match || !r.varint(dist) || dist == 0 || dist > out.size()) return false;
      const std::size_t from = out.size() - static_cast<std::size_t>(dist);
      for (std::uint64_t k = 0; k < len; ++k) out.push_back(out[from + static_cast<std::size_t>(k)]);  // may overlap
    }
  }
  return true;
}

}  // namespace failslow::compress::detail
