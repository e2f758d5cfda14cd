// Internal: radix-2 complex FFT and the DCT-II built on it (Makhoul's reordering), for the
// binned KDE convolution and the improved Sheather-Jones bandwidth. Sizes must be powers of 2.
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <vector>

namespace failslow::stats::detail {

inline bool is_power_of_two(std::size_t n) noexcept { return n != 0 && (n & (n - 1)) == 0; }

inline std::size_t next_power_of_two(std::size_t n) noexcept {
  std::size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// In-place iterative Cooley-Tukey; inverse = true computes the unnormalised inverse.
inline void fft(std::vector<std::complex<double>>& a, bool inverse) {
  const std::size_t n = a.size();
  for (std::size_t i = 1, j = 0; i < n; ++i) {
    std::size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  // Twiddles of the largest stage, computed directly (not by recurrence) to keep the error at
  // O(log n) ulps; stage `len` uses every (n / len)-th of them.
  const double pi = std::acos(-1.0);
  std::vector<std::complex<double>> w(n / 2);
  for (std::size_t k = 0; k < n / 2; ++k)
    w[k] = std::polar(1.0, (inverse ? 2 : -2) * pi * static_cast<double>(k) / static_cast<double>(n));
  for (std::size_t len = 2; len <= n; len <<= 1) {
    const std::size_t half = len / 2, stride = n / len;
    for (std::size_t i = 0; i < n; i += len) {
      for (std::size_t k = 0; k < half; ++k) {
        const std::complex<double> u = a[i + k], v = a[i + k + half] * w[k * stride];
        a[i + k] = u + v;
        a[i + k + half] = u - v;
      }
    }
  }
}

// DCT-II, unnormalised like scipy.fft.dct(type=2): y_k = 2 sum_j x_j cos(pi k (2j + 1) / (2n)).
inline std::vector<double> dct2(const std::vector<double>& x) {
  const std::size_t n = x.size();
  std::vector<std::complex<double>> v(n);
  for (std::size_t k = 0; k < n / 2; ++k) {
    v[k] = x[2 * k];
    v[n - 1 - k] = x[2 * k + 1];
  }
  if (n % 2 == 1) v[n / 2] = x[n - 1];
  fft(v, false);
  const double pi = std::acos(-1.0);
  std::vector<double> y(n);
  for (std::size_t k = 0; k < n; ++k)
    y[k] = 2 * (v[k] * std::polar(1.0, -pi * static_cast<double>(k) / (2.0 * static_cast<double>(n)))).real();
  return y;
}

}  // namespace failslow::stats::detail
