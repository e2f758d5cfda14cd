// failslow/diagnose/impl/l4_host.ipp -- the definitions of diagnose/l4_host.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/dense_array.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/diagnose/detail/binomial_tail.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"
#include "failslow/diagnose/l2_stragglers.hpp"
#include "failslow/diagnose/l4_host.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/trace/detail/correlation_map.hpp"
#include "failslow/trace/idle.hpp"
#include "failslow/trace/steps.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::diagnose {

namespace detail {

template <class = void>
inline bool name_has(std::string_view name, std::initializer_list<std::string_view> words) {
  std::string lower(name);
  for (auto& c : lower) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  for (auto w : words)
    if (lower.find(w) != std::string::npos) return true;
  return false;
}

}  // namespace detail

FAILSLOW_FUNC_DEF void measure_host_activity(job_model& m, const trace::trace_set& set, const host_measure_options& o) {
  if (o.min_gap_ns < 0) throw invalid_argument("measure_host_activity: min_gap_ns must be >= 0");
  auto& h = m.host;
  const std::size_t R = m.rank_count(), S = m.step_count();
  h = host_activity{};
  h.gaps.assign(R, {});
  h.new_kernels = dense_array<double, 2>({R, S});
  h.launch_interval_ns = dense_array<double, 2>({R, S});
  h.launch_interval_ns.fill(std::numeric_limits<double>::quiet_NaN());
  if (S == 0) return;
  trace::idle_options io;
  io.stall_min_gap_ns = o.min_gap_ns;
  io.stall_busy_fraction = 0;  // every long launch gap; the CPU's share is judged later
  io.stall_top_ops = o.top_ops;
  for (const auto& t : set.traces) {
    if (t.rank < 0 || static_cast<std::size_t>(t.rank) >= R) continue;
    const auto r = static_cast<std::size_t>(t.rank);
    const auto& ev = t.data.events;
    const auto steps = trace::map_steps(t.data, set.names);
    if (steps.steps.empty()) continue;
    bool has_gpu = false;
    for (const auto& e : ev) has_gpu = has_gpu || is_device_activity(e.kind);
    if (!has_gpu) continue;  // a CPU job: no launches to measure
    h.measured = true;
    h.launch_pace_measured = true;
    // Model step index of each of the trace's steps (by CPU start), or S.
    std::vector<std::size_t> at(steps.steps.size(), S);
    std::vector<std::pair<std::int64_t, std::size_t>> by_start;  // (cpu start, trace step)
    for (std::size_t i = 0; i < steps.steps.size(); ++i) {
      const auto it = std::lower_bound(m.steps.begin(), m.steps.end(), steps.steps[i].number);
      if (it != m.steps.end() && *it == steps.steps[i].number) at[i] = static_cast<std::size_t>(it - m.steps.begin());
      by_start.emplace_back(steps.steps[i].cpu_start_ns, i);
    }
    std::sort(by_start.begin(), by_start.end());
    const auto step_at = [&](std::int64_t t_ns) -> std::size_t {  // trace step whose CPU range holds t
      auto it = std::upper_bound(by_start.begin(), by_start.end(), std::make_pair(t_ns, SIZE_MAX));
      if (it == by_start.begin()) return SIZE_MAX;
      const std::size_t i = std::prev(it)->second;
      return t_ns <= steps.steps[i].cpu_end_ns ? i : SIZE_MAX;
    };

    // The largest GPU-idle launch gap of each step.
    const auto idle = trace::analyze_idle(t.data, io);
    std::map<std::size_t, host_gap> largest;
    for (const auto& st : idle.stalls) {
      if (st.gpu_idle_ns < o.min_gap_ns) continue;
      const std::size_t i = step_at(st.end_ns);
      if (i == SIZE_MAX || at[i] == S) continue;
      auto& g = largest[at[i]];
      if (static_cast<double>(st.gpu_idle_ns) <= g.gpu_idle_ns) continue;
      g.step = at[i];
      g.start_ns = st.start_ns;
      g.end_ns = st.end_ns;
      g.gpu_idle_ns = static_cast<double>(st.gpu_idle_ns);
      g.cpu_busy_ns = static_cast<double>(st.cpu_busy_ns);
      g.top_ops.clear();
      for (const auto& [name, ns] : st.top_ops)
        g.top_ops.emplace_back(std::string(set.names.name(name)), static_cast<double>(ns));
    }
    for (auto& [s, g] : largest) h.gaps[r].push_back(std::move(g));

    // Kernels launched for the first time, by the step (CPU order) that launched them.
    std::vector<std::size_t> order(steps.steps.size());  // trace step -> position in CPU order
    for (std::size_t p = 0; p < by_start.size(); ++p) order[by_start[p].second] = p;
    std::map<name_id, std::size_t> first_at;  // kernel name -> earliest position
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (ev[i].kind != event_kind::kernel || i >= steps.step_of_event.size() || steps.step_of_event[i] < 0) continue;
      const std::size_t p = order[static_cast<std::size_t>(steps.step_of_event[i])];
      auto [it, fresh] = first_at.emplace(ev[i].name, p);
      if (!fresh && p < it->second) it->second = p;
    }
    for (const auto& [name, p] : first_at) {
      if (p == 0) continue;  // the first step: everything is new there
      const std::size_t s = at[by_start[p].second];
      if (s == S) continue;
      h.new_kernels(r, s) += 1;
      auto& names = h.new_kernel_names[{t.rank, s}];
      if (names.size() < o.new_kernel_names) names.emplace_back(set.names.name(name));
    }

    // The host's launch pace: consecutive launch calls within a step.
    const std::vector<char> is_launch = trace::detail::launch_calls(ev);  // calls that started GPU work
    std::vector<std::vector<std::int64_t>> starts(steps.steps.size());
    for (std::size_t k = 0; k < ev.size(); ++k) {
      if (!is_launch[k]) continue;
      const std::size_t i = step_at(ev[k].start_ns);
      if (i != SIZE_MAX) starts[i].push_back(ev[k].start_ns);
    }
    for (std::size_t i = 0; i < starts.size(); ++i) {
      if (at[i] == S || starts[i].size() < 2) continue;
      auto& v = starts[i];
      std::sort(v.begin(), v.end());
      std::vector<double> d(v.size() - 1);
      for (std::size_t k = 1; k < v.size(); ++k) d[k - 1] = static_cast<double>(v[k] - v[k - 1]);
      h.launch_interval_ns(r, at[i]) = stats::median(d);
    }
  }
}

namespace detail {

/// What summaries give in place of measure_host_activity: per rank and step one "gap", the
/// step's GPU idle (the model's idle phase: period - the kernels' summed durations), no host
/// operators; new kernels from the kept windows (keys the rank had not run in an earlier step).
template <class = void>
inline host_activity host_from_idle_phase(const job_model& m, std::size_t names_kept) {
  host_activity h;
  const std::size_t R = m.rank_count(), S = m.step_count();
  h.gaps.assign(R, {});
  h.new_kernels = dense_array<double, 2>({R, S});
  h.launch_interval_ns = dense_array<double, 2>({R, S});
  h.launch_interval_ns.fill(std::numeric_limits<double>::quiet_NaN());
  if (m.phase_count() <= idle_phase) return h;
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t s = 0; s < S; ++s) {
      const double x = m.phase_ns(r, idle_phase, s);
      if (std::isnan(x)) continue;
      host_gap g;
      g.step = s;
      g.gpu_idle_ns = x;
      h.gaps[r].push_back(std::move(g));
    }
  if (!m.windows.empty()) {
    const window_index at(m);
    std::vector<char> seen;
    for (std::size_t r = 0; r < R; ++r) {
      seen.assign(m.kernel_names.size(), 0);
      bool first = true;
      for (std::size_t s = 0; s < S; ++s) {
        const auto* w = at.window(static_cast<int>(r), s);
        if (!w) continue;
        std::vector<std::string> names;
        for (const auto& k : w->kernels) {
          if (k.key >= seen.size() || seen[k.key]) continue;
          seen[k.key] = 1;
          if (first) continue;  // the first window: everything is new
          h.new_kernels(r, s) += 1;
          if (names.size() < names_kept) names.push_back(m.kernel_names[k.key]);
        }
        if (!names.empty()) h.new_kernel_names[{static_cast<int>(r), s}] = std::move(names);
        first = false;
      }
    }
  }
  h.measured = true;
  return h;
}

}  // namespace detail

FAILSLOW_FUNC_DEF host_stall_result find_host_stalls(const job_model& m, const host_stall_options& o) {
  if (o.min_stall_ns < 0 || !(o.min_fraction >= 0) || !(o.z > 0) || !(o.scale_floor > 0) || !(o.relative_floor > 0) ||
      !(o.recurring_z > 0) || !(o.busy_fraction >= 0 && o.busy_fraction <= 1) || o.period_min < 2 ||
      !(o.local_share > 0 && o.local_share <= 1) || !(o.job_alpha > 0 && o.job_alpha < 1))
    throw invalid_argument(
        "find_host_stalls: min_stall_ns, min_fraction >= 0, z, scale_floor, relative_floor, recurring_z > 0, "
        "busy_fraction in "
        "[0, 1], period_min >= 2, local_share in (0, 1], job_alpha in (0, 1)");
  host_stall_result out;
  // Summaries keep no host events: the GPU's idle per step stands in for the launch gaps. So
  // does the idle of traces without GPU activity (a CPU job: the time no profiled operator ran),
  // which have no launches to measure and no kernels to be new.
  bool on_host = !m.host.measured && m.source == "traces" && !m.measured_on_host.empty();
  for (std::size_t r = 0; on_host && r < m.measured_on_host.size(); ++r)
    on_host = !(r < m.has_rank.size() && m.has_rank[r]) || m.measured_on_host[r];
  const bool from_idle = (!m.host.measured && m.source == "summaries") || on_host;
  host_activity fallback;
  if (from_idle) fallback = detail::host_from_idle_phase(m, on_host ? 0 : host_measure_options{}.new_kernel_names);
  const auto& h = from_idle ? fallback : m.host;
  const std::size_t R = m.rank_count(), S = m.step_count();
  if (!h.measured || h.gaps.size() != R) return out;
  struct found {
    host_occurrence occ;
    host_cause cause;
    const host_gap* gap;
    double job_tail = 0;  // P(a judged step's ln x' >= this one's) under the job's Gumbel law
    bool jit = false;     // judged among the steps that launched new kernels
    bool strong = false;  // z_rel reached the one-step bar (else it counts only as a recurrence)
  };
  std::vector<found> all;
  // Per rank: its steps, the GPU idle of each step's largest gap, its level and spreads.
  struct rank_series {
    std::vector<std::size_t> present;  // steps with an iteration; the first is warm-up
    std::vector<double> x;             // per model step
    std::vector<const host_gap*> gap_at;
    double med_iter = 0, need = 0, base = 0, scale = 0, log_base = 0, log_spread = 0;
    // ... of its steps that are not absolute outliers: a pause in a quarter of the steps
    // shifts the median and doubles the MAD of all of them.
    double clean_log_base = 0, clean_log_spread = 0;
  };
  const double smallest = std::max(static_cast<double>(o.min_stall_ns), 1.0);
  // The absolute test: an excess over the rank's median of at least its bar and z.
  const auto absolute_outlier = [&o](const rank_series& rs, double x) {
    return x - rs.base >= rs.need && (x - rs.base) / rs.scale >= o.z;
  };
  std::vector<rank_series> series(R);
  std::vector<double> log_spreads, clean_log_spreads;
  for (std::size_t r = 0; r < R; ++r) {
    auto& rs = series[r];
    std::vector<double> iter;
    for (std::size_t s = 0; s < S; ++s)
      if (!std::isnan(m.iteration_ns(r, s))) {
        rs.present.push_back(s);
        iter.push_back(m.iteration_ns(r, s));
      }
    if (rs.present.size() < 3) continue;
    rs.med_iter = stats::median(iter);
    rs.need = std::max(static_cast<double>(o.min_stall_ns), o.min_fraction * rs.med_iter);
    rs.x.assign(S, 0.0);
    rs.gap_at.assign(S, nullptr);
    for (const auto& g : h.gaps[r]) {
      rs.x[g.step] = g.gpu_idle_ns;
      rs.gap_at[g.step] = &g;
    }
    std::vector<double> judged, logs;
    for (std::size_t k = 1; k < rs.present.size(); ++k) {  // warm-up step out
      judged.push_back(rs.x[rs.present[k]]);
      logs.push_back(std::log(std::max(rs.x[rs.present[k]], smallest)));
    }
    rs.base = stats::median(judged);
    rs.scale = std::max(stats::mad_normal(judged), o.scale_floor * rs.med_iter);
    rs.log_base = stats::median(logs);
    rs.log_spread = stats::mad_normal(logs);
    log_spreads.push_back(rs.log_spread);
    std::vector<double> clean;
    for (std::size_t k = 0; k < judged.size(); ++k)
      if (!absolute_outlier(rs, judged[k])) clean.push_back(logs[k]);
    if (clean.size() >= 3) {
      rs.clean_log_base = stats::median(clean);
      rs.clean_log_spread = stats::mad_normal(clean);
    } else {
      rs.clean_log_base = rs.log_base;
      rs.clean_log_spread = rs.log_spread;
    }
    clean_log_spreads.push_back(rs.clean_log_spread);
  }
  // The relative test's spread: the rank's own or, when larger, the job's typical one (the
  // median over ranks): a MAD of 30 steps can be a third too small by chance, and host
  // jitter is a property of the job's software more than of one rank.
  const double job_log_spread = log_spreads.empty() ? 0.0 : stats::median(log_spreads);
  const double job_clean_log_spread = clean_log_spreads.empty() ? 0.0 : stats::median(clean_log_spreads);
  // The job-wide test (traces): a Gumbel law for ln x' over every judged (rank, step), fitted
  // by quartiles, and the level x' must reach among the n steps it was picked from (all of
  // them; for a step that launched new kernels, chosen by that and not by its idle, only such).
  double gumbel_mu = 0, gumbel_b = 0, judged_cells = 0, jit_cells = 0;
  if (!from_idle) {
    std::vector<double> logs;
    for (std::size_t r = 0; r < R; ++r) {
      const auto& rs = series[r];
      if (rs.present.size() < 3) continue;
      for (std::size_t k = 1; k < rs.present.size(); ++k) {
        logs.push_back(std::log(std::max(rs.x[rs.present[k]], smallest)));
        jit_cells += h.new_kernels(r, rs.present[k]) > 0 ? 1 : 0;
      }
    }
    if (logs.size() >= 8) {
      const auto q = stats::quantiles(logs, std::array<double, 3>{0.25, 0.5, 0.75});
      gumbel_b = (q[2] - q[0]) / 1.5725;      // ln ln 4 - ln ln(4/3)
      gumbel_mu = q[1] - 0.36651 * gumbel_b;  // the median is mu - b ln ln 2
      judged_cells = static_cast<double>(logs.size());
    }
  }
  // A step's upper tail under that law; 0 where it was not fitted (the other tests decide).
  const auto job_tail = [&](double x) {
    if (!(gumbel_b > 0)) return 0.0;
    return -std::expm1(-std::exp(-(std::log(std::max(x, smallest)) - gumbel_mu) / gumbel_b));
  };
  // CPU traces: a stall must also lie beyond the routine idle of the job's other hosts, a
  // far-out fence on their upper tail, q95 + 3 (q95 - q50) of every other rank's judged steps: a
  // CPU job whose idle is ~1 ms with 4-10 ms hiccups in a fifth of the steps on every
  // rank (4 processes on 2 cores, a real DDP job) has a small MAD and a long tail, and each
  // hiccup passed its rank's own tests. Pauses on other ranks in under 5 % of their steps
  // (rotating GC) leave the fence at the routine. (With host events the job's Gumbel law above
  // does this; from summaries the idle holds pipeline bubbles and is judged by locality.)
  // Each rank is left out of its own fence in small jobs (its pauses in a quarter of 4 ranks'
  // steps would raise it); among more than 32 ranks one rank moves it little, and one fence for
  // all keeps this O(cells log cells) instead of O(ranks x cells).
  std::vector<double> job_fence(R, 0.0);
  if (on_host) {
    const auto fence_without = [&](std::size_t left_out) {  // left_out == R: none
      std::vector<double> others;
      for (std::size_t j = 0; j < R; ++j)
        if (j != left_out && series[j].present.size() >= 3)  // judged ranks (x is filled)
          for (std::size_t k = 1; k < series[j].present.size(); ++k)
            others.push_back(series[j].x[series[j].present[k]]);
      if (others.size() < 8) return 0.0;
      const auto q = stats::quantiles(others, std::array<double, 2>{0.5, 0.95});
      return q[1] + 3 * (q[1] - q[0]);
    };
    const double shared = R > 32 ? fence_without(R) : 0.0;
    for (std::size_t r = 0; r < R; ++r) job_fence[r] = R > 32 ? shared : fence_without(r);
  }
  // The job's median iteration per step, for the time lost.
  std::vector<double> job_iter(S);
  for (std::size_t s = 0; s < S; ++s) {
    std::vector<double> col;
    for (std::size_t r = 0; r < R; ++r) col.push_back(m.iteration_ns(r, s));
    job_iter[s] = detail::finite_median(col);
  }
  // The job's pace and its step-to-step noise (summaries: did a stall cost the job time?).
  const double job_pace = detail::finite_median(job_iter);
  double job_noise = 0;
  if (from_idle) {
    std::vector<double> finite;
    for (double v : job_iter)
      if (std::isfinite(v)) finite.push_back(v);
    if (!finite.empty()) job_noise = stats::mad_normal(finite);
  }
  // From summaries the GPU's idle cannot tell a host that stopped launching from a GPU that
  // waited on others without a kernel running (a pipeline bubble): a stall must be local to a
  // few ranks of its step. With host events the launch gap itself says the host stopped.
  std::vector<std::vector<double>> excess_at(from_idle ? S : 0);  // per step, each judged rank's excess
  if (from_idle)
    for (std::size_t r = 0; r < R; ++r) {
      const auto& rs = series[r];
      if (rs.present.size() < 3) continue;
      for (std::size_t k = 1; k < rs.present.size(); ++k)
        excess_at[rs.present[k]].push_back(rs.x[rs.present[k]] - rs.base);
    }
  for (std::size_t r = 0; r < R; ++r) {
    const auto& rs = series[r];
    if (rs.present.size() < 3) continue;
    const auto& x = rs.x;
    const auto& gap_at = rs.gap_at;
    const double log_scale = std::max({rs.log_spread, job_log_spread, o.relative_floor});
    const double clean_log_scale = std::max({rs.clean_log_spread, job_clean_log_spread, o.relative_floor});
    for (std::size_t k = 1; k < rs.present.size(); ++k) {
      const std::size_t s = rs.present[k];
      const double excess = x[s] - rs.base;
      const double lx = std::log(std::max(x[s], smallest));
      const double z_rel = (lx - rs.log_base) / log_scale;
      const double z_rel_clean = (lx - rs.clean_log_base) / clean_log_scale;
      if (!gap_at[s] || !absolute_outlier(rs, x[s]) || (z_rel < o.z && z_rel_clean < o.recurring_z) ||
          x[s] <= job_fence[r])
        continue;
      if (from_idle) {  // ranks that idled half as long in the step, this one included
        const auto& e = excess_at[s];
        const auto alike = std::count_if(e.begin(), e.end(), [excess](double v) { return v >= 0.5 * excess; });
        if (static_cast<double>(alike) > std::max(1.0, o.local_share * static_cast<double>(e.size()))) continue;
        // ... and the job lost time in the step, or the idle is far outside the host's jitter:
        // a host-paced job's loader tail on a rank with slack (5.7 ms against 1.5 ms, z_rel 6.7)
        // is not told from a stall by the idle alone; an 18 ms pause against 0.04 ms is one,
        // even where pipeline slack hid it from the job.
        if (!(job_iter[s] - job_pace >= std::max(0.1 * excess, 3 * job_noise)) && !(z_rel >= 2 * o.z)) continue;
      }
      const auto& g = *gap_at[s];
      found f;
      f.gap = &g;
      f.job_tail = from_idle ? 0.0 : job_tail(x[s]);
      f.jit = !on_host && h.new_kernels(r, s) > 0;
      f.occ.rank = static_cast<int>(r);
      f.occ.step = s;
      f.occ.gpu_idle_ns = g.gpu_idle_ns;
      f.occ.excess_ns = excess;
      f.occ.z = excess / rs.scale;
      const double window = static_cast<double>(std::max<std::int64_t>(1, g.end_ns - g.start_ns));
      f.occ.cpu_busy_fraction = std::min(1.0, g.cpu_busy_ns / window);
      const std::string top = g.top_ops.empty() ? std::string() : g.top_ops.front().first;
      if (f.jit)
        f.cause = host_cause::jit_compilation;
      else if (from_idle && !on_host)  // CPU traces: no operator ran (cpu_busy 0), host_absent below
        f.cause = host_cause::host_unrecorded;
      else if (f.occ.cpu_busy_fraction >= o.busy_fraction && detail::name_has(top, {"gc.", "gc_", "garbage"}))
        f.cause = host_cause::garbage_collection;
      else if (f.occ.cpu_busy_fraction >= o.busy_fraction &&
               detail::name_has(top, {"dataloader", "data_loader", "__next__"}))
        f.cause = host_cause::data_loader;
      else if (f.occ.cpu_busy_fraction >= o.busy_fraction)
        f.cause = host_cause::host_busy;
      else
        f.cause = host_cause::host_absent;
      f.strong = z_rel >= o.z;
      all.push_back(f);
    }
  }
  // Steps under the one-step z_rel bar (but over recurring_z, and passing every other test)
  // stand only together: a rank with period_min or more such steps, more than the job's other
  // ranks make it likely, P(Binomial(n, rate) >= k) <= job_alpha / ranks judged, rate the
  // Jeffreys estimate from the other ranks' judged steps. A pause that recurs on one host
  // widens that host's own spread (80 ms every 4 steps, a host idling 1.5-11 ms between:
  // z_rel 4 of a bar of 5); a healthy host's tail reaches recurring_z now and then, on any rank.
  {
    std::vector<std::uint64_t> k_of(R, 0), n_of(R, 0);
    std::uint64_t K = 0, N = 0, judged_ranks = 0;
    for (const auto& f : all) ++k_of[static_cast<std::size_t>(f.occ.rank)];
    for (std::size_t r = 0; r < R; ++r)
      if (series[r].present.size() >= 3) {
        n_of[r] = series[r].present.size() - 1;
        K += k_of[r];
        N += n_of[r];
        ++judged_ranks;
      }
    std::vector<char> recurs(R, 0);
    for (std::size_t r = 0; r < R; ++r) {
      if (k_of[r] < o.period_min) continue;
      const double rate = detail::jeffreys_rate(static_cast<double>(K - k_of[r]), static_cast<double>(N - n_of[r]));
      recurs[r] = detail::binomial_upper_tail(k_of[r], n_of[r], rate) <=
                  o.job_alpha / static_cast<double>(std::max<std::uint64_t>(judged_ranks, 1));
    }
    all.erase(
        std::remove_if(all.begin(), all.end(),
                       [&](const found& f) { return !f.strong && !recurs[static_cast<std::size_t>(f.occ.rank)]; }),
        all.end());
  }
  // The job-wide test, per cause: the k steps of one cause whose tails are smallest stand out
  // when k or more of the n judged steps reaching the k-th one's tail is rarer than job_alpha,
  // P(Binomial(n, tail_k) >= k) <= job_alpha -- for one step, its level at the family-wise
  // job_alpha (a noise-x2 host's single 18.6 ms gap is within its job's tail); for a pause that
  // recurs, the count is the evidence (nine 47 ms GC pauses at noise x2, each under the one-step
  // level, are 9 steps where 0.1 were expected).
  if (!from_idle && gumbel_b > 0) {
    std::vector<found> kept;
    for (host_cause c : {host_cause::jit_compilation, host_cause::garbage_collection, host_cause::data_loader,
                         host_cause::host_busy, host_cause::host_absent}) {
      for (const bool jit : {false, true}) {
        std::vector<const found*> of;
        for (const auto& f : all)
          if (f.cause == c && f.jit == jit) of.push_back(&f);
        if (of.empty()) continue;
        std::sort(of.begin(), of.end(), [](const found* a, const found* b) { return a->job_tail < b->job_tail; });
        const double n = jit ? std::max(jit_cells, 1.0) : judged_cells;
        std::size_t accepted = 0;
        for (std::size_t k = 1; k <= of.size(); ++k)
          if (detail::binomial_upper_tail(k, static_cast<std::uint64_t>(n), of[k - 1]->job_tail) <= o.job_alpha)
            accepted = k;
        for (std::size_t i = 0; i < accepted; ++i) kept.push_back(*of[i]);
      }
    }
    all = std::move(kept);
  }
  // Group: one cause, then by step; a cause seen in period_min or more steps recurs.
  for (host_cause c : {host_cause::jit_compilation, host_cause::garbage_collection, host_cause::data_loader,
                       host_cause::host_busy, host_cause::host_absent, host_cause::host_unrecorded}) {
    std::map<std::size_t, std::vector<const found*>> by_step;
    for (const auto& f : all)
      if (f.cause == c) by_step[f.occ.step].push_back(&f);
    if (by_step.empty()) continue;
    std::vector<std::vector<std::size_t>> groups;
    if (by_step.size() >= o.period_min) {
      groups.emplace_back();
      for (const auto& [s, v] : by_step) groups.back().push_back(s);
    } else {
      for (const auto& [s, v] : by_step) groups.push_back({s});
    }
    for (const auto& steps : groups) {
      host_stall st;
      st.cause = c;
      st.from_idle_phase = from_idle;
      st.on_host = on_host;
      std::vector<double> idle, busy;
      std::map<std::string, double> ops;
      for (std::size_t s : steps) {
        st.steps.push_back(m.steps[s]);
        for (const found* f : by_step[s]) {
          st.occurrences.push_back(f->occ);
          st.ranks.push_back(f->occ.rank);
          idle.push_back(f->occ.gpu_idle_ns);
          busy.push_back(f->occ.cpu_busy_fraction);
          st.excess_ns += f->occ.excess_ns;
          st.z = std::max(st.z, f->occ.z);
          for (const auto& [name, ns] : f->gap->top_ops) ops[name] += ns;
          if (m.waits.available) st.caused_wait_ns += m.waits.caused_ns(static_cast<std::size_t>(f->occ.rank), s);
          const auto nk = h.new_kernel_names.find({f->occ.rank, s});
          if (nk != h.new_kernel_names.end())
            for (const auto& n : nk->second)
              if (std::find(st.new_kernels.begin(), st.new_kernels.end(), n) == st.new_kernels.end())
                st.new_kernels.push_back(n);
        }
      }
      std::sort(st.ranks.begin(), st.ranks.end());
      st.ranks.erase(std::unique(st.ranks.begin(), st.ranks.end()), st.ranks.end());
      st.gpu_idle_ns = stats::median(idle);
      st.cpu_busy_fraction = stats::median(busy);
      st.top_ops.assign(ops.begin(), ops.end());
      std::sort(st.top_ops.begin(), st.top_ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      double span = 0;
      for (std::size_t s = steps.front(); s <= steps.back(); ++s)
        if (!std::isnan(job_iter[s])) span += job_iter[s];
      st.job_slowdown = span > 0 ? st.excess_ns / span : 0;
      if (st.steps.size() >= o.period_min) st.period_steps = recurrence_period(st.steps);
      out.stalls.push_back(std::move(st));
    }
  }
  std::sort(out.stalls.begin(), out.stalls.end(),
            [](const host_stall& a, const host_stall& b) { return a.steps.front() < b.steps.front(); });
  return out;
}

FAILSLOW_FUNC_DEF launch_pace late_launch(const job_model& m, int rank, const std::vector<int>& peers,
                                          std::size_t first, std::size_t last) {
  launch_pace out;
  const auto& h = m.host;
  if (!h.launch_pace_measured || rank < 0 || static_cast<std::size_t>(rank) >= m.rank_count() ||
      last >= m.step_count() || first > last)
    return out;
  std::vector<double> own, others;
  for (std::size_t s = first; s <= last; ++s) {
    own.push_back(h.launch_interval_ns(static_cast<std::size_t>(rank), s));
    for (int p : peers)
      if (p != rank && p >= 0 && static_cast<std::size_t>(p) < m.rank_count())
        others.push_back(h.launch_interval_ns(static_cast<std::size_t>(p), s));
  }
  out.rank_ns = detail::finite_median(own);
  out.peers_ns = detail::finite_median(others);
  if (out.peers_ns > 0) out.ratio = out.rank_ns / out.peers_ns;
  return out;
}

}  // namespace failslow::diagnose
