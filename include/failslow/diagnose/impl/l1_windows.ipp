// failslow/diagnose/impl/l1_windows.ipp -- the definitions of diagnose/l1_windows.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/detect/pelt.hpp"
#include "failslow/detect/ratio_gate.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/student_t.hpp"

namespace failslow::diagnose {

FAILSLOW_FUNC_DEF std::int64_t recurrence_period(const std::vector<std::int64_t>& starts) {
  if (starts.size() < 3) return 0;
  std::int64_t p = 0;
  std::size_t exact = 0;
  for (std::size_t k = 1; k < starts.size(); ++k) p = std::gcd(p, starts[k] - starts[k - 1]);
  for (std::size_t k = 1; k < starts.size(); ++k) exact += starts[k] - starts[k - 1] == p ? 1 : 0;
  return p > 0 && 2 * exact > starts.size() - 1 ? p : 0;
}

}  // namespace failslow::diagnose

namespace failslow::diagnose::detail {

template <class = void>
inline void check(const l1_options& o) {
  if (!(o.min_slowdown >= 0) || !(o.min_sustained_slowdown >= 0) || !(o.z_threshold > 0) || !(o.noise_floor >= 0) ||
      o.spike_max_steps == 0 || o.gate_window == 0 || o.min_steps < 2 || o.min_baseline_steps == 0 ||
      o.recurring_min < 2 || !(o.drift_t > 0))
    throw invalid_argument(
        "l1_options: min_slowdown >= 0, z_threshold > 0, noise_floor >= 0, spike_max_steps >= 1, "
        "gate_window >= 1, min_steps >= 2, min_baseline_steps >= 1, recurring_min >= 2, drift_t > 0");
}

// OLS slope of v against 0..n-1 and its t-statistic (0, 0 when undefined).
template <class = void>
inline std::pair<double, double> ols_slope(const std::vector<double>& v) {
  const std::size_t n = v.size();
  if (n < 3) return {0, 0};
  const double xm = static_cast<double>(n - 1) / 2;
  double ym = 0;
  for (double y : v) ym += y;
  ym /= static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += (static_cast<double>(i) - xm) * (static_cast<double>(i) - xm);
    sxy += (static_cast<double>(i) - xm) * (v[i] - ym);
  }
  const double slope = sxy / sxx;
  double rss = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = v[i] - ym - slope * (static_cast<double>(i) - xm);
    rss += r * r;
  }
  const double se = std::sqrt(rss / static_cast<double>(n - 2) / sxx);
  if (!(se > 0)) return {slope, slope > 0 ? std::numeric_limits<double>::infinity() : 0.0};
  return {slope, slope / se};
}

// Noise scale of a series from its first differences d: sigma0 = 1.4826 MAD(d) / sqrt 2, then
// the standard deviation of the differences within 3 sqrt(2) sigma0 of their median, divided by
// sqrt 2 and by 0.98658 (the sd of a normal truncated at +-3 sd): robust to the few large
// differences that shifts and spikes make, and far less noisy than the MAD alone (which
// underestimates the scale by a third in 2 % of 60-step series).
// Returns the scale and the number of differences behind it.
template <class = void>
inline std::pair<double, std::size_t> trimmed_noise_scale(const std::vector<double>& d) {
  if (d.size() < 2) return {0.0, 0};
  const double med = stats::median(d);
  const double s0 = stats::mad_normal(d);
  if (!(s0 > 0)) return {0.0, d.size()};
  double sum = 0, sum2 = 0, n = 0;
  for (double x : d)
    if (std::fabs(x - med) <= 3 * s0) {
      sum += x;
      sum2 += x * x;
      n += 1;
    }
  if (n < 2) return {s0 / std::sqrt(2.0), d.size()};
  const double var = std::max(0.0, (sum2 - sum * sum / n) / (n - 1));
  return {std::sqrt(var) / std::sqrt(2.0) / 0.98658, static_cast<std::size_t>(n)};
}

// The threshold in estimated noise scales: the Student-t quantile with nu degrees of freedom at
// the upper-tail probability of the normal quantile z, so that a scale estimated from few
// differences keeps the false-alarm rate of z (4 -> 4.31 at nu 59, 12.3 at nu 5).
template <class = void>
inline double t_threshold(double z, double nu) {
  const double p = 0.5 * std::erfc(z / std::sqrt(2.0));
  return stats::detail::student_t_upper_quantile(p, nu >= 1 ? static_cast<std::uint64_t>(nu) : 1);
}

}  // namespace failslow::diagnose::detail

namespace failslow::diagnose {

FAILSLOW_FUNC_DEF series_analysis analyze_series(const std::vector<double>& y, const l1_options& o) {
  detail::check(o);
  series_analysis out;
  std::vector<std::size_t> at;  // series index of each finite value
  std::vector<double> v;
  for (std::size_t i = 0; i < y.size(); ++i)
    if (std::isfinite(y[i]) && y[i] > 0) {
      at.push_back(i);
      v.push_back(y[i]);
    }
  out.values = v.size();
  if (v.size() < o.min_steps) return out;
  const std::size_t T = v.size();

  // 1-3: segments, noise, baseline -- on log iteration times: step times are multiplicative
  // (a slowdown scales them) and their noise is right-skewed, which the log makes symmetric.
  std::vector<double> lv(T);
  for (std::size_t i = 0; i < T; ++i) lv[i] = std::log(v[i]);
  detect::changepoint_options cp;
  cp.min_segment = 1;  // a spike is a segment of its own, not half of a pair
  const auto seg = detect::pelt(lv, cp);
  std::vector<double> diffs;
  for (std::size_t i = 1; i < T; ++i) diffs.push_back(lv[i] - lv[i - 1]);
  const auto [scale, scale_n] = detail::trimmed_noise_scale(diffs);
  double s = std::max(scale, o.noise_floor);
  // The scale is estimated: with few differences behind it the threshold widens (Student t).
  const double zt = detail::t_threshold(o.z_threshold, static_cast<double>(scale_n) - 1);
  out.noise_df = scale_n > 1 ? scale_n - 1 : 0;
  // The baseline pools, from the lowest-mean segment up, every segment whose mean is not
  // significantly above the pool's (PELT also splits noise: the lowest of several noisy levels
  // alone would bias b low and call the rest slow).
  std::vector<std::size_t> order(seg.segments.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto seg_len = [&](std::size_t i) { return seg.segments[i].end - seg.segments[i].begin; };
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t z) { return seg.segments[x].mean < seg.segments[z].mean; });
  // A baseline segment has at least min_baseline_steps steps, more in long series (T / 10, up to
  // 10): a short dip that noise made is no healthy pace.
  const std::size_t min_base = std::max(o.min_baseline_steps, std::min<std::size_t>(T / 10, 10));
  std::size_t first = order.front();
  for (std::size_t i : order)
    if (seg_len(i) >= min_base) {
      first = i;
      break;
    }
  std::vector<char> pooled(seg.segments.size(), 0);
  pooled[first] = 1;
  double pool_sum = seg.segments[first].mean * static_cast<double>(seg_len(first));
  double pool_n = static_cast<double>(seg_len(first));
  for (std::size_t i : order) {
    if (pooled[i] || seg.segments[i].mean < seg.segments[first].mean) continue;
    const double n1 = static_cast<double>(seg_len(i));
    if (seg.segments[i].mean - pool_sum / pool_n > zt * s * std::sqrt(1 / n1 + 1 / pool_n)) break;
    pooled[i] = 1;
    pool_sum += seg.segments[i].mean * n1;
    pool_n += n1;
  }
  std::vector<double> base_values;
  for (std::size_t i = 0; i < seg.segments.size(); ++i)
    if (pooled[i])
      base_values.insert(base_values.end(), lv.begin() + static_cast<std::ptrdiff_t>(seg.segments[i].begin),
                         lv.begin() + static_cast<std::ptrdiff_t>(seg.segments[i].end));
  const double lb = stats::median(base_values);
  const double b = std::exp(lb);
  out.baseline_ns = b;
  out.noise_ns = s * b;
  out.baseline_steps = static_cast<std::size_t>(pool_n);
  out.baseline_first = at[seg.segments[first].begin];
  out.baseline_last = at[seg.segments[first].end - 1];

  // 4: slow steps: whole segments that sit above the baseline, and single steps that do.
  std::vector<char> slow(T, 0);
  for (std::size_t i = 0; i < seg.segments.size(); ++i) {
    const auto& sg = seg.segments[i];
    if (pooled[i] || seg_len(i) < o.min_baseline_steps) continue;
    const std::vector<double> part(lv.begin() + static_cast<std::ptrdiff_t>(sg.begin),
                                   lv.begin() + static_cast<std::ptrdiff_t>(sg.end));
    const double level = stats::median(part) - lb;
    const double n1 = static_cast<double>(part.size());
    if (level > zt * s * std::sqrt(1 / n1 + 1 / pool_n) && std::expm1(level) > o.min_sustained_slowdown)
      std::fill(slow.begin() + static_cast<std::ptrdiff_t>(sg.begin),
                slow.begin() + static_cast<std::ptrdiff_t>(sg.end), char{1});
  }
  for (std::size_t t = 0; t < T; ++t)
    if (o.single_steps && lv[t] - lb > zt * s && std::expm1(lv[t] - lb) > o.min_slowdown) slow[t] = 1;
  // The ARGUS ratio gate (y_t / median of the previous steps) for the evidence: in a batch the
  // baseline tests above subsume it (their baseline is the healthy level, which a sustained
  // slowdown cannot drag up), while its ratio is what an online monitor would have alarmed on.
  detect::ratio_gate_options g;
  g.window = o.gate_window;
  g.min_history = std::min<std::size_t>(o.gate_window, 3);
  g.open_threshold = 1 + o.min_slowdown;
  g.close_threshold = 1 + o.min_slowdown / 2;
  g.freeze_baseline_while_open = true;
  detect::ratio_gate<double> gate(g);
  std::vector<double> gate_ratio(T, 0);
  for (std::size_t t = 0; t < T; ++t) {
    const auto p = gate.update(v[t]);
    if (std::isfinite(p.ratio)) gate_ratio[t] = p.ratio;
  }

  // 5: windows.
  std::vector<slow_window> spikes, others;
  std::size_t t = 0;
  while (t < T) {
    if (!slow[t]) {
      ++t;
      continue;
    }
    std::size_t e = t;
    while (true) {
      if (e + 1 < T && slow[e + 1]) {
        ++e;
      } else if (e + 2 < T && !slow[e + 1] && slow[e + 2] && v[e + 1] > b * (1 + o.min_sustained_slowdown / 2) &&
                 e + 1 - t >= 2) {
        e += 2;  // one fast-ish step inside a sustained window does not split it
      } else {
        break;
      }
    }
    slow_window w;
    w.first = at[t];
    w.last = at[e];
    std::vector<double> in;
    double excess = 0, total = 0;
    for (std::size_t i = t; i <= e; ++i) {
      if (slow[i]) w.steps.push_back(at[i]);
      in.push_back(v[i]);
      excess += v[i] - b;
      total += v[i];
      if (v[i] > w.peak_ns) {
        w.peak_ns = v[i];
        w.peak_index = at[i];
      }
      w.gate_peak_ratio = std::max(w.gate_peak_ratio, gate_ratio[i]);
    }
    w.baseline_ns = b;
    w.noise_ns = s * b;
    w.observed_ns = stats::median(in);
    w.z = (std::log(w.observed_ns) - lb) / s;
    w.job_slowdown = total > 0 ? std::max(0.0, excess / total) : 0;
    const std::size_t span = e - t + 1;
    const bool ends_series = e + 1 == T;
    const auto [slope, tstat] = detail::ols_slope(in);
    w.slope_ns_per_step = slope;
    if (span <= o.spike_max_steps && (!ends_series || span < o.min_baseline_steps)) {
      // Short windows are spikes; one at the very end of the series may be the start of a shift
      // the trace ends too early to show (the report says so).
      w.pattern = t == 0 && !ends_series ? window_pattern::warmup : window_pattern::spike;
      w.at_end = ends_series;
      w.ratio = w.peak_ns / b;
      (w.pattern == window_pattern::spike ? spikes : others).push_back(std::move(w));
    } else {
      bool drift = false;
      if (span >= 4 && tstat > o.drift_t) {
        const std::size_t third = std::max<std::size_t>(1, span / 3);
        const std::vector<double> head(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(third));
        const std::vector<double> tail(in.end() - static_cast<std::ptrdiff_t>(third), in.end());
        drift = stats::median(tail) - b >= 2 * (stats::median(head) - b);
      }
      w.pattern = drift ? window_pattern::drift : window_pattern::shift;
      w.ratio = w.observed_ns / b;
      others.push_back(std::move(w));
    }
    t = e + 1;
  }
  if (spikes.size() >= o.recurring_min) {
    slow_window r = spikes.front();
    r.pattern = window_pattern::recurring;
    r.last = spikes.back().last;
    r.steps.clear();
    std::vector<double> peaks;
    double excess = 0, total = 0;
    for (const auto& sp : spikes) {
      r.steps.insert(r.steps.end(), sp.steps.begin(), sp.steps.end());
      peaks.push_back(sp.peak_ns);
      if (sp.peak_ns > r.peak_ns) {
        r.peak_ns = sp.peak_ns;
        r.peak_index = sp.peak_index;
      }
      r.gate_peak_ratio = std::max(r.gate_peak_ratio, sp.gate_peak_ratio);
    }
    // The time lost over the recurring window's whole span, spikes and the steps between them.
    for (std::size_t i = 0; i < T; ++i)
      if (at[i] >= r.first && at[i] <= r.last) {
        excess += std::max(0.0, v[i] - b);
        total += v[i];
      }
    r.observed_ns = stats::median(peaks);
    r.ratio = r.observed_ns / b;
    r.z = (std::log(r.observed_ns) - lb) / s;
    r.job_slowdown = total > 0 ? excess / total : 0;
    spikes.assign(1, r);
  }
  out.windows = std::move(others);
  out.windows.insert(out.windows.end(), spikes.begin(), spikes.end());
  std::sort(out.windows.begin(), out.windows.end(),
            [](const slow_window& a, const slow_window& c) { return a.first < c.first; });
  return out;
}

FAILSLOW_FUNC_DEF l1_result find_slow_windows(const job_model& m, const l1_options& o) {
  detail::check(o);
  l1_result out;
  const std::size_t R = m.rank_count(), S = m.step_count();
  out.job_series.assign(S, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> col;
  for (std::size_t s = 0; s < S; ++s) {
    col.clear();
    for (std::size_t r = 0; r < R; ++r)
      if (std::isfinite(m.iteration_ns(r, s))) col.push_back(m.iteration_ns(r, s));
    if (!col.empty()) out.job_series[s] = stats::median(col);
  }
  out.job = analyze_series(out.job_series, o);
  if (out.job.values < o.min_steps) {
    out.notes.push_back("L1: " + std::to_string(out.job.values) + " measured step(s); at least " +
                        std::to_string(o.min_steps) + " are needed to tell a slow step from the job's pace");
    return out;
  }
  const auto ranks = m.present_ranks();
  if (!o.per_rank || ranks.size() < 2) return out;
  std::vector<double> y(S);
  for (int r : ranks) {
    for (std::size_t s = 0; s < S; ++s) y[s] = m.iteration_ns(static_cast<std::size_t>(r), s);
    auto a = analyze_series(y, o);
    for (auto& w : a.windows) {
      const bool covered = std::any_of(out.job.windows.begin(), out.job.windows.end(),
                                       [&](const slow_window& j) { return w.first <= j.last && j.first <= w.last; });
      if (covered) continue;
      // In a synchronous job every rank runs at the job's pace: a rank's own slow window counts
      // only where it is sustained (a single step's period moves with where the step boundary
      // falls in the pipeline) and the rank is slower than the job.
      if (w.pattern != window_pattern::shift && w.pattern != window_pattern::drift) continue;
      std::vector<double> vs_job;
      for (std::size_t s : w.steps)
        if (std::isfinite(out.job_series[s]) && out.job_series[s] > 0) vs_job.push_back(y[s] / out.job_series[s] - 1);
      if (vs_job.empty() || stats::median(vs_job) <= o.min_slowdown) continue;
      w.rank = r;
      out.rank_windows.push_back(std::move(w));
    }
  }
  return out;
}

}  // namespace failslow::diagnose
