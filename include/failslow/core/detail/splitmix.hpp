// failslow/core/detail/splitmix.hpp -- random numbers defined bit for bit, on every standard library.
//
// Synopsis
//   splitmix64(x)        Steele, Lea & Flood's 64-bit finaliser of x + 0x9E3779B97F4A7C15 (a bijection)
//   splitmix64_engine    the SplitMix64 generator (a UniformRandomBitGenerator): the n-th output is
//                        splitmix64(seed + (n - 1) * 0x9E3779B97F4A7C15)
//   uniform_index(g, n)  uniform integer in [0, n) from any 64-bit generator, by rejection
//   The standard library's distributions (std::uniform_int_distribution, ...) are
//   implementation-defined: the same seed picks other numbers under libstdc++ and libc++. The
//   simulator and FAST-MCD's random starts draw through these instead, so a seed means the same
//   job or the same estimate everywhere, and neither needs <random>.
// Complexity: O(1) per draw; uniform_index rejects fewer than n / 2^64 of the draws.
// Errors: none (uniform_index(g, 0) and (g, 1) return 0).
#pragma once

#include <cstdint>
#include <limits>

namespace failslow::detail {

constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class splitmix64_engine {
 public:
  using result_type = std::uint64_t;
  constexpr explicit splitmix64_engine(std::uint64_t seed) noexcept : state_(seed) {}
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }
  constexpr result_type operator()() noexcept {
    const result_type z = splitmix64(state_);
    state_ += 0x9E3779B97F4A7C15ull;
    return z;
  }

 private:
  std::uint64_t state_;
};

/// Uniform integer in [0, n) (n >= 1) from a generator of 64 uniform bits (std::mt19937_64,
/// splitmix64_engine): the draws at or above the largest multiple of n are rejected.
template <class Generator>
constexpr std::uint64_t uniform_index(Generator& g, std::uint64_t n) noexcept {
  if (n <= 1) return 0;
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
  for (;;) {
    const std::uint64_t x = g();
    if (x < limit) return x % n;
  }
}

}  // namespace failslow::detail
