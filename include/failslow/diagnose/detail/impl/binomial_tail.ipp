// failslow/diagnose/detail/impl/binomial_tail.ipp -- the definitions of diagnose/detail/binomial_tail.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "failslow/diagnose/detail/binomial_tail.hpp"

namespace failslow::diagnose::detail {

FAILSLOW_FUNC_DEF double binomial_upper_tail(std::uint64_t k, std::uint64_t n, double p) noexcept {
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

FAILSLOW_FUNC_DEF double hypergeometric_upper_tail(std::uint64_t k, std::uint64_t K, std::uint64_t n,
                                                   std::uint64_t N) noexcept {
  K = std::min(K, N);
  n = std::min(n, N);
  const std::uint64_t lo = n > N - K ? n - (N - K) : 0, hi = std::min(K, n);  // the support
  if (k <= lo) return 1.0;
  if (k > hi) return 0.0;
  auto log_choose = [](double a, double b) { return std::lgamma(a + 1) - std::lgamma(b + 1) - std::lgamma(a - b + 1); };
  const double Nd = static_cast<double>(N), Kd = static_cast<double>(K), nd = static_cast<double>(n);
  const double lall = log_choose(Nd, nd);
  auto log_term = [&](std::uint64_t j) {
    const double jd = static_cast<double>(j);
    return log_choose(Kd, jd) + log_choose(Nd - Kd, nd - jd) - lall;
  };
  const auto mode = static_cast<std::uint64_t>(std::floor((nd + 1) * (Kd + 1) / (Nd + 2)));
  const std::uint64_t top = std::clamp(mode, k, hi);
  const double lmax = log_term(top);
  double sum = 0;
  for (std::uint64_t j = k; j <= hi; ++j) {
    const double t = std::exp(log_term(j) - lmax);
    sum += t;
    if (j > top && t < 1e-17 * sum) break;
  }
  return std::min(1.0, std::exp(lmax) * sum);
}

}  // namespace failslow::diagnose::detail
