// failslow/compress/impl/window_summary.ipp -- the definitions of compress/window_summary.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "failslow/compress/window_summary.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/summary.hpp"

namespace failslow::compress {

FAILSLOW_FUNC_DEF stats::lognormal_mixture kernel_summary::distribution(bool truncated) const {
  std::vector<stats::lognormal_component> comps;
  if (!values.empty() || knots.size() == knot_count) {
    const double n = static_cast<double>(knots.empty() ? values.size() : std::max<std::uint64_t>(sampled, 1));
    const double w = 1.0 / n;
    if (knots.size() == knot_count) {
      truncated = true;
      const double rest = std::max(0.0, 1 - w * static_cast<double>(values.size()));
      for (std::size_t i = 0; i + 1 < knot_count; ++i)
        comps.push_back(stats::log_uniform_piece(knots[i], knots[i + 1],
                                                 rest * (knot_probabilities[i + 1] - knot_probabilities[i])));
    }
    for (std::size_t i = 0; i < values.size();) {  // equal values: one point mass
      std::size_t j = i + 1;
      while (j < values.size() && values[j] == values[i]) ++j;
      comps.push_back(stats::log_uniform_piece(values[i], values[i], w * static_cast<double>(j - i)));
      i = j;
    }
    return stats::lognormal_mixture(std::move(comps), truncated);
  }
  double n = 0;
  for (const auto& c : clusters) n += static_cast<double>(c.count);
  for (const auto& c : clusters) {
    if (!c.count) continue;
    const auto parts = stats::reconstruct_cluster(c);
    if (parts.size() > 1) truncated = true;
    for (auto p : parts) {
      p.weight *= static_cast<double>(c.count) / n;
      comps.push_back(p);
    }
  }
  return stats::lognormal_mixture(std::move(comps), truncated);
}

}  // namespace failslow::compress
