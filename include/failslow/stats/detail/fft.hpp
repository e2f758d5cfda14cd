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

// Twiddles e^{-2 pi i k / n}, k < n / 2, computed directly (not by recurrence) to keep the
// error of the transform at O(log n) ulps. One table serves the forward and inverse transforms.
inline std::vector<std::complex<double>> fft_twiddles(std::size_t n) {
  const double pi = std::acos(-1.0);
  std::vector<std::complex<double>> w(n / 2);
  for (std::size_t k = 0; k < n / 2; ++k)
    w[k] = std::polar(1.0, -2 * pi * static_cast<double>(k) / static_cast<double>(n));
  return w;
}

// In-place iterative Cooley-Tukey with the twiddles of fft_twiddles(a.size()); inverse = true
// computes the unnormalised inverse. Products are written out: std::complex's operator* calls
// the C99 NaN/Inf-recovery routine (__muldc3) that the transform does not need.
inline void fft(std::vector<std::complex<double>>& a, const std::vector<std::complex<double>>& w, bool inverse) {
  const std::size_t n = a.size();
  for (std::size_t i = 1, j = 0; i < n; ++i) {
    std::size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  const double sign = inverse ? -1.0 : 1.0;  // the inverse uses the conjugate twiddles
  for (std::size_t len = 2; len <= n; len <<= 1) {
    const std::size_t half = len / 2, stride = n / len;
    for (std::size_t i = 0; i < n; i += len) {
      for (std::size_t k = 0; k < half; ++k) {
        const double wr = w[k * stride].real(), wi = sign * w[k * stride].imag();
        const double br = a[i + k + half].real(), bi = a[i + k + half].imag();
        const std::complex<double> u = a[i + k], v(br * wr - bi * wi, br * wi + bi * wr);
        a[i + k] = u + v;
        a[i + k + half] = u - v;
      }
    }
  }
}

inline void fft(std::vector<std::complex<double>>& a, bool inverse) { fft(a, fft_twiddles(a.size()), inverse); }

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
