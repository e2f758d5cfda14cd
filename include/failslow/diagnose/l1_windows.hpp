// failslow/diagnose/l1_windows.hpp -- L1: which steps of the job were slow, and how
// (a transient spike, a sustained shift, a growing drift, recurring spikes, warm-up).
//
// Synopsis
//   l1_result find_slow_windows(model, options)
//   series_analysis analyze_series(y, options)       the same on any series (NaN = no value)
//   The job's series is y_t = median over ranks of iteration_ns(rank, t) (in a synchronous job
//   every rank's period is the job's). On a series of T >= options.min_steps values, in log
//   space (step times are multiplicative and their noise right-skewed; x = ln y):
//     1. Segments: PELT (detect/pelt.hpp, normal mean, MBIC, minimum segment 1, its own
//        MAD-based noise scale). Noise s: the standard deviation of the first differences of x
//        within 3 robust scales of their median, / sqrt 2 (detail::trimmed_noise_scale), at
//        least noise_floor (timer resolution and scheduling jitter, relative). Thresholds are
//        in noise scales: zt, the Student-t quantile (stats/detail/student_t.hpp) at the tail
//        probability of z_threshold with one degree of freedom less than the differences
//        behind s (4.31 for 60 steps and z = 4; 12.3 for 7 steps), since s is itself estimated.
//     2. Baseline b: from the lowest-mean segment of at least max(min_baseline_steps,
//        min(T / 10, 10)) steps (the lowest-mean segment when none is that long) up, segments
//        join the baseline pool while their mean is within zt standard errors of the pool's;
//        ln b is the median of the pool's steps: the job's healthy pace, not the median of a
//        series whose later part may all be slow, nor the lowest of several levels that noise
//        made.
//     3. Slow steps: every step of a segment of at least min_baseline_steps steps outside the
//        pool whose median L (of x) satisfies L - ln b > zt * s * sqrt(1/length + 1/pool
//        length) and e^L / b - 1 > min_sustained_slowdown (a sustained shift, tested on the
//        segment as a whole); with single_steps, a step with x_t - ln b > zt * s and y_t / b - 1
//        > min_slowdown. Judged against the series' own spread, with a practical floor.
//     4. The sliding-window ratio gate (detect/ratio_gate.hpp: y_t / median of the previous
//        gate_window steps, frozen while open) is run for its evidence (gate_peak_ratio): in a
//        batch the tests above subsume it, as their baseline is the healthy pace, which a
//        sustained slowdown cannot drag up.
//     5. Windows: runs of slow steps (a single fast step between two slow runs, still above
//        b (1 + min_sustained_slowdown / 2), does not split them), classified:
//          warmup     starts at the first step, at most spike_max_steps long, then back to b
//          spike      at most spike_max_steps long and followed by a step back to normal, or
//                     shorter than min_baseline_steps at the end of the series (at_end: it
//                     may be the start of a shift the trace ends too early to show)
//          drift      longer, and y grows inside it: OLS slope t-statistic > drift_t and the
//                     last third's median excess at least twice the first third's
//          shift      longer, no growth: a level change (or one that lasts to the end)
//        recurring_min or more spikes become one `recurring` window listing its steps; its
//        period (recurrence_period of the spikes' first steps) is p when every gap between
//        them is a multiple of p and most are exactly p (a spike every 50 steps, one missed),
//        else 0 (irregular).
//   Per rank: each rank's own series is analysed the same way; a sustained rank window (shift
//   or drift) that overlaps no job window and where the rank runs more than min_slowdown slower
//   than the job's median is reported with that rank (asynchronous ranks, a job of independent
//   workers; a single step's period moves with where the step boundary falls in a pipeline).
//   Numbers per window: baseline b, observed (median of y over the window), peak (max and its
//   step), ratio observed / b (peak / b for spikes and warm-up), z = (ln observed - ln b) / s,
//   noise_ns = s * b, and
//   job_slowdown = sum (y_t - b) / sum y_t over the window's steps: the fraction of the job's
//   time lost there.
// Accuracy: with lognormal noise a step is called slow by chance with probability about
//   P(N(0,1) > z_threshold) = 3e-5 (z = 4); tests/test_diagnose_levels.cpp measures the
//   fraction of stationary 60-step series with any window (at most 2 % is required; heavier
//   tails raise it, which min_slowdown bounds in practice).
// Complexity: O(T log T) per series (PELT is linear in practice; gate O(T w)); per-rank
//   analysis O(R T log T).
// Errors: options out of range (min_slowdown < 0, z_threshold <= 0, spike_max_steps 0,
//   gate_window 0) throw invalid_argument. Series with fewer than min_steps values give no
//   windows (the result says why).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/enum_count.hpp"
#include "failslow/diagnose/job_model.hpp"

namespace failslow::diagnose {

struct l1_options {
  double min_slowdown = 0.05;            ///< a slow single step is at least 5 % slower than the baseline
  double min_sustained_slowdown = 0.02;  ///< a slow segment (a shift) at least 2 %
  double z_threshold = 4.0;              ///< ... and this many noise scales above it
  double noise_floor = 0.002;            ///< the noise scale is at least this fraction of the baseline
  std::size_t min_steps = 3;             ///< shortest series analysed
  std::size_t min_baseline_steps = 3;    ///< shortest segment that can be the baseline
  std::size_t gate_window = 10;          ///< ratio gate: median of the previous w steps
  std::size_t spike_max_steps = 2;       ///< longest spike (or warm-up)
  std::size_t recurring_min = 3;         ///< this many spikes make one recurring window
  double drift_t = 3.0;                  ///< slope t-statistic that makes a window a drift
  bool per_rank = true;                  ///< also analyse each rank's own series
  bool single_steps = true;              ///< flag single slow steps (false: sustained windows only)
};

enum class window_pattern : std::uint8_t { spike, warmup, recurring, shift, drift };
/// Number of window_pattern values (they are 0 .. window_pattern_count - 1).
inline constexpr std::size_t window_pattern_count = 5;

constexpr std::string_view to_string(window_pattern p) noexcept {
  switch (p) {
    case window_pattern::spike:
      return "spike";
    case window_pattern::warmup:
      return "warmup";
    case window_pattern::recurring:
      return "recurring";
    case window_pattern::shift:
      return "shift";
    case window_pattern::drift:
      return "drift";
  }
  return "spike";
}
static_assert(failslow::detail::enum_count_matches<window_pattern>(window_pattern_count),
              "window_pattern_count is not the number of window_pattern values");

/// A slow window; first/last/steps are indices into the series (job_model::steps).
struct slow_window {
  std::size_t first = 0, last = 0;
  std::vector<std::size_t>
      steps;  ///< the slow steps (all of first..last but single fast gaps; spikes of a recurring window)
  window_pattern pattern = window_pattern::shift;
  double baseline_ns = 0, observed_ns = 0, peak_ns = 0;
  std::size_t peak_index = 0;
  double ratio = 1, z = 0, job_slowdown = 0;
  double slope_ns_per_step = 0;  ///< OLS slope inside the window
  double noise_ns = 0;           ///< the series' noise scale, s * b
  double gate_peak_ratio = 0;    ///< largest ratio-gate ratio inside the window (0: none)
  bool at_end = false;           ///< a spike on the last steps of the series (it may go on)
  int rank = -1;                 ///< -1: the job's series; else the rank's own
};

/// What L1 found on one series.
struct series_analysis {
  std::size_t values = 0;  ///< finite values in the series
  double baseline_ns = std::numeric_limits<double>::quiet_NaN();
  double noise_ns = std::numeric_limits<double>::quiet_NaN();
  std::size_t baseline_first = 0, baseline_last = 0;  ///< the lowest baseline segment (series indices)
  std::size_t baseline_steps = 0;                     ///< steps in the baseline pool
  std::size_t noise_df = 0;  ///< degrees of freedom of the noise scale (differences behind it - 1)
  std::vector<slow_window> windows;
};

struct l1_result {
  std::vector<double> job_series;  ///< median iteration time per step (NaN: no rank has it)
  series_analysis job;
  std::vector<slow_window> rank_windows;  ///< per-rank windows outside every job window
  std::vector<std::string> notes;
};

/// The period of events at `starts` (ascending step numbers): p > 0 when every difference is a
/// multiple of p (their gcd) and more than half are exactly p; 0 when irregular or fewer than 3.
FAILSLOW_FUNC std::int64_t recurrence_period(const std::vector<std::int64_t>& starts);

/// L1 on one series (NaN entries are steps without a value).
FAILSLOW_FUNC series_analysis analyze_series(const std::vector<double>& y, const l1_options& o = {});

/// L1 on a job model: the job's series, then each rank's own (see the synopsis).
FAILSLOW_FUNC l1_result find_slow_windows(const job_model& m, const l1_options& o = {});

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/l1_windows.ipp"
#endif
