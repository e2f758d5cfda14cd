// failslow/stats/detail/impl/fft.ipp -- the definitions of stats/detail/fft.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <utility>
#include <vector>

#include "failslow/stats/detail/fft.hpp"

namespace failslow::stats::detail {

FAILSLOW_FUNC_DEF std::vector<std::complex<double>> fft_twiddles(std::size_t n) {
  const double pi = std::acos(-1.0);
  std::vector<std::complex<double>> w(n / 2);
  for (std::size_t k = 0; k < n / 2; ++k)
    w[k] = std::polar(1.0, -2 * pi * static_cast<double>(k) / static_cast<double>(n));
  return w;
}

FAILSLOW_FUNC_DEF void fft(std::vector<std::complex<double>>& a, const std::vector<std::complex<double>>& w,
                           bool inverse) {
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

FAILSLOW_FUNC_DEF std::vector<double> dct2(const std::vector<double>& x) {
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
