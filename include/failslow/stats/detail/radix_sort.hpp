// Internal: LSD radix sort of non-negative doubles (durations), for the window compressor's
// per-key summaries, where std::sort's branch mispredictions dominated the window close.
// Non-negative IEEE-754 doubles order like their bit patterns read as unsigned integers, so
// the sort runs on those: one pass finds the bytes that are not the same in every value, one
// builds their histograms, then one stable scatter pass per such byte (durations of one key
// share their sign, exponent and top mantissa bits, integer nanoseconds have zero low bytes,
// so usually 3-6 of the 8 passes run). O(n + 8 * 256).
// Inputs with a negative value, a NaN, fewer than 64 or more than 2^32 - 1 values go to
// std::sort instead (NaNs then sort last).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace failslow::stats::detail {

/// Sorts x[0, n) ascending; `scratch` is resized to n and reused across calls (no allocation
/// once it has grown).
template <class Vector>
void sort_nonnegative(double* x, std::size_t n, Vector& scratch) {
  constexpr std::size_t small = 64;
  bool plain = n < small || n > 0xFFFFFFFFu;  // the histograms count in 32 bits
  // Negative, NaN, or -0.0 (>= 0 but its sign bit would sort it after every positive value).
  for (std::size_t i = 0; !plain && i < n; ++i) plain = !(x[i] >= 0.0) || std::signbit(x[i]);
  if (plain) {  // NaNs last: std::sort needs a strict weak order, which < alone is not with NaN
    std::sort(x, x + n, [](double a, double b) { return a < b || (b != b && a == a); });
    return;
  }
  // The bytes that differ between values (a vectorised pass): only their histograms are
  // counted and only they are scattered (integer nanoseconds leave the low 4 bytes at zero).
  std::uint64_t any = 0, all = ~std::uint64_t{0};
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t b;
    std::memcpy(&b, &x[i], sizeof b);
    any |= b;
    all &= b;
  }
  const std::uint64_t varying = any ^ all;
  std::size_t digits[8], nd = 0;
  for (std::size_t d = 0; d < 8; ++d)
    if ((varying >> (8 * d)) & 0xFF) digits[nd++] = d;
  std::array<std::array<std::uint32_t, 256>, 8> count{};
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t b;
    std::memcpy(&b, &x[i], sizeof b);
    for (std::size_t k = 0; k < nd; ++k) ++count[k][(b >> (8 * digits[k])) & 0xFF];
  }
  scratch.resize(n);
  double* from = x;
  double* to = scratch.data();
  for (std::size_t pass = 0; pass < nd; ++pass) {
    const std::size_t d = digits[pass];
    auto& c = count[pass];
    if (std::find(c.begin(), c.end(), static_cast<std::uint32_t>(n)) != c.end()) continue;  // one value
    std::uint32_t offset = 0;
    for (auto& k : c) {
      const std::uint32_t here = k;
      k = offset;
      offset += here;
    }
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t b;
      std::memcpy(&b, &from[i], sizeof b);
      to[c[(b >> (8 * d)) & 0xFF]++] = from[i];
    }
    std::swap(from, to);
  }
  if (from != x) std::copy(from, from + n, x);
}

}  // namespace failslow::stats::detail
