// failslow/stats/bandwidth.hpp -- bandwidth rules for Gaussian kernel density estimates.
//
// Synopsis
//   Each rule is named by its formula, because libraries disagree on names (the seeds call
//   1.06 s n^-1/5 "Scott's rule"; scipy's "scott" has no 1.06). s is the sample standard
//   deviation (ddof = 1), n the sample size, IQR the linear-interpolation interquartile range.
//     rule_of_thumb            h = 1.06 s n^(-1/5)                         (default; the seeds')
//     robust_rule_of_thumb     h = 1.06 min(s, IQR/1.349) n^(-1/5)        (s alone when IQR = 0)
//     scott                    h = s n^(-1/5)                              (scipy bw_method='scott')
//     silverman                h = s (3n/4)^(-1/5)                         (scipy bw_method='silverman')
//     improved_sheather_jones  Botev, Grotowski & Kroese (2010): the fixed point t = xi gamma^[7](t)
//                              of the plug-in equations on a DCT of the data binned on 2^14 cells
//                              over [min - R/10, max + R/10]; h = sqrt(t) * (grid width). Suited
//                              to multimodal data, where the rules of thumb oversmooth.
//     fixed                    h given by the caller
// Complexity: the rules O(n) (robust: O(n) expected, nth_element); ISJ O(n + G log G), G = 2^14.
// Accuracy: rules exact up to rounding; ISJ solves its fixed point to 1e-12 relative in t.
// Errors: an empty sample or a non-finite value throws failslow::invalid_argument /
//   failslow::domain_error; a non-positive or non-finite fixed h throws invalid_argument. A sample
//   with zero spread gives h = 0 for every rule (the caller decides; valley clustering treats it
//   as one cluster).
#pragma once

#include <cmath>
#include <cstddef>
#include <string_view>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/error.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::stats {

enum class bandwidth_rule { rule_of_thumb, robust_rule_of_thumb, scott, silverman, improved_sheather_jones, fixed };
/// Number of bandwidth_rule values (they are 0 .. bandwidth_rule_count - 1).
inline constexpr std::size_t bandwidth_rule_count = 6;

constexpr std::string_view to_string(bandwidth_rule r) noexcept {
  switch (r) {
    case bandwidth_rule::rule_of_thumb:
      return "rule_of_thumb";
    case bandwidth_rule::robust_rule_of_thumb:
      return "robust_rule_of_thumb";
    case bandwidth_rule::scott:
      return "scott";
    case bandwidth_rule::silverman:
      return "silverman";
    case bandwidth_rule::improved_sheather_jones:
      return "isj";
    case bandwidth_rule::fixed:
      return "fixed";
  }
  return "rule_of_thumb";
}
static_assert(failslow::detail::enum_count_matches<bandwidth_rule>(bandwidth_rule_count),
              "bandwidth_rule_count is not the number of bandwidth_rule values");

/// A rule, or a fixed value.
struct bandwidth_spec {
  bandwidth_rule rule = bandwidth_rule::rule_of_thumb;
  double value = 0;  ///< h for bandwidth_rule::fixed

  static bandwidth_spec fixed(double h) {
    if (!(h > 0) || !std::isfinite(h)) throw invalid_argument("bandwidth: fixed value must be positive and finite");
    return {bandwidth_rule::fixed, h};
  }
};

/// Parses a rule name (rule_of_thumb, robust_rule_of_thumb, scott, silverman, isj) or a number.
FAILSLOW_FUNC bandwidth_spec parse_bandwidth(std::string_view s);

/// Bandwidth of `x` (finite values, any order; ascending when `x_sorted`, which spares the
/// robust rule a copy and a selection) under `spec`, given its two_pass_moments `m`.
FAILSLOW_FUNC double select_bandwidth(const std::vector<double>& x, const bandwidth_spec& spec, const array_moments& m,
                                      bool x_sorted = false);

/// Bandwidth of `x` (finite values, any order) under `spec`.
FAILSLOW_FUNC double select_bandwidth(const std::vector<double>& x, const bandwidth_spec& spec);

}  // namespace failslow::stats

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/impl/bandwidth.ipp"
#endif
