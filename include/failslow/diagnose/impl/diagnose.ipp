// failslow/diagnose/impl/diagnose.ipp -- the definitions of diagnose/diagnose.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/launch_shape.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/detail/rank_list.hpp"
#include "failslow/diagnose/diagnose.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"
#include "failslow/diagnose/l2_stragglers.hpp"
#include "failslow/diagnose/l3_degraded.hpp"
#include "failslow/diagnose/l4_host.hpp"
#include "failslow/diagnose/l4_slow_host.hpp"
#include "failslow/diagnose/l4_waits.hpp"
#include "failslow/diagnose/roles.hpp"
#include "failslow/io/detail/text_format.hpp"

namespace failslow::diagnose {

namespace detail {

using io::detail::format_duration;
using io::detail::format_ratio;

template <class = void>
inline std::string step_range(std::int64_t a, std::int64_t b) {
  return a == b ? "step " + std::to_string(a) : "steps " + std::to_string(a) + "-" + std::to_string(b);
}

/// A finding of `level` and `kind` over model steps [first, last] (indices into m.steps).
template <class = void>
inline finding finding_over(const job_model& m, const char* level, const char* kind, std::size_t first,
                            std::size_t last) {
  finding f;
  f.level = level;
  f.kind = kind;
  f.first_step = m.steps[first];
  f.last_step = m.steps[last];
  return f;
}

template <class = void>
inline finding l1_finding(const job_model& m, const slow_window& w) {
  auto f = finding_over(m, "L1", "slow_window", w.first, w.last);
  if (w.rank >= 0) f.ranks = {w.rank};
  f.score = w.ratio;
  std::vector<double> steps;
  for (std::size_t s : w.steps) steps.push_back(static_cast<double>(m.steps[s]));
  f.evidence.add("pattern", std::string(to_string(w.pattern)))
      .add("baseline_ns", w.baseline_ns)
      .add("observed_ns", w.observed_ns)
      .add("peak_ns", w.peak_ns)
      .add("peak_step", static_cast<double>(m.steps[w.peak_index]))
      .add("noise_ns", w.noise_ns)
      .add("z", w.z)
      .add("ratio", w.ratio)
      .add("job_slowdown", w.job_slowdown)
      .add("slope_ns_per_step", w.slope_ns_per_step)
      .add("gate_peak_ratio", w.gate_peak_ratio)
      .add("at_end", w.at_end ? 1.0 : 0.0)
      .add("steps", std::move(steps));
  const std::string who = w.rank >= 0 ? "rank " + std::to_string(w.rank) + "'s" : "the job's";
  const std::string range = step_range(f.first_step, f.last_step);
  switch (w.pattern) {
    case window_pattern::warmup:
      f.summary = "warm-up: the first " + std::string(w.steps.size() == 1 ? "step takes " : "steps take up to ") +
                  format_ratio(w.ratio) + " " + who + " pace (" + format_duration(w.peak_ns) + " vs " +
                  format_duration(w.baseline_ns) + ")";
      break;
    case window_pattern::spike:
      f.summary = range + (w.steps.size() == 1 ? " took " : " took up to ") + format_ratio(w.ratio) + " " + who +
                  " pace (" + format_duration(w.peak_ns) + " vs " + format_duration(w.baseline_ns) + "): " +
                  (w.at_end ? "a spike at the end of the trace (whether it lasts, the trace does not show)"
                            : "a transient spike");
      break;
    case window_pattern::recurring: {
      // The spikes' first steps (runs of consecutive slow steps) give the period.
      std::vector<std::int64_t> starts;
      for (std::size_t i = 0; i < w.steps.size(); ++i)
        if (i == 0 || w.steps[i] != w.steps[i - 1] + 1) starts.push_back(m.steps[w.steps[i]]);
      const std::int64_t period = recurrence_period(starts);
      f.evidence.add("period_steps", static_cast<double>(period));
      f.summary = std::to_string(starts.size()) + " spikes between steps " + std::to_string(f.first_step) + " and " +
                  std::to_string(f.last_step) +
                  (period > 0 ? ", one every " + std::to_string(period) + " steps" : std::string()) + ", up to " +
                  format_ratio(w.peak_ns / w.baseline_ns) + " " + who + " pace (" + format_duration(w.peak_ns) +
                  " vs " + format_duration(w.baseline_ns) + "): " + (period > 0 ? "periodic" : "recurring") + " stalls";
      break;
    }
    case window_pattern::shift:
      f.summary = range + " run at " + format_ratio(w.ratio) + " " + who + " pace (" + format_duration(w.observed_ns) +
                  " vs " + format_duration(w.baseline_ns) + " per step): a sustained slowdown";
      break;
    case window_pattern::drift:
      f.summary = range + " grow slower, to " + format_ratio(w.peak_ns / w.baseline_ns) + " " + who + " pace (+" +
                  format_duration(w.slope_ns_per_step) + " per step): a drift";
      break;
  }
  return f;
}

// A finding's kernel: the name of the key, and the launch shape the key adds where it has one
// (core/launch_shape.hpp) as evidence, so that the field names the kernel a user searches for.
template <class = void>
inline void set_kernel(finding& f, std::string_view key) {
  f.kernel = std::string(kernel_base_name(key));
  const auto shape = launch_shape_of(key);
  if (!shape.empty()) f.evidence.add("launch_shape", std::string(shape));
}

template <class = void>
inline std::string straggler_kind_words(const phase_info& ph) {
  if (ph.role == phase_role::idle) return "host-bound";
  if (ph.cls == kernel_class::memory && !ph.annotated) return "memory";
  return "compute";
}

template <class = void>
inline finding l2_finding(const job_model& m, const topology& topo, const straggler& st) {
  auto f = finding_over(m, "L2", "straggler", st.first, st.last);
  f.ranks = {st.rank};
  f.group = st.group;
  const auto& ph = m.phases[st.phase];
  f.phase = ph.name;
  f.score = st.z;
  std::vector<double> peers(st.peers.begin(), st.peers.end());
  std::string also;
  for (const auto& [p, r] : st.also_slow) {
    if (!also.empty()) also += ", ";
    also += m.phases[p].name + " " + format_ratio(r);
  }
  f.evidence.add("observed_ns", st.observed_ns)
      .add("baseline_ns", st.baseline_ns)
      .add("ratio", st.ratio)
      .add("z", st.z)
      .add("p_value", st.p_value)
      .add("q_value", st.q_value)
      .add("elevated_steps", static_cast<double>(st.elevated_steps))
      .add("peers", std::move(peers))
      .add("communication_ratio", st.communication_ratio)
      .add("waiting_ranks", static_cast<double>(st.waiting_ranks))
      .add("group_cv", st.group_cv)
      .add("group_cv_before", st.group_cv_before)
      .add("job_slowdown", st.job_slowdown)
      .add("compared_within", st.compared_within);
  if (std::isfinite(st.elevated_z)) f.evidence.add("elevated_z", st.elevated_z);
  if (!also.empty()) f.evidence.add("also_slow", also);
  const bool own = st.compared_within == "own history";
  const std::string peers_text = "its " + std::to_string(st.peers.size()) + (st.peers.size() == 1 ? " peer" : " peers");
  std::string effect;
  // Host-measured traces (no GPU activity): idle is time no profiled operator ran.
  const bool on_host = static_cast<std::size_t>(st.rank) < m.measured_on_host.size() &&
                       m.measured_on_host[static_cast<std::size_t>(st.rank)];
  const std::string idles = on_host ? "no profiled operator runs for " : "the GPU idles ";
  const std::string why = on_host ? "the host is busy outside profiled operators, e.g. loading data, or not scheduled"
                                  : "launches or the host hold it back";
  const std::string own_words = st.referred_to_peers
                                    ? "a change within the spread of " + peers_text + ", judged against its own history"
                                : st.had_peers ? "the layout is guessed, so also judged against its own history"
                                               : "no comparable ranks, judged against its own history";
  const std::string relative_to = st.referred_to_peers ? "relative to its peers" : "relative to the other ranks";
  if (ph.role == phase_role::idle && own)
    effect = idles + format_duration(st.observed_ns) + " per step, " + format_duration(st.baseline_ns) + " before (" +
             why + "; " + own_words + ")";
  else if (ph.role == phase_role::idle)
    effect = idles + format_duration(st.observed_ns) + " per step, " + peers_text + " " +
             format_duration(st.baseline_ns) + " (" + why + ")";
  else if (own)
    effect = ph.name + (ph.annotated ? " compute " : " time ") + format_ratio(st.ratio) + " its own before (" +
             format_duration(st.observed_ns) + " vs " + format_duration(st.baseline_ns) + " per step; " + own_words +
             ", " + relative_to + ")";
  else
    effect = ph.name + (ph.annotated ? " compute " : " time ") + format_ratio(st.ratio) + " " + peers_text + " (" +
             format_duration(st.observed_ns) + " vs " + format_duration(st.baseline_ns) + " per step)";
  f.summary = rank_placed(topo, st.rank) + " is a " + straggler_kind_words(ph) + " straggler from step " +
              std::to_string(f.first_step) +
              (f.last_step != m.steps.back() ? " to " + std::to_string(f.last_step) : "") + ": " + effect;
  if (st.waiting_ranks > 0)
    f.summary +=
        ", " + std::to_string(st.waiting_ranks) + (st.waiting_ranks == 1 ? " rank waits" : " ranks wait") + " for it";
  return f;
}

// "k1 1.49x, k2 1.48x, k3 1.50x and 17 more (1.48x-1.50x)": the first `shown` by name.
template <class = void>
inline std::string kernel_list(const job_model& m, const std::vector<std::pair<std::size_t, double>>& also,
                               std::size_t shown = 3) {
  std::string s;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t i = 0; i < also.size(); ++i) {
    const auto& [key, ratio] = also[i];
    if (i >= shown) {
      lo = std::min(lo, ratio);
      hi = std::max(hi, ratio);
      continue;
    }
    if (!s.empty()) s += ", ";
    s += io::detail::format_kernel_name(m.kernel_names[key]) + " " + format_ratio(ratio);
  }
  if (also.size() > shown)
    s += " and " + std::to_string(also.size() - shown) + " more (" + format_ratio(lo) + "-" + format_ratio(hi) + ")";
  return s;
}

// Every kernel's full name with its ratio, for the evidence.
template <class = void>
inline std::string kernel_list_full(const job_model& m, const std::vector<std::pair<std::size_t, double>>& also) {
  return kernel_list(m, also, also.size());
}

template <class = void>
inline std::string until(const job_model& m, std::size_t last) {
  return last + 1 < m.step_count() ? " to " + std::to_string(m.steps[last]) : "";
}

template <class = void>
inline finding l3_kernel_finding(const job_model& m, const topology& topo, const degraded_kernel& d) {
  auto f = finding_over(m, "L3", "degraded_kernel", d.first, d.last);
  f.ranks = {d.rank};
  f.group = d.group;
  set_kernel(f, m.kernel_names[d.key]);
  f.phase = std::string(to_string(m.kernel_classes[d.key]));
  f.score = d.z;
  f.evidence.add("observed_ns", d.observed_ns)
      .add("baseline_ns", d.baseline_ns)
      .add("ratio", d.ratio)
      .add("w1_ns", d.w1_ns)
      .add("peer_w1_ns", d.peer_w1_ns)
      .add("w1_to_peers_ns", d.w1_row)
      .add("launches_per_step", d.launches_per_step)
      .add("lost_ns_per_step", d.lost_ns_per_step)
      .add("z", d.z)
      .add("p_value", d.p_value)
      .add("q_value", d.q_value)
      .add("elevated_steps", static_cast<double>(d.elevated_steps))
      .add("peers", std::vector<double>(d.peers.begin(), d.peers.end()))
      .add("job_slowdown", d.job_slowdown)
      .add("compared_within", d.compared_within);
  const std::string also = kernel_list(m, d.also);
  if (!also.empty()) f.evidence.add("also_degraded", kernel_list_full(m, d.also));
  f.evidence.add("detector", d.detector);
  if (d.detector == "ewma-trend") {
    f.evidence.add("ewma_excess", d.ewma_excess).add("alarm_step", static_cast<double>(m.steps[d.alarm_step]));
    f.summary = rank_placed(topo, d.rank) + ": " + io::detail::format_kernel_name(f.kernel) +
                " grows slower from step " + std::to_string(f.first_step) +
                ": its W1 to its group's distribution rose by " + format_ratio(1 + d.ewma_excess) +
                " of the group's mean (EWMA alarm at step " + std::to_string(m.steps[d.alarm_step]) + "), " +
                format_ratio(d.ratio) + " its peers per launch over these steps (" + format_duration(d.observed_ns) +
                " vs " + format_duration(d.baseline_ns) + ")";
    return f;
  }
  if (d.detector == "pooled") {
    f.evidence.add("pooled_keys", static_cast<double>(d.pooled_keys)).add("pooled_ratio", d.pooled_ratio);
    const bool own = d.compared_within.rfind("own history", 0) == 0;
    f.summary =
        rank_placed(topo, d.rank) + ": its " + std::to_string(d.pooled_keys) + " compute kernels run " +
        format_ratio(d.pooled_ratio) + (own ? " their own earlier pace, relative to its " : " the pace of its ") +
        std::to_string(d.peers.size()) + (d.peers.size() == 1 ? " peer" : " peers") + " from step " +
        std::to_string(f.first_step) + until(m, d.last) + " (per launch, pooled over the kernels); most time lost in " +
        io::detail::format_kernel_name(f.kernel) + " (" + format_duration(d.observed_ns) + " vs " +
        format_duration(d.baseline_ns) + " per launch, " + format_duration(d.lost_ns_per_step) + " per step)";
    if (!also.empty()) f.summary += "; also " + also;
    return f;
  }
  const bool own = d.compared_within == "own history";
  f.summary =
      rank_placed(topo, d.rank) + ": " + io::detail::format_kernel_name(f.kernel) + " runs " + format_ratio(d.ratio) +
      (own ? " its own earlier launches"
           : " its " + std::to_string(d.peers.size()) + (d.peers.size() == 1 ? " peer" : " peers")) +
      " from step " + std::to_string(f.first_step) + until(m, d.last) + " (" + format_duration(d.observed_ns) + " vs " +
      format_duration(d.baseline_ns) + " per launch, " + format_duration(d.lost_ns_per_step) + " lost per step";
  if (!own && d.peer_w1_ns >= 0)
    f.summary +=
        "; W1 " + format_duration(d.w1_ns) + " to its group's distribution, peers " + format_duration(d.peer_w1_ns);
  f.summary += ")";
  if (!also.empty()) f.summary += "; also " + also;
  return f;
}

template <class = void>
inline finding l3_link_finding(const job_model& m, const degraded_link& d) {
  auto f = finding_over(m, "L3", "degraded_link", d.first, d.last);
  f.group = d.group;
  set_kernel(f, m.kernel_names[d.key]);
  f.phase = "communication";
  f.score = d.z;
  f.evidence.add("transfer_ns", d.transfer_ns)
      .add("baseline_transfer_ns", d.baseline_transfer_ns)
      .add("ratio", d.ratio)
      .add("wait_ns", d.wait_ns)
      .add("z", d.z)
      .add("p_value", d.p_value)
      .add("q_value", d.q_value)
      .add("elevated_steps", static_cast<double>(d.elevated_steps))
      .add("group_ranks", std::vector<double>(d.ranks.begin(), d.ranks.end()))
      .add("job_slowdown", d.job_slowdown)
      .add("compared_within", d.compared_within)
      .add("transfer_from", d.transfer_from);
  const std::string also = kernel_list(m, d.also);
  if (!also.empty()) f.evidence.add("also_slow", kernel_list_full(m, d.also));
  const bool own = d.compared_within == "own history";
  const bool instances = d.transfer_from == "collective instances";
  f.summary = "link " + d.group + " (" + std::to_string(d.ranks.size()) + " ranks) transfers " +
              io::detail::format_kernel_name(f.kernel) + " " + format_ratio(d.ratio) +
              (own ? " its own earlier pace" : " the same-stage " + std::string(to_string(d.dim)) + " groups'") +
              " from step " + std::to_string(f.first_step) + until(m, d.last) + " (" + format_duration(d.transfer_ns) +
              " vs " + format_duration(d.baseline_transfer_ns) +
              (instances ? " per collective, its last arriver's transfer" : " per launch for its fastest rank") +
              "; the others wait " + format_duration(std::max(0.0, d.wait_ns)) + " more)";
  if (!also.empty()) f.summary += "; also " + also;
  return f;
}

template <class = void>
inline finding l3_outlier_finding(const job_model& m, const topology& topo, const outlier_rank& d) {
  auto f = finding_over(m, "L3", "outlier_rank", d.first, d.last);
  f.ranks = {d.rank};
  f.group = d.group;
  f.score = d.distance;
  std::string devs;
  for (std::size_t i = 0; i < d.features.size(); ++i) {
    if (!devs.empty()) devs += ", ";
    char buf[32];
    std::snprintf(buf, sizeof buf, " %+.1f", d.deviation[i]);
    devs += d.features[i] + buf;
  }
  f.evidence.add("distance", d.distance)
      .add("threshold", d.threshold)
      .add("windows_flagged", static_cast<double>(d.windows_flagged))
      .add("windows", static_cast<double>(d.windows))
      .add("p_value", d.p_value)
      .add("q_value", d.q_value)
      .add("peers", std::vector<double>(d.peers.begin(), d.peers.end()))
      .add("feature_deviations", devs);
  // The feature that departs most names the phase.
  std::size_t worst = 0;
  for (std::size_t i = 1; i < d.deviation.size(); ++i)
    if (std::fabs(d.deviation[i]) > std::fabs(d.deviation[worst])) worst = i;
  if (!d.features.empty()) f.phase = d.features[worst];
  f.summary = rank_placed(topo, d.rank) + " departs from its " + std::to_string(d.peers.size()) +
              " peers in its joint profile in " + std::to_string(d.windows_flagged) + " of " +
              std::to_string(d.windows) + " windows from step " + std::to_string(f.first_step) +
              " (Mahalanobis distance " + format_ratio(d.distance).substr(0, format_ratio(d.distance).size() - 1) +
              " > " + format_ratio(d.threshold).substr(0, format_ratio(d.threshold).size() - 1) +
              "; robust deviations:" + devs + ")";
  return f;
}

template <class = void>
inline finding l3_stage_finding(const job_model& m, const slow_stage& d) {
  auto f = finding_over(m, "L3", "slow_stage", d.first, d.last);
  // A role under a guessed layout is no stage number of the layout: its ranks are named instead.
  if (d.by_role)
    f.ranks = d.ranks;
  else
    f.group = "stage:" + std::to_string(d.stage);
  f.phase = "compute";
  if (!d.kernels.empty()) detail::set_kernel(f, m.kernel_names[d.kernels.front().first]);
  f.score = d.z;
  f.evidence.add("observed_ns", d.observed_ns)
      .add("baseline_ns", d.baseline_ns)
      .add("ratio", d.ratio)
      .add("z", d.z)
      .add("p_value", d.p_value)
      .add("q_value", d.q_value)
      .add("elevated_steps", static_cast<double>(d.elevated_steps))
      .add("stage_ranks", std::vector<double>(d.ranks.begin(), d.ranks.end()))
      .add("job_slowdown", d.job_slowdown);
  f.summary =
      (d.by_role ? "ranks " + detail::rank_list(d.ranks) +
                       " (the ranks that run one set of kernels: a pipeline stage, the layout being guessed)"
                 : "pipeline stage " + std::to_string(d.stage) + " (" + std::to_string(d.ranks.size()) + " ranks)") +
      " computes " + format_ratio(d.ratio) + " its own earlier pace, relative to the other stages, from step " +
      std::to_string(f.first_step) + until(m, d.last) + " (" + format_duration(d.observed_ns) + " vs " +
      format_duration(d.baseline_ns) + " per step for its fastest rank)";
  if (!d.kernels.empty()) {
    f.summary += "; slowest kernels " + kernel_list(m, d.kernels);
    f.evidence.add("kernels", kernel_list_full(m, d.kernels));
  }
  return f;
}

// The wait-for evidence of a rank the job waits for, on whichever finding names it.
template <class = void>
inline void add_holdback_evidence(finding& f, const holdback& h) {
  std::vector<double> victims;
  for (const auto& [r, ns] : h.top_victims) victims.push_back(r);
  f.evidence.add("caused_wait_ns_per_step", h.caused_ns_per_step)
      .add("wait_per_victim_ns", h.per_victim_ns)
      .add("late_ns_per_step", h.late_ns_per_step)
      .add("peer_late_ns_per_step", h.peer_late_ns_per_step)
      .add("victims", static_cast<double>(h.victims))
      .add("top_victims", std::move(victims));
  if (!h.phase_before.empty()) f.evidence.add("before_late_arrival", h.phase_before);
  if (f.level != "L4")
    f.summary += "; the waits of " + std::to_string(h.victims) + (h.victims == 1 ? " rank" : " ranks") +
                 " in collectives trace back to it, " + format_duration(h.per_victim_ns) + " per step each (L4)";
}

template <class = void>
inline std::string holdback_words(const holdback& h) {
  return "it arrives last at collectives " + format_duration(h.late_ns_per_step) + " per step after the others (" +
         format_duration(h.peer_late_ns_per_step) + " for its peers); " + std::to_string(h.victims) +
         (h.victims == 1 ? " rank waits" : " ranks wait") + " for it, " + format_duration(h.per_victim_ns) +
         " per step each (" + format_duration(h.caused_ns_per_step) + " of rank time per step job-wide)" +
         (h.phase_before.empty() ? std::string() : "; it arrives late after " + h.phase_before);
}

/// A rank of h's pipeline (its place in another stage) that a finding of L2 or L3 names as
/// slow from h's first step (within a step), or -1.
template <class = void>
inline int pipeline_cause(const std::vector<finding>& findings, const job_model& m, const topology& topo,
                          const holdback& h) {
  if (topo.size(parallel_dim::pp) < 2 || topo.world_size() != m.world_size) return -1;
  const auto line = topo.group(h.rank, dim_set{parallel_dim::pp});
  for (const auto& f : findings) {
    if ((f.level != "L2" && f.level != "L3") || f.ranks.size() != 1 || f.ranks.front() == h.rank ||
        std::find(line.begin(), line.end(), f.ranks.front()) == line.end())
      continue;
    const auto at = std::lower_bound(m.steps.begin(), m.steps.end(), f.first_step);
    const auto first = static_cast<std::size_t>(at - m.steps.begin());
    if (at != m.steps.end() && first + 1 >= h.first && first <= h.first + 1) return f.ranks.front();
  }
  return -1;
}

template <class = void>
inline finding l4_finding(const job_model& m, const topology& topo, const holdback& h) {
  auto f = finding_over(m, "L4", "holds_back", h.first, h.last);
  f.ranks = {h.rank};
  f.phase = h.phase_before;
  f.score = h.z;
  f.evidence.add("z", h.z)
      .add("elevated_steps", static_cast<double>(h.steps))
      .add("p_value", h.p_value)
      .add("q_value", h.q_value)
      .add("peer_late_step_rate", h.peer_rate)
      .add("job_slowdown", h.job_slowdown);
  add_holdback_evidence(f, h);
  f.summary = rank_placed(topo, h.rank) + " holds the job back from step " + std::to_string(f.first_step) +
              until(m, h.last) + ": " + holdback_words(h);
  return f;
}

template <class = void>
inline std::string cause_words(host_cause c) {
  switch (c) {
    case host_cause::jit_compilation:
      return "JIT compilation";
    case host_cause::garbage_collection:
      return "garbage collection";
    case host_cause::data_loader:
      return "a data-loader stall";
    case host_cause::host_busy:
      return "the host busy elsewhere";
    case host_cause::host_absent:
      return "the host recorded nothing (a pause outside profiled operators: garbage collection, preemption, "
             "paging)";
    case host_cause::host_unrecorded:
      return "window summaries keep no host events, so why is not recorded (a host pause: garbage collection, "
             "a data-loader stall, preemption; traces would say)";
  }
  return "";
}

template <class = void>
inline finding slow_host_finding(const job_model& m, const topology& topo, const slow_host& h) {
  auto f = finding_over(m, "L4", "slow_host", h.first, h.last);
  f.ranks = {h.rank};
  f.group = h.group;
  f.phase = "launch interval";
  f.score = h.z;
  f.evidence.add("launch_interval_ns", h.launch_interval_ns)
      .add("peer_launch_interval_ns", h.peer_launch_interval_ns)
      .add("launch_interval_ratio", h.ratio)
      .add("gpu_idle_ns", h.gpu_idle_ns)
      .add("peer_gpu_idle_ns", h.peer_gpu_idle_ns)
      .add("z", h.z)
      .add("p_value", h.p_value)
      .add("q_value", h.q_value)
      .add("elevated_steps", static_cast<double>(h.elevated_steps))
      .add("compared_within", h.compared_within);
  const bool until_end = h.last + 1 == m.step_count();
  const double step = median_iteration(m, {h.rank}, h.first, h.last);
  // Hidden: the GPU idles less than 1 % of a step more than its peers' (it still has queued work).
  const bool hidden = std::isfinite(step) && h.gpu_idle_ns - h.peer_gpu_idle_ns < 0.01 * step;
  f.summary = "the host of " + rank_placed(topo, h.rank) + " launches kernels " + format_ratio(h.ratio) +
              " slower than " +
              (h.peers.empty() ? std::string("before") : "its " + std::to_string(h.peers.size()) + " peers' hosts") +
              " from step " + std::to_string(f.first_step) + (until_end ? "" : " to " + std::to_string(f.last_step)) +
              " (" + format_duration(h.launch_interval_ns) + " between launches vs " +
              format_duration(h.peer_launch_interval_ns) + "); its GPU idles " + format_duration(h.gpu_idle_ns) +
              " per step (peers " + format_duration(h.peer_gpu_idle_ns) + ")" +
              (hidden ? ": the GPU still has queued work, so the step time hides it until the host falls behind"
                      : ": the GPU waits for its launches");
  return f;
}

template <class = void>
inline finding host_finding(const topology& topo, const host_stall& h) {
  finding f;
  f.level = "L4";
  f.kind = "host_stall";
  f.ranks = h.ranks;
  f.phase = to_string(h.cause);
  // A JIT stall's kernel is the one it compiled (the first new one; the others are evidence).
  if (h.cause == host_cause::jit_compilation && !h.new_kernels.empty())
    f.kernel = std::string(kernel_base_name(h.new_kernels.front()));
  f.first_step = h.steps.front();
  f.last_step = h.steps.back();
  f.score = h.z;
  std::vector<double> steps(h.steps.begin(), h.steps.end());
  std::string ops;
  for (std::size_t i = 0; i < h.top_ops.size() && i < 3; ++i)
    ops += (i ? ", " : "") + h.top_ops[i].first + " " + format_duration(h.top_ops[i].second);
  std::string kernels;
  for (std::size_t i = 0; i < h.new_kernels.size() && i < 3; ++i)
    kernels += (i ? ", " : "") + io::detail::format_kernel_name(h.new_kernels[i]);
  f.evidence.add("cause", std::string(to_string(h.cause)))
      .add("gpu_idle_ns", h.gpu_idle_ns)
      .add("excess_ns", h.excess_ns);
  if (!h.from_idle_phase) f.evidence.add("cpu_busy_fraction", h.cpu_busy_fraction);
  f.evidence.add("z", h.z)
      .add("steps", std::move(steps))
      .add("period_steps", static_cast<double>(h.period_steps))
      .add("job_slowdown", h.job_slowdown)
      .add("caused_wait_ns", h.caused_wait_ns);
  if (!ops.empty()) f.evidence.add("host_ops", ops);
  if (!h.new_kernels.empty()) f.evidence.add("new_kernels", kernels);
  const std::string who = h.ranks.size() == 1 ? rank_placed(topo, h.ranks.front()) : "ranks " + rank_list(h.ranks);
  std::string when;
  if (h.steps.size() == 1)
    when = "in step " + std::to_string(h.steps.front());
  else if (h.period_steps > 0)
    when = "every " + std::to_string(h.period_steps) + " steps (" + std::to_string(h.steps.size()) + " times, steps " +
           std::to_string(h.steps.front()) + "-" + std::to_string(h.steps.back()) + ")";
  else
    when = std::to_string(h.steps.size()) + " times between steps " + std::to_string(h.steps.front()) + " and " +
           std::to_string(h.steps.back());
  if (h.on_host)  // CPU traces: no GPU, idle is the time no profiled operator ran
    f.summary = who + " ran no profiled operator for " + format_duration(h.gpu_idle_ns) +
                (h.steps.size() == 1 && h.ranks.size() == 1 ? " " : " each ") + when + ": " + cause_words(h.cause);
  else
    f.summary = who + (h.ranks.size() == 1 ? " left its GPU idle " : " left their GPUs idle ") +
                format_duration(h.gpu_idle_ns) + (h.steps.size() == 1 && h.ranks.size() == 1 ? " " : " each ") + when +
                (h.from_idle_phase ? ", running no kernel: " : ", launching nothing: ") + cause_words(h.cause);
  if (!kernels.empty()) f.summary += "; kernels launched for the first time: " + kernels;
  if (!ops.empty() && h.cause != host_cause::host_absent) f.summary += "; the host ran " + ops;
  if (h.caused_wait_ns > 0)
    f.summary += "; other ranks waited " + format_duration(h.caused_wait_ns) +
                 (h.ranks.size() == 1 ? " for it" : " for them") + " in collectives (L4)";
  return f;
}

// The steps a finding covers: its "steps" evidence where it lists them, else first..last.
template <class = void>
inline std::vector<std::int64_t> finding_steps(const finding& f) {
  std::vector<std::int64_t> out;
  for (const auto& e : f.evidence.items())
    if (e.name == "steps" && e.what == evidence_item::type::numbers) {
      for (double x : e.numbers) out.push_back(static_cast<std::int64_t>(x));
      return out;
    }
  for (std::int64_t s = f.first_step; s <= f.last_step && out.size() < 100000; ++s) out.push_back(s);
  return out;
}

// The pipeline bubble a slow stage opens (l4_waits.hpp pipeline_wait_change): the other stages'
// transfer waits per step, as evidence, and in the summary when one grew by 1 % of a step.
template <class = void>
inline void add_pipeline_cost(finding& f, const job_model& m, const topology& topo, int stage, std::size_t first,
                              std::size_t last) {
  const auto change = pipeline_wait_change(m, topo, first, last);
  if (change.empty() || stage < 0 || static_cast<std::size_t>(stage) >= change.size()) return;
  f.evidence.add("pipeline_wait_change_ns", change);
  std::vector<double> iters;
  for (std::size_t r = 0; r < m.rank_count(); ++r)
    for (std::size_t k = first; k <= last; ++k)
      if (!std::isnan(m.iteration_ns(r, k))) iters.push_back(m.iteration_ns(r, k));
  if (iters.empty()) return;
  const double step = stats::median(iters);
  std::string words;
  double most = 0;
  for (std::size_t s = 0; s < change.size(); ++s) {
    if (static_cast<int>(s) == stage || !(change[s] > 0)) continue;
    most = std::max(most, change[s]);
    words +=
        (words.empty() ? "" : ", ") + std::string("stage ") + std::to_string(s) + " +" + format_duration(change[s]);
  }
  if (!(most >= 0.01 * step)) return;
  // Downstream stages whose extra wait grows with their distance from the slow one (by 0.5 % of
  // a step at least from one stage to the next: amplification, not noise).
  bool grows = static_cast<std::size_t>(stage) + 2 < change.size();
  for (std::size_t s = static_cast<std::size_t>(stage) + 2; grows && s < change.size(); ++s)
    grows = change[s] >= change[s - 1] + 0.005 * step && change[s - 1] > 0;
  f.evidence.add("pipeline_bubble_ns", most);
  f.summary += "; the pipeline waits for stage " + std::to_string(stage) + ": transfers wait more per step on " +
               words + (grows ? ", growing downstream" : "") + " (L4)";
}

/// How many standard errors of its own step-to-step noise a waiting stage's change must be.
inline constexpr double bubble_min_z = 3.5;

// A job-wide slow window no finding explains, in a pipeline: when the transfers of every stage
// but one wait at least 1 % of a step more over the window and that one's do not (under a
// quarter of the least of the others') and each waiting stage's change is bubble_min_z
// standard errors of its step-to-step noise, the pipeline waits for that stage -- the bubble a
// delay too small or too spread for L2/L3 opens downstream. The rank: the stage's rank that
// others' waits were blamed on most over the window (wait attribution). Null when not so.
template <class = void>
inline std::optional<finding> pipeline_bubble_finding(const job_model& m, const topology& topo, const slow_window& w) {
  const auto change = pipeline_wait_change(m, topo, w.first, w.last);
  if (change.size() < 2) return std::nullopt;
  std::vector<double> iters;
  for (std::size_t r = 0; r < m.rank_count(); ++r)
    for (std::size_t k = w.first; k <= w.last; ++k)
      if (!std::isnan(m.iteration_ns(r, k))) iters.push_back(m.iteration_ns(r, k));
  if (iters.empty()) return std::nullopt;
  const double step = stats::median(iters);
  std::size_t origin = 0;
  for (std::size_t s = 1; s < change.size(); ++s)
    if (!(change[s] >= change[origin])) origin = s;
  double least_other = std::numeric_limits<double>::infinity();
  for (std::size_t s = 0; s < change.size(); ++s)
    if (s != origin) least_other = std::min(least_other, change[s]);
  if (!(least_other >= 0.01 * step) || !(change[origin] < 0.25 * least_other)) return std::nullopt;
  // Each waiting stage's change must stand out from its own step-to-step noise: bubble_min_z
  // standard errors of the window's mean, the spread from the steps outside it (1.4826 MAD of
  // the stage's per-step median wait). At noise x2 a healthy 2-stage job's stage 0 waited
  // +1.0 ms for 3 steps where its waits move by 1 ms from step to step.
  for (std::size_t s = 0; s < change.size(); ++s) {
    if (s == origin) continue;
    std::vector<double> outside, ranks;
    std::size_t inside = 0;
    for (std::size_t k = 1; k < m.step_count(); ++k) {
      ranks.clear();
      for (std::size_t r = 0; r < m.rank_count(); ++r)
        if (m.has_rank[r] && topo.coordinate(static_cast<int>(r), parallel_dim::pp) == static_cast<int>(s) &&
            !std::isnan(m.iteration_ns(r, k)))
          ranks.push_back(m.waits.p2p_waited_ns(r, k));
      if (ranks.empty()) continue;
      if (k >= w.first && k <= w.last)
        ++inside;
      else
        outside.push_back(stats::median(ranks));
    }
    if (inside == 0 || outside.size() < 3) return std::nullopt;
    const double se = stats::mad_normal(outside) / std::sqrt(static_cast<double>(inside));
    if (!(change[s] >= bubble_min_z * se)) return std::nullopt;
  }
  auto f = finding_over(m, "L4", "pipeline_bubble", w.first, w.last);
  f.group = "stage:" + std::to_string(origin);
  // Its rank the others waited for most.
  int rank = -1;
  double caused = 0;
  if (m.waits.caused_ns.shape()[0] == m.rank_count())
    for (std::size_t r = 0; r < m.rank_count(); ++r) {
      if (!m.has_rank[r] || topo.coordinate(static_cast<int>(r), parallel_dim::pp) != static_cast<int>(origin))
        continue;
      double c = 0;
      for (std::size_t k = w.first; k <= w.last; ++k)
        if (std::isfinite(m.waits.caused_ns(r, k))) c += m.waits.caused_ns(r, k);
      if (c > caused) caused = c, rank = static_cast<int>(r);
    }
  if (rank >= 0) f.ranks = {rank};
  double most = 0;
  std::string words;
  for (std::size_t s = 0; s < change.size(); ++s) {
    if (s == origin) continue;
    most = std::max(most, change[s]);
    words +=
        (words.empty() ? "" : ", ") + std::string("stage ") + std::to_string(s) + " +" + format_duration(change[s]);
  }
  bool grows = origin + 2 < change.size();
  for (std::size_t s = origin + 2; grows && s < change.size(); ++s) grows = change[s] >= change[s - 1] + 0.005 * step;
  f.score = most / step;
  f.evidence.add("pipeline_wait_change_ns", change)
      .add("pipeline_bubble_ns", most)
      .add("step_ns", step)
      .add("job_slowdown", w.job_slowdown)
      .add("caused_wait_ns", caused);
  f.summary = step_range(f.first_step, f.last_step) + ": the pipeline waits for stage " + std::to_string(origin) +
              (rank >= 0 ? " (most for rank " + std::to_string(rank) + ")" : "") +
              ": transfers wait more per step on " + words + (grows ? ", growing downstream" : "") + ", while stage " +
              std::to_string(origin) + "'s do not; no rank, kernel or link of it stood out on its own (L4)";
  return f;
}

// Findings of different kinds in the same steps name each other (see the synopsis).
template <class = void>
inline void link_co_occurring(std::vector<finding>& fs) {
  std::vector<std::vector<std::int64_t>> steps(fs.size());
  for (std::size_t i = 0; i < fs.size(); ++i) steps[i] = finding_steps(fs[i]);
  std::vector<std::string> links(fs.size());
  for (std::size_t i = 0; i < fs.size(); ++i)
    for (std::size_t j = i + 1; j < fs.size(); ++j) {
      if (fs[i].kind == fs[j].kind && fs[i].level == fs[j].level) continue;
      std::vector<std::int64_t> common;
      std::set_intersection(steps[i].begin(), steps[i].end(), steps[j].begin(), steps[j].end(),
                            std::back_inserter(common));
      const std::size_t need = std::min<std::size_t>(2, std::min(steps[i].size(), steps[j].size()));
      if (need == 0 || common.size() < need) continue;
      const auto name = [](const finding& f) {
        return f.level + " " + f.kind + (f.ranks.size() == 1 ? " rank " + std::to_string(f.ranks.front()) : "") +
               (f.group.empty() ? "" : " " + f.group) + " " + step_range(f.first_step, f.last_step);
      };
      links[i] += (links[i].empty() ? "" : "; ") + name(fs[j]);
      links[j] += (links[j].empty() ? "" : "; ") + name(fs[i]);
    }
  for (std::size_t i = 0; i < fs.size(); ++i)
    if (!links[i].empty()) fs[i].evidence.add("co_occurs_with", links[i]);
}

}  // namespace detail

FAILSLOW_FUNC_DEF report diagnose(const job_model& m, const topology& topo, const diagnose_options& o) {
  report rep;
  rep.world_size = m.world_size;
  if (!m.steps.empty()) {
    rep.first_step = m.steps.front();
    rep.last_step = m.steps.back();
  }
  const auto& sz = topo.sizes();
  rep.topology.tp = sz.tp;
  rep.topology.pp = sz.pp;
  rep.topology.dp = sz.dp;
  rep.topology.cp = sz.cp;
  rep.topology.ep = sz.ep;
  rep.topology.order = topo.order_string();
  rep.topology.source = o.topology_source;
  rep.notes = m.notes;
  if (m.steps.empty()) {
    rep.notes.push_back(
        "no measured steps (GPU work, or host operators in traces without GPU activity): nothing to "
        "diagnose");
    return rep;
  }
  const auto l1 = find_slow_windows(m, o.l1);
  for (const auto& w : l1.job.windows) rep.findings.push_back(detail::l1_finding(m, w));
  for (const auto& w : l1.rank_windows) rep.findings.push_back(detail::l1_finding(m, w));
  rep.notes.insert(rep.notes.end(), l1.notes.begin(), l1.notes.end());
  auto l2o = o.l2;
  l2o.layout_assumed = l2o.layout_assumed || o.layout_assumed;
  auto l3o = o.l3;
  l3o.kernels.layout_assumed = l3o.kernels.layout_assumed || o.layout_assumed;
  // A guessed layout takes every rank for a replica of every other; ranks whose kernel mix
  // differs (pipeline stages) are compared only within their role.
  if (l2o.layout_assumed && l2o.roles.empty() && !m.windows.empty()) {
    const auto roles = infer_roles(m, o.roles);
    if (roles.count() > 1) {
      l2o.roles = roles.role;
      if (l3o.kernels.roles.empty()) l3o.kernels.roles = roles.role;
      std::string list;
      for (std::size_t i = 0; i < roles.count() && i < 4; ++i)
        list += std::string(i ? "; " : "") + "ranks " + detail::rank_list(roles.members[i], 3) + ": " +
                std::to_string(roles.kernels[i]) + " kernels";
      if (roles.count() > 4) list += "; and " + std::to_string(roles.count() - 4) + " more";
      rep.notes.push_back("the layout is assumed, and the ranks run " + std::to_string(roles.count()) +
                          " different sets of kernels (" + list +
                          "): a rank is compared only with ranks that run its set; give the layout to compare "
                          "along it");
    }
  }
  const auto l2 = find_stragglers(m, topo, &l1, l2o);
  for (const auto& st : l2.stragglers) {
    rep.findings.push_back(detail::l2_finding(m, topo, st));
    // With kernel summaries, the kernels that explain a work straggler's excess (attribution,
    // not a test: L2 has shown the rank is slow; L3 tests kernels on their own).
    if (m.phases[st.phase].role != phase_role::work) continue;
    const auto shares = attribute_kernels(
        m, st.rank, st.compared_within == "own history" ? std::vector<int>{} : st.peers, st.first, st.last);
    if (shares.empty()) continue;
    auto& f = rep.findings.back();
    detail::set_kernel(f, m.kernel_names[shares.front().key]);
    std::vector<std::pair<std::size_t, double>> list;
    for (const auto& c : shares) list.emplace_back(c.key, c.ratio);
    f.evidence.add("kernels", detail::kernel_list_full(m, list));
  }
  rep.notes.insert(rep.notes.end(), l2.notes.begin(), l2.notes.end());
  if (!m.windows.empty()) {
    const auto l3 = find_degraded(m, topo, &l1, l3o);
    for (const auto& d : l3.kernels) rep.findings.push_back(detail::l3_kernel_finding(m, topo, d));
    for (const auto& d : l3.links) rep.findings.push_back(detail::l3_link_finding(m, d));
    // A rank of a degraded link's group whose GPU idles more over the link's steps waited for
    // the slow collective outside its kernels (a host-side sync at the step's end): the link's
    // victim, not a host-bound straggler.
    for (const auto& d : l3.links) {
      std::vector<int> victims;
      rep.findings.erase(std::remove_if(rep.findings.begin(), rep.findings.end(),
                                        [&](const finding& f) {
                                          const bool victim =
                                              f.level == "L2" && f.kind == "straggler" &&
                                              f.phase == m.phases[idle_phase].name && f.ranks.size() == 1 &&
                                              std::find(d.ranks.begin(), d.ranks.end(), f.ranks.front()) !=
                                                  d.ranks.end() &&
                                              f.first_step <= m.steps[d.last] && f.last_step >= m.steps[d.first];
                                          if (victim) victims.push_back(f.ranks.front());
                                          return victim;
                                        }),
                         rep.findings.end());
      if (victims.empty()) continue;
      rep.notes.push_back("L2: rank(s) " + detail::rank_list(victims, 12) + " idle more while their group's link " +
                          d.group + " is degraded (L3): waiting for it, not called stragglers");
    }
    for (const auto& d : l3.stages) rep.findings.push_back(detail::l3_stage_finding(m, d));
    // Compute slowed on all kernels at once, and inter-worker outliers, add a rank only where no
    // other finding names it.
    std::vector<bool> named(m.rank_count(), false);
    for (const auto& f : rep.findings)
      for (int r : f.ranks) named[static_cast<std::size_t>(r)] = true;
    for (const auto& d : l3.pooled)
      if (!named[static_cast<std::size_t>(d.rank)]) {
        rep.findings.push_back(detail::l3_kernel_finding(m, topo, d));
        named[static_cast<std::size_t>(d.rank)] = true;
      }
    std::vector<int> waiting;
    for (const auto& d : l3.outliers) {
      if (named[static_cast<std::size_t>(d.rank)]) continue;
      // Idling more than its peers is what a slow host does to its GPU (launch gaps between
      // kernels), and also what waiting for another rank looks like when the wait falls
      // before a transfer instead of inside it (its communication falls by as much: a
      // healthy pipeline rank was an outlier by 5.7 % of a step). Where launch paces are
      // measured, a rank that departs most in idle share at its peers' launch pace waits.
      if (m.host.launch_pace_measured && !d.deviation.empty()) {
        std::size_t top = 0;
        for (std::size_t f = 1; f < d.deviation.size(); ++f)
          if (std::fabs(d.deviation[f]) > std::fabs(d.deviation[top])) top = f;
        const auto pace = late_launch(m, d.rank, d.peers, d.first, d.last);
        if (top < d.features.size() && d.features[top] == "idle share" && pace.ratio < o.late_launch_ratio) {
          waiting.push_back(d.rank);
          continue;
        }
      }
      rep.findings.push_back(detail::l3_outlier_finding(m, topo, d));
    }
    if (!waiting.empty())
      rep.notes.push_back("L3 inter-worker: rank(s) " + detail::rank_list(waiting, 12) +
                          " depart from their peers' joint profile by idling more while their hosts launch at the "
                          "peers' pace: waiting for other ranks (L4 says for whom), not reported");
    rep.notes.insert(rep.notes.end(), l3.notes.begin(), l3.notes.end());
  }
  // L4: the rank the others wait for. On a finding that names it already, the wait it costs
  // is evidence; alone (its own metrics look normal), it is a finding of its own.
  const auto l4 = find_holdbacks(m, topo, o.l4);
  std::vector<std::string> cascades;
  for (const auto& h : l4.holdbacks) {
    bool named = false;
    for (auto& f : rep.findings) {
      if (f.ranks.size() != 1 || f.ranks.front() != h.rank || (f.level != "L2" && f.level != "L3")) continue;
      detail::add_holdback_evidence(f, h);
      named = true;
    }
    if (named) continue;
    // Late from the step a rank of its own pipeline (another stage, same place) slowed down:
    // it passes that rank's delay on through the transfers between them, which the
    // previous-instance rule of the attribution does not always see (a stage-3 straggler's
    // stage-2 neighbour sent later to stage 1 at every step of the fault).
    const int cause = detail::pipeline_cause(rep.findings, m, topo, h);
    if (cause >= 0) {
      cascades.push_back("rank " + std::to_string(h.rank) + " (from step " + std::to_string(m.steps[h.first]) +
                         ", after rank " + std::to_string(cause) + ")");
      continue;
    }
    rep.findings.push_back(detail::l4_finding(m, topo, h));
  }
  rep.notes.insert(rep.notes.end(), l4.notes.begin(), l4.notes.end());
  if (!cascades.empty()) {
    std::string list;
    for (const auto& c : cascades) list += (list.empty() ? "" : ", ") + c;
    rep.notes.push_back(
        "L4: late at collectives from the step a rank of their pipeline in another stage slowed "
        "down (its delay passed on through their transfers), not called holding the job back: " +
        list);
  }
  // L4 host side: an idle-phase straggler whose host launches late says so; stalls stand alone.
  if (m.host.launch_pace_measured) {
    for (const auto& st : l2.stragglers) {
      if (m.phases[st.phase].role != phase_role::idle) continue;
      const auto pace = late_launch(m, st.rank, st.peers, st.first, st.last);
      if (!(pace.ratio >= o.late_launch_ratio)) continue;
      for (auto& f : rep.findings) {
        if (f.level != "L2" || f.kind != "straggler" || f.ranks != std::vector<int>{st.rank} ||
            f.first_step != m.steps[st.first])
          continue;
        f.evidence.add("launch_interval_ns", pace.rank_ns)
            .add("peer_launch_interval_ns", pace.peers_ns)
            .add("launch_interval_ratio", pace.ratio);
        f.summary += "; its host launches late: " + detail::format_duration(pace.rank_ns) +
                     " between kernel launches vs " + detail::format_duration(pace.peers_ns) + " on its peers (" +
                     detail::format_ratio(pace.ratio) + "), so the GPU idles between kernels (L4)";
      }
    }
  }
  // Hosts that launch slower than their peers': a finding where no idle-phase straggler names
  // the rank over those steps (a GPU-bound job hides it in the step time, for now).
  if (m.host.launch_pace_measured) {
    auto so = o.slow_hosts;
    so.test.layout_assumed = so.test.layout_assumed || l2o.layout_assumed;
    if (so.test.roles.empty()) so.test.roles = l2o.roles;
    const auto hosts = find_slow_hosts(m, topo, so);
    for (const auto& h : hosts.hosts) {
      const bool named = std::any_of(rep.findings.begin(), rep.findings.end(), [&](const finding& f) {
        return f.level == "L2" && f.kind == "straggler" && f.ranks == std::vector<int>{h.rank} &&
               f.evidence.find("launch_interval_ratio") && f.first_step <= m.steps[h.last] &&
               f.last_step >= m.steps[h.first];
      });
      if (!named) rep.findings.push_back(detail::slow_host_finding(m, topo, h));
    }
    rep.notes.insert(rep.notes.end(), hosts.notes.begin(), hosts.notes.end());
  }
  // Host stalls: from the launch gaps of traces, or from the GPU's idle in summaries
  // (find_host_stalls finds none in a model that has neither).
  {
    const auto host = find_host_stalls(m, o.host);
    for (const auto& h : host.stalls) {
      // A rank that held the job back only around its stall: the stall is the story, and the
      // wait it caused is already its evidence.
      rep.findings.erase(std::remove_if(rep.findings.begin(), rep.findings.end(),
                                        [&h](const finding& f) {
                                          if (f.level != "L4" || f.kind != "holds_back" || f.ranks.size() != 1 ||
                                              !std::binary_search(h.ranks.begin(), h.ranks.end(), f.ranks.front()))
                                            return false;
                                          for (std::int64_t s : h.steps)
                                            if (s >= f.first_step && s <= f.last_step) return true;
                                          return false;
                                        }),
                         rep.findings.end());
      rep.findings.push_back(detail::host_finding(topo, h));
    }
    rep.notes.insert(rep.notes.end(), host.notes.begin(), host.notes.end());
  }
  // L4 pipeline bubble: a job-wide sustained slow window that no finding with a rank, stage or
  // group explains, whose transfers wait on one stage.
  if (m.waits.available && topo.size(parallel_dim::pp) > 1 && topo.world_size() == m.world_size)
    for (const auto& w : l1.job.windows) {
      if (w.pattern != window_pattern::shift && w.pattern != window_pattern::drift) continue;
      const bool explained = std::any_of(rep.findings.begin(), rep.findings.end(), [&](const finding& f) {
        return f.level != "L1" && (!f.ranks.empty() || !f.group.empty()) && f.first_step <= m.steps[w.last] &&
               f.last_step >= m.steps[w.first];
      });
      if (explained) continue;
      if (auto f = detail::pipeline_bubble_finding(m, topo, w)) rep.findings.push_back(std::move(*f));
    }
  // L4 pipeline cost: what a slow rank or stage makes the other stages wait in transfers.
  if (m.waits.available && topo.size(parallel_dim::pp) > 1 && topo.world_size() == m.world_size)
    for (auto& f : rep.findings) {
      int stage = -1;
      if ((f.kind == "straggler" || f.kind == "holds_back" || f.kind == "degraded_kernel") && f.ranks.size() == 1)
        stage = topo.coordinate(f.ranks.front(), parallel_dim::pp);
      else if (f.kind == "slow_stage" && f.group.rfind("stage:", 0) == 0)
        stage = std::atoi(f.group.c_str() + 6);
      if (stage < 0) continue;
      const auto a = std::lower_bound(m.steps.begin(), m.steps.end(), f.first_step);
      const auto b = std::upper_bound(m.steps.begin(), m.steps.end(), f.last_step);
      if (a == m.steps.end() || b == m.steps.begin() || a >= b) continue;
      detail::add_pipeline_cost(f, m, topo, stage, static_cast<std::size_t>(a - m.steps.begin()),
                                static_cast<std::size_t>(b - m.steps.begin()) - 1);
    }
  detail::link_co_occurring(rep.findings);
  sort_by_severity(rep.findings);
  return rep;
}

}  // namespace failslow::diagnose
