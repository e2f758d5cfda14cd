// failslow/detect/impl/robust_score.ipp -- the definitions of detect/robust_score.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/detect/robust_score.hpp"

namespace failslow::detect::detail {

FAILSLOW_FUNC_DEF relative_score_result score_against(const std::vector<double>& medians,
                                                      const std::vector<double>& reference, double threshold) {
  relative_score_result r;
  for (std::size_t i = 0; i < medians.size(); ++i) {
    const double s = reference[i] / medians[i];
    r.scores.push_back(s);
    if (s < threshold) r.stragglers.push_back(i);
  }
  return r;
}

FAILSLOW_FUNC_DEF void check_medians(const std::vector<double>& m, const char* who) {
  if (m.empty()) throw invalid_argument(std::string(who) + ": no ranks");
  for (double v : m)
    if (!std::isfinite(v) || !(v > 0.0)) throw domain_error(std::string(who) + ": medians must be finite and > 0");
}

}  // namespace failslow::detect::detail
