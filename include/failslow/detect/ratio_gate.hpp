// failslow/detect/ratio_gate.hpp -- the sliding-window ratio gate of ARGUS L1: which steps of
// an iteration-time series are anomalously slow, as windows [first, last] with a peak ratio.
//
// Synopsis
//   r_s = x_s / median(x_{s-w}, ..., x_{s-1})          (the median of the previous w values)
//   A window opens at the first s with r_s > open_threshold. While open, a sample with
//   r_s >= close_threshold extends it (last = s, peak = max r); it closes after close_after
//   consecutive samples with r_s < close_threshold (hysteresis: close_threshold <=
//   open_threshold). The closing samples are not part of the window.
//   ratio_gate<T>        streaming: update(x) returns a ratio_gate_point (ratio, baseline,
//                        state, and the window that closed at this sample, if any); finish(w)
//                        closes a window still open at the end of the stream (true, window in w).
//   ratio_gate_scan(r)   batch over a range: ratios per sample (NaN where none) and windows.
//   Indices count every value given to update (skipped ones included), so they are positions
//   in the caller's series.
//   Baseline policy: by default every accepted value enters the window of w (the formula as
//   written; a sustained slowdown is absorbed after about w/2 samples and its window closes --
//   the change-point detectors find sustained shifts). With freeze_baseline_while_open, values
//   with r_s >= close_threshold inside an open window stay out of the baseline, so a sustained
//   slowdown keeps its window open.
// Complexity: O(w) per update (sorted window insert/erase), O(w) memory; scan O(n w).
// Accuracy: the median is numpy's (middle pair averaged); ratios are one division.
// Errors: bad options throw failslow::invalid_argument (window 0, min_history > window,
//   thresholds not finite or close > open, close_after 0). Streaming: values that are NaN,
//   infinite or <= 0 are skipped and counted (skipped()); they neither score nor enter the
//   baseline. ratio_gate_scan does the same (the count is in the result).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <type_traits>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/detect/detail/sorted_window.hpp"

namespace failslow::detect {

struct ratio_gate_options {
  std::size_t window = 10;                  ///< w: the baseline is the median of the previous w accepted values
  std::size_t min_history = 0;              ///< ratios start once this many values are in the window (0: w)
  double open_threshold = 1.2;              ///< open a window when r > open_threshold
  double close_threshold = 1.1;             ///< a sample with r < close_threshold counts towards closing
  std::size_t close_after = 1;              ///< consecutive samples below close_threshold that close a window
  bool freeze_baseline_while_open = false;  ///< see the synopsis
};

/// A slow window: samples first..last (inclusive), with its largest ratio.
struct gate_window {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t peak_index = 0;
  double peak_ratio = 0.0;
  std::uint64_t length() const noexcept { return last - first + 1; }
};

enum class gate_state : std::uint8_t {
  warming_up,  ///< fewer than min_history values in the baseline window
  closed,      ///< no window open
  open,        ///< inside a slow window
};
/// Number of gate_state values (they are 0 .. gate_state_count - 1).
inline constexpr std::size_t gate_state_count = 3;

enum class gate_event : std::uint8_t {
  none,
  opened,   ///< this sample opened a window
  closed,   ///< a window closed at this sample; ratio_gate_point::window holds it
  skipped,  ///< the value was NaN, infinite or <= 0 and was ignored
};
/// Number of gate_event values (they are 0 .. gate_event_count - 1).
inline constexpr std::size_t gate_event_count = 4;

/// The gate after one value.
struct ratio_gate_point {
  std::uint64_t index = 0;                                     ///< position of the value in the stream
  double ratio = std::numeric_limits<double>::quiet_NaN();     ///< r_s, NaN while warming up or skipped
  double baseline = std::numeric_limits<double>::quiet_NaN();  ///< the median it was divided by
  gate_state state = gate_state::warming_up;
  gate_event event = gate_event::none;
  gate_window window;  ///< the window that closed (event == closed)
};

template <class T = double>
class ratio_gate {
  static_assert(std::is_floating_point_v<T>, "ratio_gate needs a floating-point type");

 public:
  explicit ratio_gate(const ratio_gate_options& options = {}) : opt_(check(options)), history_(opt_.window) {}

  const ratio_gate_options& options() const noexcept { return opt_; }

  /// Scores x against the previous values and advances the gate.
  ratio_gate_point update(T x) {
    ratio_gate_point p;
    p.index = index_++;
    if (!std::isfinite(x) || !(x > T(0))) {
      ++skipped_;
      p.event = gate_event::skipped;
      p.state = state();
      return p;
    }
    if (history_.size() < min_history_) {
      history_.push(x);
      p.state = state();
      return p;
    }
    const double base = static_cast<double>(history_.median());
    const double r = static_cast<double>(x) / base;
    p.ratio = r;
    p.baseline = base;
    bool enters_baseline = true;
    if (!open_) {
      if (r > opt_.open_threshold) {
        open_ = true;
        below_ = 0;
        current_ = gate_window{p.index, p.index, p.index, r};
        p.event = gate_event::opened;
        enters_baseline = !opt_.freeze_baseline_while_open;
      }
    } else if (r >= opt_.close_threshold) {
      below_ = 0;
      current_.last = p.index;
      if (r > current_.peak_ratio) {
        current_.peak_ratio = r;
        current_.peak_index = p.index;
      }
      enters_baseline = !opt_.freeze_baseline_while_open;
    } else if (++below_ >= opt_.close_after) {
      open_ = false;
      p.event = gate_event::closed;
      p.window = current_;
    }
    if (enters_baseline) history_.push(x);
    p.state = state();
    return p;
  }

  /// Closes a window still open (at the end of the stream): true and the window in `out`, else false.
  bool finish(gate_window& out) noexcept {
    if (!open_) return false;
    open_ = false;
    out = current_;
    return true;
  }

  gate_state state() const noexcept {
    if (open_) return gate_state::open;
    return history_.size() < min_history_ ? gate_state::warming_up : gate_state::closed;
  }
  /// The window being extended (meaningful while state() == open).
  const gate_window& current_window() const noexcept { return current_; }
  /// Values given to update() so far, and how many of them were skipped (NaN, inf, <= 0).
  std::uint64_t count() const noexcept { return index_; }
  std::uint64_t skipped() const noexcept { return skipped_; }

  void reset() {
    history_.clear();
    open_ = false;
    below_ = 0;
    index_ = 0;
    skipped_ = 0;
  }

 private:
  static ratio_gate_options check(const ratio_gate_options& o) {
    if (o.window == 0) throw invalid_argument("ratio_gate: window must be >= 1");
    if (o.min_history > o.window) throw invalid_argument("ratio_gate: min_history must be <= window");
    if (!std::isfinite(o.open_threshold) || !std::isfinite(o.close_threshold))
      throw invalid_argument("ratio_gate: thresholds must be finite");
    if (o.close_threshold > o.open_threshold)
      throw invalid_argument("ratio_gate: close_threshold must be <= open_threshold");
    if (o.close_after == 0) throw invalid_argument("ratio_gate: close_after must be >= 1");
    return o;
  }

  ratio_gate_options opt_;
  std::size_t min_history_ = opt_.min_history == 0 ? opt_.window : opt_.min_history;
  detail::sorted_window<T> history_;
  bool open_ = false;
  std::size_t below_ = 0;
  gate_window current_;
  std::uint64_t index_ = 0, skipped_ = 0;
};

/// Ratios and windows of a whole series.
struct ratio_gate_result {
  std::vector<double> ratios;        ///< one per input value; NaN while warming up or skipped
  std::vector<gate_window> windows;  ///< in order; a window open at the end is closed there
  std::uint64_t skipped = 0;         ///< values that were NaN, infinite or <= 0
};

template <class It>
ratio_gate_result ratio_gate_scan(It first, It last, const ratio_gate_options& options) {
  using V = std::decay_t<decltype(*first)>;
  using T = std::conditional_t<std::is_floating_point_v<V>, V, double>;
  ratio_gate<T> gate(options);
  ratio_gate_result out;
  for (; first != last; ++first) {
    const auto p = gate.update(static_cast<T>(*first));
    out.ratios.push_back(p.ratio);
    if (p.event == gate_event::closed) out.windows.push_back(p.window);
  }
  gate_window w;
  if (gate.finish(w)) out.windows.push_back(w);
  out.skipped = gate.skipped();
  return out;
}

template <class Range>
ratio_gate_result ratio_gate_scan(const Range& series, const ratio_gate_options& options = {}) {
  return ratio_gate_scan(std::begin(series), std::end(series), options);
}

}  // namespace failslow::detect
