// failslow/detect/segment_cost.hpp -- Gaussian segment costs and penalties for offline
// change-point search (PELT, binary segmentation, exhaustive optimal partitioning).
//
// Synopsis
//   A segmentation of y_0..y_{n-1} by change points 0 < tau_1 < ... < tau_m < n (tau = index of
//   the first sample of a new segment) minimises
//        sum_{j=0..m} C(y[tau_j, tau_{j+1})) + m * beta          (tau_0 = 0, tau_{m+1} = n)
//   with C twice the negative maximised Gaussian log-likelihood of a segment, constants dropped:
//     cost_model::normal_mean     change in mean, common known sigma:
//                                 C = sum (y_i - mean)^2 / sigma^2
//                                 sigma: options.sigma, or (0) estimated from the whole series as
//                                 1.4826 MAD(diff y) / sqrt 2 (failslow::stats::mad_normal), which a
//                                 few mean shifts do not inflate; if that is 0 (more than half the
//                                 differences equal: quantised data), IQR(diff y) / 1.349 / sqrt 2,
//                                 then sd(diff y) / sqrt 2; if all are 0 (constant series), 1.
//     cost_model::normal_meanvar  change in mean and variance:
//                                 C = m log v + RSS / v,  v = max(RSS / m, floor)
//                                 (the exact minimum over mean and a variance >= floor, so splitting
//                                 a segment never raises its cost); floor = options.variance_floor,
//                                 or (0) 1e-8 times the variance of the whole series (1e-300 if 0).
//   Penalties beta per change point, p = parameters per segment (1 mean, 2 mean and variance):
//     penalty::bic()      (p + 1) ln n   (Schwarz, counting the change location as a parameter;
//                                         R changepoint's "BIC1")
//     penalty::mbic()     (p + 1) ln n plus ln(length) added to every segment's cost
//                         (Zhang & Siegmund 2007's modified BIC, as R changepoint's "MBIC")
//     penalty::fixed(b)   beta = b >= 0
//   to_string / parse_cost_model / parse_penalty: the names "mean", "meanvar"; "bic", "mbic" or a
//   number (a fixed beta), as the failslow tool's --model and --penalty take them.
//   Minimum segment length: every segment has at least min_segment samples (>= 1; >= 2 for
//   normal_meanvar).
//   segment_cost evaluates C (with the MBIC term) from prefix sums of the centred and scaled
//   series in O(1) and gives the PELT pruning constant K with C(a,c) >= C(a,b) + C(b,c) + K:
//   K = 0 for the likelihood costs, -ln(n/4) with the MBIC term.
// Accuracy: prefix sums are taken of (y - median) / scale in double, so long series with a large
//   offset do not cancel catastrophically; RSS is clamped at >= 0.
// Errors: an empty series throws failslow::invalid_argument; NaN/Inf in it throws
//   failslow::domain_error; bad options (negative penalty, min_segment 0, min_segment 1 with
//   normal_meanvar, sigma < 0) throw failslow::invalid_argument.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/error.hpp"

namespace failslow::detect {

enum class cost_model : std::uint8_t {
  normal_mean,     ///< piecewise-constant mean, one sigma for the whole series
  normal_meanvar,  ///< piecewise-constant mean and variance
};

/// The number of cost models (checked against to_string below).
inline constexpr std::size_t cost_model_count = 2;

/// "mean" or "meanvar" (R changepoint's cpt.mean / cpt.meanvar).
constexpr std::string_view to_string(cost_model m) noexcept {
  switch (m) {
    case cost_model::normal_mean:
      return "mean";
    case cost_model::normal_meanvar:
      return "meanvar";
  }
  return "mean";
}

enum class penalty_kind : std::uint8_t { bic, mbic, fixed };
/// The number of penalty kinds (checked against to_string below).
inline constexpr std::size_t penalty_kind_count = 3;

/// "bic", "mbic" or "fixed".
constexpr std::string_view to_string(penalty_kind k) noexcept {
  switch (k) {
    case penalty_kind::bic:
      return "bic";
    case penalty_kind::mbic:
      return "mbic";
    case penalty_kind::fixed:
      return "fixed";
  }
  return "bic";
}

static_assert(failslow::detail::enum_count_matches<cost_model>(cost_model_count),
              "cost_model_count is not the number of models");
static_assert(failslow::detail::enum_count_matches<penalty_kind>(penalty_kind_count),
              "penalty_kind_count is not the number of penalty kinds");

/// Parses a cost model's name ("mean" or "meanvar", as to_string prints it); throws
/// invalid_argument otherwise.
FAILSLOW_FUNC cost_model parse_cost_model(std::string_view s);

/// The price of one change point.
struct penalty {
  penalty_kind kind = penalty_kind::mbic;
  double value = 0.0;  ///< beta for penalty_kind::fixed
  static penalty bic() noexcept { return {penalty_kind::bic, 0.0}; }
  static penalty mbic() noexcept { return {penalty_kind::mbic, 0.0}; }
  static penalty fixed(double beta) noexcept { return {penalty_kind::fixed, beta}; }
};

/// Parses "bic", "mbic" or a number beta >= 0 written in full (penalty::fixed(beta)); throws
/// invalid_argument otherwise ("fixed" alone names no beta).
FAILSLOW_FUNC penalty parse_penalty(std::string_view s);

struct changepoint_options {
  cost_model model = cost_model::normal_mean;
  struct penalty pen = penalty::mbic();
  std::size_t min_segment = 2;  ///< smallest segment length (>= 1; >= 2 for normal_meanvar)
  double sigma = 0.0;           ///< normal_mean: noise sd; 0 estimates it (see the synopsis)
  double variance_floor = 0.0;  ///< normal_meanvar: smallest variance; 0 chooses it
  std::size_t max_changes = std::numeric_limits<std::size_t>::max();  ///< binary segmentation only
};

/// One segment of a segmentation, [begin, end).
struct segment {
  std::size_t begin = 0, end = 0;
  double mean = 0.0;
  double sd = 0.0;  ///< population sd (ddof 0) of the segment
};

/// A segmentation.
struct changepoint_result {
  std::vector<std::size_t> changes;    ///< first index of each new segment, ascending
  std::vector<segment> segments;       ///< changes.size() + 1 segments covering the series
  double cost = 0.0;                   ///< sum of segment costs + changes.size() * penalty
  double penalty = 0.0;                ///< beta used
  double sigma = 0.0;                  ///< sigma used by normal_mean (in the series' units); 0 otherwise
  std::uint64_t cost_evaluations = 0;  ///< segment costs evaluated (the work done)
};

/// Segment costs of one series (see the synopsis). Indices are [begin, end), 0 <= begin < end <= n.
class segment_cost {
 public:
  template <class Range>
  segment_cost(const Range& y, const changepoint_options& o) : model_(o.model) {
    for (const auto& v : y) raw_.push_back(static_cast<double>(v));
    init(o);
  }

  std::size_t size() const noexcept { return raw_.size(); }
  cost_model model() const noexcept { return model_; }
  double beta() const noexcept { return beta_; }
  double sigma() const noexcept { return sigma_; }
  bool mbic() const noexcept { return mbic_; }
  /// K of the PELT pruning rule.
  double pruning_constant() const noexcept { return k_; }

  /// Cost of y[begin, end) (with the MBIC length term when the penalty is MBIC).
  double operator()(std::size_t begin, std::size_t end) const noexcept {
    const double m = static_cast<double>(end - begin);
    const double s1 = s1_[end] - s1_[begin];
    const double rss = std::max(0.0, (s2_[end] - s2_[begin]) - s1 * s1 / m);
    double c;
    if (model_ == cost_model::normal_mean) {
      c = rss;  // already in units of sigma
    } else {
      const double v = std::max(rss / m, floor_);
      c = m * std::log(v) + rss / v;
    }
    return mbic_ ? c + std::log(m) : c;
  }

  /// Mean and population sd of y[begin, end) in the series' units.
  FAILSLOW_FUNC segment describe(std::size_t begin, std::size_t end) const noexcept;

  /// Turns a list of change points into a result (segments, cost).
  FAILSLOW_FUNC changepoint_result make_result(std::vector<std::size_t> changes, std::uint64_t evaluations) const;

 private:
  FAILSLOW_FUNC void init(const changepoint_options& o);

  FAILSLOW_FUNC double estimate_sigma() const;

  cost_model model_;
  std::vector<double> raw_, s1_, s2_;
  double centre_ = 0.0, scale_ = 1.0, sigma_ = 0.0, floor_ = 0.0;
  double beta_ = 0.0, k_ = 0.0;
  bool mbic_ = false;
};

}  // namespace failslow::detect

#if FAILSLOW_HEADER_ONLY
#include "failslow/detect/impl/segment_cost.ipp"
#endif
