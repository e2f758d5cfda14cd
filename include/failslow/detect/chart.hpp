// failslow/detect/chart.hpp -- the vocabulary and the warm-up shared by the streaming charts
// (EWMA, CUSUM, BOCPD): chart states, which side is watched, how the in-control mean and sigma are
// known, and the bookkeeping every chart keeps around its statistic.
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
//                   into (mu, sigma), or nothing when the sample has no spread.
//   baseline_learner  the warm-up: keeps the last `warmup` finite values and estimates the
//                   baseline from them (running is learnt as warmup_robust); while they have no
//                   spread it keeps going on the most recent `warmup` values (extensions()).
//   detail::chart_stream  what every chart keeps besides its statistic: the stream position,
//                   skipped (NaN/inf) values, alarms, and the baseline, known or being learnt.
// Complexity: estimate_baseline O(n) (median/MAD by selection); baseline_learner::add O(1) per
//   value and O(warmup) each time a full window is estimated; O(warmup) memory until ready.
// Errors: estimate_baseline throws failslow::invalid_argument for an empty sample, and
//   baseline_learner for bad options; estimate_baseline returns no value when the estimated sigma is not positive and
//   finite (a constant warm-up cannot calibrate a chart: give sigma explicitly with baseline_mode::known).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "failslow/core/detail/enum_count.hpp"
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
/// Number of chart_state values (they are 0 .. chart_state_count - 1).
inline constexpr std::size_t chart_state_count = 4;

constexpr const char* to_string(chart_state s) noexcept {
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
static_assert(failslow::detail::enum_count_matches<chart_state>(chart_state_count),
              "chart_state_count is not the number of chart_state values");

/// Which departures a chart signals.
enum class chart_side : std::uint8_t {
  upper,  ///< increases only (a slower kernel or step)
  lower,  ///< decreases only
  both,   ///< either direction
};
/// Number of chart_side values (they are 0 .. chart_side_count - 1).
inline constexpr std::size_t chart_side_count = 3;

/// Where the in-control mean and sigma of a chart come from.
enum class baseline_mode : std::uint8_t {
  known,          ///< baseline_options::mu and sigma
  warmup,         ///< mean and sample sd (ddof 1) of the first warmup values
  warmup_robust,  ///< median and mad_normal of the first warmup values
  running,        ///< warmup_robust, then a clipped exponentially weighted running estimate
};
/// Number of baseline_mode values (they are 0 .. baseline_mode_count - 1).
inline constexpr std::size_t baseline_mode_count = 4;

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
/// running: median / 1.4826 MAD, falling back to the sd when more than half the values tie);
/// no value when the sample has no spread (sigma not positive and finite) or mu is not finite.
inline std::optional<baseline> estimate_baseline(const std::vector<double>& sample, baseline_mode mode) {
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
  if (!(b.sigma > 0.0) || !std::isfinite(b.sigma) || !std::isfinite(b.mu)) return std::nullopt;
  return b;
}

/// The warm-up of a chart: the baseline given (baseline_mode::known) or estimated from the last
/// `warmup` finite values (running is learnt as warmup_robust). A window without spread does not
/// calibrate: the learner keeps the most recent `warmup` values and tries again at each value.
class baseline_learner {
 public:
  /// Throws failslow::invalid_argument for bad options (see baseline_options).
  explicit baseline_learner(const baseline_options& options)
      : warmup_(options.warmup),
        mode_(options.mode == baseline_mode::running ? baseline_mode::warmup_robust : options.mode) {
    detail::check_baseline_options(options, "baseline_learner");
    if (options.mode == baseline_mode::known) base_ = baseline{options.mu, options.sigma};
  }

  /// Takes one finite value while !ready(); true when it completed the baseline.
  bool add(double x) {
    warm_.push_back(x);
    if (warm_.size() > warmup_) {
      warm_.pop_front();
      ++extensions_;
    }
    if (warm_.size() < warmup_) return false;
    base_ = estimate_baseline(std::vector<double>(warm_.begin(), warm_.end()), mode_);
    if (!base_) return false;  // no spread yet: keep warming up on the most recent values
    warm_.clear();
    warm_.shrink_to_fit();
    return true;
  }

  bool ready() const noexcept { return base_.has_value(); }
  /// The learnt (or given) baseline; meaningful once ready().
  baseline get() const noexcept { return base_.value_or(baseline{}); }
  /// Values beyond the first `warmup` that a warm-up without spread needed.
  std::uint64_t extensions() const noexcept { return extensions_; }

 private:
  std::size_t warmup_;
  baseline_mode mode_;
  std::deque<double> warm_;
  std::optional<baseline> base_;
  std::uint64_t extensions_ = 0;
};

namespace detail {

/// What each streaming chart keeps besides its statistic: the position in the stream, the
/// values skipped (NaN/inf), the alarms raised, and the baseline (known, or learnt by a
/// baseline_learner; a chart may move it afterwards, as EWMA's running mode does).
class chart_stream {
 public:
  explicit chart_stream(const baseline_options& options) : learner_(options) {
    if (learner_.ready()) base_ = learner_.get();
  }

  /// The position of the next value (then advances past it).
  std::uint64_t next_index() noexcept { return index_++; }

  /// True (and counted in skipped()) when x is NaN or infinite: the chart ignores it.
  bool skip(double x) noexcept {
    if (std::isfinite(x)) return false;
    ++skipped_;
    return true;
  }

  /// Feeds a finite value to the warm-up; true when the baseline became known with it.
  bool learn(double x) {
    if (!learner_.add(x)) return false;
    base_ = learner_.get();
    return true;
  }

  /// The state reported for a skipped value.
  chart_state idle_state() const noexcept { return ready() ? chart_state::in_control : chart_state::warming_up; }

  void count_alarm() noexcept { ++alarms_; }

  bool ready() const noexcept { return learner_.ready(); }
  const baseline& base() const noexcept { return base_; }
  baseline& base() noexcept { return base_; }
  std::uint64_t count() const noexcept { return index_; }
  std::uint64_t skipped() const noexcept { return skipped_; }
  std::uint64_t alarms() const noexcept { return alarms_; }
  std::uint64_t warmup_extensions() const noexcept { return learner_.extensions(); }

 private:
  baseline_learner learner_;
  baseline base_;
  std::uint64_t index_ = 0, skipped_ = 0, alarms_ = 0;
};

}  // namespace detail

}  // namespace failslow::detect
