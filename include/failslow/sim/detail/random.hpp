// failslow/sim/detail/random.hpp -- portable, counter-based random numbers for the simulator.
//
// Synopsis
//   The standard library's distributions (std::normal_distribution, ...) are
//   implementation-defined, so the same seed would give other traces under libstdc++ and
//   libc++. Everything here is defined bit for bit (splitmix64 and uniform_index live in
//   core/detail/splitmix.hpp):
//     key(seed, a, b, c, d)          a 64-bit hash of up to five integers
//     uniform01(k)                   (k >> 11) * 2^-53, in [0, 1)
//     standard_normal(k)             Box-Muller from two uniforms derived from k
//     lognormal_factor(sigma, k)     exp(sigma * Z - sigma^2 / 2): mean 1
//   Counter-based: a draw depends only on its key, never on how many draws came before, so a
//   fault that adds or removes work changes nothing else in a simulated job.
//   Fault placement uses std::mt19937_64 (whose output sequence the standard fixes) through
//   uniform_index(), which is defined by rejection sampling.
// Complexity: O(1) per draw.
// Errors: none (callers validate sigma and bounds).
#pragma once

#include <cmath>
#include <cstdint>

#include "failslow/core/detail/splitmix.hpp"

namespace failslow::sim::detail {

using failslow::detail::splitmix64;
using failslow::detail::uniform_index;

/// Hash of a seed and up to four integers (order matters).
constexpr std::uint64_t key(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0,
                            std::uint64_t d = 0) noexcept {
  std::uint64_t h = splitmix64(seed ^ 0x6A09E667F3BCC909ull);
  h = splitmix64(h ^ a);
  h = splitmix64(h ^ (b + 0x3C6EF372FE94F82Bull));
  h = splitmix64(h ^ (c + 0xA54FF53A5F1D36F1ull));
  return splitmix64(h ^ (d + 0x510E527FADE682D1ull));
}

/// Uniform in [0, 1) with 53 random bits.
inline double uniform01(std::uint64_t k) noexcept {
  return static_cast<double>(splitmix64(k) >> 11) * (1.0 / 9007199254740992.0);
}

/// Standard normal (Box-Muller, cosine branch) from key k.
inline double standard_normal(std::uint64_t k) noexcept {
  const double u1 = 1.0 - uniform01(k);  // (0, 1]: log is finite
  const double u2 = uniform01(k ^ 0xD1B54A32D192ED03ull);
  constexpr double two_pi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

/// Lognormal multiplier with median exp(-sigma^2/2) and mean 1; sigma = 0 gives exactly 1.
inline double lognormal_factor(double sigma, std::uint64_t k) noexcept {
  if (sigma <= 0) return 1.0;
  return std::exp(sigma * standard_normal(k) - 0.5 * sigma * sigma);
}

}  // namespace failslow::sim::detail
