// failslow/detect/cusum.hpp -- Page's two-sided CUSUM chart (Page 1954), streaming.
//
// Synopsis
//   With the in-control mean mu and sd sigma, u_t = (x_t - mu) / sigma and
//     S+_t = max(0, S+_{t-1} + u_t - k),    S-_t = max(0, S-_{t-1} - u_t - k),    S_0 = 0;
//   alarm when S+_t > h (upward shift, watched for chart_side upper/both) or S-_t > h
//   (downward, lower/both). k (the reference value, half the shift to detect, in sigma) and
//   h (the decision interval, in sigma) are options; k = 0.5, h = 5 gives an in-control average
//   run length of about 930 per side (about 465 two-sided; Brook & Evans 1972 Markov chain),
//   and detects a 1-sigma shift in about 10 samples.
//   At an alarm the change is estimated to have started just after the last time the alarming
//   sum was 0 (Page's estimator): cusum_point::change_start.
//   reset_after_alarm (default true) restarts both sums at 0 after an alarm, so a persisting
//   shift alarms again about every h / (delta - k) samples; false keeps accumulating.
//   The baseline (mu, sigma) is known or learnt from a warm-up (failslow/detect/chart.hpp;
//   baseline_mode::running is treated as warmup_robust).
// Complexity: O(1) per update; O(warmup) memory during the warm-up, O(1) after.
// Errors: bad options throw failslow::invalid_argument (k < 0, h <= 0, bad baseline). NaN and
//   infinite values are skipped and counted (skipped()). A warm-up without spread (all values
//   equal) is extended, keeping the last `warmup` values, until the values spread
//   (warmup_extensions() counts the extra values).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "failslow/core/error.hpp"
#include "failslow/detect/chart.hpp"

namespace failslow::detect {

struct cusum_options {
  double k = 0.5;  ///< reference value (sigma units), >= 0
  double h = 5.0;  ///< decision interval (sigma units), > 0
  chart_side side = chart_side::both;
  struct baseline_options baseline;  ///< default: robust warm-up of 30 values
  bool reset_after_alarm = true;
};

struct cusum_point {
  std::uint64_t index = 0;  ///< position of the value in the stream
  double upper = 0.0;       ///< S+ after this value
  double lower = 0.0;       ///< S- after this value
  chart_state state = chart_state::warming_up;
  int direction = 0;               ///< +1 upward alarm, -1 downward alarm, 0 none
  std::uint64_t change_start = 0;  ///< estimated first index of the shift (when alarmed)
  bool skipped = false;            ///< the value was NaN or infinite and was ignored
};

template <class T = double>
class cusum {
  static_assert(std::is_floating_point_v<T>, "cusum needs a floating-point type");

 public:
  explicit cusum(const cusum_options& options = {}) : opt_(check(options)), stream_(opt_.baseline) {}

  const cusum_options& options() const noexcept { return opt_; }

  cusum_point update(T value) {
    cusum_point p;
    p.index = stream_.next_index();
    const double x = static_cast<double>(value);
    if (stream_.skip(x)) {
      p.skipped = true;
      p.upper = sp_;
      p.lower = sm_;
      p.state = stream_.idle_state();
      return p;
    }
    if (!stream_.ready()) {
      if (stream_.learn(x)) restart(stream_.count());
      return p;
    }
    const baseline& base = stream_.base();
    const double u = (x - base.mu) / base.sigma;
    sp_ = std::max(0.0, sp_ + u - opt_.k);
    sm_ = std::max(0.0, sm_ - u - opt_.k);
    if (sp_ == 0.0) zero_up_ = p.index + 1;
    if (sm_ == 0.0) zero_down_ = p.index + 1;
    p.upper = sp_;
    p.lower = sm_;
    p.state = chart_state::in_control;
    const bool up = opt_.side != chart_side::lower && sp_ > opt_.h;
    const bool down = opt_.side != chart_side::upper && sm_ > opt_.h;
    if (up || down) {
      p.state = chart_state::alarm;
      // Both at once cannot happen (one of the sums is 0 whenever the other grows by > k).
      p.direction = up ? 1 : -1;
      p.change_start = up ? zero_up_ : zero_down_;
      stream_.count_alarm();
      if (opt_.reset_after_alarm) restart(p.index + 1);
    }
    return p;
  }

  /// Restarts both sums (keeps the baseline).
  void restart() noexcept { restart(stream_.count()); }

  bool ready() const noexcept { return stream_.ready(); }
  baseline in_control() const noexcept { return stream_.base(); }
  double upper() const noexcept { return sp_; }
  double lower() const noexcept { return sm_; }
  std::uint64_t count() const noexcept { return stream_.count(); }
  std::uint64_t skipped() const noexcept { return stream_.skipped(); }
  std::uint64_t alarms() const noexcept { return stream_.alarms(); }
  std::uint64_t warmup_extensions() const noexcept { return stream_.warmup_extensions(); }

 private:
  static cusum_options check(const cusum_options& o) {
    if (!(o.k >= 0.0) || !std::isfinite(o.k)) throw invalid_argument("cusum: k must be >= 0");
    if (!(o.h > 0.0) || !std::isfinite(o.h)) throw invalid_argument("cusum: h must be > 0");
    detail::check_baseline_options(o.baseline, "cusum");
    return o;
  }

  void restart(std::uint64_t next) noexcept {
    sp_ = sm_ = 0.0;
    zero_up_ = zero_down_ = next;
  }

  cusum_options opt_;
  detail::chart_stream stream_;
  double sp_ = 0.0, sm_ = 0.0;
  std::uint64_t zero_up_ = 0, zero_down_ = 0;
};

}  // namespace failslow::detect
