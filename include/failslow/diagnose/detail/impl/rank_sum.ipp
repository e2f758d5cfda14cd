// failslow/diagnose/detail/impl/rank_sum.ipp -- the definitions of diagnose/detail/rank_sum.hpp:
// included by that header (header-only) or compiled once in src/failslow.cpp
// (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "failslow/diagnose/detail/rank_sum.hpp"

namespace failslow::diagnose::detail {

FAILSLOW_FUNC_DEF double rank_sum_upper_p(const double* before, std::size_t n_before, const double* after,
                                          std::size_t n_after) {
  if (n_before == 0 || n_after == 0) return 1.0;
  std::vector<std::pair<double, bool>> pooled;  // (value, from `after`)
  pooled.reserve(n_before + n_after);
  for (std::size_t i = 0; i < n_before; ++i) pooled.emplace_back(before[i], false);
  for (std::size_t i = 0; i < n_after; ++i) pooled.emplace_back(after[i], true);
  std::sort(pooled.begin(), pooled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const double N = static_cast<double>(pooled.size());
  double rank_sum_after = 0, ties = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i), mid_rank = 0.5 * static_cast<double>(i + 1 + j);
    for (std::size_t m = i; m < j; ++m) rank_sum_after += pooled[m].second ? mid_rank : 0.0;
    ties += t * t * t - t;
    i = j;
  }
  const double na = static_cast<double>(n_after), nb = static_cast<double>(n_before);
  const double u = rank_sum_after - na * (na + 1) / 2;
  const double var = nb * na / 12 * ((N + 1) - ties / (N * (N - 1)));
  if (!(var > 0)) return 1.0;
  const double z = (u - nb * na / 2 - 0.5) / std::sqrt(var);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

}  // namespace failslow::diagnose::detail
