// Internal: radix-2 complex FFT and the DCT-II built on it (Makhoul's reordering), for the
// binned KDE convolution and the improved Sheather-Jones bandwidth. Sizes must be powers of 2.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

#include "failslow/core/compile_mode.hpp"

namespace failslow::stats::detail {

inline bool is_power_of_two(std::size_t n) noexcept { return n != 0 && (n & (n - 1)) == 0; }

inline std::size_t next_power_of_two(std::size_t n) noexcept {
  std::size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// Twiddles e^{-2 pi i k / n}, k < n / 2, computed directly (not by recurrence) to keep the
// error of the transform at O(log n) ulps. One table serves the forward and inverse transforms.
FAILSLOW_FUNC std::vector<std::complex<double>> fft_twiddles(std::size_t n);

// In-place iterative Cooley-Tukey with the twiddles of fft_twiddles(a.size()); inverse = true
// computes the unnormalised inverse. Products are written out: std::complex's operator* calls
// the C99 NaN/Inf-recovery routine (__muldc3) that the transform does not need.
FAILSLOW_FUNC void fft(std::vector<std::complex<double>>& a, const std::vector<std::complex<double>>& w, bool inverse);

inline void fft(std::vector<std::complex<double>>& a, bool inverse) { fft(a, fft_twiddles(a.size()), inverse); }

// DCT-II, unnormalised like scipy.fft.dct(type=2): y_k = 2 sum_j x_j cos(pi k (2j + 1) / (2n)).
FAILSLOW_FUNC std::vector<double> dct2(const std::vector<double>& x);

}  // namespace failslow::stats::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/detail/impl/fft.ipp"
#endif
