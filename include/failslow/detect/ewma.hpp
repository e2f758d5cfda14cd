// failslow/detect/ewma.hpp -- EWMA control chart with a trend rule, streaming (KAT's
// intra-worker detector: one chart per kernel per worker).
//
// Synopsis
//   z_t = lambda x_t + (1 - lambda) z_{t-1},   z_0 = mu (the in-control mean)
//   limits (mu_{t-1}, sigma_{t-1}: the in-control mean and sd known before x_t arrives):
//     asymptotic (default, KAT's formula with L = 3 in the seed):
//        UCL_t = mu_{t-1} + L sigma_{t-1} sqrt(lambda / (2 - lambda)),  LCL_t = mu_{t-1} - (same)
//     exact (time-varying; narrower for the first points after a start):
//        the width above times sqrt(1 - (1 - lambda)^(2i)), i = values charted since the start
//   alarm: z_t > UCL_t (chart_side upper/both) or z_t < LCL_t (lower/both).
//   Baseline (failslow/detect/chart.hpp): known, warm-up (mean/sd), robust warm-up (median/MAD),
//   or running: after a robust warm-up, mu and sigma follow the data with forgetting factor w
//   and Huber clipping at c sigma, from values that did not alarm:
//        d = clamp(x - mu, -c sigma, c sigma);  mu += w d;
//        sigma^2 <- (1 - w) sigma^2 + w d^2 / E[min(Z^2, c^2)]      (Z standard normal)
//   Trend rule (the seed: "5 consecutive points moving in one direction raise a warning"): the
//   last k moves of the observations (or of z, trend_source::statistic) all strictly up
//   (upper/both) or all strictly down (lower/both); k = trend_run (5; 0 turns it off). For iid
//   continuous observations it fires on a fraction 1/(k+1)! of points per direction (k = 5:
//   1/720; 2/720 for both), independent of the distribution. Optionally the Western Electric /
//   Nelson run rules (failslow/detect/run_rules.hpp) on (x - mu) / sigma.
//   States: warming_up, in_control, trend_warning (trend or run rule, inside the limits), alarm.
//   In-control average run length (asymptotic limits, known baseline, two-sided) follows Lucas &
//   Saccucci (1990): lambda 0.2, L 2.962 -> 500; 0.1, 2.814 -> 500; 0.05, 2.615 -> 500;
//   lambda 1, L 3 (Shewhart) -> 370.4. failslow/detect/ewma_design.hpp computes it for any
//   (lambda, L, shift) and finds L for a target ARL.
// Complexity: O(1) per update (O(15) with run rules); O(warmup) memory while warming up.
// Errors: bad options throw failslow::invalid_argument (lambda outside (0, 1], L <= 0, bad
//   baseline). NaN/Inf values are skipped and counted (skipped()). A warm-up without spread is
//   extended on the most recent `warmup` values until they spread (warmup_extensions()).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "failslow/core/error.hpp"
#include "failslow/detect/chart.hpp"
#include "failslow/detect/run_rules.hpp"

namespace failslow::detect {

enum class ewma_limits : std::uint8_t {
  asymptotic,  ///< the steady-state width (KAT's formula)
  exact,       ///< the width of the variance of z_i after i values
};
/// Number of ewma_limits values (they are 0 .. ewma_limits_count - 1).
inline constexpr std::size_t ewma_limits_count = 2;

enum class trend_source : std::uint8_t {
  observation,  ///< moves of x (distribution-free false-alarm rate 1/(k+1)! per direction)
  statistic,    ///< moves of z (smoother, fires more often under noise)
};
/// Number of trend_source values (they are 0 .. trend_source_count - 1).
inline constexpr std::size_t trend_source_count = 2;

struct ewma_options {
  double lambda = 0.2;  ///< smoothing weight in (0, 1]; 1 is a Shewhart chart
  double L = 3.0;       ///< limit width in sigmas of z
  ewma_limits limits = ewma_limits::asymptotic;
  chart_side side = chart_side::both;
  struct baseline_options baseline;  ///< default: robust warm-up of 30 values
  std::size_t trend_run = 5;         ///< k moves in one direction raise trend_warning; 0: off
  trend_source trend_on = trend_source::observation;
  std::uint32_t rules = 0;         ///< run_rule bits checked on (x - mu) / sigma; 0: none
  bool reset_after_alarm = false;  ///< restart z at mu (and the exact limits) after an alarm
};

/// The chart after one value.
struct ewma_point {
  std::uint64_t index = 0;  ///< position of the value in the stream
  double x = 0.0;           ///< the value
  double z = 0.0;           ///< the EWMA statistic after it
  double centre = 0.0;      ///< mu_{t-1}
  double ucl = 0.0, lcl = 0.0;
  chart_state state = chart_state::warming_up;
  int direction = 0;              ///< +1 above / rising, -1 below / falling (alarm or trend), 0 none
  bool trend = false;             ///< the trend rule fired
  std::uint32_t rules_fired = 0;  ///< run_rule bits that fired
  bool skipped = false;           ///< the value was NaN or infinite and was ignored
};

template <class T = double>
class ewma_chart {
  static_assert(std::is_floating_point_v<T>, "ewma_chart needs a floating-point type");

 public:
  explicit ewma_chart(const ewma_options& options = {})
      : opt_(check(options)),
        stream_(opt_.baseline),
        rules_(opt_.rules, opt_.side),
        factor_(std::sqrt(opt_.lambda / (2.0 - opt_.lambda))),
        clip_norm_(clipped_second_moment(opt_.baseline.running_clip)) {
    if (stream_.ready()) restart();
  }

  const ewma_options& options() const noexcept { return opt_; }

  ewma_point update(T value) {
    ewma_point p;
    p.index = stream_.next_index();
    const double x = static_cast<double>(value);
    p.x = x;
    if (stream_.skip(x)) {
      p.skipped = true;
      p.z = z_;
      p.state = stream_.idle_state();
      return p;
    }
    const int move = have_prev_ ? (x > prev_x_ ? 1 : (x < prev_x_ ? -1 : 0)) : 0;
    have_prev_ = true;
    prev_x_ = x;
    if (!stream_.ready()) {
      if (stream_.learn(x)) restart();
      p.z = z_;
      return p;
    }
    const double mu = stream_.base().mu, sigma = stream_.base().sigma;
    const double z_prev = z_;
    z_ = opt_.lambda * x + (1.0 - opt_.lambda) * z_;
    ++charted_;
    double width = opt_.L * sigma * factor_;
    if (opt_.limits == ewma_limits::exact)
      width *= std::sqrt(1.0 - std::pow(1.0 - opt_.lambda, 2.0 * static_cast<double>(charted_)));
    p.z = z_;
    p.centre = mu;
    p.ucl = mu + width;
    p.lcl = mu - width;
    const bool up = opt_.side != chart_side::lower && z_ > p.ucl;
    const bool down = opt_.side != chart_side::upper && z_ < p.lcl;

    const int m = opt_.trend_on == trend_source::observation ? move : (z_ > z_prev ? 1 : (z_ < z_prev ? -1 : 0));
    up_run_ = m > 0 ? up_run_ + 1 : 0;
    down_run_ = m < 0 ? down_run_ + 1 : 0;
    int trend_dir = 0;
    if (opt_.trend_run > 0) {
      if (opt_.side != chart_side::lower && up_run_ >= opt_.trend_run) trend_dir = 1;
      if (opt_.side != chart_side::upper && down_run_ >= opt_.trend_run) trend_dir = -1;
    }
    p.trend = trend_dir != 0;
    if (opt_.rules != 0) p.rules_fired = rules_.check((x - mu) / sigma);

    if (up || down) {
      p.state = chart_state::alarm;
      p.direction = up ? 1 : -1;
      stream_.count_alarm();
    } else if (p.trend || p.rules_fired != 0) {
      p.state = chart_state::trend_warning;
      p.direction = trend_dir != 0 ? trend_dir : (x >= mu ? 1 : -1);
      ++warnings_;
    } else {
      p.state = chart_state::in_control;
    }

    if (opt_.baseline.mode == baseline_mode::running && p.state != chart_state::alarm) {
      const double c = opt_.baseline.running_clip * sigma;
      const double d = std::clamp(x - mu, -c, c);
      const double w = opt_.baseline.running_weight;
      baseline& base = stream_.base();
      base.mu = mu + w * d;
      const double v = (1.0 - w) * sigma * sigma + w * d * d / clip_norm_;
      if (v > 0.0 && std::isfinite(v)) base.sigma = std::sqrt(v);
    }
    if (p.state == chart_state::alarm && opt_.reset_after_alarm) restart();
    return p;
  }

  /// Restarts z at the current in-control mean (and the exact limits at i = 0).
  void restart() noexcept {
    z_ = stream_.base().mu;
    charted_ = 0;
    up_run_ = down_run_ = 0;
    rules_.clear();
  }

  bool ready() const noexcept { return stream_.ready(); }
  /// The current in-control mean and sd (mu_{t}, sigma_{t}).
  baseline in_control() const noexcept { return stream_.base(); }
  double statistic() const noexcept { return z_; }
  std::uint64_t count() const noexcept { return stream_.count(); }
  std::uint64_t skipped() const noexcept { return stream_.skipped(); }
  std::uint64_t alarms() const noexcept { return stream_.alarms(); }
  std::uint64_t warnings() const noexcept { return warnings_; }
  std::uint64_t warmup_extensions() const noexcept { return stream_.warmup_extensions(); }

 private:
  static ewma_options check(const ewma_options& o) {
    if (!(o.lambda > 0.0 && o.lambda <= 1.0)) throw invalid_argument("ewma_chart: lambda must be in (0, 1]");
    if (!(o.L > 0.0) || !std::isfinite(o.L)) throw invalid_argument("ewma_chart: L must be > 0");
    detail::check_baseline_options(o.baseline, "ewma_chart");
    return o;
  }

  // E[min(Z^2, c^2)] for a standard normal Z: makes the clipped variance update consistent.
  static double clipped_second_moment(double c) noexcept {
    if (!(c > 0.0)) return 1.0;
    const double pi = 3.14159265358979323846;
    const double tail = 0.5 * std::erfc(c / std::sqrt(2.0));  // P(Z > c)
    const double phi = std::exp(-0.5 * c * c) / std::sqrt(2.0 * pi);
    return (1.0 - 2.0 * tail) - 2.0 * c * phi + 2.0 * c * c * tail;
  }

  ewma_options opt_;
  detail::chart_stream stream_;
  run_rules_checker rules_;
  double factor_;     // sqrt(lambda / (2 - lambda))
  double clip_norm_;  // E[min(Z^2, c^2)]
  double z_ = 0.0;
  double prev_x_ = 0.0;
  bool have_prev_ = false;
  std::size_t up_run_ = 0, down_run_ = 0;
  std::uint64_t charted_ = 0;
  std::uint64_t warnings_ = 0;
};

}  // namespace failslow::detect
