// failslow/detect/chart.hpp -- the vocabulary shared by the streaming control charts (EWMA,
// CUSUM): chart states, which side is watched, and how the in-control mean and sigma are known.
//
// Synopsis
//   chart_state     warming_up (the baseline is still being learnt), in_control,
//                   trend_warning (a run rule fired, the limits did not), alarm (beyond a limit)
//   chart_side      upper (slowdowns of a duration), lower, both
//   baseline_mode   known          mu and sigma given by the caller
//                   warmup         mean and sample sd (ddof 1) of the first n accepted values
//                   warmup_robust  median and 1.4826 * MAD of the first n accepted values
//                                  (failslow::stats::median / mad_normal)
//                   running        warmup_robust, then a Huber-clipped exponentially weighted
//                                  running estimate (charts that support it: EWMA)
//   baseline_options  the mode and its parameters; estimate_baseline() turns a warm-up sample
//                   into (mu, sigma).
// Complexity: estimate_baseline O(n) (median/MAD by selection).
// Errors: estimate_baseline throws failslow::invalid_argument for an empty sample and
//   failslow::domain_error when the estimated sigma is not positive and finite (a constant
//   warm-up cannot calibrate a chart: give sigma explicitly with baseline_mode::known).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::detect {

/// State of a control chart after one observation.
enum class chart_state : std::uint8_t {
  warming_up,     ///< the in-control mean and sigma are still being estimated; no signals
  in_control,     ///< inside the limits and no run rule fired
  trend_warning,  ///< a trend / run rule fired while the statistic is inside the limits
  alarm,          ///< the statistic is beyond a control limit
};

inline const char* to_string(chart_state s) noexcept {
  switch (s) {
    case chart_state::warming_up:
      return "warming_up";
    case chart_state::in_control:
      return "in_control";
    case chart_state::trend_warning:
      return "trend_warning";
    case chart_state::alarm:
      return "alarm";
  }
  return "?";
}

/// Which departures a chart signals.
enum class chart_side : std::uint8_t {
  upper,  ///< increases only (a slower kernel or step)
  lower,  ///< decreases only
  both,   ///< either direction
};

/// Where the in-control mean and sigma of a chart come from.
enum class baseline_mode : std::uint8_t {
  known,          ///< baseline_options::mu and sigma
  warmup,         ///< mean and sample sd (ddof 1) of the first warmup values
  warmup_robust,  ///< median and mad_normal of the first warmup values
  running,        ///< warmup_robust, then a clipped exponentially weighted running estimate
};

struct baseline_options {
  baseline_mode mode = baseline_mode::warmup_robust;
  double mu = 0.0;               ///< in-control mean (mode known)
  double sigma = 1.0;            ///< in-control standard deviation (mode known), > 0
  std::size_t warmup = 30;       ///< values used to estimate the baseline (other modes), >= 2
  double running_weight = 0.01;  ///< forgetting factor of the running estimate, in (0, 1]
  double running_clip = 3.0;     ///< deviations clipped at +-clip * sigma before they update it, > 0
};

/// In-control mean and standard deviation.
struct baseline {
  double mu = 0.0;
  double sigma = 1.0;
};

namespace detail {

inline void check_baseline_options(const baseline_options& o, const char* who) {
  const std::string w(who);
  if (o.mode == baseline_mode::known) {
    if (!std::isfinite(o.mu)) throw invalid_argument(w + ": baseline mu must be finite");
    if (!(o.sigma > 0.0) || !std::isfinite(o.sigma)) throw invalid_argument(w + ": baseline sigma must be > 0");
  } else if (o.warmup < 2) {
    throw invalid_argument(w + ": warm-up needs at least 2 values");
  }
  if (o.mode == baseline_mode::running) {
    if (!(o.running_weight > 0.0 && o.running_weight <= 1.0))
      throw invalid_argument(w + ": running_weight must be in (0, 1]");
    if (!(o.running_clip > 0.0)) throw invalid_argument(w + ": running_clip must be > 0");
  }
}

}  // namespace detail

/// (mu, sigma) from a warm-up sample under `mode` (warmup: mean / sd; warmup_robust and
/// running: median / 1.4826 MAD, falling back to the sd when more than half the values tie).
inline baseline estimate_baseline(const std::vector<double>& sample, baseline_mode mode) {
  if (sample.empty()) throw invalid_argument("estimate_baseline: empty warm-up sample");
  baseline b;
  if (mode == baseline_mode::warmup || mode == baseline_mode::known) {
    const auto m = stats::moments(sample);
    b.mu = m.mean();
    b.sigma = m.stddev();
  } else {
    b.mu = stats::median(sample);
    b.sigma = stats::mad_normal(sample);
    if (!(b.sigma > 0.0)) b.sigma = stats::moments(sample).stddev();
  }
  if (!(b.sigma > 0.0) || !std::isfinite(b.sigma) || !std::isfinite(b.mu))
    throw domain_error("estimate_baseline: the warm-up sample has no spread; give sigma with baseline_mode::known");
  return b;
}

}  // namespace failslow::detect
