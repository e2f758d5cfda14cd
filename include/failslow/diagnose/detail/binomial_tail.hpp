// failslow/diagnose/detail/binomial_tail.hpp -- P(X >= k) for X ~ Binomial(n, p): how unlikely
// it is that a rank is elevated in k of its n steps when its peers are elevated at rate p; and
// the Jeffreys estimate of that rate from the peers' cells.
//
// Sums the terms from k up in log space (lgamma), starting from the largest, so tails down to
// 1e-300 keep their relative precision; O(n - k). Checked against scipy.stats.binom.sf
// (tests/reference/gen_diagnose_fixtures.py) to 1e-10 relative.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace failslow::diagnose::detail {

/// The Jeffreys estimate (k + 1/2) / (n + 1) of a rate seen in k of n cells, 0 when n = 0: the
/// rate the binomial tail is taken at (0 in 48 cells is not known to be below 1 %).
inline double jeffreys_rate(double k, double n) noexcept { return n > 0 ? (k + 0.5) / (n + 1) : 0.0; }

template <class = void>
inline double binomial_upper_tail(std::uint64_t k, std::uint64_t n, double p) noexcept {
  if (k == 0) return 1.0;
  if (k > n || !(p > 0)) return 0.0;
  if (p >= 1) return 1.0;
  const double nd = static_cast<double>(n), lp = std::log(p), lq = std::log1p(-p);
  auto log_term = [&](std::uint64_t j) {
    const double jd = static_cast<double>(j);
    return std::lgamma(nd + 1) - std::lgamma(jd + 1) - std::lgamma(nd - jd + 1) + jd * lp + (nd - jd) * lq;
  };
  // The largest term of the tail: at the mode when the mode is inside [k, n], else at k.
  const auto mode = static_cast<std::uint64_t>(std::floor((nd + 1) * p));
  const std::uint64_t top = std::clamp(mode, k, n);
  const double lmax = log_term(top);
  double sum = 0;
  for (std::uint64_t j = k; j <= n; ++j) {
    const double t = std::exp(log_term(j) - lmax);
    sum += t;
    if (j > top && t < 1e-17 * sum) break;
  }
  return std::min(1.0, std::exp(lmax) * sum);
}

}  // namespace failslow::diagnose::detail
