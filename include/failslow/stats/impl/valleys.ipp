// failslow/stats/impl/valleys.ipp -- the definitions of stats/valleys.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "failslow/stats/valleys.hpp"

namespace failslow::stats::detail {

// Candidate valley indices of f (strict descent in, non-strict ascent out: plateaus count once).
inline std::vector<std::size_t> local_minima(const std::vector<double>& f) {
  std::vector<std::size_t> out;
  std::size_t i = 1;
  while (i + 1 < f.size()) {
    if (f[i] < f[i - 1]) {
      std::size_t j = i;
      while (j + 1 < f.size() && f[j + 1] == f[i]) ++j;  // plateau [i, j]
      if (j + 1 < f.size() && f[j + 1] > f[i]) out.push_back((i + j) / 2);
      i = j + 1;
    } else {
      ++i;
    }
  }
  return out;
}

FAILSLOW_FUNC_DEF std::vector<std::size_t> select_valleys(const std::vector<double>& f, double dx, std::uint64_t n,
                                                          const valley_options& opt) {
  std::vector<std::size_t> valleys = local_minima(f);
  if (valleys.empty()) return valleys;
  // Cumulative mass at each grid point (trapezoid), normalised to 1.
  std::vector<double> cum(f.size(), 0.0);
  for (std::size_t i = 1; i < f.size(); ++i) cum[i] = cum[i - 1] + 0.5 * (f[i] + f[i - 1]) * dx;
  const double total = cum.back() > 0 ? cum.back() : 1.0;
  // Half a sample of slack: smoothing moves part of an isolated sample's mass across the valley.
  const double min_mass =
      std::max(opt.min_fraction, (static_cast<double>(opt.min_count) - 0.5) / static_cast<double>(n));

  while (!valleys.empty()) {
    const std::size_t k = valleys.size();
    // Segments s = 0..k between consecutive valleys: their peak and mass.
    std::vector<double> peak(k + 1, 0.0), mass(k + 1, 0.0);
    for (std::size_t s = 0; s <= k; ++s) {
      const std::size_t lo = s == 0 ? 0 : valleys[s - 1];
      const std::size_t hi = s == k ? f.size() - 1 : valleys[s];
      peak[s] = *std::max_element(f.begin() + static_cast<std::ptrdiff_t>(lo),
                                  f.begin() + static_cast<std::ptrdiff_t>(hi) + 1);
      mass[s] = (cum[hi] - cum[lo]) / total;
    }
    // The shallowest valley, if too shallow, goes first.
    std::size_t worst = k;
    double worst_depth = std::numeric_limits<double>::infinity();
    for (std::size_t v = 0; v < k; ++v) {
      const double lower_peak = std::min(peak[v], peak[v + 1]);
      const double depth = lower_peak > 0 ? 1.0 - f[valleys[v]] / lower_peak : 0.0;
      if (depth < worst_depth) {
        worst_depth = depth;
        worst = v;
      }
    }
    if (worst_depth < opt.min_depth) {
      valleys.erase(valleys.begin() + static_cast<std::ptrdiff_t>(worst));
      continue;
    }
    // Then the lightest cluster, if too light, merges across its shallower boundary.
    const auto light = static_cast<std::size_t>(std::min_element(mass.begin(), mass.end()) - mass.begin());
    if (mass[light] >= min_mass) break;
    std::size_t drop;
    if (light == 0)
      drop = 0;
    else if (light == k)
      drop = k - 1;
    else
      drop = f[valleys[light - 1]] >= f[valleys[light]] ? light - 1 : light;  // higher valley = shallower
    valleys.erase(valleys.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  return valleys;
}

}  // namespace failslow::stats::detail
